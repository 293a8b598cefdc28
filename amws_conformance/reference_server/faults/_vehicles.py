"""Faults of vehicles, a read-only resource.

The faults of decisions inside a vehicle step override one decision of ``VehiclePolicy`` each
(the policy seam, ``reference_server/_policy.py``); answering the writes the spec does not
have is the request seam's (``RequestPolicy.answered_before_routing``). A status answered for
another stays declarative (``swap``).
"""

from __future__ import annotations

import json
import re
import uuid as uuidlib
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from amws_conformance.reference_server._call import ack, reply
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server.domain.vehicles import VehiclePolicy
from amws_conformance.reference_server.faults._model import overrides, swap


@overrides(
    "plates-keep-spaces", "VEH-PLATE-VIN-NORMALISED", "vehicle plates and VINs keep their spaces"
)
class _PlatesKeepSpaces(VehiclePolicy):
    def shown(self, vehicle: dict[str, Any]) -> dict[str, Any]:
        return vehicle  # as captured: the normalised plate and VIN are not shown


@overrides(
    "vehicle-start-index-zero", "VEH-ENVELOPE", "listVehicles answers startIndex 0 for any start"
)
class _VehicleStartIndexZero(VehiclePolicy):
    def page(self, vehicles: list[dict[str, Any]], start: int, limit: int) -> Response:
        # The rows from start, paged as if they were the whole list.
        return super().page(vehicles[start:], 0, limit)


@overrides(
    "vehicle-start-one-based",
    "VEH-PAGING-DEFAULTS",
    "listVehicles counts start from one: start k begins at row k-1",
)
class _VehicleStartOneBased(VehiclePolicy):
    def page(self, vehicles: list[dict[str, Any]], start: int, limit: int) -> Response:
        answer = super().page(vehicles[max(start - 1, 0) :], 0, limit)
        body = json.loads(bytes(answer.body))
        return reply(200, {**body, "startIndex": start, "totalCount": len(vehicles)})


swap("vehicle-limit-range-422", "VEH-PAGING-LIMIT-RANGE", (400, 422), "listVehicles")


_VEHICLE_PATH = re.compile(r"/api/ws/v1/vehicles(?:/([^/]+))?/?")


@overrides(
    "vehicle-writes-acknowledged",
    "VEH-READ-ONLY",
    "writes to vehicle paths are answered with a success acknowledgement instead of 405",
)
class _VehicleWritesAcknowledged(RequestPolicy):
    def answered_before_routing(self, request: Request) -> Response | None:
        # A write to a vehicle path the spec does not have; nothing is stored.
        found = _VEHICLE_PATH.fullmatch(request.url.path)
        if found is None or request.method not in ("POST", "PUT", "DELETE"):
            return super().answered_before_routing(request)
        target = found.group(1)
        if (request.method == "POST") != (target is None):
            return super().answered_before_routing(request)
        return ack(target or str(uuidlib.uuid4()), 201 if target is None else 200)
