"""Vehicles: read-only and paged; plates and VINs are kept without spaces or punctuation."""

from __future__ import annotations

import json
import re
import uuid as uuidlib
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server._state import Server
from reference_server.domain import handles
from reference_server.domain._common import paged, public


def normalise_plate(value: str | None) -> str | None:
    return re.sub(r"[^0-9A-Za-z]", "", value) if value else value


def store_vehicle(server: Server, system: str, data: dict[str, Any]) -> str:
    """Vehicles arrive from registrations and plate cameras, never through the API.

    They are kept as captured (plates with their spaces) and normalised on the way out.
    """
    return server.store.insert("vehicle", system, data)


def _shown(server: Server, vehicle: dict[str, Any]) -> dict[str, Any]:
    if server.faults.on("plates-keep-spaces"):
        return vehicle
    return {
        **vehicle,
        "licensePlate": normalise_plate(vehicle.get("licensePlate")),
        "vin": normalise_plate(vehicle.get("vin")),
    }


@handles("listVehicles")
async def list_vehicles(call: Call) -> Response:
    vehicles = [
        _shown(call.server, public(v)) for v in call.server.store.all("vehicle", call.system)
    ]
    start, faults = call.query["start"], call.server.faults
    if faults.on("vehicle-start-one-based"):
        answer = paged(vehicles[max(start - 1, 0) :], 0, call.query["limit"])
        body = json.loads(bytes(answer.body))
        return reply(200, {**body, "startIndex": start, "totalCount": len(vehicles)})
    if faults.on("vehicle-start-index-zero"):
        return paged(vehicles[start:], 0, call.query["limit"])
    return paged(vehicles, start, call.query["limit"])


_VEHICLES = re.compile(r"/api/ws/v1/vehicles(?:/([^/]+))?/?")


def acknowledged_write(request: Request) -> Response | None:
    """Fault ``vehicle-writes-acknowledged`` only: a write to a vehicle path that the spec does
    not have is answered with a success acknowledgement (nothing is stored)."""
    found = _VEHICLES.fullmatch(request.url.path)
    if found is None or request.method not in ("POST", "PUT", "DELETE"):
        return None
    target = found.group(1)
    if (request.method == "POST") != (target is None):
        return None
    return ack(target or str(uuidlib.uuid4()), 201 if target is None else 200)
