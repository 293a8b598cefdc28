"""Small helpers every resource module shares: lookups, references, paging, conflicts.

The decisions these helpers make for every resource (which system a read or a reference may
reach, whether a hard delete clears what points at the record) are the methods of
``RecordPolicy``; the helpers ask ``server.policy(RecordPolicy)`` for the one in force, which
is where the convention faults (``faults/_records.py``) plug in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from starlette.responses import Response

from amws_conformance import spec
from amws_conformance.reference_server._call import Call, reply
from amws_conformance.reference_server._errors import ApiError, invalid_fields, not_found
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.store import Duplicate, Record


class RecordPolicy(Policy):
    """The decisions every resource shares, each answering what the conventions require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    def read_scope(self, system: str) -> str | None:
        """The system whose records a read by ``system`` finds (None: any): its own only."""
        return system

    def reference_scope(self, system: str) -> str | None:
        """The system a record referenced by ``system`` must belong to (None: any): its own."""
        return system

    def drops_references(self) -> bool:
        """Whether a hard delete clears the fields of other records that point at the record."""
        return True


def public(record: Record) -> dict[str, Any]:
    """The record without the server's private fields (names starting with ``_``)."""
    return {k: v for k, v in record.items() if not k.startswith("_")}


def fetch(call: Call, kind: str, uuid: str, what: str | None = None) -> Record:
    """The caller's record of that kind, or 404 (another system's record is not found)."""
    scope = call.server.policy(RecordPolicy).read_scope(call.system)
    record = call.server.store.get(kind, uuid, scope)
    if record is None:
        raise not_found(what or kind.replace("_", " "))
    return record


def check_references(call: Call, body: Mapping[str, Any], kinds: Mapping[str, str]) -> None:
    """422 naming each referenced UUID that does not exist in the caller's system."""
    scope = call.server.policy(RecordPolicy).reference_scope(call.system)
    errors = {
        field: "refers to a record that does not exist"
        for field, kind in kinds.items()
        if body.get(field) is not None and call.server.store.get(kind, body[field], scope) is None
    }
    if errors:
        raise invalid_fields(errors)


@contextmanager
def unique_or_409(what: str) -> Iterator[None]:
    """Turn the store's duplicate signal into the documented 409."""
    try:
        yield
    except Duplicate as dup:
        raise ApiError(409, f"a {what} with this {dup.field} already exists") from None


def page_of(entries: list[Any], start: int, limit: int) -> dict[str, Any]:
    """The paged envelope of ``entries`` from ``start``, at most ``limit`` of them."""
    window = entries[start : start + limit]
    return {
        "entries": window,
        "startIndex": start,
        "countReturned": len(window),
        "totalCount": len(entries),
    }


def paged(entries: list[Any], start: int, limit: int) -> Response:
    return reply(200, page_of(entries, start, limit))


def drop_references(call: Call, kinds: tuple[str, ...], field: str, uuid: str) -> None:
    """Clear ``field`` on every record of ``kinds`` that points at ``uuid`` (hard-delete rule)."""
    if not call.server.policy(RecordPolicy).drops_references():
        return
    store = call.server.store
    for kind in kinds:
        for record in store.all(kind, call.system, lambda r: r.get(field) == uuid):
            store.replace(kind, record["uuid"], {**record, field: None})


def pick(body: Mapping[str, Any], fields: list[str] | tuple[str, ...]) -> dict[str, Any]:
    return {f: body.get(f) for f in fields}


def schema_fields(schema_name: str) -> list[str]:
    """Property names of a component schema (the spec decides what a record holds)."""
    schema = spec.openapi()["components"]["schemas"][schema_name]
    return list(schema.get("properties", {}))


def first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


Predicate = Callable[[Record], bool]
