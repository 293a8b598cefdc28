"""Faults of the name-only resources, locations, roles, vehicles and access control.

The faults of decisions inside a step override one decision of the domain module's policy
each (``ReferenceDataPolicy``, ``LocationPolicy``, ``RolePolicy``, ``AccessControlPolicy``,
``VehiclePolicy``; the policy seam, ``reference_server/_policy.py``): the correct answer
comes from ``super()`` and the class states only the deviation. The five name-only resources
share their decisions, which receive the store kind, so each of their faults bends the
answer for its own kind only. Validation and status faults stay declarative (``unchecked``,
``optional``, ``swap``).
"""

from __future__ import annotations

import json
import re
import uuid as uuidlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response

import spec
from reference_server._call import ack, reply
from reference_server._errors import invalid_fields
from reference_server._pipeline import RequestPolicy
from reference_server.domain.access_control import AccessControlPolicy
from reference_server.domain.locations import LocationPolicy, every_field
from reference_server.domain.reference_data import ReferenceDataPolicy
from reference_server.domain.roles import RolePolicy
from reference_server.domain.vehicles import VehiclePolicy
from reference_server.domain.visits import KIND as INVITE
from reference_server.faults._model import (
    DUPLICATE,
    NOT_FOUND,
    optional,
    overrides,
    swap,
    unchecked,
)
from reference_server.store import Record

if TYPE_CHECKING:
    from reference_server._state import ApiKey


T = TypeVar("T")

# Fault memory keys (``Policy.memory``): the records a soft delete left in the store.
_COST_CENTERS_HIDDEN = "cost-center-delete-still-readable"
_VISIT_REASONS_GONE = "visit-reason-delete-still-listed"
_GROUPS_HIDDEN = "group-delete-still-readable"
_ROLE_PERMISSIONS = "role-permissions-stored"  # role uuid -> the permissions its create sent


def _cut(rows: list[T], query: Mapping[str, str]) -> list[T]:
    """The rows cut by start and limit, query parameters these lists do not take."""
    start = int(query.get("start", "0") or 0)
    limit = int(query.get("limit", "0") or 0) or len(rows)
    return rows[start : start + limit]


unchecked(
    "department-name-unchecked", "DEPT-FIELD-LENGTH", "name", "createDepartment", "updateDepartment"
)


@overrides(
    "duplicate-names-allowed", "DEPT-NAME-UNIQUE", "name-only resources accept duplicate names"
)
class _DuplicateNamesAllowed(ReferenceDataPolicy):
    def unique_fields(self, kind: str, name: str | None) -> dict[str, str]:
        unique = super().unique_fields(kind, name)
        return {k: v for k, v in unique.items() if k != "name"}


@overrides(
    "department-delete-keeps-links", "DEPT-DELETE-UNLINKS", "people keep a deleted department"
)
class _DepartmentDeleteKeepsLinks(ReferenceDataPolicy):
    def drops_references_on_delete(self, kind: str) -> bool:
        return kind != "department" and super().drops_references_on_delete(kind)


@overrides(
    "location-put-replaces", "LOC-UPDATE-PARTIAL", "location PUT clears the fields it was not given"
)
class _LocationPutReplaces(LocationPolicy):
    def put_changes(self, record: Record, body: dict[str, Any]) -> dict[str, Any]:
        # Every field it was not given is cleared, except the name and type a location needs.
        kept = ("uuid", "name", "type")
        cleared = {f: None for f in every_field(record) if f not in kept}
        return {**cleared, **super().put_changes(record, body)}


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


@overrides(
    "plates-keep-spaces", "VEH-PLATE-VIN-NORMALISED", "vehicle plates and VINs keep their spaces"
)
class _PlatesKeepSpaces(VehiclePolicy):
    def shown(self, vehicle: dict[str, Any]) -> dict[str, Any]:
        return vehicle  # as captured: the normalised plate and VIN are not shown


@overrides("trigger-no-audit", "ACP-TRIGGER-AUDIT", "the trigger writes no audit event")
class _TriggerNoAudit(AccessControlPolicy):
    def audits_trigger(self) -> bool:
        return False


@overrides("trigger-fires-twice", "ACP-TRIGGER-ONCE", "the trigger fires the relay twice")
class _TriggerFiresTwice(AccessControlPolicy):
    def relay_firings(self, system: str, point_uuid: str) -> int:
        return 2 * super().relay_firings(system, point_uuid)


unchecked(
    "organisation-name-unchecked",
    "ORG-FIELD-LENGTH",
    "name",
    "createOrganisation",
    "updateOrganisation",
)
unchecked(
    "cost-center-name-unchecked",
    "COSTC-FIELD-LENGTH",
    "name",
    "createCostCenter",
    "updateCostCenter",
)
unchecked(
    "visit-reason-name-unchecked",
    "VREASON-FIELD-LENGTH",
    "name",
    "createVisitReason",
    "updateVisitReason",
)
unchecked("group-name-unchecked", "GRP-FIELD-LENGTH", "name", "createGroup", "updateGroup")
unchecked("role-name-unchecked", "ROLE-FIELD-LENGTH", "name", "createRole", "updateRole")
unchecked("location-name-unchecked", "LOC-FIELD-LENGTH", "name", "createLocation", "updateLocation")
unchecked("location-type-unchecked", "LOC-FIELD-ENUM", "type", "createLocation", "updateLocation")
unchecked(
    "location-phone-unchecked",
    "LOC-FIELD-PHONE",
    "keyContactNumber",
    "createLocation",
    "updateLocation",
)
unchecked("latitude-unchecked", "LOC-FIELD-RANGE", "latitude", "createLocation", "updateLocation")
swap(
    "department-unknown-400",
    "DEPT-NOT-FOUND",
    NOT_FOUND,
    "getDepartment",
    "updateDepartment",
    "deleteDepartment",
)
swap(
    "organisation-unknown-400",
    "ORG-NOT-FOUND",
    NOT_FOUND,
    "getOrganisation",
    "updateOrganisation",
    "deleteOrganisation",
)
swap(
    "cost-center-unknown-400",
    "COSTC-NOT-FOUND",
    NOT_FOUND,
    "getCostCenter",
    "updateCostCenter",
    "deleteCostCenter",
)
swap(
    "visit-reason-unknown-400",
    "VREASON-NOT-FOUND",
    NOT_FOUND,
    "getVisitReason",
    "updateVisitReason",
    "deleteVisitReason",
)
swap("group-unknown-400", "GRP-NOT-FOUND", NOT_FOUND, "getGroup", "updateGroup", "deleteGroup")
swap(
    "location-unknown-400",
    "LOC-NOT-FOUND",
    NOT_FOUND,
    "getLocation",
    "updateLocation",
    "deleteLocation",
)
swap("role-unknown-400", "ROLE-NOT-FOUND", NOT_FOUND, "getRole", "updateRole", "deleteRole")
swap("point-unknown-400", "ACP-TRIGGER-NOT-FOUND", NOT_FOUND, "triggerAccessControlPoint")
swap(
    "organisation-duplicate-422",
    "ORG-NAME-UNIQUE",
    DUPLICATE,
    "createOrganisation",
    "updateOrganisation",
)
swap(
    "cost-center-duplicate-422",
    "COSTC-NAME-UNIQUE",
    DUPLICATE,
    "createCostCenter",
    "updateCostCenter",
)
swap(
    "visit-reason-duplicate-422",
    "VREASON-NAME-UNIQUE",
    DUPLICATE,
    "createVisitReason",
    "updateVisitReason",
)
swap("group-duplicate-422", "GRP-NAME-UNIQUE", DUPLICATE, "createGroup", "updateGroup")
swap("location-duplicate-422", "LOC-NAME-UNIQUE", DUPLICATE, "createLocation", "updateLocation")
swap("role-duplicate-422", "ROLE-NAME-UNIQUE", DUPLICATE, "createRole", "updateRole")

# -- the name-only resources: required name, acknowledgements, list shape, hard delete ----------
optional(
    "department-name-optional",
    "DEPT-FIELD-REQUIRED",
    "name",
    "createDepartment",
    "updateDepartment",
)
optional(
    "organisation-name-optional",
    "ORG-FIELD-REQUIRED",
    "name",
    "createOrganisation",
    "updateOrganisation",
)
optional(
    "cost-center-name-optional",
    "COSTC-FIELD-REQUIRED",
    "name",
    "createCostCenter",
    "updateCostCenter",
)
optional(
    "visit-reason-name-optional",
    "VREASON-FIELD-REQUIRED",
    "name",
    "createVisitReason",
    "updateVisitReason",
)
optional("group-name-optional", "GRP-FIELD-REQUIRED", "name", "createGroup", "updateGroup")


@overrides(
    "department-create-message-created",
    "DEPT-WRITE-ACK",
    "createDepartment acknowledges with message `created` instead of `success`",
)
class _DepartmentCreateMessageCreated(ReferenceDataPolicy):
    def acknowledgement(self, kind: str, uuid: str, name: str | None, status: int) -> Response:
        if kind == "department" and status == 201:
            return ack(uuid, status, "created")
        return super().acknowledgement(kind, uuid, name, status)


@overrides(
    "organisation-write-returns-record",
    "ORG-WRITE-ACK",
    "organisation writes answer the stored name inside the acknowledgement",
)
class _OrganisationWriteReturnsRecord(ReferenceDataPolicy):
    def acknowledgement(self, kind: str, uuid: str, name: str | None, status: int) -> Response:
        if kind == "organisation":
            return reply(status, {"code": status, "message": "success", "uuid": uuid, "name": name})
        return super().acknowledgement(kind, uuid, name, status)


swap("cost-center-update-201", "COSTC-WRITE-ACK", (200, 201), "updateCostCenter")


@overrides(
    "visit-reason-update-recreates",
    "VREASON-WRITE-ACK",
    "updateVisitReason replaces the reason with a new record and acknowledges the new UUID",
)
class _VisitReasonUpdateRecreates(ReferenceDataPolicy):
    def update_keeps_uuid(self, kind: str) -> bool:
        return kind != "visit_reason" and super().update_keeps_uuid(kind)


@overrides(
    "group-rename-ignored", "GRP-UPDATE-RENAMES", "a group PUT answers 200 but keeps the old name"
)
class _GroupRenameIgnored(ReferenceDataPolicy):
    def name_after_update(self, kind: str, record: Record, sent: str | None) -> str | None:
        name = super().name_after_update(kind, record, sent)
        return record["name"] if kind == "group" else name


@overrides(
    "department-list-honours-paging",
    "DEPT-LIST-SHAPE",
    "listDepartments cuts the list by start and limit query parameters",
)
class _DepartmentListHonoursPaging(ReferenceDataPolicy):
    def list_body(self, kind: str, items: list[dict[str, Any]], query: Mapping[str, str]) -> Any:
        # The cut comes before any other shaping of the list.
        cut = _cut(items, query) if kind == "department" else items
        return super().list_body(kind, cut, query)


@overrides(
    "organisation-list-wrapped",
    "ORG-LIST-SHAPE",
    "listOrganisations answers an object {entries} instead of a plain array",
)
class _OrganisationListWrapped(ReferenceDataPolicy):
    def list_body(self, kind: str, items: list[dict[str, Any]], query: Mapping[str, str]) -> Any:
        body = super().list_body(kind, items, query)
        return {"entries": body} if kind == "organisation" else body


@overrides(
    "cost-center-read-as-array", "COSTC-LIST-SHAPE", "getCostCenter answers a one-item array"
)
class _CostCenterReadAsArray(ReferenceDataPolicy):
    def read_body(self, kind: str, shown: dict[str, Any]) -> Any:
        body = super().read_body(kind, shown)
        return [body] if kind == "cost_center" else body


@overrides(
    "visit-reason-list-of-names",
    "VREASON-LIST-SHAPE",
    "listVisitReasons answers bare names instead of {uuid, name} objects",
)
class _VisitReasonListOfNames(ReferenceDataPolicy):
    def list_body(self, kind: str, items: list[dict[str, Any]], query: Mapping[str, str]) -> Any:
        body = super().list_body(kind, items, query)
        return [item["name"] for item in body] if kind == "visit_reason" else body


@overrides("group-read-carries-permissions", "GRP-READ", "a group read carries a permissions field")
class _GroupReadCarriesPermissions(ReferenceDataPolicy):
    def read_body(self, kind: str, shown: dict[str, Any]) -> Any:
        extra: dict[str, Any] = {"permissions": []} if kind == "group" else {}
        return super().read_body(kind, {**shown, **extra})


@overrides(
    "department-delete-ignored",
    "DEPT-DELETE-HARD",
    "deleteDepartment acknowledges but the department stays",
)
class _DepartmentDeleteIgnored(ReferenceDataPolicy):
    def keeps_deleted_record(self, kind: str, uuid: str) -> bool:
        return kind == "department" or super().keeps_deleted_record(kind, uuid)


swap("organisation-delete-204", "ORG-DELETE-HARD", (200, 204), "deleteOrganisation")


@overrides(
    "cost-center-delete-still-readable",
    "COSTC-DELETE-HARD",
    "a deleted cost center is only hidden from the list; getCostCenter still answers 200",
)
class _CostCenterDeleteStillReadable(ReferenceDataPolicy):
    # Three decisions: a delete keeps the record and hides it from the list; a PUT, which
    # can still reach it, brings it back into the list.
    def keeps_deleted_record(self, kind: str, uuid: str) -> bool:
        if kind != "cost_center":
            return super().keeps_deleted_record(kind, uuid)
        self.memory(_COST_CENTERS_HIDDEN)[uuid] = True
        return True

    def listed(self, kind: str, record: Record) -> bool:
        hidden = record["uuid"] in self.memory(_COST_CENTERS_HIDDEN)
        return not hidden and super().listed(kind, record)

    def updated(self, kind: str, uuid: str) -> None:
        super().updated(kind, uuid)
        self.memory(_COST_CENTERS_HIDDEN).pop(uuid, None)


@overrides(
    "visit-reason-delete-still-listed",
    "VREASON-DELETE-HARD",
    "a deleted visit reason answers 404 but stays in listVisitReasons",
)
class _VisitReasonDeleteStillListed(ReferenceDataPolicy):
    # Two decisions: a delete keeps the record, which no read, update or delete finds again.
    def keeps_deleted_record(self, kind: str, uuid: str) -> bool:
        if kind != "visit_reason":
            return super().keeps_deleted_record(kind, uuid)
        self.memory(_VISIT_REASONS_GONE)[uuid] = True
        return True

    def readable(self, kind: str, record: Record) -> bool:
        gone = record["uuid"] in self.memory(_VISIT_REASONS_GONE)
        return not gone and super().readable(kind, record)


@overrides(
    "group-delete-still-readable",
    "GRP-DELETE-HARD",
    "a deleted group is only hidden from the list; GET of it still answers 200",
)
class _GroupDeleteStillReadable(ReferenceDataPolicy):
    # Three decisions, as for cost centers: kept, hidden from the list, back after a PUT.
    def keeps_deleted_record(self, kind: str, uuid: str) -> bool:
        if kind != "group":
            return super().keeps_deleted_record(kind, uuid)
        self.memory(_GROUPS_HIDDEN)[uuid] = True
        return True

    def listed(self, kind: str, record: Record) -> bool:
        hidden = record["uuid"] in self.memory(_GROUPS_HIDDEN)
        return not hidden and super().listed(kind, record)

    def updated(self, kind: str, uuid: str) -> None:
        super().updated(kind, uuid)
        self.memory(_GROUPS_HIDDEN).pop(uuid, None)


@overrides("group-delete-keeps-links", "GRP-DELETE-UNLINKS", "people keep a deleted group")
class _GroupDeleteKeepsLinks(ReferenceDataPolicy):
    def drops_references_on_delete(self, kind: str) -> bool:
        return kind != "group" and super().drops_references_on_delete(kind)


@overrides(
    "visit-reason-delete-removes-visits",
    "VREASON-DELETE-KEEPS-TEXT",
    "deleting a visit reason deletes the invitations recorded with it",
)
class _VisitReasonDeleteRemovesVisits(ReferenceDataPolicy):
    def deleting(self, kind: str, system: str, uuid: str) -> None:
        super().deleting(kind, system, uuid)
        if kind != "visit_reason":
            return
        store = self.server.store
        for visit in store.all(INVITE, system, lambda r: r.get("visitReason") == uuid):
            store.delete(INVITE, visit["uuid"])


# -- locations and roles ----------------------------------------------------------------------
optional("location-type-optional", "LOC-FIELD-REQUIRED", "type", "createLocation")


@overrides(
    "coordinate-precision-unchecked",
    "LOC-FIELD-PRECISION",
    "coordinates with 16 or more decimal places are stored",
)
class _CoordinatePrecisionUnchecked(LocationPolicy):
    def checks_coordinate_precision(self) -> bool:
        return False


@overrides(
    "location-ack-returns-record",
    "LOC-WRITE-ACK",
    "createLocation answers the stored record beside the acknowledgement",
)
class _LocationAckReturnsRecord(LocationPolicy):
    def create_answer(self, uuid: str, data: dict[str, Any]) -> Response:
        record = every_field({**data, "uuid": uuid})
        return reply(201, {"code": 201, "message": "success", **record})


@overrides("location-list-full-records", "LOC-LIST-SHAPE", "listLocations answers full records")
class _LocationListFullRecords(LocationPolicy):
    def list_row(self, record: Record) -> dict[str, Any]:
        return {**super().list_row(record), **every_field(record)}


@overrides(
    "location-read-omits-nulls", "LOC-READ-FULL", "getLocation leaves out the fields never set"
)
class _LocationReadOmitsNulls(LocationPolicy):
    def read_body(self, shown: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in super().read_body(shown).items() if v is not None}


@overrides("location-delete-keeps-links", "LOC-DELETE-HARD", "people keep a deleted location")
class _LocationDeleteKeepsLinks(LocationPolicy):
    def drops_references_on_delete(self) -> bool:
        return False


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


# -- vehicles and access control ----------------------------------------------------------------
@overrides(
    "vehicle-start-index-zero", "VEH-ENVELOPE", "listVehicles answers startIndex 0 for any start"
)
class _VehicleStartIndexZero(VehiclePolicy):
    def page(self, vehicles: list[dict[str, Any]], start: int, limit: int) -> Response:
        # The rows from start, paged as if they were the whole list.
        return super().page(vehicles[start:], 0, limit)


@overrides(
    "vehicle-start-one-based",
    "VEH-PAGING-DEFAULTS",
    "listVehicles counts start from one: start k begins at row k-1",
)
class _VehicleStartOneBased(VehiclePolicy):
    def page(self, vehicles: list[dict[str, Any]], start: int, limit: int) -> Response:
        answer = super().page(vehicles[max(start - 1, 0) :], 0, limit)
        body = json.loads(bytes(answer.body))
        return reply(200, {**body, "startIndex": start, "totalCount": len(vehicles)})


swap("vehicle-limit-range-422", "VEH-PAGING-LIMIT-RANGE", (400, 422), "listVehicles")


@overrides(
    "acl-list-honours-paging",
    "ACL-LIST-SHAPE",
    "listAccessControlLists cuts the list by start and limit query parameters",
)
class _AclListHonoursPaging(AccessControlPolicy):
    def list_rows(
        self, lists: list[dict[str, Any]], query: Mapping[str, str]
    ) -> list[dict[str, Any]]:
        return _cut(super().list_rows(lists, query), query)


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
        return _cut(super().point_rows(points, query), query)


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


# -- versioning -----------------------------------------------------------------------------
@overrides(
    "any-version-served",
    "VER-PATH-V1",
    "paths under /api/ws/ without v1, or with another version, are served as the v1 operations",
)
class _AnyVersionServed(RequestPolicy):
    def routed_path(self, path: str) -> str:
        return re.sub(r"^/api/ws(/v[0-9]+)?/", "/api/ws/v1/", super().routed_path(path))


swap(
    "deprecated-users-list-withdrawn", "VER-USERS-GET-DEPRECATED", (200, 404), "listUsersDeprecated"
)


_VEHICLE_PATH = re.compile(r"/api/ws/v1/vehicles(?:/([^/]+))?/?")


@overrides(
    "vehicle-writes-acknowledged",
    "VEH-READ-ONLY",
    "writes to vehicle paths are answered with a success acknowledgement instead of 405",
)
class _VehicleWritesAcknowledged(RequestPolicy):
    def answered_before_routing(self, request: Request) -> Response | None:
        # A write to a vehicle path the spec does not have; nothing is stored.
        found = _VEHICLE_PATH.fullmatch(request.url.path)
        if found is None or request.method not in ("POST", "PUT", "DELETE"):
            return super().answered_before_routing(request)
        target = found.group(1)
        if (request.method == "POST") != (target is None):
            return super().answered_before_routing(request)
        return ack(target or str(uuidlib.uuid4()), 201 if target is None else 200)
