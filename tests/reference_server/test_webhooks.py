"""Outbound webhooks (the HOOK- rules): configuration, payload, signature, encryption, delivery.

A real receiver (the harness's ``receiver_app`` under uvicorn) listens on a free loopback port; the
integration of the server under test points at it through the control plane. Dispatcher
tests queue events with ``emit`` directly (the invitation part calls the same function);
the end-to-end tests create an invitation and read its code at the virtual reader.
Expected signatures and ciphertexts are computed here with hmac/hashlib and cryptography.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import jsonschema
import pytest
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from amws_conformance import spec
from amws_conformance.harness.target.receiver import Inbox, receiver_app
from amws_conformance.reference_server._time import format_instant
from amws_conformance.reference_server.webhooks import emit
from tests._threaded import ThreadedServer
from tests.reference_server.conftest import LiveServer
from tests.reference_server.test_virtual_reader import (
    READ,
    assert_outcome,
    device,
    needs,
    read_body,
    reader_client,
    relay_count,
)

HMAC_KEY = "f" * 16 + "-reference-webhooks-" + "0" * 8
SECRET = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
IV = "0f0e0d0c0b0a09080706050403020100"
URL_PATHS = {
    "visit_created": "/visit/created",
    "visitor_check_in": "/visitor/check-in",
    "visitor_check_out": "/visitor/check-out",
    "visit_updated": "/visit/updated",
    "visit_no_show": "/visit/no-show",
    "visit_cancelled": "/visit/cancelled",
    "visit_denied": "/visit/denied",
}
STATUS_OF = {
    "visit_created": "VISIT_CREATED",
    "visitor_check_in": "VISITOR_CHECK_IN",
    "visitor_check_out": "VISITOR_CHECK_OUT",
    "visit_updated": "VISIT_UPDATED",
    "visit_no_show": "VISIT_NO_SHOW",
    "visit_cancelled": "VISIT_CANCELLED",
    "visit_denied": "VISIT_DENIED",
}


# -- helpers shared with the receiver and fault tests -------------------------------------------
class Receiver:
    """The harness's receiver app served by uvicorn on a free loopback port in a thread.

    ``settings`` are a profile's ``webhooks`` entries (``hmac_key``, ``encryption``,
    ``header``); ``now`` is the clock timestamps are judged by (the server's, when moved).
    """

    def __init__(
        self, port: int = 0, now: Callable[[], float] = time.time, **settings: Any
    ) -> None:
        self.app = receiver_app(settings, now=now)
        self.inbox: Inbox = self.app.state.inbox
        self._served = ThreadedServer(self.app, "receiver", port=port)

    def __enter__(self) -> Receiver:
        self.base_url = self._served.__enter__().base_url
        return self

    def __exit__(self, *exc: object) -> None:
        self._served.__exit__(*exc)

    def urls(self) -> dict[str, str]:
        return {setting: self.base_url + path for setting, path in URL_PATHS.items()}


def integrate(live: LiveServer, receiver: Receiver, **settings: Any) -> dict[str, Any]:
    """Save an enabled integration posting every event to the receiver."""
    body = {"enabled": True, "hmac_key": HMAC_KEY, "urls": receiver.urls(), **settings}
    with live.control() as control:
        response = control.put("/_reference/webhook-integration", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def visit(**fields: Any) -> dict[str, Any]:
    """An invitation record in the shared format (what the invitation part hands to emit)."""
    registration = str(uuid.uuid4())
    return {
        "uuid": registration,
        "visitorId": str(uuid.uuid4()),
        "firstName": "Ada",
        "lastName": "Lovelace",
        "email": "ada@example.com",
        "mobile": "+27821234567",
        "identityNumber": "8001015009087",
        "activation": "2026-05-01T08:00:00.000Z",
        "expiry": "2026-05-01T17:00:59.000Z",
        "hostUser": None,
        "_visitReasonText": "Quarterly review",
        "type": "QR_CODE",
        "accessCode": "VQR-" + secrets.token_hex(6).upper(),
        "status": "VISIT_CREATED",
        "arrivedAt": None,
        "leftAt": None,
        **fields,
    }


def send(live: LiveServer, status: str, record: dict[str, Any]) -> None:
    emit(live.server, live.server.systems()[0], status, record)


def wait_for(
    inbox: Inbox, visit_id: str, count: int = 1, timeout: float = 3.0
) -> list[dict[str, Any]]:
    """Poll until ``count`` deliveries of the visit arrived (or the deadline passed)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [d for d in inbox.of_status(None) if d["payload"].get("visitId") == visit_id]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def expected_signature(key: str, path: str, stamp: str, body: bytes) -> str:
    digest = hmac.new(key.encode("utf-8"), path.encode() + stamp.encode() + body, hashlib.sha256)
    return base64.b64encode(digest.digest()).decode("ascii")


def aes_b64(plain: str, secret: str = SECRET, iv: str = IV) -> str:
    padder = padding.PKCS7(128).padder()
    data = padder.update(plain.encode("utf-8")) + padder.finalize()
    cipher = Cipher(algorithms.AES(bytes.fromhex(secret)), modes.CBC(bytes.fromhex(iv)))
    enc = cipher.encryptor()
    return base64.b64encode(enc.update(data) + enc.finalize()).decode("ascii")


def validator(schema_name: str) -> jsonschema.Draft202012Validator:
    root = {"$ref": f"#/components/schemas/{schema_name}", **spec.openapi()}
    return jsonschema.Draft202012Validator(
        root, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


@pytest.fixture(scope="module")
def receiver(live: LiveServer) -> Any:
    """One verifying receiver for the module (tests tell their events apart by visitId)."""
    with Receiver(hmac_key=HMAC_KEY, now=live.server.clock.timestamp) as running:
        yield running


# -- configuration -----------------------------------------------------------------------------
def test_integration_refuses_malformed_secrets(live: LiveServer, receiver: Receiver) -> None:
    bad = [
        {"hmac_key": "k" * 15},
        {"hmac_key": "k" * 129},
        {"hmac_key": "tab\there-is-not-printable"},
        {"encryption": {"secret": SECRET[:-1], "iv": IV}},
        {"encryption": {"secret": "g" * 64, "iv": IV}},
        {"encryption": {"secret": SECRET, "iv": IV + "00"}},
        {"urls": {"visitor_on_site": receiver.base_url + "/x"}},
    ]
    with live.control() as control:
        for settings in bad:
            body = {"enabled": True, "urls": receiver.urls(), **settings}
            response = control.put("/_reference/webhook-integration", json=body)
            assert response.status_code == 400, settings
    for key in ("k" * 16, "k" * 128, secrets.token_hex(32)):
        assert integrate(live, receiver, hmac_key=key)["hmac_key"] == key


def test_the_saved_integration_can_be_read_back_and_saved_again(
    live: LiveServer, receiver: Receiver
) -> None:
    saved = integrate(live, receiver, hmac_key="k" * 40)
    with live.control() as control:
        shown = control.get("/_reference/webhook-integration")
        assert shown.status_code == 200
        # Exactly what was saved, and nothing the PUT would refuse (so a suite can restore it).
        assert shown.json() == {k: v for k, v in saved.items() if k != "system"}
        again = control.put("/_reference/webhook-integration", json=shown.json())
        assert again.status_code == 200 and again.json()["urls"] == saved["urls"]


# -- signature and headers ---------------------------------------------------------------------
def test_signature_is_hmac_sha256_over_path_timestamp_and_body(
    live: LiveServer, receiver: Receiver
) -> None:
    integrate(live, receiver)
    record = visit()
    send(live, "VISIT_CREATED", record)
    [delivery] = wait_for(receiver.inbox, record["uuid"])
    stamp = delivery["headers"]["x-service-hmac-timestamp"]
    assert stamp.isdigit() and not stamp.startswith("0")
    assert abs(int(stamp) - live.server.clock.timestamp() * 1000) < 5000
    sent = delivery["headers"]["x-service-hmac-sha256"]
    body = delivery["body"].encode("utf-8")
    assert sent == expected_signature(HMAC_KEY, "/visit/created", stamp, body)
    assert delivery["path"] == "/visit/created"


def test_signature_headers_only_with_a_key(live: LiveServer) -> None:
    with Receiver(hmac_key=None) as plain:
        integrate(live, plain, hmac_key=None)
        record = visit()
        send(live, "VISIT_CREATED", record)
        [delivery] = wait_for(plain.inbox, record["uuid"])
    assert "x-service-hmac-sha256" not in delivery["headers"]
    assert "x-service-hmac-timestamp" not in delivery["headers"]


def test_requests_declare_json_utf8_and_carry_the_optional_header(live: LiveServer) -> None:
    header = {"name": "Authorization", "value": "Bearer " + secrets.token_hex(12)}
    with Receiver(hmac_key=HMAC_KEY, header=header, now=live.server.clock.timestamp) as guarded:
        integrate(live, guarded, header=header)
        record = visit(firstName="Zoë")
        send(live, "VISIT_CREATED", record)
        send(live, "VISIT_UPDATED", record)
        deliveries = wait_for(guarded.inbox, record["uuid"], count=2)
    assert len(deliveries) == 2
    for delivery in deliveries:
        headers = delivery["headers"]
        assert headers["accept"] == "application/json"
        media, _, charset = headers["content-type"].partition(";")
        assert media.strip().lower() == "application/json"
        assert charset.strip().lower() == "charset=utf-8"
        assert headers["authorization"] == header["value"]
        assert delivery["payload"]["visitor"]["firstName"] == "Zoë"


def test_no_extra_header_without_one_configured(live: LiveServer, receiver: Receiver) -> None:
    integrate(live, receiver, header=None)
    record = visit()
    send(live, "VISIT_CREATED", record)
    [delivery] = wait_for(receiver.inbox, record["uuid"])
    assert "authorization" not in delivery["headers"]


# -- encryption --------------------------------------------------------------------------------
def _encrypted_delivery(
    live: LiveServer, fields: list[str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One VISIT_CREATED delivered with encryption (``fields``: the override list, [] for the
    default): (the record sent, the delivery as received)."""
    encryption = {"secret": SECRET, "iv": IV, "fields": fields}
    with Receiver(hmac_key=HMAC_KEY, encryption=encryption, now=live.server.clock.timestamp) as rx:
        integrate(live, rx, encryption=encryption)
        record = visit()
        send(live, "VISIT_CREATED", record)
        [delivery] = wait_for(rx.inbox, record["uuid"])
    return record, delivery


def test_default_fields_are_aes_256_cbc_encrypted(live: LiveServer) -> None:
    record, delivery = _encrypted_delivery(live, [])
    raw = json.loads(delivery["body"])
    assert raw["reason"] == aes_b64("Quarterly review")
    assert raw["accessCode"] == aes_b64(record["accessCode"])
    assert raw["visitor"]["email"] == aes_b64("ada@example.com")
    assert raw["visitor"]["identityNumber"] == aes_b64("8001015009087")
    assert raw["visitor"]["mobileNumber"] == aes_b64("+27821234567")
    assert raw["visitor"]["firstName"] == "Ada" and raw["status"] == "VISIT_CREATED"
    assert delivery["payload"]["visitor"]["email"] == "ada@example.com"


def test_known_answer_for_the_cipher_settings() -> None:
    # Fixed vector (computed once with the cryptography package) for SECRET and IV.
    assert aes_b64("ada@example.com") == "r0HJMhkr3Mvl0eeWkr/1Ow=="


def test_override_list_replaces_the_default_list(live: LiveServer) -> None:
    record, delivery = _encrypted_delivery(live, ["firstName"])
    raw = json.loads(delivery["body"])
    assert raw["visitor"]["firstName"] == aes_b64("Ada")
    assert raw["visitor"]["email"] == "ada@example.com"
    assert raw["accessCode"] == record["accessCode"]


def test_nothing_is_encrypted_without_secret_and_iv(live: LiveServer, receiver: Receiver) -> None:
    integrate(live, receiver, encryption={"secret": SECRET, "fields": []})
    record = visit()
    send(live, "VISIT_CREATED", record)
    [delivery] = wait_for(receiver.inbox, record["uuid"])
    assert json.loads(delivery["body"])["visitor"]["email"] == "ada@example.com"


# -- payload and routing -----------------------------------------------------------------------
def test_payload_is_a_visit_dto_with_visitor_and_host(
    live: LiveServer, api: httpx.Client, receiver: Receiver, unique: Callable[[str], str]
) -> None:
    needs("createUser")
    host = api.post(
        "/api/ws/v1/users",
        json={"email": f"{unique('h')}@example.com", "firstName": "Hal", "lastName": "Host"},
    )
    assert host.status_code == 201, host.text
    integrate(live, receiver)
    record = visit(hostUser=host.json()["uuid"])
    send(live, "VISIT_CREATED", record)
    [delivery] = wait_for(receiver.inbox, record["uuid"])
    payload = delivery["payload"]
    validator("VisitDTO").validate(payload)
    assert payload["visitId"] == record["uuid"] and payload["status"] == "VISIT_CREATED"
    assert payload["expectedAt"] == record["activation"]
    assert payload["leavingAt"] == record["expiry"]
    assert payload["visitor"]["uuid32"] == record["visitorId"].replace("-", "")
    assert payload["host"]["uuid"] == host.json()["uuid"]
    assert len(payload["host"]["uuid32"]) == 32 and payload["host"]["initials"] == "HH"


def test_each_status_goes_to_its_own_url(live: LiveServer, receiver: Receiver) -> None:
    integrate(live, receiver)
    record = visit()
    for status in STATUS_OF.values():
        send(live, status, record)
    for status in ("VISITOR_ON_SITE", "VISITOR_IN_PARKING", "VISITOR_HOSTED"):
        send(live, status, record)
    deliveries = wait_for(receiver.inbox, record["uuid"], count=7)
    time.sleep(0.2)  # anything wrongly sent for the three unsent statuses arrives meanwhile
    deliveries = wait_for(receiver.inbox, record["uuid"], count=8, timeout=0)
    assert sorted((d["path"], d["status"]) for d in deliveries) == sorted(
        (URL_PATHS[setting], status) for setting, status in STATUS_OF.items()
    )


def test_only_events_while_enabled_are_sent(live: LiveServer, receiver: Receiver) -> None:
    integrate(live, receiver, enabled=False)
    before = visit()
    send(live, "VISIT_CREATED", before)
    integrate(live, receiver, enabled=True)
    after = visit()
    send(live, "VISIT_CREATED", after)
    assert len(wait_for(receiver.inbox, after["uuid"])) == 1
    assert wait_for(receiver.inbox, before["uuid"], timeout=0.3) == []


# -- delivery ----------------------------------------------------------------------------------
def test_failed_attempt_is_retried_a_second_later(live: LiveServer, receiver: Receiver) -> None:
    integrate(live, receiver)
    receiver.inbox.fail_next = 1
    attempts = receiver.inbox.attempts
    record = visit()
    started = time.monotonic()
    send(live, "VISIT_CREATED", record)
    [delivery] = wait_for(receiver.inbox, record["uuid"], timeout=4)
    assert 0.9 <= time.monotonic() - started < 3
    assert receiver.inbox.attempts == attempts + 2
    time.sleep(0.2)
    assert receiver.inbox.attempts == attempts + 2  # a 2xx ended the delivery
    assert delivery["status"] == "VISIT_CREATED"


def test_delivery_gives_up_after_three_retries(faulty) -> None:
    from amws_conformance.reference_server.webhooks.dispatcher import dispatcher_of

    own = faulty()
    dispatcher_of(own.server).delays = (0.05, 0.05, 0.05)  # the 1-2-4 s pattern, compressed
    with Receiver(hmac_key=HMAC_KEY, now=own.server.clock.timestamp) as rx:
        integrate(own, rx)
        rx.inbox.fail_next = 10
        send(own, "VISIT_CREATED", visit())
        deadline = time.monotonic() + 3
        while rx.inbox.attempts < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.15)  # room for a wrong fifth attempt
    assert rx.inbox.attempts == 4


def test_retry_delays_are_one_two_and_four_seconds() -> None:
    from amws_conformance.reference_server.webhooks import dispatcher

    assert dispatcher.RETRY_DELAYS == (1.0, 2.0, 4.0)
    assert dispatcher.TIMEOUT_SECONDS == 5.0


def test_demo_integration_posts_to_the_profiles_receiver(faulty) -> None:
    own = faulty()  # a server of its own: its provisioned integration is still in place
    hooks = own.profile["webhooks"]
    assert hooks["public_url"].endswith(hooks["listen"])
    port = int(hooks["listen"].rpartition(":")[2])
    checks = {k: hooks[k] for k in ("hmac_key", "encryption", "header")}
    with Receiver(port=port, now=own.server.clock.timestamp, **checks) as rx:
        record = visit()
        send(own, "VISIT_CREATED", record)
        [delivery] = wait_for(rx.inbox, record["uuid"])
    assert not rx.inbox.rejections
    assert delivery["payload"]["visitor"]["email"] == "ada@example.com"
    assert json.loads(delivery["body"])["visitor"]["email"] != "ada@example.com"


# -- end to end --------------------------------------------------------------------------------
def _invite(api: httpx.Client, live: LiveServer, unique: Callable[[str], str]) -> dict[str, Any]:
    """Create an invitation valid for the next hours; returns the InviteCreated answer."""
    needs("createInvite", "createUser", "getInviteStatus")
    host = api.post(
        "/api/ws/v1/users",
        json={"email": f"{unique('host')}@example.com", "firstName": "Ho", "lastName": "St"},
    )
    assert host.status_code == 201, host.text
    now = live.server.clock.now()
    body = {
        "firstName": unique("Vis"),
        "lastName": "Itor",
        "hostUser": host.json()["uuid"],
        "activation": format_instant(now - timedelta(minutes=1)),
        "expiry": format_instant(now + timedelta(hours=4)),
        "type": "QR_CODE",
    }
    created = api.post("/api/ws/v1/invites", json=body)
    assert created.status_code == 201, created.text
    return created.json()


def test_new_invitation_reaches_the_visit_created_url(
    live: LiveServer, api: httpx.Client, receiver: Receiver, unique: Callable[[str], str]
) -> None:
    integrate(live, receiver)
    registration = _invite(api, live, unique)["registrationId"]
    [delivery] = wait_for(receiver.inbox, registration, timeout=1.0)
    assert delivery["status"] == "VISIT_CREATED" and delivery["path"] == "/visit/created"
    validator("VisitDTO").validate(delivery["payload"])


def test_reader_grant_checks_the_visitor_in_and_fires_the_relay(
    live: LiveServer,
    api: httpx.Client,
    control: httpx.Client,
    receiver: Receiver,
    unique: Callable[[str], str],
) -> None:
    integrate(live, receiver)
    created = _invite(api, live, unique)
    registration, code = created["registrationId"], created["accessCode"]
    point = device(live)["access_control_point"]
    before = relay_count(control, point)
    with reader_client(live) as client:
        assert_outcome(client.post(READ, json=read_body(live, code)), 200)
    assert relay_count(control, point) == before + 1
    status = api.get(f"/api/ws/v1/invites/{registration}/status").json()
    assert status["status"] == "VISITOR_CHECK_IN"
    deliveries = wait_for(receiver.inbox, registration, count=2, timeout=1.5)
    assert [d["status"] for d in deliveries] == ["VISIT_CREATED", "VISITOR_CHECK_IN"]


def test_next_grant_checks_out_and_a_denial_moves_nothing(
    live: LiveServer, api: httpx.Client, receiver: Receiver, unique: Callable[[str], str]
) -> None:
    integrate(live, receiver)
    created = _invite(api, live, unique)
    registration, code = created["registrationId"], created["accessCode"]
    status_url = f"/api/ws/v1/invites/{registration}/status"
    with reader_client(live) as client:
        assert_outcome(client.post(READ, json=read_body(live, code)), 200)
        assert_outcome(client.post(READ, json=read_body(live, code)), 200)
        assert api.get(status_url).json()["status"] == "VISITOR_CHECK_OUT"
        # The ended visit's credential no longer opens; the denial moves nothing.
        assert_outcome(client.post(READ, json=read_body(live, code)), 401)
    assert api.get(status_url).json()["status"] == "VISITOR_CHECK_OUT"
    wait_for(receiver.inbox, registration, count=3)
    time.sleep(0.1)  # room for a wrong fourth event to arrive
    deliveries = wait_for(receiver.inbox, registration, timeout=0)
    assert [d["status"] for d in deliveries] == [
        "VISIT_CREATED",
        "VISITOR_CHECK_IN",
        "VISITOR_CHECK_OUT",
    ]
