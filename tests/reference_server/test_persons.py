"""Persons as the reference server implements them (rules PERS-*), through HTTP."""

from __future__ import annotations

import io
import random
import uuid as uuidlib
from typing import Any

import httpx
import pytest

from tests.reference_server._records import Records

PERSONS = "/api/ws/v1/persons"
SEARCH = f"{PERSONS}/search"
REFERENCE_PATHS = {
    "location": "/api/ws/v1/locations",
    "department": "/api/ws/v1/departments",
    "organisation": "/api/ws/v1/organisations",
    "group": "/api/ws/v1/groups",
    "costCenter": "/api/ws/v1/cost-centers",
}

_RECORDS = Records(PERSONS)
read = _RECORDS.read
search = _RECORDS.search


def create(api: httpx.Client, **fields: Any) -> str:
    response = api.post(PERSONS, json={"firstName": "Ada", **fields})
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def issue_card(api: httpx.Client, person: str, unique) -> str:
    """A contactless card the person holds (open now)."""
    body = {"readerType": "CONTACTLESS_CARD", "personUuid": person, "uniqueIdentifier": unique()}
    response = api.post("/api/ws/v1/credentials", json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def make_reference(api: httpx.Client, field: str, name: str) -> str:
    body: dict[str, Any] = {"name": name}
    if field == "location":
        body["type"] = "AREA"
    response = api.post(REFERENCE_PATHS[field], json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def upload_photo(client: httpx.Client) -> str:
    """Stage a small JPEG of random colour (identical staged bytes are refused)."""
    image_module = pytest.importorskip("PIL.Image")
    buffer = io.BytesIO()
    colour = tuple(random.randrange(256) for _ in range(3))
    image_module.new("RGB", (32, 32), colour).save(buffer, "JPEG")
    response = client.post(
        "/api/ws/v1/files/upload", files={"file": ("p.jpg", buffer.getvalue(), "image/jpeg")}
    )
    assert response.status_code == 200, response.text
    return response.json()["uuid"]


def test_first_name_alone_is_enough_and_required(api: httpx.Client, unique) -> None:
    uuid = create(api, firstName=unique("solo"))
    assert read(api, uuid)["lastName"] is None
    assert api.post(PERSONS, json={"lastName": unique("x")}).status_code == 422


@pytest.mark.parametrize("field", list(REFERENCE_PATHS))
def test_unknown_reference_is_422_naming_it(api: httpx.Client, unique, field: str) -> None:
    name = unique("ref")
    response = api.post(PERSONS, json={"firstName": name, field: str(uuidlib.uuid4())})
    assert response.status_code == 422
    assert f"@{field}" in response.json()["reason"]
    assert search(api, firstName=name)["totalCount"] == 0


def test_existing_references_are_stored_as_uuids(api: httpx.Client, unique) -> None:
    refs = {field: make_reference(api, field, unique(field)) for field in REFERENCE_PATHS}
    record = read(api, create(api, **refs))
    assert {field: record[field] for field in refs} == refs


def test_full_record_reads_back_as_written(api: httpx.Client, unique) -> None:
    body = {
        "firstName": unique("full"),
        "lastName": "Lovelace",
        "title": "Dr",
        "personType": "CONTRACTOR",
        "status": "ON_LEAVE",
        "dateOfBirth": "1990-02-28",
        "email": "ada@example.com",
        "mobile": "+27821234567",
        "staffIdNumber": unique("staff"),
        "homeAddressLine1": "1 Main Road",
        "homeAddressPostalCode": "8001",
        "otherAddressCountry": "ZA",
        "enable": True,
        "firstNations": False,
        "activeDate": "2030-01-01T10:00:00.000+02:00",
        "medicalExpiryDate": "2031-06-30T23:59:59.000Z",
    }
    record = read(api, create(api, **body))
    expected = {**body, "activeDate": "2030-01-01T08:00:00.000Z"}
    assert {k: record[k] for k in expected} == expected
    assert record["hasPhoto"] is False
    assert record["photoId"] is None and record["photo"] is None and record["thumbnail"] is None
    assert "photoUuid" not in record


def test_has_photo_in_body_is_ignored(api: httpx.Client) -> None:
    record = read(api, create(api, hasPhoto=True))
    assert record["hasPhoto"] is False


def test_photo_is_claimed_through_photo_uuid(api: httpx.Client) -> None:
    pytest.importorskip("amws_conformance.reference_server.domain.files")
    staged = upload_photo(api)
    record = read(api, create(api, photoUuid=staged))
    assert record["hasPhoto"] is True
    assert record["photoId"] and record["photoId"] != staged
    assert isinstance(record["photo"], str) and isinstance(record["thumbnail"], str)
    assert "photoUuid" not in record


def test_unusable_photo_uuid_is_422_and_nothing_stored(api: httpx.Client, unique) -> None:
    pytest.importorskip("amws_conformance.reference_server.domain.files")
    name = unique("nophoto")
    response = api.post(PERSONS, json={"firstName": name, "photoUuid": str(uuidlib.uuid4())})
    assert response.status_code == 422
    assert "@photoUuid" in response.json()["reason"]
    assert search(api, firstName=name)["totalCount"] == 0


def test_unknown_person_is_404(api: httpx.Client) -> None:
    missing = f"{PERSONS}/{uuidlib.uuid4()}"
    assert api.get(missing).status_code == 404
    assert api.put(missing, json={"firstName": "X"}).status_code == 404
    assert api.delete(missing).status_code == 404


def test_other_systems_person_is_404(live, api: httpx.Client) -> None:
    uuid = create(api)
    with live.client("other_system") as other:
        assert other.get(f"{PERSONS}/{uuid}").status_code == 404


def test_persons_cannot_be_listed(api: httpx.Client) -> None:
    assert not 200 <= api.get(PERSONS).status_code < 300


def test_duplicate_numbers_are_409(api: httpx.Client, unique) -> None:
    identity, staff = unique("id"), unique("staff")
    create(api, identityNumber=identity)
    create(api, staffIdNumber=staff)
    assert api.post(PERSONS, json={"firstName": "B", "identityNumber": identity}).status_code == 409
    assert api.post(PERSONS, json={"firstName": "B", "staffIdNumber": staff}).status_code == 409


def test_empty_numbers_never_conflict(api: httpx.Client) -> None:
    create(api, identityNumber="", staffIdNumber="")
    create(api, identityNumber="", staffIdNumber="")


def test_put_keeps_own_numbers_but_not_anothers(api: httpx.Client, unique) -> None:
    mine, theirs = unique("id"), unique("id")
    uuid = create(api, identityNumber=mine)
    create(api, identityNumber=theirs)
    url = f"{PERSONS}/{uuid}"
    assert api.put(url, json={"firstName": "C", "identityNumber": mine}).status_code == 200
    assert api.put(url, json={"firstName": "C", "identityNumber": theirs}).status_code == 409
    assert read(api, uuid)["identityNumber"] == mine


def test_put_replaces_whole_record(api: httpx.Client, unique) -> None:
    department = make_reference(api, "department", unique("dept"))
    uuid = create(api, lastName="Before", department=department, mobile="+27820000000")
    response = api.put(f"{PERSONS}/{uuid}", json={"firstName": "After"})
    assert response.status_code == 200
    assert response.json() == {"code": 200, "message": "success", "uuid": uuid}
    record = read(api, uuid)
    assert record["firstName"] == "After"
    assert record["lastName"] is None and record["department"] is None and record["mobile"] is None


def test_put_checks_references(api: httpx.Client) -> None:
    uuid = create(api)
    response = api.put(f"{PERSONS}/{uuid}", json={"firstName": "D", "group": str(uuidlib.uuid4())})
    assert response.status_code == 422 and "@group" in response.json()["reason"]


def test_delete_removes_person(api: httpx.Client, unique) -> None:
    pytest.importorskip("amws_conformance.reference_server.domain.credentials")
    name = unique("gone")
    uuid = create(api, firstName=name)
    response = api.delete(f"{PERSONS}/{uuid}")
    assert response.status_code == 200 and response.json()["uuid"] == uuid
    assert api.get(f"{PERSONS}/{uuid}").status_code == 404
    assert search(api, firstName=name)["totalCount"] == 0


def test_delete_unlinks_but_keeps_credentials(api: httpx.Client, unique) -> None:
    pytest.importorskip("amws_conformance.reference_server.domain.credentials")
    uuid = create(api)
    card = issue_card(api, uuid, unique)
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    credential = api.get(f"/api/ws/v1/credentials/{card}")
    assert credential.status_code == 200
    assert credential.json()["holderUuid"] is None
    assert credential.json()["status"] != "DELETED"


def test_search_needs_a_body(api: httpx.Client) -> None:
    assert api.post(SEARCH).status_code == 400
    declared = {"Content-Type": "application/json"}
    assert api.post(SEARCH, content=b"{oops", headers=declared).status_code == 400
    assert api.post(SEARCH, json={}).status_code == 200


@pytest.mark.parametrize("body", [{"limit": 99}, {"limit": 1001}, {"start": -1}])
def test_search_paging_out_of_range_is_422(api: httpx.Client, body: dict[str, int]) -> None:
    assert api.post(SEARCH, json=body).status_code == 422


def test_search_criterion_over_100_characters_is_422(api: httpx.Client) -> None:
    response = api.post(SEARCH, json={"lastName": "x" * 101})
    assert response.status_code == 422 and "@lastName" in response.json()["reason"]
    assert api.post(SEARCH, json={"lastName": "x" * 100}).status_code == 200


def test_search_is_case_insensitive_contains(api: httpx.Client, unique) -> None:
    tag = unique("r")
    uuid = create(api, lastName=f"Roosevelt{tag}")
    found = search(api, lastName=f"OOSEVELT{tag.upper()}")
    assert [e["uuid"] for e in found["entries"]] == [uuid]


def test_search_maps_mobile_and_identity_criteria(api: httpx.Client, unique) -> None:
    identity = unique("ID")
    number = f"+2782{random.randrange(10**7):07d}"
    uuid = create(api, identityNumber=identity, mobile=number)
    assert [e["uuid"] for e in search(api, identityNr=identity.lower())["entries"]] == [uuid]
    by_mobile = search(api, mobileNumber=number[3:], identityNr=identity)["entries"]
    assert [e["uuid"] for e in by_mobile] == [uuid]


def test_search_requires_every_criterion(api: httpx.Client, unique) -> None:
    tag = unique("all")
    both = create(api, firstName=f"Grace{tag}", lastName=f"Hopper{tag}")
    create(api, firstName=f"Grace{tag}", lastName=f"Other{tag}")
    found = search(api, firstName=f"grace{tag}", lastName=f"hopper{tag}")
    assert [e["uuid"] for e in found["entries"]] == [both]


def test_search_rows_never_carry_identity_number(api: httpx.Client, unique) -> None:
    identity = unique("secret")
    create(api, identityNumber=identity, email="row@example.com")
    found = search(api, identityNr=identity)
    assert found["totalCount"] == 1
    assert set(found["entries"][0]) == {"uuid", "firstName", "lastName", "email", "mobile"}
    assert identity not in str(found)


def test_search_envelope_counts(api: httpx.Client, unique) -> None:
    tag = unique("page")
    made = [create(api, lastName=f"{tag}-{i}") for i in range(3)]
    page = search(api, lastName=tag, start=1, limit=100)
    assert page["startIndex"] == 1 and page["totalCount"] == 3
    assert page["countReturned"] == len(page["entries"]) == 2
    assert [e["uuid"] for e in page["entries"]] == made[1:]
    everything = search(api)
    assert everything["startIndex"] == 0
    assert everything["countReturned"] == len(everything["entries"]) <= 500
    assert everything["totalCount"] >= everything["countReturned"]


def test_search_ignores_unknown_criteria(api: httpx.Client) -> None:
    assert search(api, mobile="+0000", colour="red")["totalCount"] == search(api)["totalCount"]


def phonebook_uuids(control: httpx.Client) -> set[str]:
    controllers = control.get("/_reference/hardware/credentials").json()
    return {entry["uuid"] for c in controllers for entry in c.get("phonebook", [])}


def test_delete_withdraws_person_from_phonebooks(
    api: httpx.Client, control: httpx.Client, unique
) -> None:
    pytest.importorskip("amws_conformance.reference_server.hardware.controllers")
    uuid = create(api)
    issue_card(api, uuid, unique)
    assert uuid in phonebook_uuids(control)
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    assert uuid not in phonebook_uuids(control)
