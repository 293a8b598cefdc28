"""Vehicles: read-only, paged, plates and VINs normalised.

Vehicles cannot be created through the API, so these tests read whatever vehicles the target
has and skip (saying why) when it has too few to show a rule. Paging limits come from the spec.
"""

from __future__ import annotations

import pytest

from amws_conformance import spec

PATH = "/api/ws/v1/vehicles"


def _parameter(name: str) -> dict:
    params = spec.operation("listVehicles").raw["parameters"]
    return spec.resolve(next(p for p in params if p["name"] == name))["schema"]


LIMIT = _parameter("limit")
START = _parameter("start")
LOW, HIGH, DEFAULT_LIMIT = LIMIT["minimum"], LIMIT["maximum"], LIMIT["default"]


def _page(api, **params) -> dict:
    response = api.get(PATH, params=params or None)
    assert response.status_code == 200, response.text
    return response.json()


def _all(api) -> list[dict]:
    """Every vehicle in the target's order, paged with the largest limit."""
    rows: list[dict] = []
    while True:
        page = _page(api, start=len(rows), limit=HIGH)
        rows += page["entries"]
        if not page["entries"] or len(rows) >= page["totalCount"]:
            return rows


def _total(api) -> int:
    return _page(api, limit=LOW)["totalCount"]


def _need(api, count: int, why: str) -> int:
    return _first_page(api, count, why)["totalCount"]


def _first_page(api, count: int, why: str) -> dict:
    """The page at start 0 with the smallest limit, once the target has ``count`` vehicles
    (the tests that need that page anyway reuse it instead of asking twice)."""
    page = _page(api, start=0, limit=LOW)
    if page["totalCount"] < count:
        pytest.skip(f"the target has {page['totalCount']} vehicles; {count} are needed to {why}")
    return page


@pytest.mark.rule("VEH-READ-ONLY")
def test_vehicles_cannot_be_written(api, factories, ledger) -> None:
    total = _total(api)
    plate = factories.plate().replace(" ", "").replace("-", "")
    body = {"licensePlate": plate, "vin": plate, "make": "Conformance", "model": "Run"}
    # These operations are not in the spec: nothing to check the answers against but the status.
    answers = [
        api.unchecked.post(PATH, json=body),
        api.unchecked.put(f"{PATH}/{ledger.fresh_uuid()}", json=body),
        api.unchecked.delete(f"{PATH}/{ledger.fresh_uuid()}"),
    ]
    for answer in answers:
        assert not 200 <= answer.status_code < 300, (answer.request.method, answer.status_code)
    assert _total(api) == total, "a write changed the number of vehicles"
    assert plate not in {v["licensePlate"] for v in _all(api)}


@pytest.mark.rule("VEH-READ-ONLY")
@pytest.mark.requires("destructive")
def test_existing_vehicle_cannot_be_changed(api) -> None:
    vehicle = _first_page(api, 1, "address an existing vehicle")["entries"][0]
    path = f"{PATH}/{vehicle['uuid']}"
    changed = {**vehicle, "make": "Changed by the conformance run"}
    for answer in (
        api.foreign.unchecked.put(path, json=changed),
        api.foreign.unchecked.delete(path),
    ):
        assert not 200 <= answer.status_code < 300, (answer.request.method, answer.status_code)
    assert vehicle in _all(api), "the vehicle was changed or removed"


@pytest.mark.rule("VEH-ENVELOPE")
def test_list_is_a_paged_envelope(api) -> None:
    total = _need(api, 1, "show a vehicle's fields")
    page = _page(api, start=0, limit=LOW)
    assert page["startIndex"] == 0
    assert page["countReturned"] == len(page["entries"]) == min(LOW, total)
    fields = set(spec.openapi()["components"]["schemas"]["Vehicle"]["properties"])
    for entry in page["entries"]:
        assert fields <= set(entry), f"missing {fields - set(entry)}"

    start = total - 1
    last = _page(api, start=start, limit=LOW)
    assert last["startIndex"] == start
    assert last["countReturned"] == len(last["entries"]) == 1
    assert last["totalCount"] == total


@pytest.mark.rule("VEH-ENVELOPE", "VEH-PAGING-DEFAULTS")
def test_pages_walk_every_vehicle_once(api) -> None:
    first = _first_page(api, LOW + 1, "fill more than one page")
    total = first["totalCount"]
    seen: list[str] = []
    while len(seen) < total:
        page = first if not seen else _page(api, start=len(seen), limit=LOW)
        assert page["startIndex"] == len(seen)
        assert page["countReturned"] == len(page["entries"]) <= LOW
        assert page["entries"], "a page came back empty before totalCount was reached"
        seen += [v["uuid"] for v in page["entries"]]
    assert len(seen) == len(set(seen)) == total
    assert seen == [v["uuid"] for v in _all(api)]


@pytest.mark.rule("VEH-PAGING-DEFAULTS")
def test_paging_defaults_to_start_zero_and_limit_500(api) -> None:
    total = _need(api, 3, "tell a start offset from the default")
    plain = _page(api)
    assert plain["startIndex"] == START.get("default", 0)
    assert len(plain["entries"]) == plain["countReturned"] == min(DEFAULT_LIMIT, total)

    rows = _all(api)
    assert [v["uuid"] for v in plain["entries"]] == [v["uuid"] for v in rows[:DEFAULT_LIMIT]]
    for k in (1, total - 1):
        page = _page(api, start=k)
        assert page["startIndex"] == k
        assert page["entries"][0]["uuid"] == rows[k]["uuid"], f"start={k}"


@pytest.mark.rule("VEH-PAGING-LIMIT-RANGE")
def test_limit_outside_the_range_is_400(api) -> None:
    total = _total(api)
    for limit in (LOW, HIGH):
        page = _page(api, limit=limit)
        assert page["countReturned"] == min(limit, total), limit
    for limit in (LOW - 1, HIGH + 1, 0, -1):
        response = api.get(PATH, params={"limit": limit})
        assert response.status_code == 400, (limit, response.status_code)


@pytest.mark.rule("VEH-PAGING-LIMIT-RANGE")
def test_limit_is_not_clamped(api) -> None:
    first = _first_page(api, LOW + 1, "tell a clamped page from a full one")
    assert api.get(PATH, params={"limit": LOW - 1}).status_code == 400
    assert first["countReturned"] == LOW


@pytest.mark.rule("VEH-PLATE-VIN-NORMALISED")
def test_plates_and_vins_hold_only_letters_and_digits(api) -> None:
    rows = _all(api)  # every vehicle: none means the target has too few to read a plate
    if not rows:
        pytest.skip("the target has 0 vehicles; 1 are needed to read a plate")
    plates = [v["licensePlate"] for v in rows if v.get("licensePlate")]
    if not plates:
        pytest.skip("no vehicle of the target has a licence plate")
    for vehicle in rows:
        for field in ("licensePlate", "vin"):
            value = vehicle.get(field)
            if value:
                assert value.isalnum(), f"{field} {value!r} keeps spaces or punctuation"
