"""The name-only resources: departments, organisations, cost centers, visit reasons, groups.

The five resources share one set of handlers; each step passes the store kind it works on
(``department``, ``cost_center``, ...). The decisions inside these steps are the methods of
``ReferenceDataPolicy``; the handlers ask ``server.policy(ReferenceDataPolicy)`` for the one
in force, which is where the faults of these resources (``faults/_name_only.py``; the system
scope of their lists, ``faults/_records.py``) plug in. This module holds the correct behaviour
only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack, reply
from amws_conformance.reference_server._errors import not_found
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain._common import (
    drop_references,
    fetch,
    public,
    unique_or_409,
)
from amws_conformance.reference_server.store import Record

# operation id suffix -> (store kind, fields of persons/users that reference it)
_RESOURCES = {
    "Department": ("department", ("person", "user"), "department"),
    "Organisation": ("organisation", ("person", "user"), "organisation"),
    "CostCenter": ("cost_center", ("person",), "costCenter"),
    "VisitReason": ("visit_reason", (), "visitReason"),
    "Group": ("group", ("person", "user"), "group"),
}


# -- the decisions inside the steps -----------------------------------------------------------
class ReferenceDataPolicy(Policy):
    """The decisions inside the steps of the name-only resources, each as the documents require.

    One method per decision, named after what it decides; ``kind`` is the store kind of the
    resource the step works on. Faults bend them by overriding (``reference_server/_policy.py``).
    """

    # Create and update.
    def unique_fields(self, kind: str, name: str | None) -> dict[str, str]:
        """The values kept unique per system on a write: the name, when there is one."""
        return {} if name is None else {"name": name}

    def name_after_update(self, kind: str, record: Record, sent: str | None) -> str | None:
        """The name a PUT stores: the one it sent."""
        return sent

    def update_keeps_uuid(self, kind: str) -> bool:
        """Whether a PUT rewrites the record in place, under its UUID."""
        return True

    def updated(self, kind: str, uuid: str) -> None:
        """A PUT rewrote the record; nothing more to decide on the correct server."""

    def acknowledgement(self, kind: str, uuid: str, name: str | None, status: int) -> Response:
        """The answer to a create (201) or update (200): the plain acknowledgement."""
        return ack(uuid, status)

    # Reads.
    def list_scope(self, system: str) -> str | None:
        """The system whose records a list shows: the caller's own."""
        return system

    def listed(self, kind: str, record: Record) -> bool:
        """Whether a stored record is in the list: every stored record is."""
        return True

    def list_body(self, kind: str, items: list[dict[str, Any]], query: Mapping[str, str]) -> Any:
        """The list answer: a plain array of {uuid, name}, whatever the query says."""
        return items

    def readable(self, kind: str, record: Record) -> bool:
        """Whether a stored record can be read, updated and deleted: every stored record can."""
        return True

    def read_body(self, kind: str, shown: dict[str, Any]) -> Any:
        """The read answer: the record's {uuid, name}."""
        return shown

    # Delete.
    def drops_references_on_delete(self, kind: str) -> bool:
        """Whether a delete clears the persons' and users' references to the record."""
        return True

    def deleting(self, kind: str, system: str, uuid: str) -> None:
        """What else a delete removes: nothing on the correct server."""

    def keeps_deleted_record(self, kind: str, uuid: str) -> bool:
        """Whether a deleted record stays in the store: no, the delete is hard."""
        return False


# -- the steps --------------------------------------------------------------------------------
def _list_items(call: Call, kind: str) -> Any:
    policy = call.server.policy(ReferenceDataPolicy)
    records = call.server.store.all(kind, policy.list_scope(call.system))
    items = [{"uuid": r["uuid"], "name": r["name"]} for r in records if policy.listed(kind, r)]
    return policy.list_body(kind, items, call.request.query_params)


def _one(call: Call, kind: str, what: str) -> Record:
    record = fetch(call, kind, call.path["uuid"], what)
    if not call.server.policy(ReferenceDataPolicy).readable(kind, record):
        raise not_found(what)
    return record


def _register(single: str, kind: str, holders: tuple[str, ...], field: str) -> None:
    what = kind.replace("_", " ")

    @handles(f"list{single}s")
    async def list_all(call: Call) -> Response:
        return reply(200, _list_items(call, kind))

    @handles(f"get{single}")
    async def get_one(call: Call) -> Response:
        record = _one(call, kind, what)
        shown = {"uuid": record["uuid"], "name": record["name"]}
        return reply(200, call.server.policy(ReferenceDataPolicy).read_body(kind, shown))

    @handles(f"create{single}")
    async def create(call: Call) -> Response:
        # The validation seam has made sure of the name (a fault may let it be missing).
        name, policy = call.body.get("name"), call.server.policy(ReferenceDataPolicy)
        with unique_or_409(what):
            uuid = call.server.store.insert(
                kind, call.system, {"name": name}, unique=policy.unique_fields(kind, name)
            )
        return policy.acknowledgement(kind, uuid, name, 201)

    @handles(f"update{single}")
    async def update(call: Call) -> Response:
        record = _one(call, kind, what)
        policy = call.server.policy(ReferenceDataPolicy)
        name = policy.name_after_update(kind, record, call.body.get("name"))
        unique, store = policy.unique_fields(kind, name), call.server.store
        with store.transaction(), unique_or_409(what):
            if not policy.update_keeps_uuid(kind):
                store.delete(kind, record["uuid"])
                uuid = store.insert(kind, call.system, {"name": name}, unique=unique)
                return policy.acknowledgement(kind, uuid, name, 200)
            store.replace(kind, record["uuid"], {**public(record), "name": name}, unique=unique)
            policy.updated(kind, record["uuid"])
        return policy.acknowledgement(kind, record["uuid"], name, 200)

    @handles(f"delete{single}")
    async def delete(call: Call) -> Response:
        record = _one(call, kind, what)
        policy = call.server.policy(ReferenceDataPolicy)
        with call.server.store.transaction():
            if policy.drops_references_on_delete(kind):
                drop_references(call, holders, field, record["uuid"])
            policy.deleting(kind, call.system, record["uuid"])
            if not policy.keeps_deleted_record(kind, record["uuid"]):
                call.server.store.delete(kind, record["uuid"])
        return ack(record["uuid"])


for _single, (_kind, _holders, _field) in _RESOURCES.items():
    _register(_single, _kind, _holders, _field)
