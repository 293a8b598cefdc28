"""The harness's webhook receiver (HOOK-RECEIVER-VERIFY, HOOK-EXTRA-FIELDS), fed by requests
signed by hand.

Every request here is built in the test: the signature with hmac/hashlib, the ciphertext
with cryptography, so the receiver is checked against the algorithm, not against itself.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.reference_server.test_webhooks import (
    HMAC_KEY,
    IV,
    SECRET,
    Receiver,
    aes_b64,
    expected_signature,
)

PATH = "/visit/created"
VISIT = "7d0b9b8e-4b7e-4c55-9a55-7f0c1c3c2b11"
HEADER = {"name": "X-Api-Token", "value": "s3cr3t-token-value"}


class Clock:
    """The receiver's clock, movable by the tests."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def clock() -> Clock:
    return Clock()


@pytest.fixture(scope="module")
def rx(clock: Clock) -> Iterator[Receiver]:
    encryption = {"secret": SECRET, "iv": IV, "fields": []}
    with Receiver(hmac_key=HMAC_KEY, encryption=encryption, header=HEADER, now=clock) as running:
        yield running


@pytest.fixture
def client(rx: Receiver) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=rx.base_url, timeout=5) as http:
        yield http


def body_of(**fields: Any) -> bytes:
    payload = {"status": "VISIT_CREATED", "visitId": VISIT, "reason": aes_b64("Audit"), **fields}
    return json.dumps(payload, separators=(",", ":")).encode("utf-8")


def post(
    client: httpx.Client,
    body: bytes,
    stamp: str,
    *,
    signed: bytes | None = None,
    path: str = PATH,
    header: dict[str, str] | None = HEADER,
) -> httpx.Response:
    headers = {
        "Content-Type": "application/json; charset=utf-8",
        "X-SERVICE-HMAC-TIMESTAMP": stamp,
        "X-SERVICE-HMAC-SHA256": expected_signature(
            HMAC_KEY, path, stamp, body if signed is None else signed
        ),
    }
    if header:
        headers[header["name"]] = header["value"]
    return client.post(path, content=body, headers=headers)


def millis(clock: Clock, offset: float = 0.0) -> str:
    return str(int((clock.now + offset) * 1000))


def test_fixed_vector_is_accepted() -> None:
    # HMAC-SHA256 of "/visit/created" + "1767225600000" + body, computed once with hmac.
    body = b'{"status":"VISIT_CREATED","visitId":"7d0b9b8e-4b7e-4c55-9a55-7f0c1c3c2b11"}'
    key = "0123456789abcdef-reference-hmac"
    expected = "dTcUbRjAZiXMo01WW1N3DiEMIyrTiqIhXXMKQRnCFY4="
    assert expected_signature(key, PATH, "1767225600000", body) == expected
    with Receiver(hmac_key=key, now=lambda: 1767225600.0) as fixed:
        response = httpx.post(
            fixed.base_url + PATH,
            content=body,
            headers={
                "X-SERVICE-HMAC-TIMESTAMP": "1767225600000",
                "X-SERVICE-HMAC-SHA256": expected,
            },
        )
        assert response.status_code == 200, response.text
        assert fixed.inbox.of_status("VISIT_CREATED")[0]["payload"]["visitId"] == VISIT


def test_signed_request_is_stored_decrypted_and_listed(
    client: httpx.Client, clock: Clock, rx: Receiver
) -> None:
    body = body_of(extraField={"nested": True}, visitor={"email": aes_b64("e@x.io"), "more": 1})
    assert post(client, body, millis(clock)).status_code == 200
    listed = client.get("/deliveries", params={"status": "VISIT_CREATED"}).json()
    delivery = next(d for d in listed if d["body"] == body.decode())
    assert delivery["payload"]["reason"] == "Audit"
    assert delivery["payload"]["visitor"] == {"email": "e@x.io", "more": 1}
    assert client.get("/deliveries", params={"status": "VISIT_DENIED"}).json() == []


def test_one_changed_byte_is_rejected(client: httpx.Client, clock: Clock, rx: Receiver) -> None:
    signed = body_of(accessCode=aes_b64("1234"))
    tampered = bytearray(signed)
    tampered[2] ^= 0x01  # one byte of the key "status"
    before = len(rx.inbox.of_status(None))
    response = post(client, bytes(tampered), millis(clock), signed=signed)
    assert response.status_code == 401
    assert len(rx.inbox.of_status(None)) == before
    assert client.get("/rejections").json()[-1]["reason"] == "the signature does not match"


def test_signature_over_another_path_is_rejected(client: httpx.Client, clock: Clock) -> None:
    stamp = millis(clock)
    body = body_of()
    headers = {
        "X-SERVICE-HMAC-TIMESTAMP": stamp,
        "X-SERVICE-HMAC-SHA256": expected_signature(HMAC_KEY, "/visit/updated", stamp, body),
        HEADER["name"]: HEADER["value"],
    }
    assert client.post(PATH, content=body, headers=headers).status_code == 401


def test_timestamps_outside_five_minutes_are_rejected(client: httpx.Client, clock: Clock) -> None:
    assert post(client, body_of(), millis(clock, -301)).status_code == 401
    assert post(client, body_of(), millis(clock, +301)).status_code == 401
    assert post(client, body_of(), millis(clock, -299)).status_code == 200
    seconds = str(int(clock.now))  # a timestamp in seconds is decades away in milliseconds
    assert post(client, body_of(), seconds).status_code == 401


def test_replayed_request_is_rejected(client: httpx.Client, clock: Clock) -> None:
    stamp, body = millis(clock, -1), body_of(leftAt=None)
    assert post(client, body, stamp).status_code == 200
    assert post(client, body, stamp).status_code == 409


def test_missing_or_wrong_header_is_rejected(client: httpx.Client, clock: Clock) -> None:
    assert post(client, body_of(), millis(clock, -2), header=None).status_code == 401
    wrong = {**HEADER, "value": "not-the-token"}
    assert post(client, body_of(), millis(clock, -3), header=wrong).status_code == 401


def test_field_not_encrypted_with_our_key_is_rejected(client: httpx.Client, clock: Clock) -> None:
    other = aes_b64("Audit", secret="ff" * 32)
    assert post(client, body_of(reason=other), millis(clock, -4)).status_code == 400
    assert post(client, body_of(reason="Audit"), millis(clock, -5)).status_code == 400


def test_unsigned_request_is_rejected_when_a_key_is_set(client: httpx.Client) -> None:
    response = client.post(PATH, content=body_of(), headers={HEADER["name"]: HEADER["value"]})
    assert response.status_code == 401


def test_fail_next_answers_503_then_recovers(
    client: httpx.Client, clock: Clock, rx: Receiver
) -> None:
    rx.inbox.fail_next = 1
    assert post(client, body_of(), millis(clock, -6)).status_code == 503
    assert post(client, body_of(), millis(clock, -7)).status_code == 200


def test_deliveries_can_be_cleared(client: httpx.Client, clock: Clock) -> None:
    assert post(client, body_of(), millis(clock, -8)).status_code == 200
    assert client.delete("/deliveries").status_code == 200
    assert client.get("/deliveries").json() == []


def test_fail_when_answers_503_to_matching_payloads_and_keeps_them(
    client: httpx.Client, clock: Clock, rx: Receiver
) -> None:
    doomed = str(uuid.uuid4())
    rx.inbox.fail_when = lambda payload: payload.get("visitId") == doomed
    try:
        assert post(client, body_of(visitId=doomed), millis(clock, -9)).status_code == 503
        assert post(client, body_of(), millis(clock, -10)).status_code == 200
    finally:
        rx.inbox.fail_when = None
    [failed] = rx.inbox.failures
    assert failed["payload"]["visitId"] == doomed
    assert not [d for d in rx.inbox.deliveries if d["payload"]["visitId"] == doomed]
