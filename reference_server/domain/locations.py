"""Locations: unique names, and a PUT that only changes the fields it is given."""

from __future__ import annotations

import json
from decimal import Decimal

from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server._errors import invalid_fields
from reference_server.domain import handles
from reference_server.domain._common import (
    drop_references,
    fetch,
    public,
    schema_fields,
    unique_or_409,
)

_FIELDS = [f for f in schema_fields("Location") if f != "uuid"]
_COORDINATES = ("latitude", "longitude")
_MAX_DECIMALS = 15


def _check_precision(call: Call) -> None:
    """422 for a coordinate written with more than 15 decimal places (LOC-FIELD-PRECISION).

    The schema cannot say this and the parsed float has forgotten how the number was
    written, so the raw request text is read again with exact decimals.
    """
    if call.server.faults.on("coordinate-precision-unchecked"):
        return
    try:
        written = json.loads(call.request.state.raw_body, parse_float=Decimal)
    except (AttributeError, UnicodeDecodeError, ValueError):
        return
    if not isinstance(written, dict):
        return
    errors = {
        field: f"must have at most {_MAX_DECIMALS} decimal places"
        for field in _COORDINATES
        if isinstance(written.get(field), Decimal)
        and -int(written[field].as_tuple().exponent) > _MAX_DECIMALS
    }
    if errors:
        raise invalid_fields(errors)


def _full(record: dict) -> dict:
    return {"uuid": record["uuid"], **{f: record.get(f) for f in _FIELDS}}


@handles("listLocations")
async def list_locations(call: Call) -> Response:
    records = call.server.store.all("location", call.system)
    if call.server.faults.on("location-list-full-records"):
        return reply(200, [_full(r) for r in records])
    return reply(200, [{"uuid": r["uuid"], "name": r["name"]} for r in records])


@handles("getLocation")
async def get_location(call: Call) -> Response:
    shown = _full(fetch(call, "location", call.path["uuid"]))
    if call.server.faults.on("location-read-omits-nulls"):
        shown = {k: v for k, v in shown.items() if v is not None}
    return reply(200, shown)


@handles("createLocation")
async def create_location(call: Call) -> Response:
    _check_precision(call)
    data = {f: call.body.get(f) for f in _FIELDS}
    with unique_or_409("location"):
        uuid = call.server.store.insert(
            "location", call.system, data, unique={"name": data["name"]}
        )
    if call.server.faults.on("location-ack-returns-record"):
        return reply(201, {"code": 201, "message": "success", **_full({**data, "uuid": uuid})})
    return ack(uuid, 201)


@handles("updateLocation")
async def update_location(call: Call) -> Response:
    record = public(fetch(call, "location", call.path["uuid"]))
    _check_precision(call)
    given = {f: call.body[f] for f in _FIELDS if f in call.body}
    if call.server.faults.on("location-put-replaces"):
        given = {
            f: call.body.get(f, None if f not in ("name", "type") else record[f]) for f in _FIELDS
        }
    merged = {**record, **given}
    with unique_or_409("location"):
        call.server.store.replace(
            "location", record["uuid"], merged, unique={"name": merged["name"]}
        )
    return ack(record["uuid"])


@handles("deleteLocation")
async def delete_location(call: Call) -> Response:
    record = fetch(call, "location", call.path["uuid"])
    with call.server.store.transaction():
        if not call.server.faults.on("location-delete-keeps-links"):
            drop_references(call, ("person", "user"), "location", record["uuid"])
        if not call.server.faults.on("location-delete-kept"):
            call.server.store.delete("location", record["uuid"])
    return ack(record["uuid"])
