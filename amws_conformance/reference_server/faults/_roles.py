"""Faults of roles.

The faults of decisions inside a role step override one decision of ``RolePolicy`` each (the
policy seam, ``reference_server/_policy.py``): the correct answer comes from ``super()`` and
the class states only the deviation. Validation and status faults stay declarative
(``unchecked``, ``swap``).
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import reply
from amws_conformance.reference_server._errors import invalid_fields
from amws_conformance.reference_server.domain.roles import RolePolicy
from amws_conformance.reference_server.faults._model import (
    DUPLICATE,
    NOT_FOUND,
    overrides,
    swap,
    unchecked,
)
from amws_conformance.reference_server.store import Record

# Fault memory key (``Policy.memory``).
_ROLE_PERMISSIONS = "role-permissions-stored"  # role uuid -> the permissions its create sent


@overrides(
    "admin-role-deletable", "ROLE-DELETE-ADMINISTRATOR", "the administrator role can be deleted"
)
class _AdminRoleDeletable(RolePolicy):
    def administrator_protected(self) -> bool:
        return False


@overrides(
    "role-refusal-http-status", "ROLE-DELETE-HAS-ACCOUNTS", "a 412 refusal uses the HTTP status"
)
class _RoleRefusalHttpStatus(RolePolicy):
    def refusal(self, code: int, uuid: str) -> Response:
        if code == 412:
            return reply(412, {"code": 412, "reason": "412 - Precondition Failed - role in use"})
        return super().refusal(code, uuid)


unchecked("role-name-unchecked", "ROLE-FIELD-LENGTH", "name", "createRole", "updateRole")
swap("role-unknown-400", "ROLE-NOT-FOUND", NOT_FOUND, "getRole", "updateRole", "deleteRole")
swap("role-duplicate-422", "ROLE-NAME-UNIQUE", DUPLICATE, "createRole", "updateRole")


@overrides(
    "role-default-required", "ROLE-FIELD-REQUIRED", "createRole refuses a body without default"
)
class _RoleDefaultRequired(RolePolicy):
    def default_on_create(self, body: dict[str, Any]) -> bool:
        if "default" not in body:
            raise invalid_fields({"default": "is required"})
        return super().default_on_create(body)


@overrides(
    "role-create-message-created",
    "ROLE-WRITE-ACK",
    "createRole acknowledges with message `created` instead of `success`",
)
class _RoleCreateMessageCreated(RolePolicy):
    def create_message(self) -> str:
        return "created"


@overrides("role-default-as-text", "ROLE-SHAPE", "roles show default as the text true/false")
class _RoleDefaultAsText(RolePolicy):
    def shown(self, record: Record) -> dict[str, Any]:
        shown = super().shown(record)
        return {**shown, "default": str(shown["default"]).lower()}


@overrides(
    "default-flag-not-moved",
    "ROLE-DEFAULT-FLAG",
    "a role made default leaves the previous default flagged too",
)
class _DefaultFlagNotMoved(RolePolicy):
    def moves_default_flag(self) -> bool:
        return False


@overrides(
    "role-permissions-stored",
    "ROLE-NEW-NO-PERMISSIONS",
    "createRole keeps a permissions field of the body and shows it",
)
class _RolePermissionsStored(RolePolicy):
    # Two decisions: the create keeps the permissions it was sent, every read shows them.
    def created(self, uuid: str, body: dict[str, Any]) -> None:
        super().created(uuid, body)
        if "permissions" in body:
            self.memory(_ROLE_PERMISSIONS)[uuid] = body["permissions"]

    def shown(self, record: Record) -> dict[str, Any]:
        shown, kept = super().shown(record), self.memory(_ROLE_PERMISSIONS)
        return {**shown, "permissions": kept[record["uuid"]]} if record["uuid"] in kept else shown


@overrides(
    "role-delete-keeps-role", "ROLE-DELETE-SUCCESS", "deleteRole acknowledges but the role stays"
)
class _RoleDeleteKeepsRole(RolePolicy):
    def removes_deleted_role(self) -> bool:
        return False


@overrides("default-role-deletable", "ROLE-DELETE-DEFAULT", "the default role can be deleted")
class _DefaultRoleDeletable(RolePolicy):
    def default_protected(self) -> bool:
        return False
