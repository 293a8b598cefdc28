"""Each credential and hardware fault breaks its rule (the ordinary tests show the rule holding)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx

from tests.reference_server.conftest import LiveServer
from tests.reference_server.test_credentials import (
    CREDS,
    acl_uuids,
    advance,
    at,
    held,
    issue,
    new_person,
    new_user,
    read,
)

Start = Callable[..., LiveServer]


@contextmanager
def clients(faulty: Start, name: str) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    server = faulty(name)
    with server.client("full") as api, server.control() as control:
        yield api, control


def test_fault_credential_delete_hard(faulty: Start, unique) -> None:
    with clients(faulty, "credential-delete-hard") as (api, _):
        uuid = issue(api, {"personUuid": new_person(api, unique)})
        assert api.delete(f"{CREDS}/{uuid}").status_code == 200
        assert api.get(f"{CREDS}/{uuid}").status_code == 404


def test_fault_deleted_identifier_reusable(faulty: Start, unique) -> None:
    with clients(faulty, "deleted-identifier-reusable") as (api, _):
        person = new_person(api, unique)
        uuid = issue(api, {"personUuid": person}, uniqueIdentifier="CARD-REUSED")
        assert api.delete(f"{CREDS}/{uuid}").status_code == 200
        again = {"readerType": "PIN", "personUuid": person, "uniqueIdentifier": "CARD-REUSED"}
        assert api.post(CREDS, json=again).status_code == 201


def test_fault_acl_put_merges(faulty: Start, unique) -> None:
    with clients(faulty, "acl-put-merges") as (api, _):
        first, second = acl_uuids(api)[:2]
        uuid = issue(api, {"personUuid": new_person(api, unique)}, accessControlListUuids=[first])
        assert api.put(f"{CREDS}/{uuid}", json={"accessControlListUuids": [second]}).is_success
        assert read(api, uuid)["accessControlListUuids"] != [second]


def test_fault_valid_never_activates(faulty: Start, unique) -> None:
    with clients(faulty, "valid-never-activates") as (api, control):
        uuid = issue(api, {"personUuid": new_person(api, unique)}, activeDate=at(control, 60))
        advance(control, 120)
        assert read(api, uuid)["status"] == "VALID"
        assert uuid not in held(control)


def test_fault_inactive_pushed_to_hardware(faulty: Start, unique) -> None:
    with clients(faulty, "inactive-pushed-to-hardware") as (api, control):
        uuid = issue(api, {"personUuid": new_person(api, unique)}, status="DISABLED")
        assert uuid in held(control)


def test_fault_holder_missing_422(faulty: Start) -> None:
    with clients(faulty, "holder-missing-422") as (api, _):
        missing = "6f1c1a1e-0000-4000-8000-000000000010"
        response = api.post(CREDS, json={"readerType": "PIN", "personUuid": missing})
        assert response.status_code == 422


def test_fault_credential_put_clears_omitted(faulty: Start, unique) -> None:
    with clients(faulty, "credential-put-clears-omitted") as (api, _):
        uuid = issue(api, {"personUuid": new_person(api, unique)}, useLimit=5, comments="keep")
        assert api.put(f"{CREDS}/{uuid}", json={"comments": "after"}).is_success
        assert read(api, uuid)["useLimit"] is None


def test_fault_credential_never_expires(faulty: Start, unique) -> None:
    with clients(faulty, "credential-never-expires") as (api, control):
        uuid = issue(api, {"personUuid": new_person(api, unique)}, expiryDate=at(control, 30))
        advance(control, 60)
        assert read(api, uuid)["status"] == "ACTIVE"
        assert uuid in held(control)


def test_fault_reader_type_changeable(faulty: Start, unique) -> None:
    with clients(faulty, "reader-type-changeable") as (api, _):
        uuid = issue(api, {"personUuid": new_person(api, unique)})
        assert api.put(f"{CREDS}/{uuid}", json={"readerType": "FACE"}).is_success
        assert read(api, uuid)["readerType"] == "FACE"


def test_fault_by_user_hides_deleted(faulty: Start, unique) -> None:
    with clients(faulty, "by-user-hides-deleted") as (api, _):
        user = new_user(api, unique)
        uuid = issue(api, {"userUuid": user})
        assert api.delete(f"{CREDS}/{uuid}").status_code == 200
        assert api.get(f"{CREDS}/by-user/{user}").json() == []


def test_fault_credential_type_not_derived(faulty: Start, unique) -> None:
    with clients(faulty, "credential-type-not-derived") as (api, _):
        uuid = issue(api, {"userUuid": new_user(api, unique)})
        assert read(api, uuid)["type"] == "PERSONNEL"
