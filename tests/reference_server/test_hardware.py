"""Simulated controllers: exactly the ACTIVE credentials, pushed on writes and clock moves."""

from __future__ import annotations

import httpx

from amws_conformance.reference_server.domain import credentials
from amws_conformance.reference_server.hardware import controllers
from tests.reference_server.conftest import LiveServer
from tests.reference_server.test_credentials import (
    CREDS,
    HARDWARE,
    acl_uuids,
    advance,
    at,
    held,
    issue,
    new_person,
    new_user,
    read,
    server_now,
)


def _controller_holding(control: httpx.Client, uuid: str) -> dict:
    return next(
        c for c in control.get(HARDWARE).json() if uuid in {e["uuid"] for e in c["credentials"]}
    )


def _phonebook(control: httpx.Client) -> set[str]:
    return {entry["uuid"] for c in control.get(HARDWARE).json() for entry in c["phonebook"]}


def test_controller_listing_shape(api: httpx.Client, control: httpx.Client, unique) -> None:
    uuid = issue(api, {"personUuid": new_person(api, unique)})
    listing = control.get(HARDWARE)
    assert listing.status_code == 200
    for controller in listing.json():
        assert set(controller) >= {"controller", "points", "credentials", "phonebook"}
    mine = _controller_holding(control, uuid)
    points = {p["uuid"] for p in api.get("/api/ws/v1/access-control-points").json()}
    assert set(mine["points"]) == points
    entry = next(e for e in mine["credentials"] if e["uuid"] == uuid)
    assert set(entry) >= {"uuid", "identifier", "status"}


def test_controllers_hold_exactly_the_active_credentials(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    holder = {"personUuid": new_person(api, unique)}
    active = issue(api, holder)
    others = [
        issue(api, holder, activeDate=at(control, 600)),
        issue(api, holder, expiryDate=at(control, -60)),
        issue(api, holder, status="DISABLED"),
        issue(api, holder, status="STOLEN"),
    ]
    deleted = issue(api, holder)
    assert api.delete(f"{CREDS}/{deleted}").status_code == 200
    on_hardware = held(control)
    assert active in on_hardware
    assert not {*others, deleted} & set(on_hardware)
    assert {entry["status"] for entry in on_hardware.values()} == {"ACTIVE"}


def test_credential_write_is_pushed_with_window_and_lists(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    lobby, door = acl_uuids(api)[2], acl_uuids(api)[0]
    uuid = issue(api, {"personUuid": new_person(api, unique)}, accessControlListUuids=[lobby])
    expiry = at(control, 7200)
    change = {"expiryDate": expiry, "accessControlListUuids": [door], "useLimit": 2}
    assert api.put(f"{CREDS}/{uuid}", json=change).status_code == 200
    entry = held(control)[uuid]
    assert entry["expiryDate"] == expiry and entry["useLimit"] == 2
    assert entry["accessControlListUuids"] == [door]
    main_entrance = next(
        p["uuid"] for p in api.get("/api/ws/v1/access-control-points").json() if p["type"] == "DOOR"
    )
    assert entry["points"] == [main_entrance]


def test_clock_move_pushes_the_opening_window(
    api: httpx.Client, control: httpx.Client, live: LiveServer, unique
) -> None:
    uuid = issue(
        api,
        {"personUuid": new_person(api, unique)},
        activeDate=at(control, 30),
        expiryDate=at(control, 90),
    )
    system = live.server.systems()[0]

    def stored() -> set[str]:
        # The stored controller state, read without the listing's own refresh.
        return {
            e["uuid"]
            for c in controllers.controllers_of(live.server, system)
            for e in c["credentials"]
        }

    assert uuid not in stored()
    advance(control, 45)
    assert uuid in stored()
    advance(control, 60)
    assert uuid not in stored()


def test_phonebook_holds_persons_with_active_credentials(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    active_holder, waiting_holder = new_person(api, unique), new_person(api, unique)
    uuid = issue(api, {"personUuid": active_holder})
    issue(api, {"personUuid": waiting_holder}, activeDate=at(control, 600))
    user = new_user(api, unique)
    issue(api, {"userUuid": user})
    phonebook = _phonebook(control)
    assert active_holder in phonebook
    assert waiting_holder not in phonebook and user not in phonebook
    assert api.put(f"{CREDS}/{uuid}", json={"status": "DISABLED"}).status_code == 200
    assert active_holder not in _phonebook(control)


def test_other_systems_credentials_stay_on_their_own_controller(
    live: LiveServer, control: httpx.Client, unique
) -> None:
    with live.client("other_system") as other:
        uuid = issue(other, {"personUuid": new_person(other, unique)})
    controller = _controller_holding(control, uuid)
    assert controller["system"] == live.server.systems()[1]


def test_visitor_pin_credential_is_issued_for_the_invite_window(
    api: httpx.Client, control: httpx.Client, live: LiveServer
) -> None:
    system = live.server.systems()[0]
    invite = {
        "uuid": "6f1c1a1e-0000-4000-8000-0000000000a1",
        "visitorId": "6f1c1a1e-0000-4000-8000-0000000000a2",
        "activation": at(control, -60),
        "expiry": at(control, 3600),
    }
    uuid, code = credentials.issue_visitor_credential(live.server, system, invite, "PIN")
    assert len(code) == 6 and code.isdigit()
    body = read(api, uuid)
    assert body["type"] == "VISITOR" and body["readerType"] == "PIN"
    assert body["holderUuid"] == invite["visitorId"] and body["status"] == "ACTIVE"
    assert (body["activeDate"], body["expiryDate"]) == (invite["activation"], invite["expiry"])
    reader_point = live.profile["virtual_reader"]["access_control_point"]
    assert reader_point in held(control)[uuid]["points"]
    assert held(control)[uuid]["identifier"] == code
    credentials.revoke(live.server, system, uuid)
    assert read(api, uuid)["status"] == "DISABLED"
    assert uuid not in held(control)


def test_visitor_qr_credentials_get_distinct_codes(
    api: httpx.Client, control: httpx.Client, live: LiveServer
) -> None:
    system = live.server.systems()[0]
    start = server_now(control)
    invite = {
        "visitorId": "6f1c1a1e-0000-4000-8000-0000000000a3",
        "activation": start,
        "expiry": at(control, 600),
    }
    issued = [
        credentials.issue_visitor_credential(live.server, system, invite, "QR_CODE")
        for _ in range(3)
    ]
    assert len({code for _, code in issued}) == 3
    for uuid, code in issued:
        body = read(api, uuid)
        assert body["readerType"] == "QR_CODE" and body["uniqueIdentifier"] == code
