"""Token buckets: 2000 units per key, 800 per minute, per-operation costs, Retry-After."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import httpx
import pytest

from amws_conformance import spec
from tests.reference_server.conftest import LiveServer

DEPTS = "/api/ws/v1/departments"
CAPACITY, REFILL = 2000, 800


@pytest.fixture
def fresh(faulty) -> LiveServer:
    """A server of its own: buckets drained here never slow the shared one."""
    return faulty()


@pytest.fixture
def limited(fresh: LiveServer) -> Iterator[httpx.Client]:
    with fresh.client("rate_limit") as client:
        yield client


def _drain(client: httpx.Client, path: str, cost: int) -> int:
    """Spend whole requests until the next one would not fit; return how many fitted."""
    fitted = CAPACITY // cost
    for _ in range(fitted):
        assert client.get(path).status_code == 200
    return fitted


def test_profile_declares_the_documented_bucket_for_rate_limit_key(fresh: LiveServer) -> None:
    limits = fresh.profile["rate_limits"]
    assert limits["default"] == {"capacity": CAPACITY, "refill_per_minute": REFILL}
    assert "rate_limit" not in limits["per_key"]


def test_bucket_holds_2000_units_then_429_with_integer_retry_after(limited: httpx.Client) -> None:
    cost = spec.operation("listDepartments").rate_cost
    _drain(limited, DEPTS, cost)
    refused = limited.get(DEPTS)
    assert refused.status_code == 429
    assert set(refused.json()) == {"code", "reason"}
    wait = int(refused.headers["Retry-After"])
    missing = cost - CAPACITY % cost
    assert wait == -(-missing * 60 // REFILL)


def test_waiting_retry_after_is_enough(fresh: LiveServer, limited: httpx.Client) -> None:
    _drain(limited, DEPTS, spec.operation("listDepartments").rate_cost)
    wait = int(limited.get(DEPTS).headers["Retry-After"])
    with fresh.control() as control:
        control.put("/_reference/clock", json={"advance_seconds": wait}).raise_for_status()
    assert limited.get(DEPTS).status_code == 200


def test_bucket_refills_800_units_per_minute(fresh: LiveServer, limited: httpx.Client) -> None:
    cost = spec.operation("listDepartments").rate_cost
    left = CAPACITY - _drain(limited, DEPTS, cost) * cost
    with fresh.control() as control:
        control.put("/_reference/clock", json={"advance_seconds": 60}).raise_for_status()
    for _ in range((left + REFILL) // cost):
        assert limited.get(DEPTS).status_code == 200
    assert limited.get(DEPTS).status_code == 429


def test_buckets_are_per_key(fresh: LiveServer, limited: httpx.Client) -> None:
    _drain(limited, DEPTS, spec.operation("listDepartments").rate_cost)
    assert limited.get(DEPTS).status_code == 429
    with fresh.client("full") as full:
        assert full.get(DEPTS).status_code == 200


def test_each_operation_charges_its_spec_cost(fresh: LiveServer, limited: httpx.Client) -> None:
    write_cost = spec.operation("createDepartment").rate_cost
    for i in range(CAPACITY // write_cost):
        assert limited.post(DEPTS, json={"name": f"cost-{i}"}).status_code == 201
    assert limited.post(DEPTS, json={"name": "one-too-many"}).status_code == 429


def test_failed_authentication_costs_400_units(fresh: LiveServer) -> None:
    bogus = secrets.token_hex(32)
    url = f"{fresh.base_url}{DEPTS}"
    for _ in range(CAPACITY // 400):
        assert httpx.get(url, headers={"Authorization": bogus}).status_code == 401
    refused = httpx.get(url, headers={"Authorization": bogus})
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
