"""Access control lists and points, and the unconditional relay trigger."""

from __future__ import annotations

from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server._state import record_audit, record_relay
from reference_server.domain import handles
from reference_server.domain._common import fetch


def _paging_honoured(call: Call, items: list[dict]) -> list[dict]:
    """Fault only: the list cut by start and limit, parameters it does not take."""
    query = call.request.query_params
    start = int(query.get("start", "0") or 0)
    limit = int(query.get("limit", "0") or 0) or len(items)
    return items[start : start + limit]


def _in_some_list(call: Call, point_uuid: str) -> bool:
    """Fault only: whether a rule of some access control list covers the point."""
    lists = call.server.store.all("acl", call.system)
    return any(rule["point"] == point_uuid for acl in lists for rule in acl.get("_rules", []))


@handles("listAccessControlLists")
async def list_access_control_lists(call: Call) -> Response:
    faults = call.server.faults
    lists = [
        {"uuid": r["uuid"], "name": r["name"]} for r in call.server.store.all("acl", call.system)
    ]
    if faults.on("acl-list-uppercase-uuids"):
        lists = [{**item, "uuid": item["uuid"].upper()} for item in lists]
    if faults.on("acl-list-honours-paging"):
        lists = _paging_honoured(call, lists)
    return reply(200, lists)


@handles("listAccessControlPoints")
async def list_access_control_points(call: Call) -> Response:
    faults = call.server.faults
    points = [
        {"uuid": p["uuid"], "name": p["name"], "type": p["type"]}
        for p in call.server.store.all("access_point", call.system)
    ]
    if faults.on("point-type-lowercase"):
        points = [{**p, "type": p["type"].lower()} for p in points]
    if faults.on("point-list-honours-paging"):
        points = _paging_honoured(call, points)
    return reply(200, points)


@handles("triggerAccessControlPoint")
async def trigger_access_control_point(call: Call) -> Response:
    point = fetch(call, "access_point", call.path["uuid"], "access control point")
    # Unconditional: no credential, schedule or window is consulted.
    firings = 2 if call.server.faults.on("trigger-fires-twice") else 1
    if call.server.faults.on("trigger-needs-an-acl") and not _in_some_list(call, point["uuid"]):
        firings = 0
    for _ in range(firings):
        record_relay(call.server, call.system, point["uuid"], "trigger", call.key_name)
    if not call.server.faults.on("trigger-no-audit"):
        record_audit(call.server, call.system, call.key_name, "trigger", point["uuid"])
    return ack(point["uuid"])
