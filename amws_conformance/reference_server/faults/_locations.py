"""Faults of locations.

The faults of decisions inside a location step override one decision of ``LocationPolicy``
each (the policy seam, ``reference_server/_policy.py``): the correct answer comes from
``super()`` and the class states only the deviation. Validation and status faults stay
declarative (``unchecked``, ``optional``, ``swap``).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import reply
from amws_conformance.reference_server.domain.locations import LocationPolicy, every_field
from amws_conformance.reference_server.faults._model import (
    DUPLICATE,
    NOT_FOUND,
    optional,
    overrides,
    swap,
    unchecked,
)
from amws_conformance.reference_server.store import Record


@overrides(
    "location-put-replaces", "LOC-UPDATE-PARTIAL", "location PUT clears the fields it was not given"
)
class _LocationPutReplaces(LocationPolicy):
    def put_changes(self, record: Record, body: dict[str, Any]) -> dict[str, Any]:
        # Every field it was not given is cleared, except the name and type a location needs.
        kept = ("uuid", "name", "type")
        cleared = {f: None for f in every_field(record) if f not in kept}
        return {**cleared, **super().put_changes(record, body)}


unchecked("location-name-unchecked", "LOC-FIELD-LENGTH", "name", "createLocation", "updateLocation")
unchecked("location-type-unchecked", "LOC-FIELD-ENUM", "type", "createLocation", "updateLocation")
unchecked(
    "location-phone-unchecked",
    "LOC-FIELD-PHONE",
    "keyContactNumber",
    "createLocation",
    "updateLocation",
)
unchecked("latitude-unchecked", "LOC-FIELD-RANGE", "latitude", "createLocation", "updateLocation")
swap(
    "location-unknown-400",
    "LOC-NOT-FOUND",
    NOT_FOUND,
    "getLocation",
    "updateLocation",
    "deleteLocation",
)
swap("location-duplicate-422", "LOC-NAME-UNIQUE", DUPLICATE, "createLocation", "updateLocation")
optional("location-type-optional", "LOC-FIELD-REQUIRED", "type", "createLocation")


@overrides(
    "coordinate-precision-unchecked",
    "LOC-FIELD-PRECISION",
    "coordinates with 16 or more decimal places are stored",
)
class _CoordinatePrecisionUnchecked(LocationPolicy):
    def checks_coordinate_precision(self) -> bool:
        return False


@overrides(
    "location-ack-returns-record",
    "LOC-WRITE-ACK",
    "createLocation answers the stored record beside the acknowledgement",
)
class _LocationAckReturnsRecord(LocationPolicy):
    def create_answer(self, uuid: str, data: dict[str, Any]) -> Response:
        record = every_field({**data, "uuid": uuid})
        return reply(201, {"code": 201, "message": "success", **record})


@overrides("location-list-full-records", "LOC-LIST-SHAPE", "listLocations answers full records")
class _LocationListFullRecords(LocationPolicy):
    def list_row(self, record: Record) -> dict[str, Any]:
        return {**super().list_row(record), **every_field(record)}


@overrides(
    "location-read-omits-nulls", "LOC-READ-FULL", "getLocation leaves out the fields never set"
)
class _LocationReadOmitsNulls(LocationPolicy):
    def read_body(self, shown: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in super().read_body(shown).items() if v is not None}


@overrides("location-delete-keeps-links", "LOC-DELETE-HARD", "people keep a deleted location")
class _LocationDeleteKeepsLinks(LocationPolicy):
    def drops_references_on_delete(self) -> bool:
        return False
