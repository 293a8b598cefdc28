"""Vehicles: a read-only, paged register with normalised plates and VINs.

Counting tests use a fresh server of their own (no other test writes to it): the first system
is provisioned with exactly 150 vehicles and the second with 3, and nothing else adds any.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from amws_conformance import spec
from tests.reference_server.conftest import LiveServer

VEHICLES = "/api/ws/v1/vehicles"
SEEDED = 150
FIELDS = set(spec.openapi()["components"]["schemas"]["Vehicle"]["properties"])


@pytest.fixture(scope="module")
def fresh() -> Iterator[LiveServer]:
    """A server nobody else writes to, so counts are exact."""
    with LiveServer() as server:
        yield server


@pytest.fixture(scope="module")
def client(fresh: LiveServer) -> Iterator[httpx.Client]:
    with fresh.client("full") as http:
        yield http


def page(client: httpx.Client, **params: Any) -> dict[str, Any]:
    response = client.get(VEHICLES, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def uuids(body: dict[str, Any]) -> list[str]:
    return [entry["uuid"] for entry in body["entries"]]


def test_vehicle_paging_defaults_to_start_0_limit_500(client: httpx.Client) -> None:
    body = page(client)
    assert set(body) == {"entries", "startIndex", "countReturned", "totalCount"}
    assert body["startIndex"] == 0
    assert body["totalCount"] == SEEDED
    assert body["countReturned"] == len(body["entries"]) == min(500, SEEDED)
    assert page(client, start=0, limit=500) == body


@pytest.mark.parametrize(
    ("start", "limit", "count"),
    [(0, 100, 100), (100, 100, 50), (149, 100, 1), (150, 100, 0), (7, 1000, 143), (500, 500, 0)],
)
def test_vehicle_envelope_arithmetic(
    client: httpx.Client, start: int, limit: int, count: int
) -> None:
    body = page(client, start=start, limit=limit)
    assert body["startIndex"] == start
    assert body["totalCount"] == SEEDED
    assert body["countReturned"] == len(body["entries"]) == count
    assert body["countReturned"] <= limit


def test_vehicle_pages_follow_the_unpaged_order(client: httpx.Client) -> None:
    everything = uuids(page(client))
    assert len(set(everything)) == SEEDED
    first, second = page(client, start=0, limit=100), page(client, start=100, limit=100)
    assert uuids(first) + uuids(second) == everything
    assert uuids(page(client, start=42, limit=100)) == everything[42:142]


@pytest.mark.parametrize("limit", [100, 1000])
def test_vehicle_limit_bounds_are_accepted(client: httpx.Client, limit: int) -> None:
    body = page(client, limit=limit)
    assert body["countReturned"] == min(limit, SEEDED)


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 99},
        {"limit": 1001},
        {"limit": 0},
        {"limit": -100},
        {"limit": "many"},
        {"start": -1},
        {"start": "first"},
    ],
    ids=str,
)
def test_vehicle_paging_out_of_range_is_400_not_clamped(
    client: httpx.Client, params: dict[str, Any]
) -> None:
    response = client.get(VEHICLES, params=params)
    assert response.status_code == 400
    assert set(response.json()) == {"code", "reason"}
    assert response.json()["code"] == 400


def test_vehicle_entries_carry_every_vehicle_field(client: httpx.Client) -> None:
    assert {
        "uuid",
        "licensePlate",
        "vin",
        "make",
        "model",
        "color",
        "plateCountry",
        "plateRegion",
        "plateCategory",
    } == FIELDS
    for entry in page(client)["entries"]:
        assert set(entry) == FIELDS


def test_vehicle_plates_and_vins_hold_only_letters_and_digits(client: httpx.Client) -> None:
    entries = page(client)["entries"]
    plates = [entry["licensePlate"] for entry in entries]
    vins = [entry["vin"] for entry in entries]
    for value in plates + vins:
        assert re.fullmatch(r"[0-9A-Za-z]+", value), value
    # Normalising removed only separators: the register still tells every vehicle apart.
    assert len(set(plates)) == len(set(vins)) == SEEDED


def test_vehicle_register_is_per_system(fresh: LiveServer, client: httpx.Client) -> None:
    mine = set(uuids(page(client)))
    with fresh.client("other_system") as other:
        theirs = other.get(VEHICLES).json()
    assert theirs["totalCount"] == 3 and len(theirs["entries"]) == 3
    assert not mine & set(uuids(theirs))


def test_vehicle_list_needs_read_vehicles(fresh: LiveServer) -> None:
    with fresh.client("readonly") as readonly, fresh.client("none") as none:
        assert readonly.get(VEHICLES).status_code == 200
        assert none.get(VEHICLES).status_code == 403


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_vehicle_collection_has_no_write_operations(
    api: httpx.Client, live: LiveServer, method: str
) -> None:
    before = api.get(VEHICLES, params={"limit": 1000}).json()
    body = {"licensePlate": "CA 999-999", "vin": "1HG-CM82 633A999999", "make": "Kia"}
    response = api.request(method, VEHICLES, json=body)
    assert response.status_code == 405
    assert response.json()["code"] == 405
    target = f"{VEHICLES}/{before['entries'][0]['uuid']}"
    assert not api.request(method, target, json=body).is_success
    assert api.get(VEHICLES, params={"limit": 1000}).json() == before
