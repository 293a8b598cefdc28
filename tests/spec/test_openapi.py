"""The OpenAPI document is valid 3.1 and encodes what the three documents state."""

from __future__ import annotations

import re
from typing import Any

import pytest
from openapi_spec_validator import validate

from amws_conformance import spec
from amws_conformance.spec._load import resolve
from tests.spec.documented_statuses import (
    ASSUMED_OPERATIONS,
    DOCUMENTED,
    DOCUMENTED_OPERATION_COUNT,
    WEBHOOK_EVENTS,
)

KEYED = [op for op in spec.operations() if op.keyed]
UUID_PATHS = [op for op in spec.operations() if op.path_parameters]


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in _refs(value)]
    return []


def test_document_validates_as_openapi_3_1() -> None:
    doc = spec.openapi()
    assert doc["openapi"].startswith("3.1")
    validate(doc)


@pytest.mark.parametrize("ref", sorted(set(_refs(spec.openapi()))))
def test_every_ref_resolves(ref: str) -> None:
    assert ref.startswith("#/"), "only local references are used"
    assert resolve({"$ref": ref}) is not None


def test_operation_ids_are_unique() -> None:
    ids = [op.operation_id for op in spec.operations()]
    assert len(ids) == len(set(ids))


def test_all_documented_operations_and_only_the_assumed_extras() -> None:
    ids = {op.operation_id for op in spec.operations()}
    documented = ids - ASSUMED_OPERATIONS
    assert len(documented) == DOCUMENTED_OPERATION_COUNT
    assert ids >= ASSUMED_OPERATIONS
    assert set(DOCUMENTED) <= ids


@pytest.mark.parametrize("op", spec.operations(), ids=lambda op: op.operation_id)
def test_operation_has_tag_and_summary(op: spec.Operation) -> None:
    assert op.tags, "a tag per resource group"
    summary = op.raw.get("summary", "")
    assert summary and "\n" not in summary


@pytest.mark.parametrize("op", spec.operations(), ids=lambda op: op.operation_id)
def test_assumed_flag_only_on_assumed_operations(op: spec.Operation) -> None:
    assert op.assumed == (op.operation_id in ASSUMED_OPERATIONS)


@pytest.mark.parametrize("operation_id", sorted(DOCUMENTED))
def test_every_documented_status_is_present(operation_id: str) -> None:
    op = spec.operation(operation_id)
    assert DOCUMENTED[operation_id] <= op.statuses, sorted(DOCUMENTED[operation_id] - op.statuses)


@pytest.mark.parametrize("op", KEYED, ids=lambda op: op.operation_id)
def test_keyed_operation_has_permission_cost_and_auth_statuses(op: spec.Operation) -> None:
    assert isinstance(op.permission, str) and op.permission
    assert isinstance(op.rate_cost, int) and op.rate_cost > 0
    assert {"401", "403", "429"} <= op.statuses


@pytest.mark.parametrize(
    "op", [op for op in spec.operations() if not op.keyed], ids=lambda op: op.operation_id
)
def test_unkeyed_operations_are_media_links_and_virtual_reader(op: spec.Operation) -> None:
    assert op.path.startswith(("/api/ws/v1/storage/", "/api/ws/v1/virtual/"))
    assert op.permission is None and op.rate_cost is None


def test_media_links_and_reader_are_the_only_unkeyed_paths() -> None:
    for op in spec.operations():
        if op.path.startswith(("/api/ws/v1/storage/", "/api/ws/v1/virtual/")):
            assert not op.keyed, op.operation_id


@pytest.mark.parametrize("op", UUID_PATHS, ids=lambda op: op.operation_id)
def test_uuid_path_parameter_answers_422(op: spec.Operation) -> None:
    uuid_params = [
        p
        for p in op.parameters()
        if p["in"] == "path" and resolve(p["schema"]).get("format") == "uuid"
    ]
    assert uuid_params, "every path parameter of these operations that names a record is a UUID"
    assert "422" in op.statuses


@pytest.mark.parametrize(
    "op", [op for op in spec.operations() if "429" in op.statuses], ids=lambda op: op.operation_id
)
def test_every_429_carries_retry_after(op: spec.Operation) -> None:
    response = resolve(op.raw["responses"]["429"])
    assert "Retry-After" in response.get("headers", {})


def _takes_json(op: spec.Operation) -> bool:
    return "application/json" in resolve(op.raw.get("requestBody", {})).get("content", {})


@pytest.mark.parametrize(
    "op", [op for op in spec.operations() if _takes_json(op)], ids=lambda op: op.operation_id
)
def test_json_bodies_document_400_and_422(op: spec.Operation) -> None:
    assert {"400", "422"} <= op.statuses


def test_rate_costs_follow_the_limits_table() -> None:
    documented = {op.operation_id: op.rate_cost for op in KEYED if not op.rate_cost_assumed}
    assert documented["createInvite"] == documented["updateInvite"] == 50
    assert documented["uploadFile"] == documented["downloadPhoto"] == 50
    assert documented["downloadThumbnail"] == 50
    assert documented["getInviteStatus"] == documented["deleteFile"] == 10
    for oid in ("listDepartments", "getPerson", "deleteLocation", "changeInviteStatus"):
        assert documented[oid] == 30, oid
    assumed = {op.operation_id for op in KEYED if op.rate_cost_assumed}
    assert {"createCredential", "updateCredential", "triggerAccessControlPoint"} <= assumed
    trigger = spec.operation("triggerAccessControlPoint").rate_cost
    assert trigger == max(
        op.rate_cost
        for op in KEYED
        if op.path.startswith(
            ("/api/ws/v1/access-control-points", "/api/ws/v1/access-control-lists")
        )
    )


def test_bucket_and_header_bounds_follow_the_limits_table() -> None:
    # doc1 § Limits, read independently of the spec: 2000 units, 800 a minute, 400 per failed
    # authentication, header values of 64 to 256 characters.
    assert spec.rate_limit() == spec.RateLimit(2000, 800, 400)
    assert spec.key_header_length() == (64, 256)


def test_invitation_permissions_are_marked_assumed() -> None:
    for op in KEYED:
        assert op.permission_assumed == op.path.startswith("/api/ws/v1/invites"), op.operation_id


def test_role_delete_outcomes_are_carried_in_a_200_body() -> None:
    schema = resolve(
        spec.operation("deleteRole").raw["responses"]["200"]["content"]["application/json"][
            "schema"
        ]
    )
    assert set(resolve(schema["properties"]["code"])["enum"]) == {200, 412, 417, 424}


def test_upload_is_multipart_with_a_file_part() -> None:
    body = resolve(spec.operation("uploadFile").raw["requestBody"])
    schema = resolve(body["content"]["multipart/form-data"]["schema"])
    assert "file" in schema["required"]
    assert schema["properties"]["file"]["minLength"] == 1  # an empty file is refused (400)
    assert "200" in spec.operation("uploadFile").statuses
    assert "201" not in spec.operation("uploadFile").statuses


@pytest.mark.parametrize("operation_id", ["downloadPhoto", "downloadThumbnail"])
def test_photo_downloads_are_jpeg_and_privately_cached(operation_id: str) -> None:
    ok = resolve(spec.operation(operation_id).raw["responses"]["200"])
    assert "image/jpeg" in ok["content"]
    cache = resolve(ok["headers"]["Cache-Control"])
    assert resolve(cache["schema"])["const"] == "private, max-age=3600"


@pytest.mark.parametrize("event", sorted(WEBHOOK_EVENTS))
def test_webhook_event_posts_a_signed_visit(event: str) -> None:
    hook = spec.openapi()["webhooks"][event]["post"]
    content = resolve(hook["requestBody"])["content"]
    (media_type,) = content
    assert media_type.startswith("application/json")
    params = [resolve(p) for p in hook.get("parameters", [])]
    headers = {p["name"] for p in params if p["in"] == "header"}
    assert {"X-SERVICE-HMAC-SHA256", "X-SERVICE-HMAC-TIMESTAMP"} <= headers
    schema = content[media_type]["schema"]
    visit, *narrowing = [resolve(s) for s in schema.get("allOf", [schema])]
    assert WEBHOOK_EVENTS[event] in resolve(visit["properties"]["status"])["enum"]
    assert {"visitor", "host"} <= set(visit["properties"])
    for extra in narrowing:
        assert extra["properties"]["status"]["const"] == WEBHOOK_EVENTS[event]


def test_exactly_seven_webhook_events() -> None:
    assert set(spec.openapi()["webhooks"]) == set(WEBHOOK_EVENTS)


def test_every_webhook_has_an_operation_id() -> None:
    ids = [hook["post"].get("operationId") for hook in spec.openapi()["webhooks"].values()]
    assert all(ids) and len(set(ids)) == len(ids)
    assert not set(ids) & {op.operation_id for op in spec.operations()}


# The identifying fields, as the entry body's anyOf names them (one branch each).
IDENTIFYING = tuple(
    branch["required"][0]
    for branch in spec.openapi()["components"]["schemas"]["WatchlistEntryBody"]["anyOf"]
)


@pytest.mark.parametrize("name", ["WatchlistEntryBody", "WatchlistMatchBody"])
@pytest.mark.parametrize(
    ("body", "ok"),
    [
        ({"firstName": "Ann"}, True),
        ({"firstName": "", "vehicleVin": "WVW1"}, True),
        ({"reason": "seen"}, False),
        ({"firstName": "", "lastName": ""}, False),
        ({f: "" for f in IDENTIFYING}, False),
    ],
)
def test_an_identifying_field_must_hold_a_value(name: str, body: dict, ok: bool) -> None:
    assert len(IDENTIFYING) == 7  # doc2 § Watchlist and entry names seven
    validator = spec.validator_at(f"components/schemas/{name}")
    assert validator.is_valid(body) is ok


def _schema(name: str) -> dict[str, Any]:
    return spec.openapi()["components"]["schemas"][name]


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("+27821234567", True),
        ("+441632960961", True),
        ("0821234567", False),
        ("+0821234567", False),
        ("27821234567", False),
    ],
)
def test_phone_pattern(value: str, ok: bool) -> None:
    assert bool(re.search(_schema("InternationalPhone")["pattern"], value)) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-03-01T09:00:30.000Z", True),
        ("2026-03-01T11:00:30.123+02:00", True),
        ("2026-03-01T11:00:30.123+0200", True),
        ("2026-03-01T09:00:30", True),
        ("2026-03-01", False),
        ("yesterday", False),
        # Fields out of their calendar and clock ranges cannot be parsed (422): not valid input.
        ("2026-00-01T09:00:30.000Z", False),
        ("2026-13-01T09:00:30.000Z", False),
        ("2026-03-00T09:00:30.000Z", False),
        ("2026-03-32T09:00:30.000Z", False),
        ("2026-03-01T24:00:30.000Z", False),
        ("2026-03-01T09:60:30.000Z", False),
        ("2026-03-01T09:00:60.000Z", False),
        ("2026-03-01T09:00:30.000+24:00", False),
        ("2026-12-31T23:59:59.999-23:59", True),
        ("0000-01-01T00:00:00", False),  # ISO 8601 has a year 0 only by agreement
        ("7039-11-31T09:20:00Z", False),  # November has 30 days (found by schemathesis)
        ("2026-02-30T09:20:00Z", False),
        ("2028-02-29T09:20:00Z", True),  # a leap day (2026-02-29 too: a pattern keeps no calendar)
        ("2026-12-31T09:20:00Z", True),
        ("0001-01-01T00:00:00Z", True),
    ],
)
def test_timestamp_input_pattern(value: str, ok: bool) -> None:
    assert bool(re.search(_schema("TimestampIn")["pattern"], value)) is ok


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-03-01T09:00:00.000Z", True),
        ("2026-03-01T09:00:00.000+00:00", True),
        ("2026-03-01T11:00:00.000+02:00", False),
        ("2026-03-01T09:00:00Z", False),
    ],
)
def test_timestamp_output_is_utc_with_milliseconds(value: str, ok: bool) -> None:
    assert bool(re.search(_schema("TimestampOut")["pattern"], value)) is ok


def _has_overlay(node: Any) -> bool:
    if isinstance(node, dict):
        return "x-assumed-schema" in node or any(_has_overlay(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_overlay(v) for v in node)
    return False


def test_assumed_constraints_are_kept_apart_and_merged_for_the_reference() -> None:
    documented, enforced = spec.openapi(), spec.enforced()
    assert _has_overlay(documented) and not _has_overlay(enforced)
    invite = (
        documented["components"]["schemas"]["InviteBody"],
        enforced["components"]["schemas"]["InviteBody"],
    )
    assert "required" not in invite[0]
    assert set(invite[1]["required"]) == {"activation", "expiry", "hostUser"}
    # A documented name keeps its documented type; our length sits in the overlay only.
    assert invite[0]["properties"]["first_name"] == {"type": "string"}
    assert invite[1]["properties"]["first_name"] == {"type": "string", "maxLength": 50}
    phone = (
        documented["components"]["schemas"]["InternationalPhone"],
        enforced["components"]["schemas"]["InternationalPhone"],
    )
    assert re.match(phone[0]["pattern"], "+27 82 123 4567")
    assert not re.match(phone[1]["pattern"], "+27 82 123 4567")
    assert re.match(phone[1]["pattern"], "+27821234567")


def test_every_create_links_to_what_addresses_its_record() -> None:
    for op in spec.operations():
        if op.method != "POST" or "201" not in op.statuses:
            continue
        addressed = [
            o.operation_id
            for o in spec.operations()
            if o.path.startswith(op.path + "/{")
            and len(o.path_parameters) == len(op.path_parameters) + 1
        ]
        links = spec.resolve(op.raw["responses"]["201"]).get("links", {})
        assert set(addressed) <= {link["operationId"] for link in links.values()}, op.operation_id


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("ann@example.com", True),
        ("amws-run-mail-3@example.org", True),
        ("ünïcode@exämple.de", True),
        ("a b@example.com", False),
        ("\u00de\u00a2@v\u0087.\b\u00b0o", False),  # found by schemathesis: was accepted
        ("no-at-sign.example.com", False),
        # Well-formed, if undeliverable (found by schemathesis: a .test address was refused).
        ("f#48'@42g05.test", True),
        ("desk@printer.local", True),
    ],
)
def test_an_email_is_a_valid_address(value: str, ok: bool) -> None:
    validator = spec.validator_for({"type": "string", "format": "email"})
    assert validator.is_valid(value) is ok


@pytest.mark.parametrize(
    ("body", "documented", "enforced"),
    [
        ({"passportNr": "AB-12"}, True, True),
        ({"firstName": "Ann"}, True, True),
        # Found by schemathesis's CLI: values the server reads as holding nothing. The
        # documents only ask for a value; what "holds a value" means is our reading.
        ({"passportNr": "--"}, True, False),
        ({"vehicleLicensePlate": "\x1c \u3000"}, True, False),  # white space to every engine
        ({"vehicleLicensePlate": "\U0007ce9f"}, True, True),  # neither space nor punctuation
        ({"lastName": "   "}, True, False),
    ],
)
def test_our_reading_of_an_identifying_value_is_an_overlay(
    body: dict, documented: bool, enforced: bool
) -> None:
    where = "components/schemas/WatchlistEntryBody"
    assert spec.validator_at(where).is_valid(body) is documented
    assert spec.validator_at(where, enforced=True).is_valid(body) is enforced


@pytest.mark.parametrize(
    ("name", "rule_id"),
    [
        ("signed-link-per-address", "LINK-RATE-ALLOWANCE"),
        ("reader-per-device", "READER-RATE-ALLOWANCE"),
        ("reader-auth-failures-per-address", "READER-AUTH-FAILURE-FIGURES"),
    ],
)
def test_every_throttle_figure_is_the_one_its_rule_states(name: str, rule_id: str) -> None:
    """The spec holds the figure the server and the suites read; the rule says it in prose."""
    throttle = spec.throttle(name)
    statement = next(r.statement for r in spec.rules() if r.id == rule_id)
    assert f" {throttle.requests} " in statement
    assert throttle.window_seconds == 60 and "minute" in statement
