"""Faults of the name-only resources, locations, roles, vehicles and access control."""

from __future__ import annotations

import re
import uuid as uuidlib
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response

import spec
from reference_server._call import ack
from reference_server._pipeline import RequestPolicy
from reference_server.faults._model import (
    DUPLICATE,
    NOT_FOUND,
    fault,
    optional,
    overrides,
    swap,
    unchecked,
)

if TYPE_CHECKING:
    from reference_server._state import ApiKey


unchecked(
    "department-name-unchecked", "DEPT-FIELD-LENGTH", "name", "createDepartment", "updateDepartment"
)
fault("duplicate-names-allowed", "DEPT-NAME-UNIQUE", "name-only resources accept duplicate names")
fault("department-delete-keeps-links", "DEPT-DELETE-UNLINKS", "people keep a deleted department")
fault(
    "location-put-replaces", "LOC-UPDATE-PARTIAL", "location PUT clears the fields it was not given"
)
fault("admin-role-deletable", "ROLE-DELETE-ADMINISTRATOR", "the administrator role can be deleted")
fault("role-refusal-http-status", "ROLE-DELETE-HAS-ACCOUNTS", "a 412 refusal uses the HTTP status")
fault("plates-keep-spaces", "VEH-PLATE-VIN-NORMALISED", "vehicle plates and VINs keep their spaces")
fault("trigger-no-audit", "ACP-TRIGGER-AUDIT", "the trigger writes no audit event")
fault("trigger-fires-twice", "ACP-TRIGGER-ONCE", "the trigger fires the relay twice")
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
fault(
    "department-create-message-created",
    "DEPT-WRITE-ACK",
    "createDepartment acknowledges with message `created` instead of `success`",
)
fault(
    "organisation-write-returns-record",
    "ORG-WRITE-ACK",
    "organisation writes answer the stored name inside the acknowledgement",
)
swap("cost-center-update-201", "COSTC-WRITE-ACK", (200, 201), "updateCostCenter")
fault(
    "visit-reason-update-recreates",
    "VREASON-WRITE-ACK",
    "updateVisitReason replaces the reason with a new record and acknowledges the new UUID",
)
fault(
    "group-rename-ignored", "GRP-UPDATE-RENAMES", "a group PUT answers 200 but keeps the old name"
)
fault(
    "department-list-honours-paging",
    "DEPT-LIST-SHAPE",
    "listDepartments cuts the list by start and limit query parameters",
)
fault(
    "organisation-list-wrapped",
    "ORG-LIST-SHAPE",
    "listOrganisations answers an object {entries} instead of a plain array",
)
fault("cost-center-read-as-array", "COSTC-LIST-SHAPE", "getCostCenter answers a one-item array")
fault(
    "visit-reason-list-of-names",
    "VREASON-LIST-SHAPE",
    "listVisitReasons answers bare names instead of {uuid, name} objects",
)
fault("group-read-carries-permissions", "GRP-READ", "a group read carries a permissions field")
fault(
    "department-delete-ignored",
    "DEPT-DELETE-HARD",
    "deleteDepartment acknowledges but the department stays",
)
swap("organisation-delete-204", "ORG-DELETE-HARD", (200, 204), "deleteOrganisation")
fault(
    "cost-center-delete-still-readable",
    "COSTC-DELETE-HARD",
    "a deleted cost center is only hidden from the list; getCostCenter still answers 200",
)
fault(
    "visit-reason-delete-still-listed",
    "VREASON-DELETE-HARD",
    "a deleted visit reason answers 404 but stays in listVisitReasons",
)
fault(
    "group-delete-still-readable",
    "GRP-DELETE-HARD",
    "a deleted group is only hidden from the list; GET of it still answers 200",
)
fault("group-delete-keeps-links", "GRP-DELETE-UNLINKS", "people keep a deleted group")
fault(
    "visit-reason-delete-removes-visits",
    "VREASON-DELETE-KEEPS-TEXT",
    "deleting a visit reason deletes the invitations recorded with it",
)

# -- locations and roles ----------------------------------------------------------------------
optional("location-type-optional", "LOC-FIELD-REQUIRED", "type", "createLocation")
fault(
    "coordinate-precision-unchecked",
    "LOC-FIELD-PRECISION",
    "coordinates with 16 or more decimal places are stored",
)
fault(
    "location-ack-returns-record",
    "LOC-WRITE-ACK",
    "createLocation answers the stored record beside the acknowledgement",
)
fault("location-list-full-records", "LOC-LIST-SHAPE", "listLocations answers full records")
fault("location-read-omits-nulls", "LOC-READ-FULL", "getLocation leaves out the fields never set")
fault("location-delete-keeps-links", "LOC-DELETE-HARD", "people keep a deleted location")
fault("role-default-required", "ROLE-FIELD-REQUIRED", "createRole refuses a body without default")
fault(
    "role-create-message-created",
    "ROLE-WRITE-ACK",
    "createRole acknowledges with message `created` instead of `success`",
)
fault("role-default-as-text", "ROLE-SHAPE", "roles show default as the text true/false")
fault(
    "default-flag-not-moved",
    "ROLE-DEFAULT-FLAG",
    "a role made default leaves the previous default flagged too",
)
fault(
    "role-permissions-stored",
    "ROLE-NEW-NO-PERMISSIONS",
    "createRole keeps a permissions field of the body and shows it",
)
fault("role-delete-keeps-role", "ROLE-DELETE-SUCCESS", "deleteRole acknowledges but the role stays")
fault("default-role-deletable", "ROLE-DELETE-DEFAULT", "the default role can be deleted")

# -- vehicles and access control ----------------------------------------------------------------
fault("vehicle-start-index-zero", "VEH-ENVELOPE", "listVehicles answers startIndex 0 for any start")
fault(
    "vehicle-start-one-based",
    "VEH-PAGING-DEFAULTS",
    "listVehicles counts start from one: start k begins at row k-1",
)
swap("vehicle-limit-range-422", "VEH-PAGING-LIMIT-RANGE", (400, 422), "listVehicles")
fault(
    "acl-list-honours-paging",
    "ACL-LIST-SHAPE",
    "listAccessControlLists cuts the list by start and limit query parameters",
)
fault(
    "acl-list-uppercase-uuids",
    "ACL-USABLE-ON-CREDENTIALS",
    "listAccessControlLists shows upper-case UUIDs that credentials do not accept",
)
fault(
    "point-list-honours-paging",
    "ACP-LIST-SHAPE",
    "listAccessControlPoints cuts the list by start and limit query parameters",
)
fault("point-type-lowercase", "ACP-FIELD-ENUM", "access control point types are lower-case")
fault(
    "trigger-needs-an-acl",
    "ACP-TRIGGER-UNCONDITIONAL",
    "the trigger fires only points some access control list covers",
)


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
