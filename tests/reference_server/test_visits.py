"""The visit lifecycle of invitations (VISIT- and INV-STATUS-/INV-CANCEL- rules), through HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.reference_server.conftest import LiveServer
from tests.reference_server.test_invites import (
    INVITES,
    at,
    create,
    invite_body,
    new_host,
    watchlisted,
    window,
)

PRE_ARRIVAL_MOVES = ("VISIT_NO_SHOW", "VISIT_CANCELLED", "VISIT_DENIED")
EVERY_MOVE = ("VISITOR_CHECK_IN", "VISITOR_CHECK_OUT", *PRE_ARRIVAL_MOVES)


@pytest.fixture
def host(api: httpx.Client, unique) -> str:
    return new_host(api, unique)


def status_of(api: httpx.Client, registration: str) -> str:
    return api.get(f"{INVITES}/{registration}/status").json()["status"]


def change(api: httpx.Client, registration: str, status: Any) -> httpx.Response:
    return api.put(f"{INVITES}/{registration}/status", json={"status": status})


def read_code(live, code: str) -> httpx.Response:
    reader = live.profile["virtual_reader"]
    with live.client(None) as anonymous:
        return anonymous.post(
            "/api/ws/v1/virtual/reader",
            json={"uuid": reader["uuid"], "key": reader["key"], "code": code},
        )


def test_visits_start_created_and_status_matches_record(api, control, host) -> None:
    registration = create(api, host, control)
    status = api.get(f"{INVITES}/{registration}/status")
    assert status.status_code == 200
    assert status.json() == {"registrationId": registration, "status": "VISIT_CREATED"}
    assert api.get(f"{INVITES}/{registration}").json()["status"] == "VISIT_CREATED"


def test_visits_check_in_then_check_out(api, control, host) -> None:
    registration = create(api, host, control)
    api.put(f"{INVITES}/{registration}", json={"lastName": "Updated"})
    assert status_of(api, registration) == "VISIT_UPDATED"
    checked_in = change(api, registration, "VISITOR_CHECK_IN")
    assert checked_in.status_code == 200
    assert checked_in.json() == {"code": 200, "message": "success", "uuid": registration}
    record = api.get(f"{INVITES}/{registration}").json()
    assert record["status"] == "VISITOR_CHECK_IN" and record["arrivedAt"]
    assert record["leftAt"] is None
    assert change(api, registration, "VISITOR_CHECK_IN").status_code == 409
    for move in PRE_ARRIVAL_MOVES:
        assert change(api, registration, move).status_code == 409
    assert change(api, registration, "VISITOR_CHECK_OUT").status_code == 200
    record = api.get(f"{INVITES}/{registration}").json()
    assert record["status"] == "VISITOR_CHECK_OUT" and record["leftAt"]


def test_visits_check_out_needs_check_in(api, control, host) -> None:
    registration = create(api, host, control)
    assert change(api, registration, "VISITOR_CHECK_OUT").status_code == 409
    assert status_of(api, registration) == "VISIT_CREATED"


@pytest.mark.parametrize("target", PRE_ARRIVAL_MOVES)
def test_visits_pre_arrival_moves_and_terminal_states(api, control, host, target) -> None:
    registration = create(api, host, control)
    assert change(api, registration, target).status_code == 200
    assert status_of(api, registration) == target
    for move in EVERY_MOVE:
        assert change(api, registration, move).status_code == 409, move
    assert status_of(api, registration) == target


def test_visits_unsupported_target_status_is_422(api, control, host) -> None:
    registration = create(api, host, control)
    for target in ("VISIT_CREATED", "VISIT_UPDATED", "VISITOR_ON_SITE", "LEAVING", None):
        assert change(api, registration, target).status_code == 422, target
    assert api.put(f"{INVITES}/{registration}/status", json={}).status_code == 422
    assert status_of(api, registration) == "VISIT_CREATED"


def test_visits_delete_withdraws_the_invitation(api, control, host) -> None:
    registration = create(api, host, control)
    response = api.delete(f"{INVITES}/{registration}")
    assert response.status_code == 200
    assert response.json() == {"code": 200, "message": "success", "uuid": registration}
    assert api.get(f"{INVITES}/{registration}").status_code == 404
    assert api.delete(f"{INVITES}/{registration}").status_code == 404


def test_visits_delete_withdraws_a_visit_under_way(api, control, host) -> None:
    # INV-DELETE-WITHDRAWS: a visit that has not ended (here checked in) is cancelled, then removed.
    registration = create(api, host, control)
    assert change(api, registration, "VISITOR_CHECK_IN").status_code == 200
    assert api.delete(f"{INVITES}/{registration}").status_code == 200
    assert api.get(f"{INVITES}/{registration}").status_code == 404


def test_visits_delete_of_an_ended_visit_removes_it(api, control, host) -> None:
    registration = create(api, host, control)
    assert change(api, registration, "VISIT_NO_SHOW").status_code == 200
    assert api.delete(f"{INVITES}/{registration}").status_code == 200
    assert api.get(f"{INVITES}/{registration}").status_code == 404


def test_visits_check_in_consults_enabled_watchlists(api, control, host, unique) -> None:
    identity = unique("ID")
    registration = create(api, host, control, identityNumber=identity)
    with watchlisted(api, unique, identityNumber=identity) as watchlist:
        api.put(f"/api/ws/v1/watchlists/{watchlist}", json={"name": unique("wl"), "enabled": False})
        # A disabled list lets the visitor in ...
        other = create(api, host, control, identityNumber=identity)
        assert change(api, other, "VISITOR_CHECK_IN").status_code == 200
        # ... an enabled one denies at the door.
        api.put(f"/api/ws/v1/watchlists/{watchlist}", json={"name": unique("wl"), "enabled": True})
        assert change(api, registration, "VISITOR_CHECK_IN").status_code == 451
    assert status_of(api, registration) == "VISIT_DENIED"


@pytest.fixture
def private(faulty, unique) -> Iterator[tuple[LiveServer, httpx.Client, httpx.Client, str]]:
    """A server of its own (reads use up the shared reader device's allowance)."""
    own = faulty()
    with own.client("full") as api, own.control() as control:
        yield own, api, control, new_host(api, unique)


def test_visits_cancel_revokes_the_credential(private) -> None:
    own, api, control, host = private
    registration = create(api, host, control, **window(control, start_days=-0.1, hours=6))
    code = api.get(f"{INVITES}/{registration}").json()["accessCode"]
    assert api.delete(f"{INVITES}/{registration}").status_code == 200
    assert read_code(own, code).status_code == 401


def test_visits_reader_grants_check_in_then_out(private) -> None:
    own, api, control, host = private
    body = invite_body(host, control, **window(control, start_days=-0.1, hours=6))
    created = api.post(INVITES, json=body).json()
    registration = created["registrationId"]
    first = read_code(own, created["accessCode"])
    assert first.status_code == 200, first.text
    assert status_of(api, registration) == "VISITOR_CHECK_IN"
    assert read_code(own, created["accessCode"]).status_code == 200
    assert status_of(api, registration) == "VISITOR_CHECK_OUT"
    # The visit is over: its credential no longer opens anything.
    assert read_code(own, created["accessCode"]).status_code == 401


def test_visits_credential_follows_the_window(private) -> None:
    own, api, control, host = private
    body = invite_body(host, control, type="PIN", **window(control, start_days=-0.1, hours=6))
    created = api.post(INVITES, json=body).json()
    registration = created["registrationId"]
    later = at(control, hours=30)
    assert api.put(f"{INVITES}/{registration}", json={"expiry": later}).status_code == 200
    record = api.get(f"{INVITES}/{registration}").json()
    assert record["accessCode"] == created["accessCode"]  # same credential, new window
    reader = own.profile["virtual_reader"]
    with own.client(None) as anonymous:
        listed = anonymous.post(
            "/api/ws/v1/virtual/reader/list", json={"uuid": reader["uuid"], "key": reader["key"]}
        ).json()
    [entry] = [e for e in listed if e["code"] == created["accessCode"]]
    assert entry["holderType"] == "VISITOR"
    assert (entry["active"], entry["expiry"]) == (record["activation"], record["expiry"])


def test_visits_host_delete_cancels_hosted_visits(api, control, unique) -> None:
    host = new_host(api, unique)
    waiting = create(api, host, control)
    finished = create(api, host, control)
    assert change(api, finished, "VISIT_NO_SHOW").status_code == 200
    assert api.delete(f"/api/ws/v1/users/{host}").status_code == 200
    assert status_of(api, waiting) == "VISIT_CANCELLED"
    assert status_of(api, finished) == "VISIT_NO_SHOW"


def _deliveries_about(inbox: Any, identity: str, status: str) -> list[dict[str, Any]]:
    """Deliveries of that status whose visitor carries the identity number (polled briefly)."""
    deadline = time.monotonic() + 2.0
    while True:
        found = [
            d
            for d in inbox.of_status(status)
            if (d["payload"].get("visitor") or {}).get("identityNumber") == identity
        ]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def test_visits_send_one_event_per_move_and_denials_too(live, api, control, host, unique) -> None:
    hooks = pytest.importorskip("tests.reference_server.test_webhooks")
    with hooks.Receiver(hmac_key=hooks.HMAC_KEY, now=live.server.clock.timestamp) as receiver:
        hooks.integrate(live, receiver)
        try:
            registration = create(api, host, control, lastName="Before")
            api.put(f"{INVITES}/{registration}", json={"lastName": "After"})
            api.put(f"{INVITES}/{registration}", json={"lastName": "After"})  # 425: no event
            change(api, registration, "VISITOR_CHECK_IN")
            change(api, registration, "VISITOR_CHECK_OUT")
            identity = unique("ID")
            with watchlisted(api, unique, identityNumber=identity):
                body = invite_body(host, control, identityNumber=identity)
                assert api.post(INVITES, json=body).status_code == 451
            delivered = hooks.wait_for(receiver.inbox, registration, count=4, timeout=2.0)
            assert [d["status"] for d in delivered] == [
                "VISIT_CREATED",
                "VISIT_UPDATED",
                "VISITOR_CHECK_IN",
                "VISITOR_CHECK_OUT",
            ]
            assert delivered[2]["payload"]["arrivedAt"] and delivered[3]["payload"]["leftAt"]
            denied = _deliveries_about(receiver.inbox, identity, "VISIT_DENIED")
            assert len(denied) == 1 and denied[0]["path"] == "/visit/denied"
        finally:
            hooks.integrate(live, receiver, enabled=False)
