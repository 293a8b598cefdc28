"""The name-only resources: departments, organisations, cost centers, visit reasons, groups.

The faults of these resources are named ``<resource>-<what>`` (``department-delete-ignored``);
each resource's handlers ask for their own through ``faulty``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server._errors import not_found
from reference_server.domain import handles
from reference_server.domain._common import drop_references, fetch, public, unique_or_409
from reference_server.store import Record

# operation id suffix -> (store kind, fields of persons/users that reference it)
_RESOURCES = {
    "Department": ("department", ("person", "user"), "department"),
    "Organisation": ("organisation", ("person", "user"), "organisation"),
    "CostCenter": ("cost_center", ("person",), "costCenter"),
    "VisitReason": ("visit_reason", (), "visitReason"),
    "Group": ("group", ("person", "user"), "group"),
}


def _list_scope(call: Call) -> str | None:
    return None if call.server.faults.on("list-leaks-other-system") else call.system


def _names(call: Call, name: str | None) -> dict[str, str]:
    if name is None or call.server.faults.on("duplicate-names-allowed"):
        return {}
    return {"name": name}


def _fault_check(call: Call, kind: str) -> Callable[[str], bool]:
    """Whether the fault ``<resource>-<what>`` of this kind is on."""
    slug = kind.replace("_", "-")
    return lambda what: f"{slug}-{what}" in call.server.faults.active


def _paging_honoured(call: Call, items: list[Any]) -> list[Any]:
    """The list cut by start and limit, parameters these lists do not take."""
    query = call.request.query_params
    start = int(query.get("start", "0") or 0)
    limit = int(query.get("limit", "0") or 0) or len(items)
    return items[start : start + limit]


def _list_items(call: Call, kind: str) -> Any:
    faulty = _fault_check(call, kind)
    records = [
        r
        for r in call.server.store.all(kind, _list_scope(call))
        if not r.get("_deleted") or faulty("delete-still-listed")
    ]
    items: list[Any] = [{"uuid": r["uuid"], "name": r["name"]} for r in records]
    if faulty("list-honours-paging"):
        items = _paging_honoured(call, items)
    if faulty("list-of-names"):
        items = [item["name"] for item in items]
    if faulty("list-wrapped"):
        return {"entries": items}
    return items


def _one(call: Call, kind: str, what: str) -> Record:
    record = fetch(call, kind, call.path["uuid"], what)
    if record.get("_deleted") and not _fault_check(call, kind)("delete-still-readable"):
        raise not_found(what)
    return record


def _write_ack(call: Call, kind: str, uuid: str, name: str | None, status: int = 200) -> Response:
    faulty = _fault_check(call, kind)
    if faulty("write-returns-record"):
        return reply(status, {"code": status, "message": "success", "uuid": uuid, "name": name})
    if status == 201 and faulty("create-message-created"):
        return ack(uuid, status, "created")
    return ack(uuid, status)


def _remove(call: Call, kind: str, record: Record) -> None:
    """Delete the record outright (or, under the soft-delete faults, only mark it)."""
    faulty = _fault_check(call, kind)
    if faulty("delete-ignored"):
        return
    if faulty("delete-still-readable") or faulty("delete-still-listed"):
        call.server.store.replace(kind, record["uuid"], {**record, "_deleted": True})
        return
    call.server.store.delete(kind, record["uuid"])


def _drop_visits(call: Call, reason_uuid: str) -> None:
    """Fault only: deleting a visit reason takes the visits recorded with it along."""
    from reference_server.domain.visits import KIND

    store = call.server.store
    for visit in store.all(KIND, call.system, lambda r: r.get("visitReason") == reason_uuid):
        store.delete(KIND, visit["uuid"])


def _register(single: str, kind: str, holders: tuple[str, ...], field: str) -> None:
    what = kind.replace("_", " ")

    @handles(f"list{single}s")
    async def list_all(call: Call) -> Response:
        return reply(200, _list_items(call, kind))

    @handles(f"get{single}")
    async def get_one(call: Call) -> Response:
        record = _one(call, kind, what)
        shown = {"uuid": record["uuid"], "name": record["name"]}
        faulty = _fault_check(call, kind)
        if faulty("read-carries-permissions"):
            shown["permissions"] = []
        return reply(200, [shown] if faulty("read-as-array") else shown)

    @handles(f"create{single}")
    async def create(call: Call) -> Response:
        # A missing name only reaches here under the name-optional faults.
        name = call.body.get("name")
        with unique_or_409(what):
            uuid = call.server.store.insert(
                kind, call.system, {"name": name}, unique=_names(call, name)
            )
        return _write_ack(call, kind, uuid, name, 201)

    @handles(f"update{single}")
    async def update(call: Call) -> Response:
        record = _one(call, kind, what)
        faulty = _fault_check(call, kind)
        name = record["name"] if faulty("rename-ignored") else call.body.get("name")
        store = call.server.store
        with store.transaction(), unique_or_409(what):
            if faulty("update-recreates"):
                store.delete(kind, record["uuid"])
                uuid = store.insert(kind, call.system, {"name": name}, unique=_names(call, name))
                return _write_ack(call, kind, uuid, name)
            store.replace(
                kind, record["uuid"], {**public(record), "name": name}, unique=_names(call, name)
            )
        return _write_ack(call, kind, record["uuid"], name)

    @handles(f"delete{single}")
    async def delete(call: Call) -> Response:
        record = _one(call, kind, what)
        faulty = _fault_check(call, kind)
        with call.server.store.transaction():
            if not faulty("delete-keeps-links"):
                drop_references(call, holders, field, record["uuid"])
            if faulty("delete-removes-visits"):
                _drop_visits(call, record["uuid"])
            _remove(call, kind, record)
        return ack(record["uuid"])


for _single, (_kind, _holders, _field) in _RESOURCES.items():
    _register(_single, _kind, _holders, _field)
