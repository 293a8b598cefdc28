"""Roles: one administrator and one default role per system; refusals ride in a 200 body.

The decisions inside these steps are the methods of ``RolePolicy``; the handlers ask
``server.policy(RolePolicy)`` for the one in force, which is where the role faults
(``faults/_roles.py``) plug in. This module holds the correct behaviour only.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack, reply
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain._common import fetch, public, unique_or_409
from amws_conformance.reference_server.store import Record


# -- the decisions inside the steps -----------------------------------------------------------
class RolePolicy(Policy):
    """The decisions inside the role steps, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Read shape.
    def shown(self, record: Record) -> dict[str, Any]:
        """A role as read and listed: uuid, name and the default flag as a boolean."""
        return {
            "uuid": record["uuid"],
            "name": record["name"],
            "default": bool(record.get("default")),
        }

    # Create.
    def default_on_create(self, body: dict[str, Any]) -> bool:
        """Whether a created role is the default one (``default`` may be left out: false)."""
        return bool(body.get("default", False))

    def created(self, uuid: str, body: dict[str, Any]) -> None:
        """A role was stored; a new role has no permissions, so nothing more is kept."""

    def create_message(self) -> str:
        """The message of a create's acknowledgement."""
        return "success"

    # The default flag.
    def moves_default_flag(self) -> bool:
        """Whether flagging a role default unflags the previous default (one default a system)."""
        return True

    # Delete.
    def administrator_protected(self) -> bool:
        """Whether deleting the administrator role is refused (417)."""
        return True

    def default_protected(self) -> bool:
        """Whether deleting the default role is refused (424)."""
        return True

    def refusal(self, code: int, uuid: str) -> Response:
        """A refused delete: the refusal code in a 200 body."""
        return reply(200, {"code": code, "message": "failed", "uuid": uuid})

    def removes_deleted_role(self) -> bool:
        """Whether an accepted delete removes the role."""
        return True


# -- the steps --------------------------------------------------------------------------------
def _take_default_flag(call: Call, keep: str) -> None:
    """A system has one default role: flagging one unflags the others."""
    if not call.server.policy(RolePolicy).moves_default_flag():
        return
    store = call.server.store
    for role in store.all(
        "role", call.system, lambda r: bool(r.get("default")) and r["uuid"] != keep
    ):
        store.replace("role", role["uuid"], {**role, "default": False})


@handles("listRoles")
async def list_roles(call: Call) -> Response:
    policy = call.server.policy(RolePolicy)
    return reply(200, [policy.shown(r) for r in call.server.store.all("role", call.system)])


@handles("getRole")
async def get_role(call: Call) -> Response:
    record = fetch(call, "role", call.path["uuid"])
    return reply(200, call.server.policy(RolePolicy).shown(record))


@handles("createRole")
async def create_role(call: Call) -> Response:
    policy = call.server.policy(RolePolicy)
    default = policy.default_on_create(call.body)
    name = call.body["name"]
    with call.server.store.transaction(), unique_or_409("role"):
        data = {"name": name, "default": default}
        uuid = call.server.store.insert("role", call.system, data, unique={"name": name})
        policy.created(uuid, call.body)
        if default:
            _take_default_flag(call, uuid)
    return ack(uuid, 201, policy.create_message())


@handles("updateRole")
async def update_role(call: Call) -> Response:
    record = public(fetch(call, "role", call.path["uuid"]))
    name = call.body["name"]
    # The current default keeps its flag until another role takes it, so new accounts always
    # get a role (our reading of ROLE-DEFAULT-FLAG).
    default = bool(call.body.get("default", False)) or bool(record.get("default"))
    with call.server.store.transaction(), unique_or_409("role"):
        call.server.store.replace(
            "role",
            record["uuid"],
            {**fetch(call, "role", record["uuid"]), "name": name, "default": default},
            unique={"name": name},
        )
        if default:
            _take_default_flag(call, record["uuid"])
    return ack(record["uuid"])


@handles("deleteRole")
async def delete_role(call: Call) -> Response:
    record, policy = fetch(call, "role", call.path["uuid"]), call.server.policy(RolePolicy)
    if record.get("_administrator") and policy.administrator_protected():
        return policy.refusal(417, call.path["uuid"])
    if record.get("default") and policy.default_protected():
        return policy.refusal(424, call.path["uuid"])
    if call.server.store.all("user", call.system, lambda u: u.get("role") == record["uuid"]):
        return policy.refusal(412, call.path["uuid"])
    if policy.removes_deleted_role():
        call.server.store.delete("role", record["uuid"])
    return ack(record["uuid"])
