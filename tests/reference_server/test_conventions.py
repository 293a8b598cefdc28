"""Conventions of document 1 as the reference server implements them, through HTTP."""

from __future__ import annotations

import httpx
import pytest

from tests.reference_server.conftest import LiveServer

DEPTS = "/api/ws/v1/departments"


def test_write_answers_acknowledgement_not_record(api: httpx.Client, unique) -> None:
    response = api.post(DEPTS, json={"name": unique("dept")})
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"code", "message", "uuid"}
    assert body["code"] == 201 and body["message"] == "success"


def test_unknown_fields_are_ignored(api: httpx.Client, unique) -> None:
    response = api.post(DEPTS, json={"name": unique("dept"), "colour": "blue", "id": 7})
    assert response.status_code == 201


def test_422_names_field_and_never_echoes_value(api: httpx.Client) -> None:
    secret = "Z" * 101
    response = api.post(DEPTS, json={"name": secret})
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == 422
    assert body["reason"].startswith("422 - Unprocessable Entity - Invalid Fields: [@name: ")
    assert set(body["errors"]) == {"name"}
    assert secret not in response.text


def test_missing_and_unreadable_bodies_are_400(api: httpx.Client) -> None:
    assert api.post(DEPTS).status_code == 400
    declared = {"Content-Type": "application/json"}
    assert api.post(DEPTS, content=b"{not json", headers=declared).status_code == 400
    assert api.post(DEPTS, content=b"\xff\xfe\x00garbage", headers=declared).status_code == 400


def test_non_uuid_path_is_422(api: httpx.Client) -> None:
    response = api.delete(f"{DEPTS}/12345")
    assert response.status_code == 422
    assert "@uuid" in response.json()["reason"]


def test_unknown_route_and_wrong_method_get_error_bodies(api: httpx.Client) -> None:
    missing = api.get("/api/ws/v1/no-such-thing")
    assert missing.status_code == 404 and set(missing.json()) == {"code", "reason"}
    wrong = api.patch(DEPTS, json={})
    assert wrong.status_code == 405 and wrong.json()["code"] == 405


def test_huge_body_is_refused_and_nothing_stored(api: httpx.Client, unique) -> None:
    before = api.get(DEPTS).json()
    name = unique("huge")
    response = api.post(
        DEPTS,
        content=b'{"name": "' + name.encode() + b'", "pad": "' + b"x" * (1024 * 1024 + 10) + b'"}',
    )
    assert response.status_code == 413
    assert set(response.json()) == {"code", "reason"}
    assert api.get(DEPTS).json() == before


def test_timestamps_with_offsets_are_stored_in_utc_with_millis(api: httpx.Client, unique) -> None:
    created = api.post(
        "/api/ws/v1/locations",
        json={
            "name": unique("loc"),
            "type": "AREA",
            "effectiveDate": "2026-05-01T10:15:30.5+02:00",
        },
    )
    assert created.status_code == 201
    record = api.get(f"/api/ws/v1/locations/{created.json()['uuid']}").json()
    assert record["effectiveDate"] == "2026-05-01T08:15:30.500Z"


def test_early_years_keep_four_digits(api: httpx.Client, unique) -> None:
    created = api.post(
        "/api/ws/v1/locations",
        json={"name": unique("loc"), "type": "AREA", "effectiveDate": "0350-12-08T17:53:44Z"},
    )
    assert created.status_code == 201
    record = api.get(f"/api/ws/v1/locations/{created.json()['uuid']}").json()
    assert record["effectiveDate"] == "0350-12-08T17:53:44.000Z"


@pytest.mark.parametrize(
    "body",
    [
        {"activation": "1175-08-17T20:07:59Z", "expiry": "0350-12-08T17:53:44Z"},
        {"activation": "0001-01-01T00:00:00+02:00", "expiry": "2026-01-01T00:00:00Z"},
    ],
)
def test_instants_at_the_edge_of_the_calendar_get_an_answer(api: httpx.Client, body) -> None:
    # Found by schemathesis's CLI: these answered a text/plain 500.
    response = api.post("/api/ws/v1/invites", json={**body, "firstName": "Ann"})
    assert response.status_code == 422, response.text
    assert set(response.json()) >= {"code", "reason"}


def test_unparsable_timestamp_is_422(api: httpx.Client, unique) -> None:
    response = api.post(
        "/api/ws/v1/locations",
        json={"name": unique("loc"), "type": "AREA", "effectiveDate": "2026-13-45T10:15:30Z"},
    )
    assert response.status_code == 422
    assert "effectiveDate" in response.json()["errors"]


def test_other_system_records_are_404(live: LiveServer, api: httpx.Client, unique) -> None:
    uuid = api.post(DEPTS, json={"name": unique("mine")}).json()["uuid"]
    with live.client("other_system") as other:
        assert other.get(f"{DEPTS}/{uuid}").status_code == 404
        assert other.delete(f"{DEPTS}/{uuid}").status_code == 404
        assert uuid not in {d["uuid"] for d in other.get(DEPTS).json()}
    assert api.get(f"{DEPTS}/{uuid}").status_code == 200
