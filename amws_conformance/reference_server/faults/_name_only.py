"""Faults of the name-only resources.

Departments, organisations, cost centers, visit reasons and groups. The faults of decisions
inside a step override one decision of ``ReferenceDataPolicy`` each (the policy seam,
``reference_server/_policy.py``): the correct answer comes from ``super()`` and the class
states only the deviation. The five resources share their decisions, which receive the store
kind, so each of their faults bends the answer for its own kind only. Validation and status
faults stay declarative (``unchecked``, ``optional``, ``swap``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import ack, reply
from amws_conformance.reference_server.domain.reference_data import ReferenceDataPolicy
from amws_conformance.reference_server.domain.visits import KIND as INVITE
from amws_conformance.reference_server.faults._model import (
    DUPLICATE,
    NOT_FOUND,
    optional,
    overrides,
    swap,
    unchecked,
)
from amws_conformance.reference_server.faults._requests import cut_to_page
from amws_conformance.reference_server.store import Record

# Fault memory keys (``Policy.memory``): the records a soft delete left in the store.
_COST_CENTERS_HIDDEN = "cost-center-delete-still-readable"
_VISIT_REASONS_GONE = "visit-reason-delete-still-listed"
_GROUPS_HIDDEN = "group-delete-still-readable"


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
        cut = cut_to_page(items, query) if kind == "department" else items
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
