"""Vehicles: read-only and paged; plates and VINs are kept without spaces or punctuation.

The decisions inside these steps are the methods of ``VehiclePolicy``; the handler asks
``server.policy(VehiclePolicy)`` for the one in force, which is where the vehicle faults
(``faults/_vehicles.py``) plug in. This module holds the correct behaviour only.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain._common import paged, public

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView


def normalise_plate(value: str | None) -> str | None:
    return re.sub(r"[^0-9A-Za-z]", "", value) if value else value


def store_vehicle(server: ServerView, system: str, data: dict[str, Any]) -> str:
    """Vehicles arrive from registrations and plate cameras, never through the API.

    They are kept as captured (plates with their spaces) and normalised on the way out.
    """
    return server.store.insert("vehicle", system, data)


# -- the decisions inside the steps -----------------------------------------------------------
class VehiclePolicy(Policy):
    """The decisions inside the vehicle list, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    def shown(self, vehicle: dict[str, Any]) -> dict[str, Any]:
        """A vehicle as listed: plate and VIN without spaces or punctuation."""
        return {
            **vehicle,
            "licensePlate": normalise_plate(vehicle.get("licensePlate")),
            "vin": normalise_plate(vehicle.get("vin")),
        }

    def page(self, vehicles: list[dict[str, Any]], start: int, limit: int) -> Response:
        """The paged answer: rows from the zero-based ``start``, which startIndex repeats."""
        return paged(vehicles, start, limit)


# -- the steps --------------------------------------------------------------------------------
@handles("listVehicles")
async def list_vehicles(call: Call) -> Response:
    policy = call.server.policy(VehiclePolicy)
    vehicles = [policy.shown(public(v)) for v in call.server.store.all("vehicle", call.system)]
    return policy.page(vehicles, call.query["start"], call.query["limit"])
