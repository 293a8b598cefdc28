"""The harness client: its answer to 429 (RATE-BACKOFF-DOUBLING: wait Retry-After, then twice as
long each further time), and the cleanup ledger it keeps true."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from amws_conformance.harness.lifecycle.ledger import Ledger
from amws_conformance.harness.target import client as _client
from amws_conformance.harness.target.client import MAX_429_RETRIES, Session, TargetClient
from amws_conformance.harness.target.pool import KeyPool, PoolKey

DEPARTMENTS = "/api/ws/v1/departments"


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


def _client_of(answer: Callable[[httpx.Request], httpx.Response]) -> TargetClient:
    """The full key's client of a target that answers every request with ``answer``."""
    session = Session(base_url="http://target.test", ledger=Ledger(), secrets=[])
    client = TargetClient(session, "full", KeyPool([PoolKey("full", "k" * 64)]))
    transport = httpx.MockTransport(answer)
    client._http = httpx.Client(base_url="http://target.test", transport=transport)
    return client


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(_client.time, "sleep", slept.append)
    return slept


def test_each_further_429_doubles_the_wait(waits: list[float]) -> None:
    client = _client_answering([(429, "1"), (429, "1"), (429, "1"), (200, None)])
    assert client.get(DEPARTMENTS, checks=False).status_code == 200
    assert waits == [1, 2, 4]


def test_a_longer_retry_after_is_never_cut_short(waits: list[float]) -> None:
    client = _client_answering([(429, "1"), (429, "30"), (200, None)])
    assert client.get(DEPARTMENTS, checks=False).status_code == 200
    assert waits == [1, 30]


def test_retries_stop_after_the_limit(waits: list[float]) -> None:
    client = _client_answering([(429, "1")] * (MAX_429_RETRIES + 1))
    assert client.get(DEPARTMENTS, checks=False).status_code == 429
    assert len(waits) == MAX_429_RETRIES


CREDENTIAL = "0b7f3a52-6a2f-4d0e-9a51-0c3c7e5d2a11"


def _acknowledging(request: httpx.Request) -> httpx.Response:
    status = 201 if request.method == "POST" else 200
    return httpx.Response(status, json={"code": status, "message": "success", "uuid": CREDENTIAL})


@pytest.mark.parametrize(("status", "pending"), [("DELETED", 0), ("DISABLED", 1)])
def test_a_credential_put_to_deleted_needs_no_cleanup(status: str, pending: int) -> None:
    client = _client_of(_acknowledging)
    client.post("/api/ws/v1/credentials", json={"readerType": "PIN"}, checks=False)
    assert [e.uuid for e in client.session.ledger.pending] == [CREDENTIAL]
    client.put(f"/api/ws/v1/credentials/{CREDENTIAL}", json={"status": status}, checks=False)
    assert len(client.session.ledger.pending) == pending
    # Still the run's own record: the test may go on changing it.
    assert client.session.ledger.owns(CREDENTIAL)


def test_a_create_whose_answer_breaks_a_check_is_still_cleaned_up() -> None:
    def record_in_the_answer(request: httpx.Request) -> httpx.Response:
        body = {"code": 201, "message": "success", "uuid": CREDENTIAL, "name": "the record"}
        return httpx.Response(201, json=body, request=request)

    client = _client_of(record_in_the_answer)
    with pytest.raises(AssertionError, match="CONV-WRITE-ACKNOWLEDGEMENT"):
        client.post("/api/ws/v1/departments", json={"name": "the record"})
    assert [e.uuid for e in client.session.ledger.pending] == [CREDENTIAL]
