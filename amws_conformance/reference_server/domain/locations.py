"""Locations: unique names, and a PUT that only changes the fields it is given.

The decisions inside these steps are the methods of ``LocationPolicy``; the handlers ask
``server.policy(LocationPolicy)`` for the one in force, which is where the location faults
(``faults/_locations.py``, ``faults/_records.py``) plug in. This module holds the
correct behaviour only.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack, reply
from amws_conformance.reference_server._errors import invalid_fields
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain._common import (
    drop_references,
    fetch,
    public,
    schema_fields,
    unique_or_409,
)
from amws_conformance.reference_server.store import Record

_FIELDS = [f for f in schema_fields("Location") if f != "uuid"]
_COORDINATES = ("latitude", "longitude")
_MAX_DECIMALS = 15


def every_field(record: Record) -> dict[str, Any]:
    """A location with every field of its schema, null when never set."""
    return {"uuid": record["uuid"], **{f: record.get(f) for f in _FIELDS}}


# -- the decisions inside the steps -----------------------------------------------------------
class LocationPolicy(Policy):
    """The decisions inside the location steps, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Writes.
    def checks_coordinate_precision(self) -> bool:
        """Whether a write refuses coordinates with more than 15 decimal places."""
        return True

    def create_answer(self, uuid: str, data: dict[str, Any]) -> Response:
        """The answer to a create: the plain acknowledgement."""
        return ack(uuid, 201)

    def put_changes(self, record: Record, body: dict[str, Any]) -> dict[str, Any]:
        """The fields a PUT writes: only those it sends, as sent."""
        return {f: body[f] for f in _FIELDS if f in body}

    # Reads.
    def list_row(self, record: Record) -> dict[str, Any]:
        """A location as listed: its uuid and name."""
        return {"uuid": record["uuid"], "name": record["name"]}

    def read_body(self, shown: dict[str, Any]) -> dict[str, Any]:
        """A location as read: every field, null when never set."""
        return shown

    # Delete.
    def drops_references_on_delete(self) -> bool:
        """Whether a delete clears the persons' and users' references to the location."""
        return True

    def removes_deleted_location(self) -> bool:
        """Whether a delete removes the location."""
        return True


# -- the steps --------------------------------------------------------------------------------
def _check_precision(call: Call) -> None:
    """422 for a coordinate written with more than 15 decimal places (LOC-FIELD-PRECISION).

    The schema cannot say this and the parsed float has forgotten how the number was
    written, so the raw request text is read again with exact decimals.
    """
    if not call.server.policy(LocationPolicy).checks_coordinate_precision():
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


@handles("listLocations")
async def list_locations(call: Call) -> Response:
    policy = call.server.policy(LocationPolicy)
    return reply(200, [policy.list_row(r) for r in call.server.store.all("location", call.system)])


@handles("getLocation")
async def get_location(call: Call) -> Response:
    shown = every_field(fetch(call, "location", call.path["uuid"]))
    return reply(200, call.server.policy(LocationPolicy).read_body(shown))


@handles("createLocation")
async def create_location(call: Call) -> Response:
    _check_precision(call)
    data = {f: call.body.get(f) for f in _FIELDS}
    with unique_or_409("location"):
        uuid = call.server.store.insert(
            "location", call.system, data, unique={"name": data["name"]}
        )
    return call.server.policy(LocationPolicy).create_answer(uuid, data)


@handles("updateLocation")
async def update_location(call: Call) -> Response:
    record = public(fetch(call, "location", call.path["uuid"]))
    _check_precision(call)
    given = call.server.policy(LocationPolicy).put_changes(record, call.body)
    merged = {**record, **given}
    with unique_or_409("location"):
        call.server.store.replace(
            "location", record["uuid"], merged, unique={"name": merged["name"]}
        )
    return ack(record["uuid"])


@handles("deleteLocation")
async def delete_location(call: Call) -> Response:
    record = fetch(call, "location", call.path["uuid"])
    policy = call.server.policy(LocationPolicy)
    with call.server.store.transaction():
        if policy.drops_references_on_delete():
            drop_references(call, ("person", "user"), "location", record["uuid"])
        if policy.removes_deleted_location():
            call.server.store.delete("location", record["uuid"])
    return ack(record["uuid"])
