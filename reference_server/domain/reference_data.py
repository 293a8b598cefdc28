"""The name-only resources: departments, organisations, cost centers, visit reasons, groups."""

from __future__ import annotations

from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server.domain import handles
from reference_server.domain._common import drop_references, fetch, public, unique_or_409

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


def _names(call: Call, name: str) -> dict[str, str]:
    return {} if call.server.faults.on("duplicate-names-allowed") else {"name": name}


def _register(single: str, kind: str, holders: tuple[str, ...], field: str) -> None:
    what = kind.replace("_", " ")

    @handles(f"list{single}s")
    async def list_all(call: Call) -> Response:
        return reply(
            200,
            [
                {"uuid": r["uuid"], "name": r["name"]}
                for r in call.server.store.all(kind, _list_scope(call))
            ],
        )

    @handles(f"get{single}")
    async def get_one(call: Call) -> Response:
        record = fetch(call, kind, call.path["uuid"], what)
        return reply(200, {"uuid": record["uuid"], "name": record["name"]})

    @handles(f"create{single}")
    async def create(call: Call) -> Response:
        name = call.body["name"]
        with unique_or_409(what):
            uuid = call.server.store.insert(
                kind, call.system, {"name": name}, unique=_names(call, name)
            )
        return ack(uuid, 201)

    @handles(f"update{single}")
    async def update(call: Call) -> Response:
        record = fetch(call, kind, call.path["uuid"], what)
        name = call.body["name"]
        with unique_or_409(what):
            call.server.store.replace(
                kind, record["uuid"], {**public(record), "name": name}, unique=_names(call, name)
            )
        return ack(record["uuid"])

    @handles(f"delete{single}")
    async def delete(call: Call) -> Response:
        record = fetch(call, kind, call.path["uuid"], what)
        with call.server.store.transaction():
            if not (
                kind == "department" and call.server.faults.on("department-delete-keeps-links")
            ):
                drop_references(call, holders, field, record["uuid"])
            call.server.store.delete(kind, record["uuid"])
        return ack(record["uuid"])


for _single, (_kind, _holders, _field) in _RESOURCES.items():
    _register(_single, _kind, _holders, _field)
