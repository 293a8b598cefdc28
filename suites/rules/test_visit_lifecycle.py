"""The visit lifecycle (VISIT- rules): every move through the status operation, the visitor
credential of the window, the watchlists consulted at registration and check-in, and the
host's invites and registrations views reflecting it all.

The visitor credential is observed through the virtual reader's valid-credential list (the
invitation does not expose a credential id); reads at the reader are physical.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

INVITES = "/api/ws/v1/invites"
Now = Callable[[], datetime]
PRE_ARRIVAL_TARGETS = ["VISITOR_CHECK_IN", "VISIT_NO_SHOW", "VISIT_CANCELLED", "VISIT_DENIED"]
RULE_OF = {
    "VISITOR_CHECK_IN": "VISIT-CHECK-IN",
    "VISIT_NO_SHOW": "VISIT-NO-SHOW",
    "VISIT_CANCELLED": "VISIT-CANCELLED",
    "VISIT_DENIED": "VISIT-DENIED",
}
MOVABLE = ["VISITOR_CHECK_IN", "VISITOR_CHECK_OUT", *PRE_ARRIVAL_TARGETS[1:]]
TERMINAL = ["VISITOR_CHECK_OUT", "VISIT_NO_SHOW", "VISIT_CANCELLED", "VISIT_DENIED"]
NEVER_REACHED = {"VISITOR_ON_SITE", "VISITOR_IN_PARKING", "VISITOR_HOSTED"}


# -- helpers ------------------------------------------------------------------------------
def iso(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{moment.microsecond // 1000:03d}Z"


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def control_path(control: httpx.Client, name: str) -> str:
    """``name`` under /_reference, whether the control client's base already ends there."""
    inside = control.base_url.path.rstrip("/").endswith("/_reference")
    return f"/{name}" if inside else f"/_reference/{name}"


@contextmanager
def moved_clock(control: httpx.Client) -> Iterator[Callable[[float], None]]:
    """Advance the target's clock inside the block; it is moved back by the same amount after."""
    path, total = control_path(control, "clock"), [0.0]

    def advance(seconds: float) -> None:
        assert control.put(path, json={"advance_seconds": seconds}).status_code == 200
        total[0] += seconds

    try:
        yield advance
    finally:
        if total[0]:
            control.put(path, json={"advance_seconds": -total[0]}).raise_for_status()


@pytest.fixture(scope="module")
def now(amws_run: Any) -> Iterator[Now]:
    """The target's now: its control-plane clock where it has one, else the wall clock."""
    control = amws_run.control()

    def read() -> datetime:
        if control is None:
            return datetime.now(UTC)
        return instant(control.get(control_path(control, "clock")).json()["now"])

    yield read
    if control is not None:
        control.close()


def new_host(api: Any, factories: Any) -> str:
    created = api.post("/api/ws/v1/users", json=factories.user())
    assert created.status_code == 201, created.text
    return created.json()["uuid"]


@pytest.fixture(scope="module")
def host(api: Any, factories: Any) -> str:
    return new_host(api, factories)


def invite(api, factories, host, now, start_h: float = -1, hours: float = 8, **fields) -> dict:
    """Create an invitation whose window starts ``start_h`` hours from the target's now."""
    start = now() + timedelta(hours=start_h)
    sent = factories.invite(host, activation=iso(start), expiry=iso(start + timedelta(hours=hours)))
    response = api.post(INVITES, json={**sent, **fields})
    assert response.status_code == 201, response.text
    return {**sent, **fields, **response.json()}


def read(api: Any, registration: str) -> dict[str, Any]:
    response = api.get(f"{INVITES}/{registration}")
    assert response.status_code == 200, response.text
    return response.json()


def status_of(api: Any, registration: str) -> str:
    response = api.get(f"{INVITES}/{registration}/status")
    assert response.status_code == 200, response.text
    return response.json()["status"]


def move(api: Any, registration: str, status: str, **kwargs: Any) -> httpx.Response:
    return api.put(f"{INVITES}/{registration}/status", json={"status": status}, **kwargs)


def update(api: Any, registration: str, factories: Any) -> None:
    changed = api.put(f"{INVITES}/{registration}", json={"lastName": factories.tag("moved")})
    assert changed.status_code == 200, changed.text


def watchlist(api: Any, factories: Any, enabled: bool, **entry: Any) -> str:
    created = api.post("/api/ws/v1/watchlists", json=factories.watchlist(enabled=enabled))
    assert created.status_code == 201, created.text
    uuid = created.json()["uuid"]
    added = api.post(f"/api/ws/v1/watchlists/{uuid}/entries", json=entry)
    assert added.status_code == 201, added.text
    return uuid


def valid_credentials(api: Any, profile: Any) -> list[dict[str, Any]]:
    reader = profile.section("virtual_reader")
    listed = api.post(
        "/api/ws/v1/virtual/reader/list", json={"uuid": reader["uuid"], "key": reader["key"]}
    )
    assert listed.status_code == 200, listed.text
    return listed.json()


def of_visitor(entries: list[dict[str, Any]], visitor: str) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("holderUuid") == visitor]


# -- moves --------------------------------------------------------------------------------
@pytest.mark.rule("VISIT-CREATED", "VISIT-UPDATED")
@pytest.mark.parametrize(
    "target",
    [pytest.param(t, marks=pytest.mark.rule(RULE_OF[t]), id=t) for t in PRE_ARRIVAL_TARGETS],
)
@pytest.mark.parametrize("updated", [False, True], ids=["from-created", "from-updated"])
def test_pre_arrival_visit_moves(api, factories, host, now, target: str, updated: bool) -> None:
    registration = invite(api, factories, host, now)["registrationId"]
    assert status_of(api, registration) == "VISIT_CREATED"
    if updated:
        for _ in range(2):  # updated again and again, still pre-arrival
            update(api, registration, factories)
            assert status_of(api, registration) == "VISIT_UPDATED"
    answer = move(api, registration, target)
    assert answer.status_code == 200, answer.text
    record = read(api, registration)
    assert record["status"] == target == status_of(api, registration)
    assert (record["arrivedAt"] is not None) is (target == "VISITOR_CHECK_IN")
    assert record["leftAt"] is None


@pytest.mark.rule("VISIT-CHECK-OUT", "VISIT-CHECK-IN")
def test_check_out_only_after_check_in(api, factories, host, now) -> None:
    registration = invite(api, factories, host, now)["registrationId"]
    assert move(api, registration, "VISITOR_CHECK_OUT").status_code == 409
    update(api, registration, factories)
    assert move(api, registration, "VISITOR_CHECK_OUT").status_code == 409
    assert status_of(api, registration) == "VISIT_UPDATED"
    assert move(api, registration, "VISITOR_CHECK_IN").status_code == 200
    assert move(api, registration, "VISITOR_CHECK_OUT").status_code == 200
    record = read(api, registration)
    assert record["status"] == "VISITOR_CHECK_OUT"
    assert record["arrivedAt"] is not None and record["leftAt"] is not None
    assert instant(record["leftAt"]) >= instant(record["arrivedAt"])


@pytest.mark.rule("VISIT-NO-SHOW", "VISIT-CANCELLED", "VISIT-DENIED")
def test_after_check_in_only_check_out_is_allowed(api, factories, host, now) -> None:
    registration = invite(api, factories, host, now)["registrationId"]
    assert move(api, registration, "VISITOR_CHECK_IN").status_code == 200
    for target in ("VISIT_NO_SHOW", "VISIT_CANCELLED", "VISIT_DENIED"):
        assert move(api, registration, target).status_code == 409, target
    assert api.delete(f"{INVITES}/{registration}").status_code == 409
    assert status_of(api, registration) == "VISITOR_CHECK_IN"


@pytest.mark.rule("VISIT-TERMINAL-STATES")
@pytest.mark.parametrize("terminal", TERMINAL)
def test_terminal_status_accepts_no_further_move(api, factories, host, now, terminal: str) -> None:
    registration = invite(api, factories, host, now)["registrationId"]
    if terminal == "VISITOR_CHECK_OUT":
        assert move(api, registration, "VISITOR_CHECK_IN").status_code == 200
    assert move(api, registration, terminal).status_code == 200
    for target in MOVABLE:
        assert move(api, registration, target).status_code == 409, target
        assert status_of(api, registration) == terminal
    assert status_of(api, registration) not in NEVER_REACHED


# -- the visitor credential -------------------------------------------------------------------
@pytest.mark.rule("VISIT-CREDENTIAL-WINDOW")
@pytest.mark.requires("virtual_reader")
def test_invitation_issues_a_visitor_credential_for_its_window(
    api, factories, host, now, profile
) -> None:
    pin = invite(api, factories, host, now, type="PIN")
    qr = invite(api, factories, host, now, type="QR_CODE")
    future = invite(api, factories, host, now, start_h=48)
    past = invite(api, factories, host, now, start_h=-72, hours=24)
    listed = valid_credentials(api, profile)
    for made in (pin, qr):
        stored = read(api, made["registrationId"])
        entries = of_visitor(listed, made["visitorId"])
        assert len(entries) == 1, (made["type"], entries)
        entry = entries[0]
        assert entry["holderType"] == "VISITOR"
        assert instant(entry["active"]) == instant(stored["activation"])
        assert instant(entry["expiry"]) == instant(stored["expiry"])
    pin_entry = of_visitor(listed, pin["visitorId"])[0]
    assert pin["accessCode"] == stored_code(pin_entry)
    assert not of_visitor(listed, future["visitorId"]) and not of_visitor(listed, past["visitorId"])


def stored_code(entry: dict[str, Any]) -> str:
    """The PIN of a valid-credential entry, as text."""
    return str(entry["pin"]) if entry.get("pin") is not None else entry.get("code", "")


@pytest.mark.rule("VISIT-CREDENTIAL-WINDOW")
@pytest.mark.requires("virtual_reader")
@pytest.mark.requires("control")
def test_credential_valid_only_while_the_window_is_open(
    api, control, factories, host, now, profile
) -> None:
    made = invite(api, factories, host, now, start_h=2, hours=1, type="PIN")
    assert not of_visitor(valid_credentials(api, profile), made["visitorId"])
    with moved_clock(control) as advance:
        advance(2.5 * 3600)  # inside the window
        assert len(of_visitor(valid_credentials(api, profile), made["visitorId"])) == 1
        advance(3600)  # past the expiry
        assert not of_visitor(valid_credentials(api, profile), made["visitorId"])


@pytest.mark.rule("VISIT-CANCEL-REVOKES-CREDENTIAL", "VISIT-CANCELLED")
@pytest.mark.requires("virtual_reader")
@pytest.mark.parametrize("how", ["cancelInvite", "changeInviteStatus"])
def test_cancelling_revokes_the_visitor_credential(
    api, factories, host, now, profile, how: str
) -> None:
    made = invite(api, factories, host, now, type="PIN")
    assert len(of_visitor(valid_credentials(api, profile), made["visitorId"])) == 1
    if how == "cancelInvite":
        assert api.delete(f"{INVITES}/{made['registrationId']}").status_code == 200
    else:
        assert move(api, made["registrationId"], "VISIT_CANCELLED").status_code == 200
    assert not of_visitor(valid_credentials(api, profile), made["visitorId"])


@pytest.mark.rule("VISIT-CANCEL-REVOKES-CREDENTIAL", "VISIT-CREDENTIAL-WINDOW")
@pytest.mark.requires("virtual_reader")
@pytest.mark.physical
def test_cancelled_access_code_is_refused_at_the_reader(api, factories, host, now, profile) -> None:
    reader = profile.section("virtual_reader")
    kept = invite(api, factories, host, now, type="PIN")
    cancelled = invite(api, factories, host, now, type="PIN")
    assert api.delete(f"{INVITES}/{cancelled['registrationId']}").status_code == 200
    for made, status in ((kept, 200), (cancelled, 401)):
        presented = {"uuid": reader["uuid"], "key": reader["key"], "code": made["accessCode"]}
        answer = api.post("/api/ws/v1/virtual/reader", json=presented)
        assert answer.status_code == status, (made["registrationId"], answer.text)


# -- watchlists at registration and check-in -----------------------------------------------
@pytest.mark.rule(
    "VISIT-WATCHLIST-CONSULTED",
    "WL-CONSULTED-ON-ARRIVAL",
    "WL-DISABLED-NOT-CONSULTED",
    "INV-WATCHLIST-451",
)
def test_enabled_watchlists_refuse_registration_disabled_ones_do_not(
    api, factories, host, now
) -> None:
    ids = [factories.tag("id") for _ in range(3)]
    for identity in ids[:2]:  # two enabled watchlists: every one of them is consulted
        watchlist(api, factories, True, identityNumber=identity)
    watchlist(api, factories, False, identityNumber=ids[2])
    start = now() - timedelta(hours=1)
    for identity in ids[:2]:
        sent = factories.invite(host, activation=iso(start), expiry=iso(start + timedelta(hours=8)))
        assert api.post(INVITES, json={**sent, "identityNumber": identity}).status_code == 451
    admitted = invite(api, factories, host, now, identityNumber=ids[2])
    assert move(api, admitted["registrationId"], "VISITOR_CHECK_IN").status_code == 200
    assert status_of(api, admitted["registrationId"]) == "VISITOR_CHECK_IN"


@pytest.mark.rule("VISIT-DENIED-ON-WATCHLIST", "INV-WATCHLIST-451", "VISIT-WATCHLIST-CONSULTED")
def test_update_into_a_watchlist_match_denies_the_visit(api, factories, host, now) -> None:
    made = invite(api, factories, host, now)
    identity = factories.tag("id")
    watchlist(api, factories, True, identityNumber=identity)
    for _ in range(2):
        answer = api.put(f"{INVITES}/{made['registrationId']}", json={"identityNumber": identity})
        assert answer.status_code == 451, answer.text
    assert status_of(api, made["registrationId"]) == "VISIT_DENIED"


@pytest.mark.rule("VISIT-DENIED-ON-WATCHLIST", "INV-WATCHLIST-451")
@pytest.mark.requires("virtual_reader")
def test_watchlist_denial_leaves_no_usable_credential(api, factories, host, now, profile) -> None:
    refused_identity, later_identity = factories.tag("id"), factories.tag("id")
    watchlist(api, factories, True, identityNumber=refused_identity)
    start = now() - timedelta(hours=1)
    sent = factories.invite(host, activation=iso(start), expiry=iso(start + timedelta(hours=8)))
    assert api.post(INVITES, json={**sent, "identityNumber": refused_identity}).status_code == 451
    made = invite(api, factories, host, now, type="PIN")
    assert of_visitor(valid_credentials(api, profile), made["visitorId"])
    watchlist(api, factories, True, identityNumber=later_identity)
    changed = {"identityNumber": later_identity}
    assert api.put(f"{INVITES}/{made['registrationId']}", json=changed).status_code == 451
    listed = valid_credentials(api, profile)
    assert not of_visitor(listed, made["visitorId"])
    assert not [e for e in listed if sent["lastName"] in (e.get("holderName") or "")]


@pytest.mark.rule(
    "VISIT-WATCHLIST-CONSULTED", "WL-CONSULTED-ON-ARRIVAL", "WL-DISABLED-NOT-CONSULTED"
)
@pytest.mark.requires("control")
def test_watchlists_consulted_again_at_check_in(api, control, factories, host, now) -> None:
    """Observable on the reference server only: a match at check-in is no quiet admission."""
    listed, unlisted = (
        invite(api, factories, host, now, identityNumber=factories.tag("id")) for _ in "ab"
    )
    watchlist(api, factories, False, identityNumber=unlisted["identityNumber"])
    watchlist(api, factories, True, identityNumber=listed["identityNumber"])
    assert move(api, unlisted["registrationId"], "VISITOR_CHECK_IN").status_code == 200
    # The reference server answers 451 here, a status the spec does not list for this
    # operation (the documents leave the check-in answer to a match open), hence checks=False.
    answer = move(api, listed["registrationId"], "VISITOR_CHECK_IN", checks=False)
    assert answer.status_code != 200
    assert status_of(api, listed["registrationId"]) != "VISITOR_CHECK_IN"


# -- the host's views ---------------------------------------------------------------------
@pytest.mark.rule(
    "VISIT-CHECK-IN",
    "VISIT-CANCELLED",
    "VISIT-NO-SHOW",
    "USER-INVITES-WINDOW",
    "USER-REGISTRATIONS-STATUS",
)
def test_host_views_reflect_the_lifecycle(api, factories, now) -> None:
    host = new_host(api, factories)
    day = 24.0
    inside = {
        "checked-in": invite(api, factories, host, now)["registrationId"],
        "cancelled": invite(api, factories, host, now, start_h=300 * day)["registrationId"],
        "no-show": invite(api, factories, host, now, start_h=-50 * day)["registrationId"],
        "updated": invite(api, factories, host, now, start_h=day)["registrationId"],
    }
    outside = {
        invite(api, factories, host, now, start_h=-71 * day, hours=day)["registrationId"],
        invite(api, factories, host, now, start_h=400 * day)["registrationId"],
    }
    assert move(api, inside["checked-in"], "VISITOR_CHECK_IN").status_code == 200
    assert api.delete(f"{INVITES}/{inside['cancelled']}").status_code == 200
    assert move(api, inside["no-show"], "VISIT_NO_SHOW").status_code == 200
    update(api, inside["updated"], factories)
    expected = {r: status_of(api, r) for r in [*inside.values(), *outside]}
    assert [expected[inside[k]] for k in ("checked-in", "cancelled", "no-show", "updated")] == [
        "VISITOR_CHECK_IN", "VISIT_CANCELLED", "VISIT_NO_SHOW", "VISIT_UPDATED",
    ]  # fmt: skip
    hosted = api.get(f"/api/ws/v1/users/{host}/invites")
    assert hosted.status_code == 200
    assert {e["registrationId"]: e["status"] for e in hosted.json()} == {
        r: expected[r] for r in inside.values()
    }
    pages = {}
    for status in ("ALL", None, "NOT_A_STATE", "FINALISED", "APPROVE", "WAITING"):
        params = {"limit": 500} if status is None else {"limit": 500, "status": status}
        page = api.get(f"/api/ws/v1/users/{host}/registrations", params=params).json()
        pages[status] = {e["registrationId"]: e for e in page["entries"]}
    assert {r: e["status"] for r, e in pages["ALL"].items()} == expected
    assert pages[None].keys() == pages["NOT_A_STATE"].keys() == pages["ALL"].keys()
    for state in ("FINALISED", "APPROVE", "WAITING"):
        wanted = {r for r, e in pages["ALL"].items() if e.get("registrationStatus") == state}
        assert set(pages[state]) == wanted, state
