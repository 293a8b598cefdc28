"""Each person/user fault of the catalogue breaks its rule (the ordinary tests show it holding)."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable
from datetime import timedelta

import httpx

from tests.reference_server import test_persons as persons
from tests.reference_server import test_users as users
from tests.reference_server.conftest import LiveServer


def client_with(faulty: Callable[..., LiveServer], name: str) -> httpx.Client:
    return faulty(name).client("full")


def test_person_put_keeps_omitted(faulty) -> None:
    with client_with(faulty, "person-put-keeps-omitted") as api:
        uuid = persons.create(api, lastName="Before")
        assert api.put(f"{persons.PERSONS}/{uuid}", json={"firstName": "After"}).status_code == 200
        assert persons.read(api, uuid)["lastName"] == "Before"


def test_person_duplicate_allowed(faulty, unique) -> None:
    with client_with(faulty, "person-duplicate-allowed") as api:
        identity = unique("id")
        persons.create(api, identityNumber=identity)
        again = api.post(persons.PERSONS, json={"firstName": "B", "identityNumber": identity})
        assert again.status_code == 201


def test_person_reference_unchecked(faulty) -> None:
    with client_with(faulty, "person-reference-unchecked") as api:
        body = {"firstName": "Ref", "department": str(uuidlib.uuid4())}
        assert api.post(persons.PERSONS, json=body).status_code == 201


def test_search_returns_identity_number(faulty, unique) -> None:
    with client_with(faulty, "search-returns-identity-number") as api:
        identity = unique("secret")
        persons.create(api, identityNumber=identity)
        row = persons.search(api, identityNr=identity)["entries"][0]
        assert row.get("identityNumber") == identity


def test_search_case_sensitive(faulty, unique) -> None:
    with client_with(faulty, "search-case-sensitive") as api:
        tag = unique("r")
        persons.create(api, lastName=f"Roosevelt{tag}")
        assert persons.search(api, lastName=f"OOSEVELT{tag.upper()}")["totalCount"] == 0


def test_search_any_criterion(faulty, unique) -> None:
    with client_with(faulty, "search-any-criterion") as api:
        tag = unique("all")
        persons.create(api, firstName=f"Grace{tag}", lastName=f"Other{tag}")
        found = persons.search(api, firstName=f"grace{tag}", lastName=f"hopper{tag}")
        assert found["totalCount"] == 1


def test_person_delete_soft_hides_without_writing_into_the_record(faulty, unique) -> None:
    live = faulty("person-delete-soft")
    with live.client("full") as api:
        tag = unique("soft")
        uuid = persons.create(api, lastName=tag)
        card = persons.issue_card(api, uuid, unique)
        stored = live.server.store.get("person", uuid)
        assert api.delete(f"{persons.PERSONS}/{uuid}").status_code == 200
        assert api.get(f"{persons.PERSONS}/{uuid}").status_code == 404
        assert persons.search(api, lastName=tag)["totalCount"] == 0
        assert api.get(f"/api/ws/v1/credentials/{card}").json()["holderUuid"] == uuid
        # What hides the person is the fault's memory: the record is as it was.
        assert live.server.store.get("person", uuid) == stored
        # So the correct server, once the fault is off, sees the person again.
        live.server.faults.switch(())
        assert api.get(f"{persons.PERSONS}/{uuid}").status_code == 200


def test_user_password_returned(faulty, unique) -> None:
    with client_with(faulty, "user-password-returned") as api:
        uuid = users.create(api, unique, password=users.PASSWORD)
        assert users.read(api, uuid)["password"] != ""


def test_user_put_keeps_role(faulty, unique) -> None:
    server = faulty("user-put-keeps-role")
    with server.client("full") as api:
        ordinary = server.profile["roles"]["ordinary"]
        uuid = users.create(api, unique, role=ordinary)
        put = api.put(f"{users.USERS}/{uuid}", json={"email": users.email_of(unique)})
        assert put.status_code == 200
        assert users.read(api, uuid)["role"] == ordinary


def test_user_enable_twice_accepted(faulty, unique) -> None:
    with client_with(faulty, "user-enable-twice-accepted") as api:
        uuid = users.create(api, unique)
        assert api.put(f"{users.USERS}/{uuid}/enable").status_code == 200


def test_user_search_unknown_criterion_applied(faulty, unique) -> None:
    with client_with(faulty, "user-search-unknown-criterion-applied") as api:
        users.create(api, unique, mobile="+27820001111")
        users.create(api, unique, mobile="+27820002222")
        assert users.search(api, mobile="+27820001111") != users.search(api)


def test_user_delete_keeps_invites(faulty, unique) -> None:
    users.needs_invites()
    server = faulty("user-delete-keeps-invites")
    with server.client("full") as api, server.control() as control:
        host = users.create(api, unique)
        starts = users.server_now(control) + timedelta(days=1)
        registration = users.invite(api, host, starts)
        assert api.delete(f"{users.USERS}/{host}").status_code == 200
        status = api.get(f"{users.INVITES}/{registration}").json()["status"]
        assert status != "VISIT_CANCELLED"
