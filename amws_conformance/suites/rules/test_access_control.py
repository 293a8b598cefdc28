"""Access control lists and points, and the relay trigger.

The trigger opens a door, so every test that can fire a relay is ``physical``. What the relay
and the audit trail did is only visible through the reference server's control plane
(``control``); each trigger rule also has an API-only check where the API shows anything.
"""

from __future__ import annotations

import pytest

from amws_conformance import spec
from amws_conformance.fixtures._limits import field_schema
from amws_conformance.harness.plan.forecast import Bucket, undrainable
from amws_conformance.suites import _credentials as cred

LISTS = "/api/ws/v1/access-control-lists"
POINTS = "/api/ws/v1/access-control-points"


def _trigger_path(uuid: str) -> str:
    return f"{POINTS}/trigger/{uuid}"


def _points(api) -> list[dict]:
    response = api.get(POINTS)
    assert response.status_code == 200
    return response.json()


def _lists(api) -> list[dict]:
    response = api.get(LISTS)
    assert response.status_code == 200
    return response.json()


def _a_point(api, profile) -> dict:
    """A point to fire; not the virtual reader's, whose relay other tests fire."""
    points = _points(api)
    if not points:
        pytest.skip("the target lists no access control point")
    reader_point = (profile.section("virtual_reader") or {}).get("access_control_point")
    return next((p for p in points if p["uuid"] != reader_point), points[0])


def _new(before: list[dict], after: list[dict]) -> list[dict]:
    seen = {event["uuid"] for event in before}
    return [event for event in after if event["uuid"] not in seen]


# -- access control lists ------------------------------------------------------------------
@pytest.mark.rule("ACL-LIST-SHAPE")
def test_lists_are_uuid_and_name_unpaged(api, profile, ledger) -> None:
    lists = _lists(api)
    assert isinstance(lists, list)
    assert all(set(item) == {"uuid", "name"} for item in lists), "list items carry more fields"
    known = (profile.section("virtual_reader") or {}).get("access_control_list")
    if known:
        assert known in {item["uuid"] for item in lists}
    # Not paged: paging parameters (not part of the operation) do not cut the list down.
    paged = api.unchecked.get(LISTS, params={"start": 1, "limit": 1})
    if paged.status_code == 200:
        assert paged.json() == lists
    # No operation creates, changes or deletes a list (none is in the spec: status only).
    for answer in (
        api.unchecked.post(LISTS, json={"name": "conformance"}),
        api.unchecked.put(f"{LISTS}/{ledger.fresh_uuid()}", json={"name": "x"}),
        api.unchecked.delete(f"{LISTS}/{ledger.fresh_uuid()}"),
    ):
        assert not 200 <= answer.status_code < 300, answer.request.method
    assert _lists(api) == lists


@pytest.mark.rule("ACL-USABLE-ON-CREDENTIALS")
def test_listed_lists_are_accepted_on_credentials(request, api, factories) -> None:
    lists = [item["uuid"] for item in _lists(api)]
    if not lists:
        pytest.skip("the target lists no access control list")
    # The run's credential made with as many of the lists as a credential takes, its window in
    # the future so it opens nothing (suites/_credentials.py). Only this test changes its lists.
    created = cred.at_limits(request, api, factories)
    if created is not None:
        assert created.body["accessControlListUuids"] == lists[: cred.MAX_LISTS]
    else:  # the target refused that one (made at every create limit at once): one list here
        future = {
            "activeDate": factories.instant(days=30),
            "expiryDate": factories.instant(days=31),
        }
        created = cred.on_record_or_own(
            api,
            factories,
            None,
            {"personUuid": cred.run_holder(request, api, factories)},
            {"accessControlListUuids": lists[:1], **future},
        )
    sent = created.body["accessControlListUuids"]
    path = f"/api/ws/v1/credentials/{created.uuid}"

    def assigned() -> list[str] | None:
        # The documented read has no list field; where a target adds one
        # (CRED-READ-EXTENSIONS) it must show what was sent.
        read = api.get(path).json().get("accessControlListUuids")
        return None if read is None else sorted(read)

    assert assigned() in (None, sorted(sent))
    # A credential carries a limited number of lists: every one is tried, a batch at a time.
    most = field_schema("updateCredential", "accessControlListUuids")["maxItems"]
    for first in range(0, len(lists), most):
        batch = lists[first : first + most]
        updated = api.put(path, json={"accessControlListUuids": batch})
        assert updated.status_code == 200, updated.text
        assert assigned() in (None, sorted(batch))


# -- access control points -----------------------------------------------------------------
@pytest.mark.rule("ACP-LIST-SHAPE")
def test_points_are_uuid_name_and_type_unpaged(api, profile) -> None:
    points = _points(api)
    assert isinstance(points, list)
    assert all(set(item) == {"uuid", "name", "type"} for item in points), "items carry more"
    known = (profile.section("virtual_reader") or {}).get("access_control_point")
    if known:
        assert known in {item["uuid"] for item in points}
    paged = api.unchecked.get(POINTS, params={"start": 1, "limit": 1})
    if paged.status_code == 200:
        assert paged.json() == points


@pytest.mark.rule("ACP-FIELD-ENUM")
def test_point_types_are_the_listed_values(api) -> None:
    points = _points(api)
    if not points:
        pytest.skip("the target lists no access control point")
    allowed = set(
        spec.resolve(spec.openapi()["components"]["schemas"]["AccessControlPointType"])["enum"]
    )
    for point in points:
        assert point["type"] in allowed, point["type"]


# -- the trigger -----------------------------------------------------------------------------
@pytest.mark.rule("ACP-TRIGGER-ONCE")
@pytest.mark.physical
def test_trigger_fires_the_relay_once(api, profile, control_or_none) -> None:
    point = _a_point(api, profile)
    before = control_or_none.relay_events() if control_or_none else []
    response = api.get(_trigger_path(point["uuid"]))
    assert response.status_code == 200
    if control_or_none is None:
        return
    fired = _new(before, control_or_none.relay_events())
    assert [e["point"] for e in fired] == [point["uuid"]], f"relay firings: {fired}"


@pytest.mark.rule("ACP-TRIGGER-UNCONDITIONAL")
@pytest.mark.physical
def test_trigger_opens_every_point_without_any_check(api, control_or_none) -> None:
    # No credential, list or window is involved at all, and points that no schedule of any
    # list admits open all the same: every listed point must fire.
    points = _points(api)
    if not points:
        pytest.skip("the target lists no access control point")
    for point in points:
        before = control_or_none.relay_events() if control_or_none else []
        assert api.get(_trigger_path(point["uuid"])).status_code == 200, point["type"]
        if control_or_none is not None:
            fired = [e["point"] for e in _new(before, control_or_none.relay_events())]
            assert fired == [point["uuid"]], f"{point['type']} point: {fired}"


@pytest.mark.rule("ACP-TRIGGER-AUDIT")
@pytest.mark.physical
@pytest.mark.one_key  # the audit names the key that sent the trigger: one key, not a pool
def test_trigger_is_audited_with_the_key_name(api, profile, control) -> None:
    point = _a_point(api, profile)
    before = control.audit()
    assert api.get(_trigger_path(point["uuid"])).status_code == 200
    events = [e for e in _new(before, control.audit()) if e.get("target") == point["uuid"]]
    assert len(events) == 1, f"audit events for the trigger: {events}"
    assert events[0]["key"] == api.name, "the audit event does not name the API key"


@pytest.mark.rule("ACP-TRIGGER-PERMISSION")
@pytest.mark.physical  # a target that gets this wrong opens the door
def test_reading_points_does_not_allow_the_trigger(client, profile, control_or_none) -> None:
    readonly = client("readonly")
    listed = readonly.get(POINTS)
    assert listed.status_code == 200, "the read-only key cannot list the points"
    point = _a_point(readonly, profile)
    before = control_or_none.relay_events() if control_or_none else []
    assert readonly.get(_trigger_path(point["uuid"])).status_code == 403
    if control_or_none is not None:
        fired = _new(before, control_or_none.relay_events())
        assert fired == [], "the refused trigger fired a relay"


@pytest.mark.rule("ACP-TRIGGER-NOT-FOUND")
def test_unknown_point_answers_404(api, ledger, control_or_none) -> None:
    before = control_or_none.relay_events() if control_or_none else []
    assert api.get(_trigger_path(ledger.fresh_uuid())).status_code == 404
    if control_or_none is not None:
        fired = _new(before, control_or_none.relay_events())
        assert fired == [], "a relay fired for an unknown point"


# -- cost -------------------------------------------------------------------------------------
def _cost(operation_id: str) -> int:
    return int(spec.operation(operation_id).rate_cost or 0)


# Function scope: measured under whatever state the test itself runs in (the self-check switches
# the reference server's fault per test, after module fixtures would have run).
@pytest.fixture
def triggers_per_bucket(client, profile, control) -> int:
    """How many triggers a full bucket of the rate_limit key pays for (then it is refilled)."""
    key = client("rate_limit")
    bucket = profile.bucket("rate_limit")
    declared = Bucket(bucket["capacity"], bucket["refill_per_minute"])
    reason = undrainable(declared, _cost("listAccessControlPoints"), 0.0)
    if reason is not None:
        pytest.skip(reason)  # the suite's bound on every drain (harness.plan.forecast)
    refill = int(bucket["capacity"] * 60 / bucket["refill_per_minute"]) + 2
    point = _a_point(key, profile)
    control.advance(refill)  # start full
    fired = 0
    try:
        while fired <= bucket["capacity"] // _cost("listAccessControlPoints"):
            response = key.unpaced.get(_trigger_path(point["uuid"]))
            if response.status_code == 429:
                break
            assert response.status_code == 200, response.status_code
            fired += 1
    finally:
        control.advance(refill)  # leave it full
    return fired


# ACP-TRIGGER-COST-HIGHER (a trigger costs more than a read) is decided in test_rate_limits.py by
# test_costs_more_than_the_reads[triggerAccessControlPoint], which RATE-COST-TRIGGER-ABOVE-READS
# shares: one drain of the rate_limit key for both statements of the same fact.


@pytest.mark.rule("ACP-TRIGGER-COST-UNITS")
@pytest.mark.physical
@pytest.mark.rate_limit
def test_trigger_costs_the_assumed_units(profile, triggers_per_bucket) -> None:
    capacity = profile.bucket("rate_limit")["capacity"]
    assert triggers_per_bucket == capacity // _cost("triggerAccessControlPoint")
