"""The fault catalogue: named, documented deviations from one rule each.

``amws-reference serve --fault NAME`` switches a fault on. Faults act at a few seams —
request validation, the store, the clock, response shaping — and, where a rule lives in
one domain step only, at that step through ``Faults.on``. The self-check starts the server
with each fault and expects the tests of the fault's rule to fail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    name: str
    rule: str
    does: str
    # Declarative faults, applied by the seams without a line of domain code:
    operations: tuple[str, ...] = ()  # the operations they touch
    unchecked: str | None = None  # validation seam: this body field's rules are not enforced
    swap: tuple[int, int] | None = None  # response seam: answer the second status for the first


CATALOGUE: dict[str, Fault] = {}


def _fault(name: str, rule: str, does: str) -> None:
    CATALOGUE[name] = Fault(name, rule, does)


def _unchecked(name: str, rule: str, field: str, *operations: str) -> None:
    does = f"{field} is not validated on {', '.join(operations)}"
    CATALOGUE[name] = Fault(name, rule, does, operations=operations, unchecked=field)


def _swap(name: str, rule: str, statuses: tuple[int, int], *operations: str) -> None:
    does = f"{', '.join(operations)} answer {statuses[1]} where {statuses[0]} is due"
    CATALOGUE[name] = Fault(name, rule, does, operations=operations, swap=statuses)


# Conventions and errors
_fault("echo-rejected-value", "ERR-NO-ECHO", "422 reasons quote the rejected value")
_fault(
    "offset-ignored",
    "CONV-TIMESTAMP-OFFSET-CONVERTED",
    "a timestamp's offset is dropped, not converted",
)
_fault(
    "no-milliseconds", "CONV-TIMESTAMP-UTC-MILLIS", "timestamps are returned without milliseconds"
)
_fault("bad-uuid-404", "CONV-UUID-PATH-422", "a non-UUID path value answers 404 instead of 422")
_fault("malformed-json-422", "ERR-400-BODY", "an unreadable JSON body answers 422 instead of 400")
_fault("unknown-field-rejected", "CONV-UNKNOWN-FIELDS-IGNORED", "an unknown request field gets 422")
_fault("write-returns-record", "CONV-WRITE-ACKNOWLEDGEMENT", "writes answer with the stored record")
_fault("paging-total-wrong", "PAGE-TOTAL-COUNT", "totalCount reports the page size, not the total")
# Authentication, permissions, isolation
_fault("bearer-not-stripped", "AUTH-BEARER-PREFIX", "a Bearer-prefixed key is not recognised")
_fault("disabled-key-accepted", "AUTH-DISABLED-KEY-401", "a disabled key authenticates")
_fault("readonly-can-write", "AUTH-PERMISSION-READ-WRITE", "write permissions are not checked")
_fault(
    "relay-control-with-read", "AUTH-RELAY-CONTROL-SEPARATE", "reading points allows the trigger"
)
_fault("cross-system-read", "CONV-SYSTEM-SCOPE-404", "another system's record can be read")
_fault("list-leaks-other-system", "CONV-SYSTEM-SCOPE-LISTS", "name lists include other systems")
_fault("encryption-ignored", "AUTH-PAYLOAD-ENCRYPTION", "responses to an encrypting key are plain")
_fault(
    "localhost-not-enforced", "AUTH-RESTRICT-TO-LOCALHOST", "the loopback-only setting is ignored"
)
# Rate limits
_fault("no-retry-after", "RATE-RETRY-AFTER-HEADER", "429 answers carry no Retry-After header")
_fault("bucket-never-refills", "RATE-REFILL-800-PER-MINUTE", "the bucket does not refill over time")
_fault("bucket-too-large", "RATE-BUCKET-2000", "documented buckets hold 4000 units instead of 2000")
_fault("failed-auth-free", "RATE-COST-FAILED-AUTH-400", "failed authentications charge nothing")
_fault(
    "reads-free", "RATE-COST-LIST-READ-DELETE-STATUS-30", "reads, lists and deletes charge nothing"
)
# Reference data and access control
_unchecked(
    "department-name-unchecked", "DEPT-FIELD-LENGTH", "name", "createDepartment", "updateDepartment"
)
_fault("duplicate-names-allowed", "DEPT-NAME-UNIQUE", "name-only resources accept duplicate names")
_fault("department-delete-keeps-links", "DEPT-DELETE-UNLINKS", "people keep a deleted department")
_fault(
    "location-put-replaces", "LOC-UPDATE-PARTIAL", "location PUT clears the fields it was not given"
)
_fault("admin-role-deletable", "ROLE-DELETE-ADMINISTRATOR", "the administrator role can be deleted")
_fault("role-refusal-http-status", "ROLE-DELETE-HAS-ACCOUNTS", "a 412 refusal uses the HTTP status")
_fault(
    "plates-keep-spaces", "VEH-PLATE-VIN-NORMALISED", "vehicle plates and VINs keep their spaces"
)
_fault("trigger-no-audit", "ACP-TRIGGER-AUDIT", "the trigger writes no audit event")
_fault("trigger-fires-twice", "ACP-TRIGGER-ONCE", "the trigger fires the relay twice")

# Persons and users
_fault(
    "person-put-keeps-omitted",
    "PERS-PUT-FULL-REPLACEMENT",
    "person PUT keeps the stored value of every field the body leaves out",
)
_fault(
    "person-duplicate-allowed",
    "PERS-DUPLICATE",
    "persons may share a non-empty identityNumber or staffIdNumber",
)
_fault(
    "person-reference-unchecked",
    "PERS-FIELD-REFERENCE",
    "person references to records that do not exist are stored without a 422",
)
_fault(
    "search-returns-identity-number",
    "PERS-SEARCH-IDENTITY-NOT-RETURNED",
    "person search rows carry the identity number",
)
_fault("search-case-sensitive", "PERS-SEARCH-CONTAINS", "person search respects letter case")
_fault(
    "search-any-criterion",
    "PERS-SEARCH-ALL-FIELDS",
    "person search returns persons matching any one of the criteria",
)
_fault(
    "user-password-returned",
    "USER-PASSWORD-NEVER-RETURNED",
    "a user read shows the stored password hash",
)
_fault(
    "user-put-keeps-role",
    "USER-PUT-ROLE-RESET",
    "user PUT without role keeps the previous role instead of the default one",
)
_fault(
    "user-delete-keeps-invites",
    "USER-DELETE-CANCELS-INVITES",
    "deleting a user leaves the invitations it hosts active",
)
_fault(
    "user-enable-twice-accepted",
    "USER-ENABLE-DISABLE-CONFLICT",
    "enabling an enabled user (or disabling a disabled one) answers 200",
)
_fault(
    "user-search-unknown-criterion-applied",
    "USER-SEARCH-UNKNOWN-FIELD",
    "user search filters on the unrecognised criterion mobile instead of ignoring it",
)
# -- end persons and users
# Credentials and hardware
_fault("credential-delete-hard", "CRED-DELETE-SOFT", "credential DELETE removes the record")
_fault(
    "deleted-identifier-reusable",
    "CRED-IDENTIFIER-RESERVED",
    "a deleted credential's identifier can be issued again",
)
_fault("acl-put-merges", "CRED-PUT-ACL-REPLACE", "credential PUT adds lists instead of replacing")
_fault("valid-never-activates", "CRED-VALID-TO-ACTIVE", "a VALID credential stays VALID")
_fault(
    "inactive-pushed-to-hardware",
    "CRED-HARDWARE-ACTIVE-ONLY",
    "controllers also hold VALID, EXPIRED and DISABLED credentials",
)
_fault("holder-missing-422", "CRED-HOLDER-NOT-FOUND", "an unknown holder answers 422, not 404")
_fault(
    "credential-put-clears-omitted",
    "CRED-PUT-PARTIAL",
    "credential PUT clears the window, useLimit and comments it was not given",
)
_fault(
    "credential-never-expires", "CRED-ACTIVE-TO-EXPIRED", "a credential stays ACTIVE after expiry"
)
_fault(
    "reader-type-changeable", "CRED-PUT-READER-TYPE-IGNORED", "credential PUT changes readerType"
)
_fault("by-user-hides-deleted", "CRED-BY-USER", "the by-user list leaves out DISABLED and DELETED")
_fault("credential-type-not-derived", "CRED-TYPE-DERIVED", "every credential reads type PERSONNEL")
# -- end credentials and hardware
# Watchlists
_fault("match-writes-audit", "WL-MATCH-READ-ONLY", "a match check leaves an audit-trail record")
_fault(
    "disabled-watchlist-consulted",
    "WL-DISABLED-NOT-CONSULTED",
    "disabled watchlists are consulted like enabled ones",
)
_fault(
    "entry-other-watchlist-readable",
    "WL-ENTRY-WRONG-WATCHLIST",
    "an entry is reachable through any watchlist of the system",
)
_fault(
    "watchlist-delete-keeps-entries",
    "WL-DELETE-HARD",
    "deleting a watchlist leaves its entries behind (they still match)",
)
_fault(
    "watchlist-delete-keeps-flags",
    "WL-DELETE-HARDWARE-FIRST",
    "deleting a watchlist leaves its flags on the hardware",
)
_fault(
    "match-duplicates-not-collapsed",
    "WL-MATCH-DEDUP",
    "a match answers one hit per matching field instead of one per entry",
)
_fault("entry-count-frozen", "WL-ENTRY-COUNT", "entryCount always reads 0")
_fault(
    "watchlist-audit-unnamed",
    "WL-AUDIT-KEY-NAME",
    "watchlist writes are audited without the API key's name",
)
# -- end watchlists
# Invitations and visits
_fault(
    "activation-not-rounded",
    "INV-ACTIVATION-ROUND-DOWN",
    "invitation activation is stored with its seconds",
)
_fault(
    "expiry-not-rounded", "INV-EXPIRY-ROUND-UP", "invitation expiry is stored as sent, not at :59"
)
_fault(
    "identical-update-200",
    "INV-UPDATE-IDENTICAL-425",
    "an invitation update identical to the stored one answers 200 and marks the visit updated",
)
_fault(
    "watchlist-ignored-on-invite",
    "INV-WATCHLIST-451",
    "invitations are created without consulting the watchlists",
)
_fault(
    "watchlist-451-once",
    "ERR-451-FINAL",
    "repeating an invitation refused with 451 creates it",
)
_fault(
    "missing-host-201",
    "INV-REFERENCE-MISSING-422",
    "an invitation naming a host user that does not exist is stored",
)
_fault(
    "underscore-spelling-ignored",
    "VER-INVITE-UNDERSCORE-SPELLINGS",
    "invitation fields sent in the underscore spelling are dropped",
)
_fault(
    "location-name-tolerated",
    "INV-LOCATION-UNKNOWN-NAME-DEFAULT",
    "an unknown location name is accepted although the setting is at its default",
)
_fault(
    "update-closed-accepted",
    "INV-UPDATE-CLOSED-409",
    "a cancelled or finished visit can still be updated (200)",
)
_fault(
    "check-out-before-check-in",
    "VISIT-CHECK-OUT",
    "a visitor who never checked in can be checked out",
)
# -- end invitations and visits
# Files, photos and signed media links
_fault("upload-201", "FILE-UPLOAD-200-ACK", "a successful upload answers 201 instead of 200")
_fault("upload-accepts-gif", "FILE-UPLOAD-400-TYPE", "GIF images are staged like JPEG and PNG")
_fault(
    "duplicate-upload-allowed",
    "FILE-UPLOAD-422-DUPLICATE",
    "a byte-identical file is staged a second time",
)
_fault("staged-never-expires", "FILE-STAGED-EXPIRY", "staged files never expire")
_fault(
    "thumbnail-is-full-image",
    "PHOTO-THUMBNAIL-SMALLER",
    "the thumbnail is the full photo, not a smaller rendition",
)
_fault("cache-public", "PHOTO-CACHE-PRIVATE", "photo downloads are marked public, max-age=3600")
_fault(
    "photo-other-system-404",
    "PHOTO-403-OTHER-SYSTEM",
    "another system's photo answers 404 instead of 403",
)
_fault("link-signature-ignored", "LINK-401-ALTERED", "signed links are served whatever signature")
_fault("link-never-expires", "LINK-412-EXPIRED", "signed links are served after their expiry")
_fault("link-no-throttle", "LINK-429-PER-ADDRESS", "signed links are never throttled")
# -- end files, photos and signed media links
# Virtual reader and webhooks
_fault("reader-code-int", "READER-RESPONSE-FORMAT", "reader answers carry code as a number")
_fault(
    "unattached-reader-401", "READER-424-NOT-ATTACHED", "a reader on no point answers 401, not 424"
)
_fault("reader-key-not-checked", "READER-404-KEY-MISMATCH", "any device key of valid length works")
_fault(
    "reader-no-auth-throttle",
    "READER-AUTH-FAILURE-THROTTLE",
    "failed device checks are never throttled",
)
_fault("relay-not-fired", "READER-200-EVENT-AND-RELAY", "a granted read fires no relay")
_fault("grant-outside-window", "READER-401-OUTSIDE-WINDOW", "reads ignore the validity window")
_fault(
    "use-limit-not-decremented",
    "READER-USE-LIMIT-CONSUMED",
    "grants do not consume a limited credential's uses",
)
_fault(
    "second-factor-granted",
    "READER-415-SECOND-FACTOR",
    "combined reader types are decided like single-factor ones",
)
_fault(
    "list-includes-expired",
    "READER-LIST-ONLY-VALID",
    "the list holds every credential with a list for the point, valid or not",
)
_fault("hmac-wrong-text", "HOOK-HMAC-SIGNATURE", "the signature leaves the path out of the text")
_fault("hmac-timestamp-seconds", "HOOK-HMAC-TIMESTAMP", "the timestamp is in seconds")
_fault("webhook-not-encrypted", "HOOK-ENCRYPTION-FIELDS", "payload fields are sent in clear")
_fault("webhook-missing-charset", "HOOK-HEADERS-JSON", "Content-Type is sent without the charset")
_fault("webhook-no-retry", "HOOK-RETRY", "a failed delivery is never attempted again")
_fault(
    "webhook-sent-when-disabled",
    "HOOK-ENABLED-FLAG",
    "events are sent while the integration is disabled",
)
# -- end virtual reader and webhooks

# Declarative faults: a field whose limits go unenforced (validation seam) ...
_unchecked(
    "organisation-name-unchecked",
    "ORG-FIELD-LENGTH",
    "name",
    "createOrganisation",
    "updateOrganisation",
)
_unchecked(
    "cost-center-name-unchecked",
    "COSTC-FIELD-LENGTH",
    "name",
    "createCostCenter",
    "updateCostCenter",
)
_unchecked(
    "visit-reason-name-unchecked",
    "VREASON-FIELD-LENGTH",
    "name",
    "createVisitReason",
    "updateVisitReason",
)
_unchecked("group-name-unchecked", "GRP-FIELD-LENGTH", "name", "createGroup", "updateGroup")
_unchecked("role-name-unchecked", "ROLE-FIELD-LENGTH", "name", "createRole", "updateRole")
_unchecked(
    "location-name-unchecked", "LOC-FIELD-LENGTH", "name", "createLocation", "updateLocation"
)
_unchecked("location-type-unchecked", "LOC-FIELD-ENUM", "type", "createLocation", "updateLocation")
_unchecked(
    "location-phone-unchecked",
    "LOC-FIELD-PHONE",
    "keyContactNumber",
    "createLocation",
    "updateLocation",
)
_unchecked("latitude-unchecked", "LOC-FIELD-RANGE", "latitude", "createLocation", "updateLocation")
_unchecked(
    "person-first-name-unchecked", "PERS-FIELD-LENGTH", "firstName", "createPerson", "updatePerson"
)
_unchecked("person-type-unchecked", "PERS-FIELD-ENUM", "personType", "createPerson", "updatePerson")
_unchecked(
    "person-birth-date-unchecked", "PERS-FIELD-DATE", "dateOfBirth", "createPerson", "updatePerson"
)
_unchecked("person-email-unchecked", "PERS-FIELD-EMAIL", "email", "createPerson", "updatePerson")
_unchecked("person-mobile-unchecked", "PERS-FIELD-PHONE", "mobile", "createPerson", "updatePerson")
_unchecked(
    "user-first-name-unchecked", "USER-FIELD-LENGTH", "firstName", "createUser", "updateUser"
)
_unchecked("user-email-unchecked", "USER-FIELD-EMAIL", "email", "createUser", "updateUser")
_unchecked("user-mobile-unchecked", "USER-FIELD-PHONE", "mobile", "createUser", "updateUser")
_unchecked("reader-type-unchecked", "CRED-FIELD-ENUM", "readerType", "createCredential")
_unchecked("pin-range-unchecked", "CRED-FIELD-RANGE", "pin", "createCredential")
_unchecked(
    "identifier-length-unchecked", "CRED-FIELD-LENGTH", "uniqueIdentifier", "createCredential"
)
_unchecked(
    "watchlist-name-unchecked", "WL-FIELD-LENGTH", "name", "createWatchlist", "updateWatchlist"
)
_unchecked(
    "entry-reason-unchecked",
    "WL-ENTRY-FIELD-LENGTH",
    "reason",
    "createWatchlistEntry",
    "updateWatchlistEntry",
)
_unchecked("match-identity-unchecked", "WL-MATCH-FIELD-LENGTH", "identityNumber", "matchWatchlists")
_unchecked("invite-email-unchecked", "INV-FIELD-EMAIL", "email", "createInvite", "updateInvite")
_unchecked(
    "reader-code-unchecked", "READER-422-CODE-LENGTH", "code", "virtualRead", "virtualQrRead"
)
_unchecked(
    "reader-key-unchecked",
    "READER-422-KEY-LENGTH",
    "key",
    "virtualRead",
    "virtualQrRead",
    "virtualReaderList",
    "virtualQrReaderList",
)
# ... and a documented outcome answered with another status (response seam).
_NOT_FOUND = (404, 400)
_swap(
    "department-unknown-400",
    "DEPT-NOT-FOUND",
    _NOT_FOUND,
    "getDepartment",
    "updateDepartment",
    "deleteDepartment",
)
_swap(
    "organisation-unknown-400",
    "ORG-NOT-FOUND",
    _NOT_FOUND,
    "getOrganisation",
    "updateOrganisation",
    "deleteOrganisation",
)
_swap(
    "cost-center-unknown-400",
    "COSTC-NOT-FOUND",
    _NOT_FOUND,
    "getCostCenter",
    "updateCostCenter",
    "deleteCostCenter",
)
_swap(
    "visit-reason-unknown-400",
    "VREASON-NOT-FOUND",
    _NOT_FOUND,
    "getVisitReason",
    "updateVisitReason",
    "deleteVisitReason",
)
_swap("group-unknown-400", "GRP-NOT-FOUND", _NOT_FOUND, "getGroup", "updateGroup", "deleteGroup")
_swap(
    "location-unknown-400",
    "LOC-NOT-FOUND",
    _NOT_FOUND,
    "getLocation",
    "updateLocation",
    "deleteLocation",
)
_swap("role-unknown-400", "ROLE-NOT-FOUND", _NOT_FOUND, "getRole", "updateRole", "deleteRole")
_swap(
    "person-unknown-400", "PERS-NOT-FOUND", _NOT_FOUND, "getPerson", "updatePerson", "deletePerson"
)
_swap(
    "user-unknown-400",
    "USER-NOT-FOUND",
    _NOT_FOUND,
    "getUser",
    "updateUser",
    "deleteUser",
    "enableUser",
    "disableUser",
)
_swap(
    "credential-unknown-400",
    "CRED-NOT-FOUND",
    _NOT_FOUND,
    "getCredential",
    "updateCredential",
    "deleteCredential",
)
_swap(
    "watchlist-unknown-400",
    "WL-NOT-FOUND",
    _NOT_FOUND,
    "getWatchlist",
    "updateWatchlist",
    "deleteWatchlist",
)
_swap("invite-unknown-400", "INV-READ-NOT-FOUND", _NOT_FOUND, "getInvite")
_swap("point-unknown-400", "ACP-TRIGGER-NOT-FOUND", _NOT_FOUND, "triggerAccessControlPoint")
_swap("staged-file-unknown-400", "FILE-DELETE-404", _NOT_FOUND, "deleteFile")
_swap("photo-unknown-400", "PHOTO-404-NONE", _NOT_FOUND, "downloadPhoto", "downloadThumbnail")
_swap("link-unknown-400", "LINK-404-NONE", _NOT_FOUND, "getSignedThumbnail", "getSignedFile")
_swap(
    "device-unknown-401",
    "READER-404-UNKNOWN-DEVICE",
    (404, 401),
    "virtualRead",
    "virtualQrRead",
    "virtualReaderList",
    "virtualQrReaderList",
)
_DUPLICATE = (409, 422)
_swap(
    "organisation-duplicate-422",
    "ORG-NAME-UNIQUE",
    _DUPLICATE,
    "createOrganisation",
    "updateOrganisation",
)
_swap(
    "cost-center-duplicate-422",
    "COSTC-NAME-UNIQUE",
    _DUPLICATE,
    "createCostCenter",
    "updateCostCenter",
)
_swap(
    "visit-reason-duplicate-422",
    "VREASON-NAME-UNIQUE",
    _DUPLICATE,
    "createVisitReason",
    "updateVisitReason",
)
_swap("group-duplicate-422", "GRP-NAME-UNIQUE", _DUPLICATE, "createGroup", "updateGroup")
_swap("location-duplicate-422", "LOC-NAME-UNIQUE", _DUPLICATE, "createLocation", "updateLocation")
_swap("role-duplicate-422", "ROLE-NAME-UNIQUE", _DUPLICATE, "createRole", "updateRole")
_swap("identifier-duplicate-422", "CRED-IDENTIFIER-UNIQUE", _DUPLICATE, "createCredential")
_swap("upload-without-file-415", "FILE-UPLOAD-400-NO-FILE", (400, 415), "uploadFile")
_swap(
    "blank-link-segment-404",
    "LINK-400-BLANK-SEGMENT",
    (400, 404),
    "getSignedThumbnail",
    "getSignedFile",
)
_swap("bad-link-uuid-400", "LINK-422-BAD-UUID", (422, 400), "getSignedThumbnail", "getSignedFile")
_swap(
    "reader-body-400",
    "READER-422-MISSING-FIELD",
    (422, 400),
    "virtualRead",
    "virtualQrRead",
    "virtualReaderList",
    "virtualQrReaderList",
)


class Faults:
    """The faults switched on for one server."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        names = tuple(names)
        unknown = [n for n in names if n not in CATALOGUE]
        if unknown:
            raise ValueError(f"unknown fault: {', '.join(unknown)}")
        self._active = frozenset(names)

    def switch(self, names: Iterable[str]) -> None:
        """Replace the active faults (the control plane's ``PUT /_reference/faults``)."""
        names = tuple(names)
        unknown = [n for n in names if n not in CATALOGUE]
        if unknown:
            raise ValueError(f"unknown fault: {', '.join(unknown)}")
        self._active = frozenset(names)

    def on(self, name: str) -> bool:
        if name not in CATALOGUE:
            raise KeyError(name)
        return name in self._active

    @property
    def active(self) -> frozenset[str]:
        return self._active

    def unchecked_fields(self, operation_id: str) -> set[str]:
        """Body fields whose validation the active faults switch off for this operation."""
        return {
            CATALOGUE[n].unchecked
            for n in self._active
            if CATALOGUE[n].unchecked and operation_id in CATALOGUE[n].operations
        }

    def swapped_status(self, operation_id: str, status: int) -> int:
        """The status an active fault answers instead of ``status`` (itself when none)."""
        for name in self._active:
            fault = CATALOGUE[name]
            if fault.swap and fault.swap[0] == status and operation_id in fault.operations:
                return fault.swap[1]
        return status
