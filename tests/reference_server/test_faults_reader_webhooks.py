"""Each virtual-reader and webhook fault breaks its rule (the normal server keeps it).

Every test starts a server with one fault and shows the observable deviation; the matching
assertion on the normal server lives in test_virtual_reader.py, test_webhooks.py and
test_receiver.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from amws_conformance.reference_server.webhooks.dispatcher import dispatcher_of
from tests.reference_server.conftest import LiveServer
from tests.reference_server.test_virtual_reader import (
    LIST,
    READ,
    at,
    device,
    list_body,
    listed,
    new_credential,
    read_body,
    reader_client,
    relay_count,
)
from tests.reference_server.test_webhooks import (
    HMAC_KEY,
    IV,
    SECRET,
    Receiver,
    aes_b64,
    expected_signature,
    integrate,
    send,
    visit,
    wait_for,
)

Start = Callable[..., LiveServer]


@contextmanager
def hooked(own: LiveServer, *, verify: bool = True, **settings: object) -> Iterator[Receiver]:
    """A receiver on the faulty server's clock, with the integration pointing at it.

    ``verify=False`` keeps every request as sent, so a test can inspect what was wrong.
    """
    checks: dict[str, object] = {"hmac_key": None}
    if verify:
        checks = {
            "hmac_key": HMAC_KEY,
            "encryption": settings.get("encryption"),
            "header": settings.get("header"),
        }
    with Receiver(now=own.server.clock.timestamp, **checks) as rx:
        integrate(own, rx, **settings)
        yield rx


# -- virtual reader -------------------------------------------------------------------------
def test_reader_code_int(faulty: Start, unique) -> None:
    own = faulty("reader-code-int")
    with reader_client(own) as client:
        body = client.post(READ, json=read_body(own, unique("none"))).json()
    assert body["code"] == 401  # a number, where READER-RESPONSE-FORMAT wants "401"


def test_unattached_reader_401(faulty: Start) -> None:
    own = faulty("unattached-reader-401")
    with reader_client(own) as client:
        response = client.post(READ, json=read_body(own, "X", "unattached_reader"))
    assert response.status_code == 401


def test_reader_key_not_checked(faulty: Start) -> None:
    own = faulty("reader-key-not-checked")
    with reader_client(own) as client:
        response = client.post(LIST, json={**list_body(own), "key": "w" * 32})
    assert response.status_code == 200


def test_reader_no_auth_throttle(faulty: Start) -> None:
    own = faulty("reader-no-auth-throttle")
    wrong = {**list_body(own), "key": "w" * 32}
    with reader_client(own) as client:
        answers = [client.post(LIST, json=wrong).status_code for _ in range(8)]
    assert answers == [404] * 8


def test_relay_not_fired(faulty: Start, unique) -> None:
    own = faulty("relay-not-fired")
    with own.client() as api, own.control() as control:
        _, code = new_credential(api, own, unique)
        point = device(own)["access_control_point"]
        before = relay_count(control, point)
        with reader_client(own) as client:
            assert client.post(READ, json=read_body(own, code)).status_code == 200
        assert relay_count(control, point) == before


def test_grant_outside_window(faulty: Start, unique) -> None:
    own = faulty("grant-outside-window")
    with own.client() as api, reader_client(own) as client:
        _, early = new_credential(api, own, unique, activeDate=at(own, days=1))
        assert client.post(READ, json=read_body(own, early)).status_code == 200


def test_use_limit_not_decremented(faulty: Start, unique) -> None:
    own = faulty("use-limit-not-decremented")
    with own.client() as api, reader_client(own) as client:
        credential, code = new_credential(api, own, unique, useLimit=1)
        answers = [client.post(READ, json=read_body(own, code)).status_code for _ in range(2)]
        entry = next(e for e in listed(client, own) if e["uuid"] == credential)
    assert answers == [200, 200] and entry["useLimit"] == 1


def test_second_factor_granted(faulty: Start, unique) -> None:
    own = faulty("second-factor-granted")
    with own.client() as api, reader_client(own) as client:
        _, code = new_credential(api, own, unique, readerType="PIN_ID")
        assert client.post(READ, json=read_body(own, code)).status_code == 200


def test_list_includes_expired(faulty: Start, unique) -> None:
    own = faulty("list-includes-expired")
    with own.client() as api, reader_client(own) as client:
        late, _ = new_credential(
            api, own, unique, activeDate=at(own, days=-2), expiryDate=at(own, days=-1)
        )
        assert late in {e["uuid"] for e in listed(client, own)}


# -- webhooks -------------------------------------------------------------------------------
def test_hmac_wrong_text(faulty: Start) -> None:
    own = faulty("hmac-wrong-text")
    with hooked(own, verify=False) as rx:
        record = visit()
        send(own, "VISIT_CREATED", record)
        [delivery] = wait_for(rx.inbox, record["uuid"])
    stamp = delivery["headers"]["x-service-hmac-timestamp"]
    right = expected_signature(HMAC_KEY, "/visit/created", stamp, delivery["body"].encode())
    assert delivery["headers"]["x-service-hmac-sha256"] != right


def test_hmac_wrong_text_is_refused_by_a_verifying_receiver(faulty: Start) -> None:
    own = faulty("hmac-wrong-text")
    with hooked(own) as rx:
        record = visit()
        send(own, "VISIT_CREATED", record)
        assert wait_for(rx.inbox, record["uuid"], timeout=0.5) == []
        assert rx.inbox.rejections[0]["reason"] == "the signature does not match"


def test_hmac_timestamp_seconds(faulty: Start) -> None:
    own = faulty("hmac-timestamp-seconds")
    with hooked(own, verify=False) as rx:
        record = visit()
        send(own, "VISIT_CREATED", record)
        [delivery] = wait_for(rx.inbox, record["uuid"])
    stamp = int(delivery["headers"]["x-service-hmac-timestamp"])
    assert abs(stamp - own.server.clock.timestamp() * 1000) > 5000


def test_webhook_not_encrypted(faulty: Start) -> None:
    own = faulty("webhook-not-encrypted")
    encryption = {"secret": SECRET, "iv": IV, "fields": []}
    with hooked(own, verify=False, encryption=encryption) as rx:
        record = visit()
        send(own, "VISIT_CREATED", record)
        [delivery] = wait_for(rx.inbox, record["uuid"])
    raw = json.loads(delivery["body"])
    assert raw["visitor"]["email"] == "ada@example.com" != aes_b64("ada@example.com")


def test_access_code_always_encrypted_ignores_the_override_list(faulty: Start) -> None:
    own = faulty("access-code-always-encrypted")
    encryption = {"secret": SECRET, "iv": IV, "fields": ["email"]}
    with hooked(own, verify=False, encryption=encryption) as rx:
        record = visit()
        send(own, "VISIT_CREATED", record)
        [delivery] = wait_for(rx.inbox, record["uuid"])
    raw = json.loads(delivery["body"])
    assert raw["visitor"]["email"] == aes_b64("ada@example.com")  # listed
    assert raw["accessCode"] == aes_b64(record["accessCode"])  # not listed, encrypted anyway


def test_webhook_missing_charset(faulty: Start) -> None:
    own = faulty("webhook-missing-charset")
    with hooked(own) as rx:
        record = visit()
        send(own, "VISIT_CREATED", record)
        [delivery] = wait_for(rx.inbox, record["uuid"])
    assert "charset" not in delivery["headers"]["content-type"].lower()


def test_webhook_no_retry(faulty: Start) -> None:
    own = faulty("webhook-no-retry")
    dispatcher_of(own.server).delays = (0.05, 0.05, 0.05)
    with hooked(own) as rx:
        rx.inbox.fail_next = 1
        record = visit()
        send(own, "VISIT_CREATED", record)
        assert wait_for(rx.inbox, record["uuid"], timeout=0.5) == []
        assert rx.inbox.attempts == 1


def test_webhook_sent_when_disabled(faulty: Start) -> None:
    own = faulty("webhook-sent-when-disabled")
    with hooked(own, enabled=False) as rx:
        record = visit()
        send(own, "VISIT_CREATED", record)
        assert len(wait_for(rx.inbox, record["uuid"])) == 1


def test_normal_server_delivers_signed_encrypted_events(live: LiveServer) -> None:
    """The counterpart of the webhook faults above, on a server without faults."""
    encryption = {"secret": SECRET, "iv": IV, "fields": []}
    with hooked(live, encryption=encryption) as rx:
        record = visit()
        send(live, "VISIT_CREATED", record)
        [delivery] = wait_for(rx.inbox, record["uuid"])
    assert json.loads(delivery["body"])["visitor"]["email"] == aes_b64("ada@example.com")
    assert delivery["headers"]["content-type"] == "application/json; charset=utf-8"
    assert not rx.inbox.rejections
