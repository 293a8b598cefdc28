"""Access control lists and points, and the unconditional relay trigger.

The decisions inside these steps are the methods of ``AccessControlPolicy``; the handlers ask
``server.policy(AccessControlPolicy)`` for the one in force, which is where the access control
faults (``faults/_access_control.py``) plug in. This module holds the correct behaviour only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack, reply
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._trails import record_audit, record_relay
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain._common import fetch


# -- the decisions inside the steps -----------------------------------------------------------
class AccessControlPolicy(Policy):
    """The decisions inside the access control steps, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Lists (neither takes paging parameters).
    def list_rows(
        self, lists: list[dict[str, Any]], query: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        """The access control lists answered: every list of the system, {uuid, name}, as stored."""
        return lists

    def point_rows(
        self, points: list[dict[str, Any]], query: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        """The access control points answered: every point of the system, type as stored."""
        return points

    # The trigger.
    def relay_firings(self, system: str, point_uuid: str) -> int:
        """How often a trigger fires the point's relay: once, unconditionally."""
        return 1

    def audits_trigger(self) -> bool:
        """Whether a trigger writes an audit event."""
        return True


# -- the steps --------------------------------------------------------------------------------
@handles("listAccessControlLists")
async def list_access_control_lists(call: Call) -> Response:
    lists = [
        {"uuid": r["uuid"], "name": r["name"]} for r in call.server.store.all("acl", call.system)
    ]
    policy = call.server.policy(AccessControlPolicy)
    return reply(200, policy.list_rows(lists, call.request.query_params))


@handles("listAccessControlPoints")
async def list_access_control_points(call: Call) -> Response:
    points = [
        {"uuid": p["uuid"], "name": p["name"], "type": p["type"]}
        for p in call.server.store.all("access_point", call.system)
    ]
    policy = call.server.policy(AccessControlPolicy)
    return reply(200, policy.point_rows(points, call.request.query_params))


@handles("triggerAccessControlPoint")
async def trigger_access_control_point(call: Call) -> Response:
    point = fetch(call, "access_point", call.path["uuid"], "access control point")
    policy = call.server.policy(AccessControlPolicy)
    # Unconditional: no credential, schedule or window is consulted.
    for _ in range(policy.relay_firings(call.system, point["uuid"])):
        record_relay(call.server, call.system, point["uuid"], "trigger", call.key_name)
    if policy.audits_trigger():
        record_audit(call.server, call.system, call.key_name, "trigger", point["uuid"])
    return ack(point["uuid"])
