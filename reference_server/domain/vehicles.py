"""Vehicles: read-only and paged; plates and VINs are kept without spaces or punctuation."""

from __future__ import annotations

import re
from typing import Any

from starlette.responses import Response

from reference_server._call import Call
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
    return paged(vehicles, call.query["start"], call.query["limit"])
