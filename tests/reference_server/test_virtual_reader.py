"""The virtual reader (the READER- rules), through HTTP against the shared live server.

Reader requests carry no API key. Requests that fail the device check count against the
caller's address, so tests that expect 404s send them from an address of their own
(anything in 127.0.0.0/8 reaches the loopback server).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import httpx
import jsonschema
import pytest

from amws_conformance import spec
from amws_conformance.reference_server import domain
from amws_conformance.reference_server._time import format_instant, parse_instant
from tests.reference_server.conftest import LiveServer

READ = "/api/ws/v1/virtual/reader"
QR_READ = "/api/ws/v1/virtual/qr-code-reader"
LIST = "/api/ws/v1/virtual/reader/list"
QR_LIST = "/api/ws/v1/virtual/qr-code-reader/list"
READ_PATHS = (READ, QR_READ)
LIST_PATHS = (LIST, QR_LIST)
ALL_PATHS = (*READ_PATHS, *LIST_PATHS)


# -- helpers shared with the webhook and fault tests --------------------------------------------
def needs(*operation_ids: str) -> None:
    """Skip when another part of the server has not implemented an operation yet."""
    missing = [o for o in operation_ids if o not in domain.load_all()]
    if missing:
        pytest.skip(f"not implemented yet: {', '.join(missing)}")


@contextmanager
def reader_client(
    live: LiveServer, headers: dict[str, str] | None = None
) -> Iterator[httpx.Client]:
    """A key-less client from a loopback address of its own (its own failure budget)."""
    address = f"127.{secrets.randbelow(250) + 1}.{secrets.randbelow(250)}.{secrets.randbelow(250)}"
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(
        base_url=live.base_url, transport=transport, headers=headers or {}, timeout=10
    ) as client:
        yield client


def device(live: LiveServer, which: str = "virtual_reader") -> dict[str, str]:
    return live.profile[which]


def read_body(live: LiveServer, code: str, which: str = "virtual_reader") -> dict[str, str]:
    found = device(live, which)
    return {"uuid": found["uuid"], "key": found["key"], "code": code}


def list_body(live: LiveServer, which: str = "virtual_reader") -> dict[str, str]:
    found = device(live, which)
    return {"uuid": found["uuid"], "key": found["key"]}


def server_now(live: LiveServer) -> Any:
    return live.server.clock.now()


def at(live: LiveServer, **delta: float) -> str:
    return format_instant(server_now(live) + timedelta(**delta))


def new_person(api: httpx.Client, unique: Callable[[str], str]) -> str:
    response = api.post("/api/ws/v1/persons", json={"firstName": unique("Rea"), "lastName": "Der"})
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def new_credential(
    api: httpx.Client, live: LiveServer, unique: Callable[[str], str], **fields: Any
) -> tuple[str, str]:
    """A person's credential allowed at the virtual reader's point; returns (uuid, code)."""
    needs("createPerson", "createCredential")
    code = fields.pop("uniqueIdentifier", None) or unique("VR")[:32]
    body = {
        "readerType": "QR_CODE",
        "personUuid": new_person(api, unique),
        "uniqueIdentifier": code,
        "accessControlListUuids": [device(live)["access_control_list"]],
        **fields,
    }
    response = api.post("/api/ws/v1/credentials", json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"], code


def relay_count(control: httpx.Client, point: str) -> int:
    events = control.get("/_reference/hardware/relay-events").json()
    return sum(1 for e in events if e["point"] == point and e["cause"] == "reader")


def access_events(live: LiveServer, credential: str) -> list[dict[str, Any]]:
    """Logbook events of a credential (no control-plane route shows the logbook)."""
    return live.server.store.all("access_event", where=lambda e: e["credential"] == credential)


def listed(client: httpx.Client, live: LiveServer, path: str = LIST) -> list[dict[str, Any]]:
    response = client.post(path, json=list_body(live))
    assert response.status_code == 200, response.text
    return response.json()


def assert_outcome(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["code"] == str(status), body
    assert isinstance(body["reason"], str) and isinstance(body["message"], str)
    return body


# -- authentication and body checks ------------------------------------------------------------
def test_reads_need_no_authorization_header(live: LiveServer, unique) -> None:
    key = live.profile["keys"]["full"]
    for headers in ({}, {"Authorization": "bogus"}, {"Authorization": key}):
        with reader_client(live, headers) as client:
            for path in READ_PATHS:
                assert_outcome(client.post(path, json=read_body(live, unique("none"))), 401)
            for path in LIST_PATHS:
                assert client.post(path, json=list_body(live)).status_code == 200


def test_unknown_code_is_denied_with_text_code_and_no_relay(
    live: LiveServer, control: httpx.Client, unique
) -> None:
    point = device(live)["access_control_point"]
    before = relay_count(control, point)
    with reader_client(live) as client:
        body = assert_outcome(client.post(READ, json=read_body(live, unique("nobody"))), 401)
    assert body["reason"] == "denied"
    assert relay_count(control, point) == before


def test_missing_fields_and_bad_lengths_answer_422(live: LiveServer) -> None:
    full = read_body(live, "ABC")
    with reader_client(live) as client:
        for path in READ_PATHS:
            for field in ("uuid", "key", "code"):
                partial = {k: v for k, v in full.items() if k != field}
                assert_outcome(client.post(path, json=partial), 422)
            for bad in ({"uuid": "not-a-uuid"}, {"key": "k" * 9}, {"key": "k" * 65}):
                assert_outcome(client.post(path, json={**full, **bad}), 422)
            assert_outcome(client.post(path, json={**full, "code": "C" * 33}), 422)
            assert_outcome(client.post(path, json={**full, "code": "C" * 32}), 401)
        for path in LIST_PATHS:
            for field in ("uuid", "key"):
                partial = {k: v for k, v in list_body(live).items() if k != field}
                assert_outcome(client.post(path, json=partial), 422)
            assert_outcome(client.post(path, json={**list_body(live), "key": "k" * 65}), 422)


def test_key_lengths_at_the_limits_pass_to_the_device_check(live: LiveServer) -> None:
    with reader_client(live) as client:
        for key in ("k" * 10, "k" * 64):
            assert_outcome(client.post(READ, json={**read_body(live, "X"), "key": key}), 404)


def test_unreadable_body_answers_400_with_text_code(live: LiveServer) -> None:
    with reader_client(live) as client:
        for path in ALL_PATHS:
            declared = {"Content-Type": "application/json"}
            assert_outcome(client.post(path, content=b"{not json", headers=declared), 400)
            assert_outcome(client.post(path), 400)


def test_unknown_device_and_wrong_key_are_the_same_404(live: LiveServer) -> None:
    wrong_key = {**read_body(live, "X"), "key": "w" * 32}
    unknown = {**read_body(live, "X"), "uuid": "00000000-0000-4000-8000-000000000000"}
    with reader_client(live) as client:
        first = assert_outcome(client.post(READ, json=wrong_key), 404)
        second = assert_outcome(client.post(READ, json=unknown), 404)
        listing = assert_outcome(client.post(LIST, json={**list_body(live), "key": "w" * 32}), 404)
    assert first == second == listing


def test_failed_device_checks_throttle_the_address(live: LiveServer) -> None:
    wrong = {**list_body(live), "key": "w" * 32}
    with reader_client(live) as client, reader_client(live) as bystander:
        for _ in range(5):
            assert_outcome(client.post(LIST, json=wrong), 404)
        for path in ALL_PATHS:
            body = read_body(live, "X") if path in READ_PATHS else list_body(live)
            refused = assert_outcome(client.post(path, json=body), 429)
            assert refused["reason"]
            assert 1 <= int(client.post(path, json=body).headers["Retry-After"]) <= 60
        assert bystander.post(LIST, json=list_body(live)).status_code == 200


def test_each_device_may_make_60_requests_a_minute(faulty) -> None:
    own = faulty()  # a server of its own: the test uses up a device's allowance
    with reader_client(own) as client:
        for _ in range(60):
            assert client.post(LIST, json=list_body(own)).status_code == 200
        refused = assert_outcome(client.post(QR_READ, json=read_body(own, "X")), 429)
        assert refused["code"] == "429"
        assert 1 <= int(client.post(LIST, json=list_body(own)).headers["Retry-After"]) <= 60
        other = client.post(READ, json=read_body(own, "X", "unattached_reader"))
        assert_outcome(other, 424)
        with own.control() as control:
            control.put("/_reference/clock", json={"advance_seconds": 61})
        assert client.post(LIST, json=list_body(own)).status_code == 200


def test_unattached_reader_answers_424_and_lists_nothing(
    live: LiveServer, control: httpx.Client
) -> None:
    before = control.get("/_reference/hardware/relay-events").json()
    with reader_client(live) as client:
        for path in READ_PATHS:
            assert_outcome(client.post(path, json=read_body(live, "X", "unattached_reader")), 424)
        for path in LIST_PATHS:
            assert client.post(path, json=list_body(live, "unattached_reader")).json() == []
    assert control.get("/_reference/hardware/relay-events").json() == before


# -- decisions ---------------------------------------------------------------------------------
def test_grant_answers_200_logs_the_entry_and_fires_the_relay(
    api: httpx.Client, live: LiveServer, control: httpx.Client, unique
) -> None:
    credential, code = new_credential(api, live, unique)
    point = device(live)["access_control_point"]
    before = relay_count(control, point)
    with reader_client(live) as client:
        body = assert_outcome(client.post(READ, json=read_body(live, code)), 200)
    assert body["reason"] == "granted"
    assert relay_count(control, point) == before + 1
    granted = [e for e in access_events(live, credential) if e["result"] == "granted"]
    assert len(granted) == 1 and granted[0]["point"] == point


def test_qr_paths_behave_like_the_general_paths(
    api: httpx.Client, live: LiveServer, control: httpx.Client, unique
) -> None:
    credential, code = new_credential(api, live, unique, useLimit=5)
    point = device(live)["access_control_point"]
    before = relay_count(control, point)
    with reader_client(live) as client:
        general = client.post(READ, json=read_body(live, code))
        qr = client.post(QR_READ, json=read_body(live, code))
        assert (general.status_code, general.json()) == (qr.status_code, qr.json())
        assert listed(client, live, LIST) == listed(client, live, QR_LIST)
        entry = next(e for e in listed(client, live) if e["uuid"] == credential)
    assert relay_count(control, point) == before + 2
    assert entry["useLimit"] == 3


def test_credential_not_allowed_here_is_denied_until_a_list_covers_the_point(
    api: httpx.Client, live: LiveServer, unique
) -> None:
    needs("updateCredential")
    credential, code = new_credential(api, live, unique, accessControlListUuids=[])
    with reader_client(live) as client:
        assert_outcome(client.post(READ, json=read_body(live, code)), 401)
        changed = api.put(
            f"/api/ws/v1/credentials/{credential}",
            json={"accessControlListUuids": [device(live)["access_control_list"]]},
        )
        assert changed.status_code == 200, changed.text
        assert_outcome(client.post(READ, json=read_body(live, code)), 200)


def test_credential_outside_its_window_is_denied(
    api: httpx.Client, live: LiveServer, control: httpx.Client, unique
) -> None:
    point = device(live)["access_control_point"]
    before = relay_count(control, point)
    early = dict(activeDate=at(live, days=1), expiryDate=at(live, days=2))
    late = dict(activeDate=at(live, days=-2), expiryDate=at(live, days=-1))
    with reader_client(live) as client:
        for window in (early, late):
            _, code = new_credential(api, live, unique, **window)
            assert_outcome(client.post(READ, json=read_body(live, code)), 401)
    assert relay_count(control, point) == before


def test_denial_is_logged_as_an_attempt_and_is_final(
    api: httpx.Client, live: LiveServer, control: httpx.Client, unique
) -> None:
    credential, code = new_credential(api, live, unique, accessControlListUuids=[], useLimit=3)
    point = device(live)["access_control_point"]
    before = relay_count(control, point)
    with reader_client(live) as client:
        for _ in range(2):
            assert_outcome(client.post(READ, json=read_body(live, code)), 401)
    attempts = access_events(live, credential)
    assert [e["result"] for e in attempts] == ["denied", "denied"]
    assert relay_count(control, point) == before
    assert api.get(f"/api/ws/v1/credentials/{credential}").json()["useLimit"] == 3


def test_each_grant_uses_up_one_admission(api: httpx.Client, live: LiveServer, unique) -> None:
    credential, code = new_credential(api, live, unique, useLimit=2)
    with reader_client(live) as client:
        assert next(e for e in listed(client, live) if e["uuid"] == credential)["useLimit"] == 2
        assert_outcome(client.post(READ, json=read_body(live, code)), 200)
        assert next(e for e in listed(client, live) if e["uuid"] == credential)["useLimit"] == 1
        assert_outcome(client.post(READ, json=read_body(live, code)), 200)
        assert_outcome(client.post(READ, json=read_body(live, code)), 401)
        assert credential not in {e["uuid"] for e in listed(client, live)}


def test_unlimited_credentials_stay_unlimited(api: httpx.Client, live: LiveServer, unique) -> None:
    credential, code = new_credential(api, live, unique)
    with reader_client(live) as client:
        for _ in range(3):
            assert_outcome(client.post(READ, json=read_body(live, code)), 200)
        assert next(e for e in listed(client, live) if e["uuid"] == credential)["useLimit"] is None


def test_combined_reader_types_need_a_second_factor(
    api: httpx.Client, live: LiveServer, control: httpx.Client, unique
) -> None:
    point = device(live)["access_control_point"]
    before = relay_count(control, point)
    with reader_client(live) as client:
        for reader_type in ("PIN_ID", "MVL_ID", "PIN_MVL_ID_LPR"):
            _, code = new_credential(api, live, unique, readerType=reader_type)
            assert_outcome(client.post(READ, json=read_body(live, code)), 415)
    assert relay_count(control, point) == before


def test_pin_text_is_a_code(api: httpx.Client, live: LiveServer, unique) -> None:
    pin = 100000 + secrets.randbelow(899999)
    needs("createCredential")
    body = {
        "readerType": "PIN",
        "personUuid": new_person(api, unique),
        "pin": pin,
        "accessControlListUuids": [device(live)["access_control_list"]],
    }
    created = api.post("/api/ws/v1/credentials", json=body)
    if created.status_code == 409:
        pytest.skip("the random PIN is taken")
    assert created.status_code == 201, created.text
    with reader_client(live) as client:
        assert_outcome(client.post(READ, json=read_body(live, str(pin))), 200)
        entry = next(e for e in listed(client, live) if e["uuid"] == created.json()["uuid"])
    assert entry["pin"] == pin and entry["code"] == str(pin)


# -- lists -------------------------------------------------------------------------------------
def _entry_validator() -> jsonschema.Draft202012Validator:
    document = spec.openapi()
    schema = {"$ref": "#/components/schemas/ValidCredentialEntry", **document}
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def test_list_entries_have_the_valid_credential_shape(
    api: httpx.Client, live: LiveServer, unique
) -> None:
    credential, code = new_credential(
        api, live, unique, activeDate=at(live, days=-1), expiryDate=at(live, days=1), useLimit=4
    )
    with reader_client(live) as client:
        entries = listed(client, live)
    validator = _entry_validator()
    for entry in entries:
        validator.validate(entry)
    entry = next(e for e in entries if e["uuid"] == credential)
    expected = {"uuid", "holderType", "holderUuid", "holderName", "status", "active", "expiry"}
    assert expected | {"type", "code", "pin", "useLimit"} <= set(entry)
    assert entry["holderType"] == "PERSONNEL" and entry["status"] == "ACTIVE"
    assert entry["type"] == "QR_CODE" and entry["code"] == code
    assert entry["pin"] is None and entry["useLimit"] == 4
    assert parse_instant(entry["active"]) < server_now(live) < parse_instant(entry["expiry"])


def test_list_holds_exactly_what_the_device_admits(
    api: httpx.Client, live: LiveServer, unique
) -> None:
    valid, _ = new_credential(api, live, unique)
    early, _ = new_credential(api, live, unique, activeDate=at(live, days=1))
    late, _ = new_credential(
        api, live, unique, activeDate=at(live, days=-2), expiryDate=at(live, days=-1)
    )
    elsewhere, _ = new_credential(api, live, unique, accessControlListUuids=[])
    disabled, _ = new_credential(api, live, unique, enabled=False)
    with reader_client(live) as client:
        uuids = {e["uuid"] for e in listed(client, live)}
    assert valid in uuids
    assert not {early, late, elsewhere, disabled} & uuids


def test_list_is_a_snapshot_of_the_moment_it_was_fetched(
    api: httpx.Client, live: LiveServer, unique
) -> None:
    with reader_client(live) as client:
        before = listed(client, live)
        credential, _ = new_credential(api, live, unique)
        assert credential not in {e["uuid"] for e in before}
        assert credential in {e["uuid"] for e in listed(client, live)}


def test_list_without_valid_credentials_is_an_empty_array(live: LiveServer) -> None:
    with reader_client(live) as client:
        for path in LIST_PATHS:
            response = client.post(path, json=list_body(live, "unattached_reader"))
            assert response.status_code == 200 and response.text.strip() == "[]"


def test_profile_describes_both_devices(live: LiveServer, api: httpx.Client) -> None:
    attached, unattached = device(live), device(live, "unattached_reader")
    assert 10 <= len(attached["key"]) <= 64 and 10 <= len(unattached["key"]) <= 64
    points = {p["uuid"]: p for p in api.get("/api/ws/v1/access-control-points").json()}
    assert points[attached["access_control_point"]]["type"] == "DOOR"
    lists = {a["uuid"] for a in api.get("/api/ws/v1/access-control-lists").json()}
    assert attached["access_control_list"] in lists
