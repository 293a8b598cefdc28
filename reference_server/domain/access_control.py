"""Access control lists and points, and the unconditional relay trigger."""

from __future__ import annotations

from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server._state import record_audit, record_relay
from reference_server.domain import handles
from reference_server.domain._common import fetch


@handles("listAccessControlLists")
async def list_access_control_lists(call: Call) -> Response:
    return reply(
        200,
        [{"uuid": r["uuid"], "name": r["name"]} for r in call.server.store.all("acl", call.system)],
    )


@handles("listAccessControlPoints")
async def list_access_control_points(call: Call) -> Response:
    points = call.server.store.all("access_point", call.system)
    return reply(200, [{"uuid": p["uuid"], "name": p["name"], "type": p["type"]} for p in points])


@handles("triggerAccessControlPoint")
async def trigger_access_control_point(call: Call) -> Response:
    point = fetch(call, "access_point", call.path["uuid"], "access control point")
    # Unconditional: no credential, schedule or window is consulted.
    firings = 2 if call.server.faults.on("trigger-fires-twice") else 1
    for _ in range(firings):
        record_relay(call.server, call.system, point["uuid"], "trigger", call.key_name)
    if not call.server.faults.on("trigger-no-audit"):
        record_audit(call.server, call.system, call.key_name, "trigger", point["uuid"])
    return ack(point["uuid"])
