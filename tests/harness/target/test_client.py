"""The harness client: its answer to 429 (RATE-BACKOFF-DOUBLING: wait Retry-After, then twice as
long each further time), the cleanup ledger it keeps true, and its named views (``unchecked``,
``raw``, ``unretried``, ``unpaced``, ``foreign``), each leaving out what its name says."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from amws_conformance.harness import SafetyError
from amws_conformance.harness._checks import RuleViolation
from amws_conformance.harness.lifecycle.ledger import Ledger
from amws_conformance.harness.target import steps
from amws_conformance.harness.target.client import TargetClient
from amws_conformance.harness.target.crypto import decrypt_text, encrypt_text
from amws_conformance.harness.target.pacing import Pacer
from amws_conformance.harness.target.pool import KeyPool, PoolKey
from amws_conformance.harness.target.session import Session
from amws_conformance.harness.target.steps import MAX_429_RETRIES

DEPARTMENTS = "/api/ws/v1/departments"
FULL_KEY = "k" * 64
# An encrypting key's settings as a profile gives them (fields: the ones it encrypts).
ENCRYPTION = {"secret": "aa" * 32, "iv": "bb" * 16, "fields": ["name"]}


def _client_answering(statuses: list[tuple[int, str | None]]) -> TargetClient:
    """A client whose target answers ``statuses`` in turn: (status, Retry-After or None)."""
    answers = iter(statuses)

    def answer(request: httpx.Request) -> httpx.Response:
        status, retry_after = next(answers)
        if status == 429:
            headers = {} if retry_after is None else {"Retry-After": retry_after}
            return httpx.Response(429, headers=headers, json={"code": 429, "reason": "slow down"})
        return httpx.Response(status, json=[])

    return _client_of(answer)


def _client_of(
    answer: Callable[[httpx.Request], httpx.Response],
    *,
    pacer: Pacer | None = None,
    encryption: dict[str, Any] | None = None,
) -> TargetClient:
    """The full key's client of a target that answers every request with ``answer``."""
    session = Session(base_url="http://target.test", ledger=Ledger(), secrets=[])
    keys = KeyPool([PoolKey("full", FULL_KEY, pacer)])
    transport = httpx.MockTransport(answer)
    return TargetClient(session, "full", keys, encryption=encryption, transport=transport)


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(steps.time, "sleep", slept.append)
    return slept


def test_each_further_429_doubles_the_wait(waits: list[float]) -> None:
    client = _client_answering([(429, "1"), (429, "1"), (429, "1"), (200, None)])
    assert client.unchecked.get(DEPARTMENTS).status_code == 200
    assert waits == [1, 2, 4]


def test_a_longer_retry_after_is_never_cut_short(waits: list[float]) -> None:
    client = _client_answering([(429, "1"), (429, "30"), (200, None)])
    assert client.unchecked.get(DEPARTMENTS).status_code == 200
    assert waits == [1, 30]


def test_retries_stop_after_the_limit(waits: list[float]) -> None:
    client = _client_answering([(429, "1")] * (MAX_429_RETRIES + 1))
    assert client.unchecked.get(DEPARTMENTS).status_code == 429
    assert len(waits) == MAX_429_RETRIES


CREDENTIAL = "0b7f3a52-6a2f-4d0e-9a51-0c3c7e5d2a11"


def _acknowledging(request: httpx.Request) -> httpx.Response:
    status = 201 if request.method == "POST" else 200
    return httpx.Response(status, json={"code": status, "message": "success", "uuid": CREDENTIAL})


@pytest.mark.parametrize(("status", "pending"), [("DELETED", 0), ("DISABLED", 1)])
def test_a_credential_put_to_deleted_needs_no_cleanup(status: str, pending: int) -> None:
    client = _client_of(_acknowledging)
    client.unchecked.post("/api/ws/v1/credentials", json={"readerType": "PIN"})
    assert [e.uuid for e in client.session.ledger.pending] == [CREDENTIAL]
    client.unchecked.put(f"/api/ws/v1/credentials/{CREDENTIAL}", json={"status": status})
    assert len(client.session.ledger.pending) == pending
    # Still the run's own record: the test may go on changing it.
    assert client.session.ledger.owns(CREDENTIAL)


def _record_in_the_answer(request: httpx.Request) -> httpx.Response:
    """A create's acknowledgement that also carries a field of the record: it breaks
    CONV-WRITE-ACKNOWLEDGEMENT, a global check."""
    body = {"code": 201, "message": "success", "uuid": CREDENTIAL, "name": "the record"}
    return httpx.Response(201, json=body, request=request)


def test_a_create_whose_answer_breaks_a_check_is_still_cleaned_up() -> None:
    client = _client_of(_record_in_the_answer)
    with pytest.raises(AssertionError, match="CONV-WRITE-ACKNOWLEDGEMENT"):
        client.post(DEPARTMENTS, json={"name": "the record"})
    assert [e.uuid for e in client.session.ledger.pending] == [CREDENTIAL]


# -- the named views ---------------------------------------------------------------------
def test_unchecked_takes_an_answer_that_breaks_a_global_check() -> None:
    client = _client_of(_record_in_the_answer)
    with pytest.raises(RuleViolation, match="CONV-WRITE-ACKNOWLEDGEMENT"):
        client.post(DEPARTMENTS, json={"name": "checked"})
    assert [v.rule for _, v in client.session.violations] == ["CONV-WRITE-ACKNOWLEDGEMENT"]
    assert client.unchecked.post(DEPARTMENTS, json={"name": "unchecked"}).status_code == 201
    # Nothing more was judged: the unchecked answer left no violation behind.
    assert len(client.session.violations) == 1


class _Wire:
    """A target that keeps the JSON bodies it was sent and acknowledges each create."""

    def __init__(self) -> None:
        self.bodies: list[Any] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        return _acknowledging(request)


def test_raw_sends_a_listed_field_as_given() -> None:
    wire = _Wire()
    client = _client_of(wire, encryption=ENCRYPTION)
    client.post(DEPARTMENTS, json={"name": "plain"})
    client.raw.post(DEPARTMENTS, json={"name": "plain"})
    encrypted, raw = wire.bodies
    assert encrypted["name"] != "plain"
    assert decrypt_text(encrypted["name"], ENCRYPTION["secret"], ENCRYPTION["iv"]) == "plain"
    assert raw == {"name": "plain"}


def test_raw_leaves_a_listed_field_of_the_answer_encrypted() -> None:
    sealed = encrypt_text("Sales", ENCRYPTION["secret"], ENCRYPTION["iv"])

    def listing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=[{"uuid": CREDENTIAL, "name": sealed}])

    client = _client_of(listing, encryption=ENCRYPTION)
    assert client.get(DEPARTMENTS).json()[0]["name"] == "Sales"
    assert client.raw.get(DEPARTMENTS).json()[0]["name"] == sealed


def _throttled(request: httpx.Request) -> httpx.Response:
    return httpx.Response(429, headers={"Retry-After": "1"}, json={"code": 429, "message": "x"})


def _empty_bucket(paced: list[float]) -> Pacer:
    """A pacer whose model says the bucket is empty: a paced request waits (into ``paced``)."""
    pacer = Pacer(2000, 800, sleep=paced.append)
    pacer.drained()
    return pacer


def test_unretried_answers_a_429_but_is_still_paced(waits: list[float]) -> None:
    paced: list[float] = []
    client = _client_of(_throttled, pacer=_empty_bucket(paced))
    assert client.unchecked.unretried.get(DEPARTMENTS).status_code == 429
    assert waits == []  # no retry
    assert len(paced) == 1  # but a wait for the bucket


def test_unpaced_neither_waits_for_the_bucket_nor_retries(waits: list[float]) -> None:
    paced: list[float] = []
    pacer = _empty_bucket(paced)
    client = _client_of(_throttled, pacer=pacer)
    assert client.unpaced.unchecked.get(DEPARTMENTS).status_code == 429
    assert (waits, paced, pacer.spent) == ([], [], 0)
    # The client itself waits for the bucket, and waits out each 429 before its retries.
    assert client.unchecked.get(DEPARTMENTS).status_code == 429
    assert paced and len(waits) == MAX_429_RETRIES


def test_foreign_may_change_a_record_the_run_did_not_create() -> None:
    client = _client_of(_acknowledging)
    theirs = f"{DEPARTMENTS}/{CREDENTIAL}"
    with pytest.raises(SafetyError):
        client.unchecked.delete(theirs)
    assert client.foreign.unchecked.delete(theirs).status_code == 200


def test_views_compose_in_any_order() -> None:
    wire = _Wire()

    def answer(request: httpx.Request) -> httpx.Response:
        wire(request)
        return _record_in_the_answer(request)

    client = _client_of(answer, encryption=ENCRYPTION)
    for view in (client.raw.unchecked, client.unchecked.raw):
        assert view.post(DEPARTMENTS, json={"name": "plain"}).status_code == 201
    assert wire.bodies == [{"name": "plain"}] * 2
    # The views changed nothing of the client's own: it still encrypts and checks.
    with pytest.raises(RuleViolation):
        client.post(DEPARTMENTS, json={"name": "plain"})
    assert wire.bodies[-1]["name"] != "plain"


def test_a_view_sends_with_the_clients_connection_session_and_keys() -> None:
    headers: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        headers.append(request.headers.get("Authorization"))
        return _acknowledging(request)

    pacer = Pacer(2000, 800)
    client = _client_of(answer, pacer=pacer)
    view = client.unchecked.raw
    view.post(DEPARTMENTS, json={"name": "made through a view"})
    assert headers == [FULL_KEY]  # the client's key, paced on its bucket
    assert pacer.spent > 0
    # The client's session: the record is in its ledger, the exchange in its transcript.
    assert [e.uuid for e in client.session.ledger.pending] == [CREDENTIAL]
    assert client.session.transcript[-1].method == "POST"
    # The client's connection: closed with it, not one of its own.
    client.close()
    with pytest.raises(RuntimeError, match="closed"):
        view.get(DEPARTMENTS)


def _reads_via(answer: Callable[[httpx.Request], httpx.Response]) -> TargetClient:
    """A full key's client whose reads go through a readonly key's client."""
    writer = _client_of(answer)
    readonly = TargetClient(
        writer.session,
        "readonly",
        KeyPool([PoolKey("readonly", "r" * 64)]),
        transport=httpx.MockTransport(answer),
    )
    writer.reads_via = readonly
    return writer


def test_a_read_rerouted_to_another_key_keeps_the_views_options() -> None:
    keys: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers.get("Authorization"))
        return httpx.Response(418, json={"code": 418, "message": "a status no document lists"})

    writer = _reads_via(answer)
    assert writer.unchecked.get(DEPARTMENTS).status_code == 418
    with pytest.raises(RuleViolation):
        writer.get(DEPARTMENTS)
    assert keys == ["r" * 64] * 2  # both went with the readonly key


def test_a_view_of_one_key_alone_keeps_the_views_options() -> None:
    keys: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        keys.append(request.headers.get("Authorization"))
        return httpx.Response(418, json={"code": 418, "message": "a status no document lists"})

    client = _client_of(answer)
    other = PoolKey("full[1]", "o" * 64)
    with client.unchecked.only(other) as alone:
        assert alone.get(DEPARTMENTS).status_code == 418
        with pytest.raises(RuleViolation):
            alone.client.get(DEPARTMENTS)
    assert keys == ["o" * 64] * 2
