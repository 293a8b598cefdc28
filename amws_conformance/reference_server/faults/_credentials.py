"""Faults of credentials and the controllers' credential stores.

The faults of decisions inside a credential step override one decision of
``CredentialPolicy`` each (the policy seam, ``reference_server/_policy.py``): the correct
answer comes from ``super()`` and the class states only the deviation. Validation and status
faults stay declarative (``unchecked``, ``optional``, ``swap``); listing the collection is the
request seam's (``RequestPolicy.answered_before_routing``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import Response

from amws_conformance.reference_server._errors import ApiError, invalid_fields
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server.domain.credentials import NOT_LIVE, CredentialPolicy
from amws_conformance.reference_server.faults._model import (
    CATALOGUE,
    DUPLICATE,
    NOT_FOUND,
    Fault,
    optional,
    overrides,
    swap,
    unchecked,
)
from amws_conformance.reference_server.faults._requests import listed_wholesale
from amws_conformance.reference_server.store import Record

# Fault memory keys (``Policy.memory``): what a fault remembers between a write and a read.
_FROZEN_NAMES = "holder-names-frozen"  # credential uuid -> (first, last) at issue
_STUCK = "extended-credential-stays-expired"  # credential uuids a PUT left EXPIRED


@overrides("credential-delete-hard", "CRED-DELETE-SOFT", "credential DELETE removes the record")
class _DeleteHard(CredentialPolicy):
    def keeps_deleted_record(self, by: Literal["PUT", "DELETE"]) -> bool:
        return by != "DELETE" and super().keeps_deleted_record(by)


@overrides(
    "deleted-identifier-reusable",
    "CRED-IDENTIFIER-RESERVED",
    "a deleted credential's identifier can be issued again",
)
class _IdentifierFreed(CredentialPolicy):
    def keeps_deleted_identifier(self) -> bool:
        return False


@overrides(
    "acl-put-merges", "CRED-PUT-ACL-REPLACE", "credential PUT adds lists instead of replacing"
)
class _ListsMerged(CredentialPolicy):
    def lists_after_put(self, old: list[str] | None, sent: list[str] | None) -> list[str] | None:
        if sent is None:
            return super().lists_after_put(old, sent)
        return list(dict.fromkeys([*(old or []), *sent]))


@overrides("valid-never-activates", "CRED-VALID-TO-ACTIVE", "a VALID credential stays VALID")
class _ValidFrozen(CredentialPolicy):
    def status(self, record: Record, now: datetime) -> str:
        # Written as VALID, read as VALID: the window opening changes nothing.
        return "VALID" if record.get("status") == "VALID" else super().status(record, now)


@overrides(
    "inactive-pushed-to-hardware",
    "CRED-HARDWARE-ACTIVE-ONLY",
    "controllers also hold VALID, EXPIRED and DISABLED credentials",
)
class _InactivePushed(CredentialPolicy):
    def held_by_controller(self, status: str) -> bool:
        return super().held_by_controller(status) or status != "DELETED"


@overrides("holder-missing-422", "CRED-HOLDER-NOT-FOUND", "an unknown holder answers 422, not 404")
class _MissingHolder422(CredentialPolicy):
    def missing_holder(self, kind: str) -> ApiError:
        return invalid_fields({f"{kind}Uuid": "refers to a record that does not exist"})


@overrides(
    "credential-put-clears-omitted",
    "CRED-PUT-PARTIAL",
    "credential PUT clears the window, useLimit and comments it was not given",
)
class _PutClearsOmitted(CredentialPolicy):
    def put_changes(self, old: Record, body: dict[str, Any]) -> dict[str, Any]:
        cleared = dict.fromkeys(("activeDate", "expiryDate", "useLimit", "comments"))
        return {**cleared, **super().put_changes(old, body)}


@overrides(
    "credential-never-expires", "CRED-ACTIVE-TO-EXPIRED", "a credential stays ACTIVE after expiry"
)
class _NeverExpires(CredentialPolicy):
    def status(self, record: Record, now: datetime) -> str:
        status = super().status(record, now)
        return "ACTIVE" if status == "EXPIRED" else status


@overrides(
    "reader-type-changeable", "CRED-PUT-READER-TYPE-IGNORED", "credential PUT changes readerType"
)
class _ReaderTypeChangeable(CredentialPolicy):
    def put_changes(self, old: Record, body: dict[str, Any]) -> dict[str, Any]:
        changes = super().put_changes(old, body)
        if body.get("readerType"):
            changes["readerType"] = body["readerType"]
        return changes


@overrides(
    "by-user-hides-deleted", "CRED-BY-USER", "the by-user list leaves out DISABLED and DELETED"
)
class _ByUserHidesDeleted(CredentialPolicy):
    def listed_with_status(self, kind: str, status: str) -> bool:
        hidden = kind == "user" and status in NOT_LIVE
        return not hidden and super().listed_with_status(kind, status)


@overrides(
    "credential-type-not-derived", "CRED-TYPE-DERIVED", "every credential reads type PERSONNEL"
)
class _TypeAlwaysPersonnel(CredentialPolicy):
    def holder_type(self, record: Record) -> str | None:
        return "PERSONNEL"


unchecked("reader-type-unchecked", "CRED-FIELD-ENUM", "readerType", "createCredential")
unchecked("pin-range-unchecked", "CRED-FIELD-RANGE", "pin", "createCredential")
unchecked(
    "identifier-length-unchecked", "CRED-FIELD-LENGTH", "uniqueIdentifier", "createCredential"
)
swap(
    "credential-unknown-400",
    "CRED-NOT-FOUND",
    NOT_FOUND,
    "getCredential",
    "updateCredential",
    "deleteCredential",
)
swap("identifier-duplicate-422", "CRED-IDENTIFIER-UNIQUE", DUPLICATE, "createCredential")
optional("reader-type-optional", "CRED-FIELD-REQUIRED", "readerType", "createCredential")


@overrides(
    "unknown-acl-ignored",
    "CRED-FIELD-REFERENCE",
    "unknown access control lists are dropped, not refused",
)
class _UnknownListsDropped(CredentialPolicy):
    def lists_accepted(self, wanted: list[str], unknown: list[str]) -> list[str]:
        return super().lists_accepted([u for u in wanted if u not in unknown], [])


# The holder rule is the schema's body-level oneOf, so the validation seam skips body-level rules.
CATALOGUE["both-holders-accepted"] = Fault(
    "both-holders-accepted",
    "CRED-HOLDER-EXACTLY-ONE",
    "a create body naming a person and a user is accepted (the person holds the credential)",
    operations=("createCredential",),
    unchecked="body",
)


@overrides(
    "holder-names-frozen",
    "CRED-READ-SHAPE",
    "holderFirstName and holderLastName keep the names the holder had at issue",
)
class _HolderNamesFrozen(CredentialPolicy):
    # Two decisions: the names are taken when the credential is created, and read back later.
    def created(self, system: str, uuid: str, record: Record) -> None:
        super().created(system, uuid, record)
        holder = self.server.store.get(record["_holderKind"], record["holderUuid"], system) or {}
        self.memory(_FROZEN_NAMES)[uuid] = (holder.get("firstName"), holder.get("lastName"))

    def holder_names(self, record: Record, holder: Record) -> tuple[Any, Any]:
        frozen: tuple[Any, Any] | None = self.memory(_FROZEN_NAMES).get(record["uuid"])
        return frozen if frozen is not None else super().holder_names(record, holder)


@overrides("future-start-reads-active", "CRED-STATUS-DEFAULT", "a window not open yet reads ACTIVE")
class _FutureStartActive(CredentialPolicy):
    def status(self, record: Record, now: datetime) -> str:
        status = super().status(record, now)
        return "ACTIVE" if status == "VALID" else status


@overrides(
    "credential-writes-not-pushed",
    "CRED-WRITE-PUSHED",
    "credential writes reach the controllers only when the clock next moves",
)
class _WritesNotPushed(CredentialPolicy):
    def writes_reach_hardware(self) -> bool:
        return False


@overrides("put-use-limit-ignored", "CRED-USE-LIMIT", "a PUT's useLimit is not applied")
class _PutUseLimitIgnored(CredentialPolicy):
    def put_changes(self, old: Record, body: dict[str, Any]) -> dict[str, Any]:
        changes = super().put_changes(old, body)
        changes.pop("useLimit", None)
        return changes


@overrides(
    "put-comments-appended", "CRED-PUT-FIELDS", "a PUT's comments are appended to the stored ones"
)
class _PutCommentsAppended(CredentialPolicy):
    def put_changes(self, old: Record, body: dict[str, Any]) -> dict[str, Any]:
        changes = super().put_changes(old, body)
        if old.get("comments") and body.get("comments"):
            changes["comments"] = f"{old['comments']}\n{body['comments']}"
        return changes


@overrides(
    "empty-acl-put-ignored", "CRED-PUT-ACL-EMPTY", "a PUT with an empty list array changes nothing"
)
class _EmptyListsIgnored(CredentialPolicy):
    def lists_after_put(self, old: list[str] | None, sent: list[str] | None) -> list[str] | None:
        return old if sent == [] else super().lists_after_put(old, sent)


@overrides(
    "omitted-acl-put-clears", "CRED-PUT-ACL-OMITTED", "a PUT without lists removes every list"
)
class _OmittedListsCleared(CredentialPolicy):
    def lists_after_put(self, old: list[str] | None, sent: list[str] | None) -> list[str] | None:
        return [] if sent is None else super().lists_after_put(old, sent)


@overrides(
    "disabled-kept-on-hardware",
    "CRED-PUT-STATUS-DISABLED",
    "DISABLED credentials stay on the controllers",
)
class _DisabledKept(CredentialPolicy):
    def held_by_controller(self, status: str) -> bool:
        return super().held_by_controller(status) or status == "DISABLED"


@overrides(
    "put-deleted-removes-record", "CRED-PUT-STATUS-DELETED", "a PUT with DELETED erases the record"
)
class _PutDeletedErases(CredentialPolicy):
    def keeps_deleted_record(self, by: Literal["PUT", "DELETE"]) -> bool:
        return by != "PUT" and super().keeps_deleted_record(by)


@overrides(
    "put-status-drops-window",
    "CRED-PUT-STATUS-OTHER",
    "a PUT carrying a status applies only the status (window and useLimit are dropped)",
)
class _PutStatusDropsWindow(CredentialPolicy):
    def put_changes(self, old: Record, body: dict[str, Any]) -> dict[str, Any]:
        changes = super().put_changes(old, body)
        if body.get("status") is None:
            return changes
        return {k: v for k, v in changes.items() if k == "comments"}


@overrides(
    "deleted-kept-on-hardware",
    "CRED-DELETE-HARDWARE",
    "DELETED credentials stay on the controllers",
)
class _DeletedKept(CredentialPolicy):
    def held_by_controller(self, status: str) -> bool:
        return super().held_by_controller(status) or status == "DELETED"


@overrides(
    "by-person-every-person",
    "CRED-BY-PERSON",
    "the by-person list holds every person-held credential of the system",
)
class _ByPersonEveryPerson(CredentialPolicy):
    def belongs_to(self, record: Record, kind: str, holder_uuid: str) -> bool:
        if kind == "person":
            return record.get("_holderKind") == kind
        return super().belongs_to(record, kind, holder_uuid)


@overrides(
    "credentials-listed-wholesale",
    "CRED-NO-LIST-ALL",
    "GET /credentials answers every credential of the system",
)
class _CredentialsListedWholesale(RequestPolicy):
    def answered_before_routing(self, request: Request) -> Response | None:
        listing = listed_wholesale(self.server, request, "/api/ws/v1/credentials", "credential")
        return super().answered_before_routing(request) if listing is None else listing


unchecked(
    "acl-list-count-unchecked",
    "CRED-FIELD-ACL-COUNT",
    "accessControlListUuids",
    "createCredential",
    "updateCredential",
)


@overrides(
    "enabled-flag-ignored",
    "CRED-ENABLED-FLAG",
    "enabled false on create is dropped: the credential is stored live",
)
class _EnabledFlagIgnored(CredentialPolicy):
    def enabled_on_create(self, body: dict[str, Any]) -> bool:
        return True


@overrides(
    "extended-credential-stays-expired",
    "CRED-EXPIRED-EXTEND-LEAVES-EXPIRED",
    "an EXPIRED credential given a later window by a PUT keeps reading EXPIRED",
)
class _ExtendedStaysExpired(CredentialPolicy):
    # Two decisions: the PUT stores EXPIRED and marks the credential, reads keep it EXPIRED.
    def lifecycle_after_put(self, old: Record, new: Record, body: dict[str, Any]) -> str:
        was_expired = self.status(old, self.server.clock.now()) == "EXPIRED"
        if was_expired and ("activeDate" in body or "expiryDate" in body):
            self.memory(_STUCK)[old["uuid"]] = True
            return "EXPIRED"
        return super().lifecycle_after_put(old, new, body)

    def status(self, record: Record, now: datetime) -> str:
        stuck = record.get("uuid") in self.memory(_STUCK)
        if stuck and record.get("status") == "EXPIRED":
            return "EXPIRED"
        return super().status(record, now)
