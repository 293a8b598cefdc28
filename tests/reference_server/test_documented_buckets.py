"""``serve --documented-buckets``: every key and every failed authentication on the documented
bucket (as a staging system enforces it), stated so in the profile, over any database."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from amws_conformance import spec
from amws_conformance.reference_server import build_server
from amws_conformance.reference_server.rate_bucket import RAISED
from tests._served import serve
from tests.reference_server.conftest import LiveServer

REPO = Path(__file__).resolve().parents[2]
DEPTS = "/api/ws/v1/departments"
LIMITS = spec.rate_limit()
BUCKET = {"capacity": LIMITS.capacity, "refill_per_minute": LIMITS.refill_per_minute}
READ_COST = spec.operation("listDepartments").rate_cost
FAILED_AUTH = LIMITS.failed_authentication_cost


@pytest.fixture
def started() -> Iterator[Callable[..., LiveServer]]:
    """Start servers with the given options (stopped after the test)."""
    servers: list[LiveServer] = []

    def start(*faults: str, **options: Any) -> LiveServer:
        server = LiveServer(faults, **options).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


@pytest.fixture
def documented(started: Callable[..., LiveServer]) -> LiveServer:
    return started(documented_buckets=True)


def _served_before_429(client: httpx.Client, path: str, attempts: int) -> tuple[int, float]:
    """Send up to ``attempts`` requests; return how many were answered before the first 429
    (``attempts`` if none was refused) and the seconds the burst took."""
    began = time.monotonic()
    for served in range(attempts):
        response = client.get(path)
        if response.status_code == 429:
            assert int(response.headers["Retry-After"]) >= 1
            return served, time.monotonic() - began
        assert response.status_code == 200, response.text
    return attempts, time.monotonic() - began


def _assert_documented_burst(client: httpx.Client) -> None:
    """The key is refused once it has spent the documented capacity (plus what refilled)."""
    fitted = LIMITS.capacity // READ_COST
    served, seconds = _served_before_429(client, DEPTS, fitted * 2)
    refilled = LIMITS.refill_per_minute * seconds / 60
    assert fitted <= served <= (LIMITS.capacity + refilled) // READ_COST + 1


def test_full_key_is_refused_after_the_documented_bucket(documented: LiveServer) -> None:
    with documented.client("full") as full:
        _assert_documented_burst(full)


def test_without_the_flag_the_same_burst_is_served(started: Callable[..., LiveServer]) -> None:
    attempts = LIMITS.capacity // READ_COST * 2
    with started().client("full") as full:
        assert _served_before_429(full, DEPTS, attempts)[0] == attempts


def test_missing_header_pays_failed_auth_cost_from_the_documented_bucket(
    documented: LiveServer,
) -> None:
    url = f"{documented.base_url}{DEPTS}"
    for _ in range(LIMITS.capacity // FAILED_AUTH):
        assert httpx.get(url).status_code == 401
    refused = httpx.get(url)
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1


def test_without_the_flag_missing_headers_are_not_limited(
    started: Callable[..., LiveServer],
) -> None:
    url = f"{started().base_url}{DEPTS}"
    for _ in range(LIMITS.capacity // FAILED_AUTH + 1):
        assert httpx.get(url).status_code == 401


@pytest.mark.parametrize("header", ["disabled", "unknown"])
def test_disabled_and_unknown_keys_pay_from_documented_buckets(
    documented: LiveServer, header: str
) -> None:
    value = (
        documented.profile["keys"]["disabled"] if header == "disabled" else secrets.token_hex(32)
    )
    url = f"{documented.base_url}{DEPTS}"
    for _ in range(LIMITS.capacity // FAILED_AUTH):
        assert httpx.get(url, headers={"Authorization": value}).status_code == 401
    assert httpx.get(url, headers={"Authorization": value}).status_code == 429


def test_every_stored_key_and_the_anonymous_bucket_start_at_the_documented_size(
    documented: LiveServer,
) -> None:
    server = documented.server
    records = [r for system in server.systems() for r in server.store.all("apikey", system)]
    assert {"full", "readonly", "none", "disabled", "rate_limit", "other_system"} <= {
        r["name"] for r in records
    }
    for record in records:
        assert server.buckets.remaining(record["uuid"]) == LIMITS.capacity, record["name"]
    assert server.buckets.remaining("anon:127.0.0.1") == LIMITS.capacity


def test_profile_states_the_documented_bucket_everywhere(documented: LiveServer) -> None:
    limits = documented.profile["rate_limits"]
    assert limits["default"] == BUCKET
    assert limits["unauthenticated"] == BUCKET
    assert not limits.get("per_key")


def test_faults_on_the_bucket_still_apply_under_the_flag(
    started: Callable[..., LiveServer],
) -> None:
    large = started("bucket-too-large", documented_buckets=True)
    full_key = large.server.key_by_value(large.profile["keys"]["full"])
    assert full_key is not None
    assert large.server.buckets.remaining(full_key.uuid) > LIMITS.capacity
    frozen = started("bucket-never-refills", documented_buckets=True)
    with frozen.client("full") as full, frozen.control() as control:
        _assert_documented_burst(full)
        control.put("/_reference/clock", json={"advance_seconds": 600}).raise_for_status()
        assert full.get(DEPTS).status_code == 429


def _provision_without_the_flag(db: Path) -> dict[str, Any]:
    """Provision a file database the ordinary way; return the full key's stored record."""
    server = build_server(str(db))
    try:
        main = server.systems()[0]
        full = next(r for r in server.store.all("apikey", main) if r["name"] == "full")
    finally:
        server.store.close()
    assert full["bucket"] == RAISED.__dict__
    return full


def test_database_provisioned_without_the_flag_is_paced_when_reopened_with_it(
    started: Callable[..., LiveServer], tmp_path: Path
) -> None:
    db = tmp_path / "earlier.sqlite"
    stored = _provision_without_the_flag(db)
    reopened = started(db=str(db), documented_buckets=True)
    assert reopened.profile["keys"]["full"] == stored["value"]  # not provisioned again
    with reopened.client("full") as full:
        _assert_documented_burst(full)
    # A runtime setting, not a migration: the stored key keeps its raised quota.
    assert reopened.server.store.get("apikey", stored["uuid"]) == stored


def test_serve_flag_writes_a_documented_profile_over_an_earlier_database(
    tmp_path: Path,
) -> None:
    db = tmp_path / "earlier.sqlite"
    stored = _provision_without_the_flag(db)
    process, out = serve(tmp_path, db=str(db), options=["--documented-buckets"])
    try:
        profile = yaml.safe_load(out.read_text(encoding="utf-8"))
        limits = profile["rate_limits"]
        assert limits["default"] == limits["unauthenticated"] == BUCKET
        assert not limits.get("per_key")
        assert profile["keys"]["full"] == stored["value"]
        headers = {"Authorization": stored["value"]}
        with httpx.Client(base_url=profile["base_url"], headers=headers, timeout=10) as full:
            _assert_documented_burst(full)
    finally:
        process.terminate()
        process.wait(timeout=10)
