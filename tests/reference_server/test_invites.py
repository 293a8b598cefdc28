"""Visitor invitations of the reference server (INV- rules), through HTTP."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from amws_conformance.reference_server._time import format_instant, parse_instant

INVITES = "/api/ws/v1/invites"
READ_FIELDS = {
    "registrationId",
    "visitorId",
    "firstName",
    "lastName",
    "email",
    "mobile",
    "identityNumber",
    "alternativeNumber",
    "visitType",
    "activation",
    "expiry",
    "location",
    "hostUser",
    "visitReason",
    "type",
    "accessCode",
    "qrCodeUrl",
    "inviteLink",
    "inviteTextMessage",
    "status",
    "arrivedAt",
    "leftAt",
}
ENTRY_FIELDS = {
    "registrationId",
    "visitorId",
    "firstName",
    "lastName",
    "activation",
    "expiry",
    "type",
    "accessCode",
    "qrCodeUrl",
    "inviteLink",
    "inviteTextMessage",
    "status",
}


# -- helpers shared with test_visits.py and test_faults_invites.py -------------------------
def server_now(control: httpx.Client) -> datetime:
    return parse_instant(control.get("/_reference/clock").json()["now"])


def at(control: httpx.Client, **delta: float) -> str:
    """An instant relative to the server clock, in the request format."""
    return format_instant(server_now(control) + timedelta(**delta))


def new_host(api: httpx.Client, unique: Callable[[str], str]) -> str:
    created = api.post("/api/ws/v1/users", json={"email": f"{unique('host')}@example.com"})
    assert created.status_code == 201, created.text
    return created.json()["uuid"]


def window(control: httpx.Client, start_days: float = 1, hours: float = 8) -> dict[str, str]:
    start = server_now(control) + timedelta(days=start_days)
    return {
        "activation": format_instant(start),
        "expiry": format_instant(start + timedelta(hours=hours)),
    }


def invite_body(host: str, control: httpx.Client, **fields: Any) -> dict[str, Any]:
    """A valid body; a field given as None is left out."""
    body = {**window(control), "hostUser": host, "firstName": "Ada", **fields}
    return {k: v for k, v in body.items() if v is not None}


def create(api: httpx.Client, host: str, control: httpx.Client, **fields: Any) -> str:
    response = api.post(INVITES, json=invite_body(host, control, **fields))
    assert response.status_code == 201, response.text
    return response.json()["registrationId"]


def total(api: httpx.Client, **query: Any) -> int:
    return api.get(INVITES, params={"limit": 1, **query}).json()["totalCount"]


@contextmanager
def settings(control: httpx.Client, **changes: Any) -> Iterator[None]:
    """Change administrator settings for the block, then put the old values back."""
    before = control.get("/_reference/settings").json()
    assert control.put("/_reference/settings", json=changes).status_code == 200
    try:
        yield
    finally:
        control.put("/_reference/settings", json={k: before[k] for k in changes})


@contextmanager
def watchlisted(api: httpx.Client, unique: Callable[[str], str], **entry: Any) -> Iterator[str]:
    """An enabled watchlist holding one entry; deleted afterwards so others are not caught."""
    created = api.post("/api/ws/v1/watchlists", json={"name": unique("wl"), "enabled": True})
    assert created.status_code == 201, created.text
    watchlist = created.json()["uuid"]
    added = api.post(f"/api/ws/v1/watchlists/{watchlist}/entries", json=entry)
    assert added.status_code == 201, added.text
    try:
        yield watchlist
    finally:
        api.delete(f"/api/ws/v1/watchlists/{watchlist}")


@pytest.fixture
def host(api: httpx.Client, unique: Callable[[str], str]) -> str:
    return new_host(api, unique)


# -- create --------------------------------------------------------------------------------
def test_invites_create_answers_201_with_handles(api, control, host) -> None:
    response = api.post(INVITES, json=invite_body(host, control))
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {
        "code",
        "message",
        "registrationId",
        "visitorId",
        "type",
        "accessCode",
        "inviteLink",
    }
    assert body["code"] == 201 and body["message"] == "created"
    assert uuidlib.UUID(body["registrationId"]) and uuidlib.UUID(body["visitorId"])
    assert body["type"] == "QR_CODE"  # the default credential type
    assert body["accessCode"] and body["inviteLink"]


def test_invites_registration_id_addresses_the_record(api, control, host) -> None:
    registration = create(api, host, control, lastName="Lovelace")
    record = api.get(f"{INVITES}/{registration}")
    assert record.status_code == 200
    body = record.json()
    assert set(body) == READ_FIELDS
    assert body["registrationId"] == registration
    assert body["hostUser"] == host and body["lastName"] == "Lovelace"
    assert body["status"] == "VISIT_CREATED"
    status = api.get(f"{INVITES}/{registration}/status").json()
    assert status == {"registrationId": registration, "status": "VISIT_CREATED"}


def test_invites_window_is_rounded_on_create_and_update(api, control, host) -> None:
    day = (server_now(control) + timedelta(days=3)).strftime("%Y-%m-%d")
    registration = create(
        api,
        host,
        control,
        activation=f"{day}T09:00:30.500Z",
        expiry=f"{day}T17:00:10.000Z",
    )
    record = api.get(f"{INVITES}/{registration}").json()
    assert record["activation"] == f"{day}T09:00:00.000Z"
    assert parse_instant(record["expiry"]).replace(microsecond=0) == parse_instant(
        f"{day}T17:00:59Z"
    )
    changed = api.put(
        f"{INVITES}/{registration}",
        json={"activation": f"{day}T10:15:45.000+02:00", "expiry": f"{day}T18:30:00.000Z"},
    )
    assert changed.status_code == 200
    record = api.get(f"{INVITES}/{registration}").json()
    assert record["activation"] == f"{day}T08:15:00.000Z"
    assert record["expiry"].startswith(f"{day}T18:30:59")


def test_invites_accept_underscore_and_camel_spellings(api, control, host) -> None:
    old = create(
        api,
        host,
        control,
        firstName=None,
        first_name="Grace",
        last_name="Hopper",
        identity_number="ID-1",
        alternative_number="ALT-1",
        visit_type="audit",
    )
    new = create(
        api,
        host,
        control,
        firstName="Grace",
        lastName="Hopper",
        identityNumber="ID-1",
        alternativeNumber="ALT-1",
        visitType="audit",
    )
    fields = ("firstName", "lastName", "identityNumber", "alternativeNumber", "visitType")
    old_record = api.get(f"{INVITES}/{old}").json()
    new_record = api.get(f"{INVITES}/{new}").json()
    assert {f: old_record[f] for f in fields} == {f: new_record[f] for f in fields}
    assert not any("_" in name for name in old_record)
    # Both spellings at once: the camelCase value wins.
    both = create(api, host, control, firstName="Camel", first_name="Under")
    assert api.get(f"{INVITES}/{both}").json()["firstName"] == "Camel"
    api.put(f"{INVITES}/{both}", json={"last_name": "Case"})
    assert api.get(f"{INVITES}/{both}").json()["lastName"] == "Case"


def test_invites_missing_references_are_422_and_create_nothing(api, control, host) -> None:
    before = total(api)
    unknown = str(uuidlib.uuid4())
    for field in ("hostUser", "visitReason", "location"):
        response = api.post(INVITES, json=invite_body(host, control, **{field: unknown}))
        assert response.status_code == 422, field
        assert f"@{field}" in response.json()["reason"]
        assert unknown not in response.text
    assert total(api) == before


def test_invites_location_by_uuid_or_name(api, control, host, unique) -> None:
    name = unique("lobby")
    location = api.post("/api/ws/v1/locations", json={"name": name, "type": "AREA"})
    assert location.status_code == 201, location.text
    location_uuid = location.json()["uuid"]
    by_uuid = create(api, host, control, location=location_uuid)
    by_name = create(api, host, control, location=name.upper())
    assert api.get(f"{INVITES}/{by_uuid}").json()["location"] == location_uuid
    assert api.get(f"{INVITES}/{by_name}").json()["location"] == location_uuid


def test_invites_unknown_location_name_follows_the_setting(api, control, host, unique) -> None:
    body = invite_body(host, control, location=unique("nowhere"))
    refused = api.post(INVITES, json=body)
    assert refused.status_code == 422 and "@location" in refused.json()["reason"]
    with settings(control, location_name_tolerant=True):
        accepted = api.post(INVITES, json=body)
        assert accepted.status_code == 201
        # An unknown UUID is still a broken reference, tolerance or not.
        still = api.post(INVITES, json={**body, "location": str(uuidlib.uuid4())})
        assert still.status_code == 422
    record = api.get(f"{INVITES}/{accepted.json()['registrationId']}").json()
    assert record["location"] is None


def test_invites_mandatory_visitor_fields(api, control, host) -> None:
    body = invite_body(host, control)
    del body["firstName"]
    assert api.post(INVITES, json=body).status_code == 422
    blank = api.post(INVITES, json={**body, "firstName": "  "})
    assert blank.status_code == 422 and "@firstName" in blank.json()["reason"]
    with settings(control, mandatory_visitor_fields=["firstName", "email", "last_name"]):
        missing = api.post(INVITES, json={**body, "firstName": "Ada"})
        assert missing.status_code == 422
        assert set(missing.json()["errors"]) == {"email", "lastName"}
        full = {**body, "firstName": "Ada", "email": "ada@example.com", "lastName": "L"}
        assert api.post(INVITES, json=full).status_code == 201


def test_invites_required_fields_and_limits(api, control, host) -> None:
    body = invite_body(host, control)
    for field in ("activation", "expiry", "hostUser"):
        response = api.post(INVITES, json={k: v for k, v in body.items() if k != field})
        assert response.status_code == 422 and f"@{field}" in response.json()["reason"]
    for field, value in (
        ("firstName", "x" * 51),
        ("email", "not-an-address"),
        ("mobile", "0821234567"),
        ("type", "OTHER"),
        ("location", "x"),
    ):
        response = api.post(INVITES, json={**body, field: value})
        assert response.status_code == 422, field
        assert f"@{field}" in response.json()["reason"]


def test_invites_expiry_must_follow_activation(api, control, host) -> None:
    body = invite_body(host, control)
    same = api.post(INVITES, json={**body, "expiry": body["activation"]})
    assert same.status_code == 422 and "@expiry" in same.json()["reason"]
    # As sent, not as rounded: 09:00:30 -> 09:00:10 is refused though rounding would widen it.
    day = (server_now(control) + timedelta(days=2)).strftime("%Y-%m-%d")
    early = {"activation": f"{day}T09:00:30.000Z", "expiry": f"{day}T09:00:10.000Z"}
    assert api.post(INVITES, json={**body, **early}).status_code == 422
    registration = create(api, host, control)
    stored = api.get(f"{INVITES}/{registration}").json()
    late = format_instant(parse_instant(stored["expiry"]) + timedelta(hours=1))
    response = api.put(f"{INVITES}/{registration}", json={"activation": late})
    assert response.status_code == 422 and "@expiry" in response.json()["reason"]
    assert api.get(f"{INVITES}/{registration}").json() == stored


def test_invites_pin_access_code_is_the_pin(api, control, host) -> None:
    created = api.post(INVITES, json=invite_body(host, control, type="PIN")).json()
    assert created["type"] == "PIN"
    assert created["accessCode"].isdigit()
    record = api.get(f"{INVITES}/{created['registrationId']}").json()
    assert record["accessCode"] == created["accessCode"] and record["type"] == "PIN"


def test_invites_reason_text_survives_reason_delete(api, control, host, unique) -> None:
    reason = api.post("/api/ws/v1/visit-reason", json={"name": unique("reason")})
    assert reason.status_code == 201, reason.text
    reason_uuid = reason.json()["uuid"]
    registration = create(api, host, control, visitReason=reason_uuid)
    assert api.get(f"{INVITES}/{registration}").json()["visitReason"] == reason_uuid
    assert api.delete(f"/api/ws/v1/visit-reason/{reason_uuid}").status_code == 200
    record = api.get(f"{INVITES}/{registration}")
    assert record.status_code == 200 and record.json()["visitReason"] is None
    again = api.post(INVITES, json=invite_body(host, control, visitReason=reason_uuid))
    assert again.status_code == 422


# -- watchlists ----------------------------------------------------------------------------
def test_invites_watchlist_match_is_451_again_and_creates_nothing(
    api, control, host, unique
) -> None:
    identity = unique("ID")
    body = invite_body(host, control, identity_number=identity)
    with watchlisted(api, unique, identityNumber=identity):
        before = total(api)
        for _ in range(2):
            refused = api.post(INVITES, json=body)
            assert refused.status_code == 451
            assert set(refused.json()) == {"code", "reason"}
        assert total(api) == before
    assert api.post(INVITES, json=body).status_code == 201


def test_invites_disabled_watchlist_is_not_consulted(api, control, host, unique) -> None:
    identity = unique("ID")
    with watchlisted(api, unique, identityNumber=identity) as watchlist:
        api.put(f"/api/ws/v1/watchlists/{watchlist}", json={"name": unique("wl"), "enabled": False})
        response = api.post(INVITES, json=invite_body(host, control, identityNumber=identity))
        assert response.status_code == 201


def test_invites_update_onto_watchlist_is_451_and_denies(api, control, host, unique) -> None:
    registration = create(api, host, control)
    identity = unique("ID")
    with watchlisted(api, unique, identityNumber=identity):
        for _ in range(2):
            response = api.put(f"{INVITES}/{registration}", json={"identityNumber": identity})
            assert response.status_code == 451
    record = api.get(f"{INVITES}/{registration}").json()
    assert record["status"] == "VISIT_DENIED" and record["identityNumber"] is None


# -- list ----------------------------------------------------------------------------------
def test_invites_list_envelope_defaults_and_paging(api, control, host) -> None:
    for _ in range(3):
        create(api, host, control)
    page = api.get(INVITES).json()
    assert set(page) == {"entries", "startIndex", "countReturned", "totalCount"}
    assert page["startIndex"] == 0
    assert page["countReturned"] == len(page["entries"]) == min(100, page["totalCount"])
    assert set(page["entries"][0]) == ENTRY_FIELDS
    seen, start = [], 0
    while True:
        chunk = api.get(INVITES, params={"start": start, "limit": 2}).json()
        assert chunk["startIndex"] == start and chunk["countReturned"] <= 2
        seen += [e["registrationId"] for e in chunk["entries"]]
        if chunk["startIndex"] + chunk["countReturned"] >= chunk["totalCount"]:
            break
        start += 2
    assert len(seen) == len(set(seen)) == chunk["totalCount"]


def test_invites_list_limit_outside_range_is_400(api) -> None:
    for limit in (0, 1001):
        assert api.get(INVITES, params={"limit": limit}).status_code == 400
    assert api.get(INVITES, params={"limit": 1000}).status_code == 200
    assert api.get(INVITES, params={"start": -1}).status_code == 400


def test_invites_list_time_filters(api, control, host) -> None:
    past = create(api, host, control, **window(control, start_days=-2, hours=1))
    current = create(api, host, control, **window(control, start_days=-0.5, hours=24))
    future = create(api, host, control, **window(control, start_days=2))

    def listed(value: str) -> set[str]:
        entries = api.get(INVITES, params={"filter": value, "limit": 1000}).json()["entries"]
        return {e["registrationId"] for e in entries} & {past, current, future}

    assert listed("ALL") == {past, current, future}
    assert listed("CURRENT") == {current}
    assert listed("FUTURE") == {future}
    assert listed("PAST") == {past}
    assert listed("SOMETIME") == {past, current, future}


def test_invites_list_visitor_filter(api, control, host, unique) -> None:
    identity = unique("ID")
    first = api.post(INVITES, json=invite_body(host, control, identityNumber=identity)).json()
    second = api.post(INVITES, json=invite_body(host, control, identityNumber=identity)).json()
    create(api, host, control)
    assert first["visitorId"] == second["visitorId"]  # the same visitor is reused
    page = api.get(INVITES, params={"visitorUUID": first["visitorId"]}).json()
    assert page["totalCount"] == 2
    assert {e["registrationId"] for e in page["entries"]} == {
        first["registrationId"],
        second["registrationId"],
    }
    assert all(e["visitorId"] == first["visitorId"] for e in page["entries"])


# -- update --------------------------------------------------------------------------------
def test_invites_update_is_partial(api, control, host) -> None:
    registration = create(api, host, control, lastName="Before", email="a@example.com")
    before = api.get(f"{INVITES}/{registration}").json()
    response = api.put(f"{INVITES}/{registration}", json={"lastName": "After"})
    assert response.status_code == 200
    assert response.json() == {"code": 200, "message": "success", "uuid": registration}
    after = api.get(f"{INVITES}/{registration}").json()
    assert after["lastName"] == "After" and after["status"] == "VISIT_UPDATED"
    unchanged = {k for k in READ_FIELDS if k not in ("lastName", "status", "inviteTextMessage")}
    assert {k: after[k] for k in unchanged} == {k: before[k] for k in unchanged}


def test_invites_identical_update_is_425_and_changes_nothing(api, control, host) -> None:
    body = invite_body(host, control, lastName="Same")
    registration = api.post(INVITES, json=body).json()["registrationId"]
    before = api.get(f"{INVITES}/{registration}").json()
    for repeat in (body, {"lastName": "Same"}, {"last_name": "Same"}, {}):
        response = api.put(f"{INVITES}/{registration}", json=repeat)
        assert response.status_code == 425, repeat
    assert api.get(f"{INVITES}/{registration}").json() == before


def test_invites_update_closed_visit_is_409(api, control, host) -> None:
    registration = create(api, host, control)
    cancel = {"status": "VISIT_CANCELLED"}
    assert api.put(f"{INVITES}/{registration}/status", json=cancel).status_code == 200
    response = api.put(f"{INVITES}/{registration}", json={"lastName": "Late"})
    assert response.status_code == 409
    assert api.get(f"{INVITES}/{registration}").json()["lastName"] is None


def test_invites_update_checks_references(api, control, host) -> None:
    registration = create(api, host, control)
    before = api.get(f"{INVITES}/{registration}").json()
    response = api.put(f"{INVITES}/{registration}", json={"hostUser": str(uuidlib.uuid4())})
    assert response.status_code == 422 and "@hostUser" in response.json()["reason"]
    assert api.get(f"{INVITES}/{registration}").json() == before


def test_invites_unknown_registration_is_404(api) -> None:
    unknown = f"{INVITES}/{uuidlib.uuid4()}"
    assert api.get(unknown).status_code == 404
    assert api.put(unknown, json={"lastName": "X"}).status_code == 404
    assert api.delete(unknown).status_code == 404
    assert api.get(f"{unknown}/status").status_code == 404
    assert api.put(f"{unknown}/status", json={"status": "VISITOR_CHECK_IN"}).status_code == 404
    assert api.get(f"{INVITES}/not-a-uuid").status_code == 422


def test_invites_other_system_cannot_see_them(live, api, control, host) -> None:
    registration = create(api, host, control)
    with live.client("other_system") as other:
        assert other.get(f"{INVITES}/{registration}").status_code == 404
        entries = other.get(INVITES, params={"limit": 1000}).json()["entries"]
        assert registration not in {e["registrationId"] for e in entries}
