"""Credentials as the reference server implements them (the CRED- rules), through HTTP."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest

from amws_conformance.reference_server._time import format_instant, parse_instant
from tests.reference_server.conftest import LiveServer

CREDS = "/api/ws/v1/credentials"
HARDWARE = "/_reference/hardware/credentials"


# -- helpers shared with the hardware and fault tests ------------------------------------------
def new_person(api: httpx.Client, unique: Callable[[str], str]) -> str:
    response = api.post("/api/ws/v1/persons", json={"firstName": unique("Ann"), "lastName": "Lee"})
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def new_user(api: httpx.Client, unique: Callable[[str], str]) -> str:
    body = {"email": f"{unique('u')}@example.com", "firstName": unique("Bo"), "lastName": "Ng"}
    response = api.post("/api/ws/v1/users", json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def acl_uuids(api: httpx.Client) -> list[str]:
    """The system's lists, as many as one credential may carry (50)."""
    return [acl["uuid"] for acl in api.get("/api/ws/v1/access-control-lists").json()][:50]


def issue(api: httpx.Client, holder: dict[str, str], **fields: Any) -> str:
    body = {"readerType": "CONTACTLESS_CARD", **holder, **fields}
    response = api.post(CREDS, json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def card(unique: Callable[[str], str]) -> str:
    return unique("CARD")


def read(api: httpx.Client, uuid: str) -> dict[str, Any]:
    response = api.get(f"{CREDS}/{uuid}")
    assert response.status_code == 200, response.text
    return response.json()


def server_now(control: httpx.Client) -> Any:
    return parse_instant(control.get("/_reference/clock").json()["now"])


def at(control: httpx.Client, seconds: float) -> str:
    """A request timestamp ``seconds`` from the server's now."""
    return format_instant(server_now(control) + timedelta(seconds=seconds))


def advance(control: httpx.Client, seconds: float) -> None:
    assert control.put("/_reference/clock", json={"advance_seconds": seconds}).status_code == 200


def held(control: httpx.Client) -> dict[str, dict[str, Any]]:
    """Credential uuid -> held entry, over every controller."""
    return {
        entry["uuid"]: entry
        for controller in control.get(HARDWARE).json()
        for entry in controller["credentials"]
    }


# -- create, read, holders --------------------------------------------------------------------
def test_credential_read_shape_with_holder_names_and_extensions(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    person = new_person(api, unique)
    names = api.get(f"/api/ws/v1/persons/{person}").json()
    acl = acl_uuids(api)[0]
    identifier = card(unique)
    uuid = issue(
        api,
        {"personUuid": person},
        uniqueIdentifier=identifier,
        useLimit=3,
        comments="front desk",
        accessControlListUuids=[acl],
        expiryDate=at(control, 3600),
    )
    body = read(api, uuid)
    assert body["uuid"] == uuid and body["readerType"] == "CONTACTLESS_CARD"
    assert body["status"] == "ACTIVE" and body["type"] == "PERSONNEL"
    assert body["uniqueIdentifier"] == identifier
    assert body["holderUuid"] == person
    assert body["holderFirstName"] == names["firstName"]
    assert body["holderLastName"] == names["lastName"]
    assert body["activeDate"] is None and body["expiryDate"].endswith("Z")
    assert body["useLimit"] == 3 and body["enabled"] is True
    assert body["comments"] == "front desk" and body["accessControlListUuids"] == [acl]


def test_credential_type_follows_holder_and_body_type_is_ignored(api: httpx.Client, unique) -> None:
    user = new_user(api, unique)
    uuid = issue(api, {"userUuid": user}, uniqueIdentifier=card(unique), type="PERSONNEL")
    assert read(api, uuid)["type"] == "USER"
    api.put(f"{CREDS}/{uuid}", json={"type": "VISITOR", "comments": "x"})
    assert read(api, uuid)["type"] == "USER"


def test_credential_holder_names_are_current(api: httpx.Client, unique) -> None:
    person = new_person(api, unique)
    uuid = issue(api, {"personUuid": person}, uniqueIdentifier=card(unique))
    renamed = api.put(f"/api/ws/v1/persons/{person}", json={"firstName": "Renamed"})
    assert renamed.status_code == 200
    assert read(api, uuid)["holderFirstName"] == "Renamed"


@pytest.mark.parametrize("holders", ["neither", "both"])
def test_credential_needs_exactly_one_holder(api: httpx.Client, unique, holders: str) -> None:
    person, user = new_person(api, unique), new_user(api, unique)
    body: dict[str, Any] = {"readerType": "PIN", "uniqueIdentifier": card(unique)}
    if holders == "both":
        body |= {"personUuid": person, "userUuid": user}
    response = api.post(CREDS, json=body)
    assert response.status_code == 422
    assert api.get(f"{CREDS}/by-person/{person}").json() == []
    assert api.get(f"{CREDS}/by-user/{user}").json() == []


def test_credential_unknown_holder_is_404(api: httpx.Client, live: LiveServer, unique) -> None:
    missing = "6f1c1a1e-0000-4000-8000-000000000001"
    for field in ("personUuid", "userUuid"):
        response = api.post(CREDS, json={"readerType": "PIN", field: missing, "pin": 4321})
        assert response.status_code == 404
    with live.client("other_system") as other:
        foreign = new_person(other, unique)
    response = api.post(CREDS, json={"readerType": "PIN", "personUuid": foreign})
    assert response.status_code == 404


def test_credential_unknown_acl_is_422_naming_the_field(api: httpx.Client, unique) -> None:
    person = new_person(api, unique)
    lists = [acl_uuids(api)[0], "6f1c1a1e-0000-4000-8000-000000000002"]
    response = api.post(
        CREDS,
        json={"readerType": "PIN", "personUuid": person, "accessControlListUuids": lists},
    )
    assert response.status_code == 422
    assert "accessControlListUuids" in response.json()["errors"]
    assert api.get(f"{CREDS}/by-person/{person}").json() == []


def test_credential_every_listed_acl_is_accepted(api: httpx.Client, unique) -> None:
    lists = acl_uuids(api)
    uuid = issue(api, {"personUuid": new_person(api, unique)}, accessControlListUuids=lists)
    assert read(api, uuid)["accessControlListUuids"] == lists


def test_credential_identifier_already_issued_is_409(api: httpx.Client, unique) -> None:
    identifier = card(unique)
    issue(api, {"personUuid": new_person(api, unique)}, uniqueIdentifier=identifier)
    again = {"readerType": "CONTACTLESS_CARD", "uniqueIdentifier": identifier}
    response = api.post(CREDS, json={**again, "userUuid": new_user(api, unique)})
    assert response.status_code == 409


def test_credential_pin_is_its_identifier(api: httpx.Client, unique) -> None:
    person = new_person(api, unique)
    pin = 100000 + int(unique("p")[-5:], 16) % 800000
    issue(api, {"personUuid": person}, readerType="PIN", pin=pin)
    response = api.post(CREDS, json={"readerType": "PIN", "personUuid": person, "pin": pin})
    assert response.status_code == 409


def test_credential_enabled_false_is_disabled_and_not_on_hardware(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    uuid = issue(api, {"personUuid": new_person(api, unique)}, enabled=False)
    body = read(api, uuid)
    assert body["status"] == "DISABLED" and body["enabled"] is False
    assert uuid not in held(control)


def test_credential_timestamps_are_stored_in_utc(api: httpx.Client, unique) -> None:
    uuid = issue(
        api,
        {"personUuid": new_person(api, unique)},
        activeDate="2020-01-01T10:00:00.000+0200",
        expiryDate="2090-01-01T10:00:00+02:00",
    )
    body = read(api, uuid)
    assert body["activeDate"] == "2020-01-01T08:00:00.000Z"
    assert body["expiryDate"] == "2090-01-01T08:00:00.000Z"


# -- lifecycle on the server clock ------------------------------------------------------------
def test_credential_status_default_valid_then_active_then_expired(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    uuid = issue(
        api,
        {"personUuid": new_person(api, unique)},
        activeDate=at(control, 60),
        expiryDate=at(control, 180),
    )
    assert read(api, uuid)["status"] == "VALID"
    assert uuid not in held(control)
    advance(control, 90)
    assert read(api, uuid)["status"] == "ACTIVE"
    assert held(control)[uuid]["status"] == "ACTIVE"
    advance(control, 120)
    assert read(api, uuid)["status"] == "EXPIRED"
    assert uuid not in held(control)


def test_credential_without_window_is_active_and_on_hardware(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    uuid = issue(api, {"personUuid": new_person(api, unique)})
    assert read(api, uuid)["status"] == "ACTIVE"
    assert uuid in held(control)


def test_credential_expired_window_extended_returns_to_lifecycle(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    holder = {"personUuid": new_person(api, unique)}
    uuid = issue(api, holder, activeDate=at(control, -600), expiryDate=at(control, -300))
    assert read(api, uuid)["status"] == "EXPIRED"
    window = {"activeDate": at(control, 300), "expiryDate": at(control, 900)}
    assert api.put(f"{CREDS}/{uuid}", json=window).status_code == 200
    assert read(api, uuid)["status"] == "VALID"
    window = {"activeDate": at(control, -60), "expiryDate": at(control, 900)}
    assert api.put(f"{CREDS}/{uuid}", json=window).status_code == 200
    assert read(api, uuid)["status"] == "ACTIVE"
    assert uuid in held(control)


# -- partial PUT ------------------------------------------------------------------------------
def test_credential_put_changes_only_the_fields_sent(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    lists = acl_uuids(api)[:2]
    uuid = issue(
        api,
        {"personUuid": new_person(api, unique)},
        useLimit=5,
        comments="before",
        activeDate=at(control, -60),
        expiryDate=at(control, 3600),
        accessControlListUuids=lists,
    )
    before = read(api, uuid)
    assert api.put(f"{CREDS}/{uuid}", json={"comments": "after"}).status_code == 200
    after = read(api, uuid)
    assert after == {**before, "comments": "after"}


def test_credential_put_sets_window_use_limit_and_comments(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    uuid = issue(api, {"personUuid": new_person(api, unique)}, useLimit=1)
    change = {
        "activeDate": "2031-02-03T04:05:06.007Z",
        "expiryDate": "2032-02-03T04:05:06.007Z",
        "useLimit": 9,
        "comments": "replaced",
    }
    assert api.put(f"{CREDS}/{uuid}", json=change).status_code == 200
    body = read(api, uuid)
    assert {k: body[k] for k in change} == change
    assert body["status"] == "VALID"


def test_credential_put_replaces_acl(api: httpx.Client, unique) -> None:
    first, second, third = acl_uuids(api)[:3]
    uuid = issue(
        api, {"personUuid": new_person(api, unique)}, accessControlListUuids=[first, second]
    )
    response = api.put(f"{CREDS}/{uuid}", json={"accessControlListUuids": [second, third]})
    assert response.status_code == 200
    assert read(api, uuid)["accessControlListUuids"] == [second, third]


def test_credential_put_empty_acl_removes_all_access(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    uuid = issue(
        api, {"personUuid": new_person(api, unique)}, accessControlListUuids=acl_uuids(api)
    )
    assert held(control)[uuid]["points"]
    assert api.put(f"{CREDS}/{uuid}", json={"accessControlListUuids": []}).status_code == 200
    assert read(api, uuid)["accessControlListUuids"] == []
    assert held(control)[uuid]["points"] == []


def test_credential_put_without_acl_keeps_assignment(api: httpx.Client, unique) -> None:
    lists = acl_uuids(api)[:2]
    uuid = issue(api, {"personUuid": new_person(api, unique)}, accessControlListUuids=lists)
    assert api.put(f"{CREDS}/{uuid}", json={"useLimit": 2}).status_code == 200
    assert read(api, uuid)["accessControlListUuids"] == lists


def test_credential_put_unknown_acl_is_422_and_changes_nothing(api: httpx.Client, unique) -> None:
    lists = acl_uuids(api)[:1]
    uuid = issue(api, {"personUuid": new_person(api, unique)}, accessControlListUuids=lists)
    response = api.put(
        f"{CREDS}/{uuid}",
        json={"accessControlListUuids": ["6f1c1a1e-0000-4000-8000-000000000003"], "comments": "x"},
    )
    assert response.status_code == 422
    assert "accessControlListUuids" in response.json()["errors"]
    body = read(api, uuid)
    assert body["accessControlListUuids"] == lists and body["comments"] is None


@pytest.mark.parametrize("status", ["DISABLED", "DELETED"])
def test_credential_put_status_takes_it_off_hardware(
    api: httpx.Client, control: httpx.Client, unique, status: str
) -> None:
    uuid = issue(api, {"personUuid": new_person(api, unique)})
    assert uuid in held(control)
    assert api.put(f"{CREDS}/{uuid}", json={"status": status}).status_code == 200
    body = read(api, uuid)
    assert body["status"] == status and body["enabled"] is False
    assert uuid not in held(control)


def test_credential_put_other_status_is_part_of_validity_update(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    uuid = issue(api, {"personUuid": new_person(api, unique)}, enabled=False)
    change = {"status": "ACTIVE", "useLimit": 4, "expiryDate": at(control, 3600)}
    assert api.put(f"{CREDS}/{uuid}", json=change).status_code == 200
    body = read(api, uuid)
    assert body["status"] == "ACTIVE" and body["useLimit"] == 4 and body["enabled"] is True
    assert uuid in held(control)
    assert api.put(f"{CREDS}/{uuid}", json={"status": "LOST"}).status_code == 200
    assert read(api, uuid)["status"] == "LOST"
    assert uuid not in held(control)


def test_credential_put_reader_type_is_ignored(api: httpx.Client, unique) -> None:
    uuid = issue(api, {"personUuid": new_person(api, unique)})
    response = api.put(f"{CREDS}/{uuid}", json={"readerType": "FACE", "comments": "c"})
    assert response.status_code == 200
    body = read(api, uuid)
    assert body["readerType"] == "CONTACTLESS_CARD" and body["comments"] == "c"


def test_credential_put_status_on_deleted_credential_is_409(api: httpx.Client, unique) -> None:
    uuid = issue(api, {"personUuid": new_person(api, unique)})
    assert api.delete(f"{CREDS}/{uuid}").status_code == 200
    assert api.put(f"{CREDS}/{uuid}", json={"status": "ACTIVE"}).status_code == 409
    assert read(api, uuid)["status"] == "DELETED"


# -- delete -----------------------------------------------------------------------------------
def test_credential_delete_is_soft(api: httpx.Client, control: httpx.Client, unique) -> None:
    uuid = issue(api, {"personUuid": new_person(api, unique)}, uniqueIdentifier=card(unique))
    assert uuid in held(control)
    response = api.delete(f"{CREDS}/{uuid}")
    assert response.status_code == 200 and response.json()["uuid"] == uuid
    assert read(api, uuid)["status"] == "DELETED"
    assert uuid not in held(control)


@pytest.mark.parametrize("how", ["delete", "put"])
def test_credential_deleted_identifier_stays_reserved(api: httpx.Client, unique, how: str) -> None:
    identifier = card(unique)
    person = new_person(api, unique)
    uuid = issue(api, {"personUuid": person}, uniqueIdentifier=identifier)
    if how == "delete":
        assert api.delete(f"{CREDS}/{uuid}").status_code == 200
    else:
        assert api.put(f"{CREDS}/{uuid}", json={"status": "DELETED"}).status_code == 200
    again = {"readerType": "CONTACTLESS_CARD", "personUuid": person, "uniqueIdentifier": identifier}
    assert api.post(CREDS, json=again).status_code == 409


def test_credential_unknown_uuid_is_404(api: httpx.Client, live: LiveServer, unique) -> None:
    missing = "6f1c1a1e-0000-4000-8000-000000000004"
    assert api.get(f"{CREDS}/{missing}").status_code == 404
    assert api.put(f"{CREDS}/{missing}", json={"comments": "x"}).status_code == 404
    assert api.delete(f"{CREDS}/{missing}").status_code == 404
    assert api.get(f"{CREDS}/by-person/{missing}").status_code == 404
    assert api.get(f"{CREDS}/by-user/{missing}").status_code == 404
    with live.client("other_system") as other:
        foreign = issue(other, {"personUuid": new_person(other, unique)})
    assert api.get(f"{CREDS}/{foreign}").status_code == 404
    assert api.delete(f"{CREDS}/{foreign}").status_code == 404


# -- per-holder lists -------------------------------------------------------------------------
def test_credentials_by_person_lists_only_that_person(api: httpx.Client, unique) -> None:
    person, other = new_person(api, unique), new_person(api, unique)
    mine = {issue(api, {"personUuid": person}) for _ in range(2)}
    issue(api, {"personUuid": other})
    listed = api.get(f"{CREDS}/by-person/{person}")
    assert listed.status_code == 200
    assert {c["uuid"] for c in listed.json()} == mine
    assert all(c["holderUuid"] == person and c["type"] == "PERSONNEL" for c in listed.json())
    assert api.get(f"{CREDS}/by-person/{new_person(api, unique)}").json() == []


def test_credentials_by_user_lists_every_status(api: httpx.Client, unique) -> None:
    user = new_user(api, unique)
    active = issue(api, {"userUuid": user})
    disabled = issue(api, {"userUuid": user}, status="DISABLED")
    deleted = issue(api, {"userUuid": user})
    assert api.delete(f"{CREDS}/{deleted}").status_code == 200
    issue(api, {"userUuid": new_user(api, unique)})
    listed = api.get(f"{CREDS}/by-user/{user}")
    assert listed.status_code == 200
    statuses = {c["uuid"]: c["status"] for c in listed.json()}
    assert statuses == {active: "ACTIVE", disabled: "DISABLED", deleted: "DELETED"}


def test_credentials_cannot_be_listed_wholesale(api: httpx.Client) -> None:
    response = api.get(CREDS)
    assert not 200 <= response.status_code < 300


# -- holders going away -----------------------------------------------------------------------
def test_person_delete_unlinks_credentials_and_leaves_phonebook(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    person = new_person(api, unique)
    uuid = issue(api, {"personUuid": person})
    phonebook = {e["uuid"] for c in control.get(HARDWARE).json() for e in c["phonebook"]}
    assert person in phonebook
    assert api.delete(f"/api/ws/v1/persons/{person}").status_code == 200
    body = read(api, uuid)
    assert body["holderUuid"] is None and body["status"] == "ACTIVE"
    assert body["holderFirstName"] is None
    phonebook = {e["uuid"] for c in control.get(HARDWARE).json() for e in c["phonebook"]}
    assert person not in phonebook


def test_user_delete_unlinks_credentials(api: httpx.Client, unique) -> None:
    user = new_user(api, unique)
    uuid = issue(api, {"userUuid": user}, status="DISABLED")
    assert api.delete(f"/api/ws/v1/users/{user}").status_code == 200
    body = read(api, uuid)
    assert body["holderUuid"] is None and body["status"] == "DISABLED"


# -- cost -------------------------------------------------------------------------------------
def test_credential_writes_cost_75_units(faulty) -> None:
    fresh = faulty()  # a server of its own, so the documented bucket starts full
    with fresh.client("rate_limit") as client:
        missing = "6f1c1a1e-0000-4000-8000-000000000005"
        body = {"readerType": "PIN", "personUuid": missing}
        # 2000 units pay for 26 writes at 75; a cost of 30 would allow 66.
        answers = [client.post(CREDS, json=body).status_code for _ in range(27)]
    assert answers[:26] == [404] * 26
    assert answers[26] == 429
