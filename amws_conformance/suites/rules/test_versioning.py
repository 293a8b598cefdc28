"""Versioning (doc1 § Versioning): the v1 path, the deprecated users list, the older invitation
spellings, ignored unknown request fields and extensible responses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from amws_conformance import spec
from amws_conformance.harness._checks import check
from amws_conformance.suites.rules._conventions import Shared

V1 = "/api/ws/v1"


def _list_ops() -> list[spec.Operation]:
    return [o for o in spec.operations() if o.keyed and o.method == "GET" and not o.path_parameters]


@pytest.mark.rule("VER-PATH-V1")
def test_every_operation_is_under_v1() -> None:
    outside = [f"{o.method} {o.path}" for o in spec.operations() if not o.path.startswith(V1 + "/")]
    assert not outside, f"operations outside {V1}/: {outside}"


@pytest.mark.rule("VER-PATH-V1")
@pytest.mark.parametrize("op", _list_ops(), ids=lambda op: op.operation_id)
def test_other_prefixes_are_not_v1(api, profile, op: spec.Operation) -> None:
    served = api.get(op.path)
    assert served.status_code == 200, f"{op.path} is not served under {V1}"
    rest = op.path.removeprefix(V1)
    key = {"Authorization": profile.key("full")}
    for prefix in ("/api/ws", "/api/ws/v2", ""):
        # Not an operation of the spec: the client neither adds the key nor paces it, so the
        # header is given here and the bucket is paid as for the v1 read.
        if api.pacer is not None:
            api.pacer.acquire(int(op.rate_cost or 0))
        answer = api.get(prefix + rest, headers=key)
        json_answer = answer.headers.get("content-type", "").startswith("application/json")
        same = answer.is_success and json_answer and answer.json() == served.json()
        assert not same, f"{prefix + rest} answers like {op.path}"


@pytest.mark.rule("VER-PATH-V1")
def test_write_under_other_version_creates_nothing(api, profile, factories, ledger) -> None:
    body = factories.named("createDepartment", "v2")
    key = {"Authorization": profile.key("full")}
    for prefix in ("/api/ws/v2", "/api/ws"):
        api.post(f"{prefix}/departments", json=body, headers=key)
    found = [d for d in api.get(f"{V1}/departments").json() if d["name"] == body["name"]]
    for record in found:  # remove what a faulty target made, then report it
        ledger.register(record["uuid"], f"{V1}/departments/{record['uuid']}", "full", "v2")
    assert not found, "a write outside /api/ws/v1/ created a v1 department"


# -- the deprecated GET /users ------------------------------------------------------------------
@pytest.mark.rule("VER-USERS-GET-DEPRECATED")
def test_deprecated_users_list_still_answers(amws_run, api, factories) -> None:
    # The two users of the run's shared last name (``Shared.user_names``): the group's shared
    # user, which the filters are tried on, and the holders' user. This test only reads them
    # (names, email, mobile and identity number, which no test changes).
    shared = Shared(amws_run, api, factories)
    user, holders = shared.user(), shared.holders()
    uuid, body = user["uuid"], user["body"]
    surname = body["lastName"]
    made = {uuid: body, holders["user"]: holders["user_body"]}
    listed = api.get(f"{V1}/users", params={"last_name": surname})
    assert listed.status_code == 200
    page = listed.json()
    assert {"entries", "startIndex", "countReturned", "totalCount"} <= set(page)
    assert {row["uuid"] for row in page["entries"]} == set(made)
    for row in page["entries"]:
        sent = made[row["uuid"]]
        assert {k: row[k] for k in ("firstName", "lastName", "email", "mobile")} == {
            k: sent[k] for k in ("firstName", "lastName", "email", "mobile")
        }
    searched = api.post(f"{V1}/users/search", json={"lastName": surname}).json()
    assert {r["uuid"] for r in searched["entries"]} == set(made), "the replacement differs"
    for param, field in (
        ("email", "email"),
        ("first_name", "firstName"),
        ("mobile", "mobile"),
        ("identity_nr", "identityNumber"),
    ):
        rows = api.get(f"{V1}/users", params={"last_name": surname, param: body[field]}).json()
        assert [r["uuid"] for r in rows["entries"]] == [uuid], f"{param} does not filter"


# -- invitation underscore spellings ------------------------------------------------------------
SPELLINGS = {
    "first_name": "firstName",
    "last_name": "lastName",
    "identity_number": "identityNumber",
    "alternative_number": "alternativeNumber",
    "visit_type": "visitType",
}


def _underscored(factories: Any) -> dict[str, str]:
    return {
        "first_name": factories.fake.first_name()[:50],
        "last_name": factories.tag("under")[:50],
        "identity_number": factories.tag("idu"),
        "alternative_number": factories.tag("alt"),
        "visit_type": "MEETING",
    }


def _no_underscores(document: Any) -> None:
    if isinstance(document, dict):
        assert not [k for k in document if "_" in k], f"underscore names in {sorted(document)}"
        for value in document.values():
            _no_underscores(value)
    elif isinstance(document, list):
        for value in document:
            _no_underscores(value)


@pytest.mark.rule("VER-INVITE-UNDERSCORE-SPELLINGS")
def test_invite_accepts_underscore_spellings(api, factories) -> None:
    host = api.post(f"{V1}/users", json=factories.user()).json()["uuid"]
    body = factories.invite(host)
    for camel in SPELLINGS.values():
        body.pop(camel, None)
    old = _underscored(factories)
    created = api.post(f"{V1}/invites", json={**body, **old})
    assert created.status_code == 201, created.text
    registration = created.json()["registrationId"]
    stored = api.get(f"{V1}/invites/{registration}").json()
    _no_underscores(stored)
    assert {camel: stored.get(camel) for camel in SPELLINGS.values()} == {
        SPELLINGS[k]: v for k, v in old.items()
    }
    listed = api.get(f"{V1}/users/{host}/registrations").json()
    _no_underscores(listed)
    assert [e["lastName"] for e in listed["entries"]] == [old["last_name"]]
    # An update in the older spelling is stored the same way.
    newer = _underscored(factories)
    assert api.put(f"{V1}/invites/{registration}", json=newer).status_code == 200
    stored = api.get(f"{V1}/invites/{registration}").json()
    assert {camel: stored.get(camel) for camel in SPELLINGS.values()} == {
        SPELLINGS[k]: v for k, v in newer.items()
    }


# -- unknown request fields ---------------------------------------------------------------------
def _made(api: Any, collection: str, body: dict[str, Any]) -> str:
    answer = api.post(V1 + collection, json=body)
    assert answer.status_code == 201, answer.text
    return answer.json().get("uuid") or answer.json()["registrationId"]


WRITES: dict[str, tuple[Callable, Callable]] = {  # collection: (create body, update body)
    "/departments": (
        lambda f, api: f.named("createDepartment", "dept"),
        lambda f, api: f.named("updateDepartment", "dept"),
    ),
    "/locations": (lambda f, api: f.location(), lambda f, api: f.location()),
    "/roles": (lambda f, api: f.role(), lambda f, api: f.role()),
    "/persons": (lambda f, api: f.person(), lambda f, api: f.person()),
    "/users": (lambda f, api: f.user(), lambda f, api: f.user()),
    "/credentials": (
        lambda f, api: f.credential(personUuid=_made(api, "/persons", f.person())),
        lambda f, api: {"comments": f.tag("c")},
    ),
    "/watchlists": (lambda f, api: f.watchlist(), lambda f, api: f.watchlist()),
    "/invites": (
        lambda f, api: f.invite(_made(api, "/users", f.user())),
        lambda f, api: {"firstName": f.tag("renamed")[:50]},
    ),
}
UNKNOWN = {"zzUnknownField": "ignored", "legacy_id": 42, "extra": {"nested": [1, 2]}}


@pytest.mark.rule("CONV-UNKNOWN-FIELDS-IGNORED")
@pytest.mark.parametrize("update", [False, True], ids=["create", "update"])
@pytest.mark.parametrize("collection", list(WRITES))
def test_unknown_request_fields_are_ignored(
    amws_run, api, factories, collection: str, update: bool
) -> None:
    create_of, update_of = WRITES[collection]
    body = create_of(factories, api)
    if update:
        if collection == "/locations":
            # The group's scratch location (``Shared.scratch``): its owners write each field
            # before reading it, so this update of all of them is seen by no other test.
            uuid = Shared(amws_run, api, factories).scratch()
        else:
            uuid = _made(api, collection, body)
        body = update_of(factories, api)
        answer = api.put(f"{V1}{collection}/{uuid}", json={**body, **UNKNOWN})
        assert answer.status_code == 200, answer.text
    else:
        uuid = _made(api, collection, {**body, **UNKNOWN})
    stored = api.get(f"{V1}{collection}/{uuid}").json()
    assert not set(UNKNOWN) & set(stored), "an unknown field was stored"
    known = next(k for k in ("name", "firstName", "email", "comments", "readerType") if k in body)
    assert stored[known] == body[known], "the known fields were not applied"


# -- extensible responses -------------------------------------------------------------------
def _closed(node: Any, where: str = "") -> list[str]:
    """Places in a schema that forbid fields the contract does not list."""
    found = []
    if isinstance(node, dict):
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            if node.get(keyword) is False:
                found.append(f"{where}/{keyword}")
        for key, value in node.items():
            found += _closed(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _closed(value, f"{where}/{index}")
    return found


@pytest.mark.rule("VER-OUTBOUND-EXTENSIBLE")
def test_response_schemas_allow_added_fields() -> None:
    doc = spec.openapi()
    closed = _closed(doc.get("components", {}).get("responses", {}), "responses")
    closed += _closed(doc.get("webhooks", {}), "webhooks")
    for op in spec.operations():
        closed += _closed(op.raw["responses"], op.operation_id)
    for name, schema in doc["components"]["schemas"].items():
        if not name.endswith(("Body", "In")):
            closed += _closed(schema, name)
    assert not closed, f"response schemas forbid added fields at {closed[:5]}"


@pytest.mark.rule("VER-OUTBOUND-EXTENSIBLE")
def test_added_response_fields_are_accepted(api, factories) -> None:
    made = api.post(f"{V1}/watchlists", json=factories.watchlist()).json()["uuid"]
    for path in (f"{V1}/watchlists/{made}", f"{V1}/watchlists", f"{V1}/vehicles"):
        answer = api.get(path)
        body = answer.json()
        extra = {"addedInV2": {"nested": True}, "anotherNewField": 7}
        if isinstance(body, dict):
            body = {**body, **extra}
            if isinstance(body.get("entries"), list) and body["entries"]:
                body["entries"][0] = {**body["entries"][0], **extra}
        elif body:
            body = [{**body[0], **extra}, *body[1:]]
        widened = httpx.Response(200, json=body, headers={"Content-Type": "application/json"})
        op = spec.match("GET", path)[0]
        assert check(op, None, widened) == [], f"{op.operation_id} rejects added fields"
