"""Roles: one administrator and one default role per system; refusals ride in a 200 body."""

from __future__ import annotations

from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server._errors import invalid_fields
from reference_server.domain import handles
from reference_server.domain._common import fetch, public, unique_or_409


def _shape(call: Call, record: dict) -> dict:
    default = bool(record.get("default"))
    shown = {"uuid": record["uuid"], "name": record["name"], "default": default}
    if call.server.faults.on("role-default-as-text"):
        shown["default"] = str(default).lower()
    if "_permissions" in record:  # only stored under role-permissions-stored
        shown["permissions"] = record["_permissions"]
    return shown


def _take_default_flag(call: Call, keep: str) -> None:
    """A system has one default role: flagging one unflags the others."""
    if call.server.faults.on("default-flag-not-moved"):
        return
    store = call.server.store
    for role in store.all("role", call.system, lambda r: r.get("default") and r["uuid"] != keep):
        store.replace("role", role["uuid"], {**role, "default": False})


@handles("listRoles")
async def list_roles(call: Call) -> Response:
    return reply(200, [_shape(call, r) for r in call.server.store.all("role", call.system)])


@handles("getRole")
async def get_role(call: Call) -> Response:
    return reply(200, _shape(call, fetch(call, "role", call.path["uuid"])))


@handles("createRole")
async def create_role(call: Call) -> Response:
    faults = call.server.faults
    if "default" not in call.body and faults.on("role-default-required"):
        raise invalid_fields({"default": "is required"})
    name, default = call.body["name"], bool(call.body.get("default", False))
    data: dict = {"name": name, "default": default}
    if "permissions" in call.body and faults.on("role-permissions-stored"):
        data["_permissions"] = call.body["permissions"]
    with call.server.store.transaction(), unique_or_409("role"):
        uuid = call.server.store.insert("role", call.system, data, unique={"name": name})
        if default:
            _take_default_flag(call, uuid)
    return ack(uuid, 201, "created" if faults.on("role-create-message-created") else "success")


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


def _refusal(call: Call, code: int) -> Response:
    if code == 412 and call.server.faults.on("role-refusal-http-status"):
        return reply(412, {"code": 412, "reason": "412 - Precondition Failed - role in use"})
    return reply(200, {"code": code, "message": "failed", "uuid": call.path["uuid"]})


@handles("deleteRole")
async def delete_role(call: Call) -> Response:
    record = fetch(call, "role", call.path["uuid"])
    if record.get("_administrator") and not call.server.faults.on("admin-role-deletable"):
        return _refusal(call, 417)
    if record.get("default") and not call.server.faults.on("default-role-deletable"):
        return _refusal(call, 424)
    if call.server.store.all("user", call.system, lambda u: u.get("role") == record["uuid"]):
        return _refusal(call, 412)
    if not call.server.faults.on("role-delete-keeps-role"):
        call.server.store.delete("role", record["uuid"])
    return ack(record["uuid"])
