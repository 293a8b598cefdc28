"""Access control lists and points: read-only listings and the audited relay trigger.

Relay firings and audit events are observed through the control plane, the stand-in for the
hardware and the admin screens' audit trail.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from amws_conformance import spec
from tests.reference_server.conftest import LiveServer

ACLS = "/api/ws/v1/access-control-lists"
POINTS = "/api/ws/v1/access-control-points"
POINT_TYPES = set(spec.openapi()["components"]["schemas"]["AccessControlPointType"]["enum"])


def trigger_url(point: str) -> str:
    return f"{POINTS}/trigger/{point}"


def relays(control: httpx.Client) -> list[dict[str, Any]]:
    response = control.get("/_reference/hardware/relay-events")
    assert response.status_code == 200
    return response.json()


def audit(control: httpx.Client) -> list[dict[str, Any]]:
    response = control.get("/_reference/audit")
    assert response.status_code == 200
    return response.json()


def new_since(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen = {event["uuid"] for event in before}
    return [event for event in after if event["uuid"] not in seen]


@pytest.fixture(scope="module")
def points(live: LiveServer) -> list[dict[str, Any]]:
    with live.client("full") as http:
        return http.get(POINTS).json()


@pytest.fixture
def readonly(live: LiveServer) -> Iterator[httpx.Client]:
    with live.client("readonly") as http:
        yield http


def test_acl_list_is_unpaged_array_of_uuid_and_name(api: httpx.Client, live: LiveServer) -> None:
    response = api.get(ACLS, params={"start": 1, "limit": 1})
    assert response.status_code == 200
    listing = response.json()
    assert isinstance(listing, list) and len(listing) >= 3
    for entry in listing:
        assert set(entry) == {"uuid", "name"}
        assert str(uuidlib.UUID(entry["uuid"])) == entry["uuid"]
    with live.client("other_system") as other:
        theirs = other.get(ACLS).json()
    assert theirs and not {e["uuid"] for e in listing} & {e["uuid"] for e in theirs}


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_acl_cannot_be_written(api: httpx.Client, method: str) -> None:
    before = api.get(ACLS).json()
    assert api.request(method, ACLS, json={"name": "Weekend"}).status_code == 405
    target = f"{ACLS}/{before[0]['uuid']}"
    assert not api.request(method, target, json={"name": "Weekend"}).is_success
    assert api.get(ACLS).json() == before


def test_point_list_is_unpaged_array_of_uuid_name_type(
    api: httpx.Client, readonly: httpx.Client, points: list[dict[str, Any]]
) -> None:
    assert isinstance(points, list) and points
    for point in points:
        assert set(point) == {"uuid", "name", "type"}
    assert readonly.get(POINTS, params={"limit": 1}).json() == points


def test_point_types_are_the_six_documented_values(points: list[dict[str, Any]]) -> None:
    assert {"DOOR", "ELEVATOR", "PORTAL", "TURNSTILE", "VEHICLE_GATE", "CHECK_POINT"} == POINT_TYPES
    assert {point["type"] for point in points} <= POINT_TYPES
    # The demo deployment wires one point of every kind.
    assert {point["type"] for point in points} == POINT_TYPES


def test_trigger_answers_acknowledgement_and_fires_relay_exactly_once(
    api: httpx.Client, control: httpx.Client, points: list[dict[str, Any]]
) -> None:
    point = points[0]["uuid"]
    before = relays(control)
    response = api.get(trigger_url(point))
    assert response.status_code == 200
    assert response.json() == {"code": 200, "message": "success", "uuid": point}
    fired = new_since(before, relays(control))
    assert len(fired) == 1
    assert fired[0]["point"] == point
    assert fired[0]["cause"] == "trigger"
    assert fired[0]["key"] == "full"


def test_each_trigger_fires_its_own_pulse(
    api: httpx.Client, control: httpx.Client, points: list[dict[str, Any]]
) -> None:
    first, second = points[1]["uuid"], points[2]["uuid"]
    before = relays(control)
    for point in (first, second, first):
        assert api.get(trigger_url(point)).status_code == 200
    fired = [event["point"] for event in new_since(before, relays(control))]
    assert fired == [first, second, first]


def test_trigger_is_audited_with_the_key_name(
    api: httpx.Client, control: httpx.Client, points: list[dict[str, Any]]
) -> None:
    point = points[0]["uuid"]
    before = audit(control)
    assert api.get(trigger_url(point)).status_code == 200
    events = new_since(before, audit(control))
    assert len(events) == 1
    assert events[0]["key"] == "full"
    assert events[0]["action"] == "trigger"
    assert events[0]["target"] == point


def test_trigger_opens_a_point_no_access_list_covers(
    api: httpx.Client, control: httpx.Client, points: list[dict[str, Any]]
) -> None:
    # The demo lists cover doors, gates, turnstiles and lifts only; the check point is in none.
    (desk,) = [p["uuid"] for p in points if p["type"] == "CHECK_POINT"]
    before = relays(control)
    assert api.get(trigger_url(desk)).status_code == 200
    assert [e["point"] for e in new_since(before, relays(control))] == [desk]


def test_trigger_unknown_point_is_404_and_fires_nothing(
    api: httpx.Client, live: LiveServer, control: httpx.Client
) -> None:
    with live.client("other_system") as other:
        foreign = other.get(POINTS).json()[0]["uuid"]
    before = relays(control)
    for point in (str(uuidlib.uuid4()), foreign):
        response = api.get(trigger_url(point))
        assert response.status_code == 404
        assert set(response.json()) == {"code", "reason"}
    assert new_since(before, relays(control)) == []


def test_trigger_with_non_uuid_is_422_and_fires_nothing(
    api: httpx.Client, control: httpx.Client
) -> None:
    before = relays(control)
    assert api.get(trigger_url("main-entrance")).status_code == 422
    assert new_since(before, relays(control)) == []


def test_trigger_needs_relay_control_not_read_permission(
    readonly: httpx.Client, control: httpx.Client, points: list[dict[str, Any]]
) -> None:
    point = points[0]["uuid"]
    assert readonly.get(POINTS).status_code == 200
    before_relays, before_audit = relays(control), audit(control)
    response = readonly.get(trigger_url(point))
    assert response.status_code == 403
    assert set(response.json()) == {"code", "reason"}
    assert new_since(before_relays, relays(control)) == []
    assert new_since(before_audit, audit(control)) == []


def test_listings_need_their_read_permissions(live: LiveServer) -> None:
    with live.client("none") as none:
        assert none.get(ACLS).status_code == 403
        assert none.get(POINTS).status_code == 403
