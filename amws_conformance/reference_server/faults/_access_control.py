"""Faults of access control lists and points, and the trigger of a point.

The faults of decisions inside a step override one decision of ``AccessControlPolicy`` each
(the policy seam, ``reference_server/_policy.py``); the trigger's permission and cost are the
request pipeline's (``RequestPolicy``). A status answered for another stays declarative
(``swap``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from amws_conformance import spec
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server.domain.access_control import AccessControlPolicy
from amws_conformance.reference_server.faults._model import NOT_FOUND, overrides, swap
from amws_conformance.reference_server.faults._requests import cut_to_page

if TYPE_CHECKING:
    from amws_conformance.reference_server._api_key import ApiKey


@overrides("trigger-no-audit", "ACP-TRIGGER-AUDIT", "the trigger writes no audit event")
class _TriggerNoAudit(AccessControlPolicy):
    def audits_trigger(self) -> bool:
        return False


@overrides("trigger-fires-twice", "ACP-TRIGGER-ONCE", "the trigger fires the relay twice")
class _TriggerFiresTwice(AccessControlPolicy):
    def relay_firings(self, system: str, point_uuid: str) -> int:
        return 2 * super().relay_firings(system, point_uuid)


swap("point-unknown-400", "ACP-TRIGGER-NOT-FOUND", NOT_FOUND, "triggerAccessControlPoint")


@overrides(
    "acl-list-honours-paging",
    "ACL-LIST-SHAPE",
    "listAccessControlLists cuts the list by start and limit query parameters",
)
class _AclListHonoursPaging(AccessControlPolicy):
    def list_rows(
        self, lists: list[dict[str, Any]], query: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        return cut_to_page(super().list_rows(lists, query), query)


@overrides(
    "acl-list-uppercase-uuids",
    "ACL-USABLE-ON-CREDENTIALS",
    "listAccessControlLists shows upper-case UUIDs that credentials do not accept",
)
class _AclListUppercaseUuids(AccessControlPolicy):
    def list_rows(
        self, lists: list[dict[str, Any]], query: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        return [{**row, "uuid": row["uuid"].upper()} for row in super().list_rows(lists, query)]


@overrides(
    "point-list-honours-paging",
    "ACP-LIST-SHAPE",
    "listAccessControlPoints cuts the list by start and limit query parameters",
)
class _PointListHonoursPaging(AccessControlPolicy):
    def point_rows(
        self, points: list[dict[str, Any]], query: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        return cut_to_page(super().point_rows(points, query), query)


@overrides("point-type-lowercase", "ACP-FIELD-ENUM", "access control point types are lower-case")
class _PointTypeLowercase(AccessControlPolicy):
    def point_rows(
        self, points: list[dict[str, Any]], query: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        return [{**p, "type": p["type"].lower()} for p in super().point_rows(points, query)]


@overrides(
    "trigger-needs-an-acl",
    "ACP-TRIGGER-UNCONDITIONAL",
    "the trigger fires only points some access control list covers",
)
class _TriggerNeedsAnAcl(AccessControlPolicy):
    def relay_firings(self, system: str, point_uuid: str) -> int:
        lists = self.server.store.all("acl", system)
        covered = any(
            rule["point"] == point_uuid for acl in lists for rule in acl.get("_rules", [])
        )
        return super().relay_firings(system, point_uuid) if covered else 0


@overrides(
    "trigger-needs-no-permission",
    "ACP-TRIGGER-PERMISSION",
    "the trigger is served to any key, whatever its permissions",
)
class _TriggerNeedsNoPermission(RequestPolicy):
    def permitted(self, key: ApiKey, op: spec.Operation) -> bool:
        return op.operation_id == "triggerAccessControlPoint" or super().permitted(key, op)


@overrides(
    "trigger-costs-a-read",
    "ACP-TRIGGER-COST-HIGHER",
    "a trigger draws the 30 units of a read",
)
class _TriggerCostsARead(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id == "triggerAccessControlPoint" else super().cost(op)
