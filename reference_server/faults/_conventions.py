"""Faults of conventions, errors, paging, authentication, isolation and rate limits."""

from collections.abc import Mapping
from typing import Any

from reference_server.domain._common import RecordPolicy
from reference_server.domain.invites import DENIED_KIND, VISITOR_FIELDS, InvitePolicy
from reference_server.faults._model import fault, overrides, swap

fault("echo-rejected-value", "ERR-NO-ECHO", "422 reasons quote the rejected value")
fault(
    "offset-ignored",
    "CONV-TIMESTAMP-OFFSET-CONVERTED",
    "a timestamp's offset is dropped, not converted",
)
fault(
    "no-milliseconds", "CONV-TIMESTAMP-UTC-MILLIS", "timestamps are returned without milliseconds"
)
fault("bad-uuid-404", "CONV-UUID-PATH-422", "a non-UUID path value answers 404 instead of 422")
fault("malformed-json-422", "ERR-400-BODY", "an unreadable JSON body answers 422 instead of 400")
fault(
    "empty-path-parameter-422",
    "ERR-400-MISSING-PATH-PARAMETER",
    "an empty path parameter answers 422 (a malformed UUID) instead of 400",
)
fault("unknown-field-rejected", "CONV-UNKNOWN-FIELDS-IGNORED", "an unknown request field gets 422")
fault("write-returns-record", "CONV-WRITE-ACKNOWLEDGEMENT", "writes answer with the stored record")
fault("paging-total-wrong", "PAGE-TOTAL-COUNT", "totalCount reports the page size, not the total")
fault("bearer-not-stripped", "AUTH-BEARER-PREFIX", "a Bearer-prefixed key is not recognised")
fault("disabled-key-accepted", "AUTH-DISABLED-KEY-401", "a disabled key authenticates")
fault("readonly-can-write", "AUTH-PERMISSION-READ-WRITE", "write permissions are not checked")
fault("relay-control-with-read", "AUTH-RELAY-CONTROL-SEPARATE", "reading points allows the trigger")


@overrides("cross-system-read", "CONV-SYSTEM-SCOPE-404", "another system's record can be read")
class _CrossSystemRead(RecordPolicy):
    def read_scope(self, system: str) -> str | None:
        return None


fault("list-leaks-other-system", "CONV-SYSTEM-SCOPE-LISTS", "name lists include other systems")
fault("encryption-ignored", "AUTH-PAYLOAD-ENCRYPTION", "responses to an encrypting key are plain")
fault(
    "localhost-not-enforced", "AUTH-RESTRICT-TO-LOCALHOST", "the loopback-only setting is ignored"
)
fault("no-retry-after", "RATE-RETRY-AFTER-HEADER", "429 answers carry no Retry-After header")
fault("bucket-never-refills", "RATE-REFILL-800-PER-MINUTE", "the bucket does not refill over time")
fault("bucket-too-large", "RATE-BUCKET-2000", "documented buckets hold 4000 units instead of 2000")
fault("failed-auth-free", "RATE-COST-FAILED-AUTH-400", "failed authentications charge nothing")
fault(
    "reads-free", "RATE-COST-LIST-READ-DELETE-STATUS-30", "reads, lists and deletes charge nothing"
)


@overrides(
    "watchlist-451-once",
    "ERR-451-FINAL",
    "repeating an invitation refused with 451 creates it",
)
class _Watchlist451Once(InvitePolicy):
    def refuses_visitor(self, system: str, visit: Mapping[str, Any]) -> bool:
        # A visitor refused once (a denied registration is on record) is let through.
        if not super().refuses_visitor(system, visit):
            return False
        earlier = self.server.store.all(DENIED_KIND, system)
        return not any(all(d.get(f) == visit.get(f) for f in VISITOR_FIELDS) for d in earlier)


# -- conventions ---------------------------------------------------------------------------------
fault(
    "people-reads-carry-row-id", "CONV-UUID-IDENTIFIERS", "person and user reads add a numeric id"
)
fault(
    "unreadable-timestamp-dropped",
    "CONV-TIMESTAMP-UNPARSABLE-422",
    "a timestamp that matches the pattern but is no real date is stored as null, not refused",
)
fault("body-uuid-wins", "CONV-UPDATE-BODY-UUID-IGNORED", "an update changes the body's uuid record")
fault(
    "location-delete-kept", "CONV-HARD-DELETE", "deleteLocation acknowledges but keeps the record"
)


@overrides(
    "delete-keeps-references",
    "CONV-DELETE-DROPS-REFERENCES",
    "persons and users keep pointing at a deleted record",
)
class _DeleteKeepsReferences(RecordPolicy):
    def drops_references(self) -> bool:
        return False


fault("errors-as-plain-text", "CONV-RESPONSE-CONFORMS", "error bodies are sent as text/plain")
fault("person-read-snake-case", "CONV-CAMELCASE-RESPONSES", "getPerson answers snake_case names")


@overrides(
    "reference-checked-across-systems",
    "CONV-REFERENCE-MUST-EXIST",
    "a reference to another system's record is accepted",
)
class _ReferenceCheckedAcrossSystems(RecordPolicy):
    def reference_scope(self, system: str) -> str | None:
        return None


# -- errors ----------------------------------------------------------------------------------
fault("error-code-as-text", "ERR-BODY-SHAPE", "error bodies carry code as a string")
fault(
    "validation-stops-at-first",
    "ERR-422-REASON-FORMAT",
    "a 422 names only the first offending field",
)
fault(
    "refused-body-accepted-on-retry",
    "ERR-422-FINAL",
    "a body refused with 422 is accepted unvalidated when it is sent again",
)
fault(
    "rate-limited-request-applied",
    "ERR-429-TEMPORARY",
    "a request answered 429 is carried out all the same",
)
swap(
    "delete-unknown-acknowledged",
    "ERR-404-UNKNOWN-UUID",
    (404, 200),
    "deleteDepartment",
    "deleteOrganisation",
    "deleteCostCenter",
    "deleteVisitReason",
    "deleteGroup",
)
# -- paging ----------------------------------------------------------------------------------
fault("envelope-without-count", "PAGE-ENVELOPE-FIELDS", "paged envelopes lack countReturned")
fault("start-index-always-zero", "PAGE-START-INDEX-ECHO", "startIndex is always 0")
fault("limit-ignored", "PAGE-COUNT-RETURNED", "a page holds every record from start on")
fault(
    "page-starts-early",
    "PAGE-ITERATION",
    "start is read one-based, so every page after the first repeats a record",
)
# -- authentication ------------------------------------------------------------------------------
fault("missing-header-403", "AUTH-HEADER-REQUIRED", "a request without a header answers 403")
fault(
    "keyless-checks-header",
    "AUTH-KEYLESS-OPERATIONS",
    "signed links and the virtual reader refuse an unknown Authorization header with 401",
)
fault(
    "path-checked-before-key",
    "AUTH-HEADER-LENGTH",
    "path UUIDs are checked before the Authorization header",
)
fault(
    "key-compared-by-prefix",
    "AUTH-INVALID-KEY-401",
    "a value sharing a key's first 32 characters authenticates as that key",
)
fault(
    "session-cookie",
    "AUTH-NO-SESSION",
    "answers set a session cookie that authenticates later requests without a header",
)
fault(
    "refused-write-applied",
    "AUTH-403-NOTHING-CHANGED",
    "a write refused with 403 is carried out before the refusal",
)
fault(
    "refused-read-leaks-result",
    "AUTH-403-NO-PARTIAL-RESULT",
    "a read refused with 403 carries the result next to the error",
)
fault(
    "override-list-merged",
    "AUTH-ENCRYPTION-OVERRIDE-LIST",
    "a key's override list is added to the default list instead of replacing it",
)
# -- rate limits ---------------------------------------------------------------------------------
fault(
    "system-wide-throttle",
    "RATE-PER-KEY-BUCKET",
    "once one key is answered 429, every key of its system is refused until it may retry",
)
fault("invite-writes-cost-30", "RATE-COST-INVITE-WRITE-50", "invitation writes draw 30 units")
fault("photo-upload-cost-30", "RATE-COST-PHOTO-UPLOAD-50", "photo uploads draw 30 units")
fault("photo-downloads-cost-30", "RATE-COST-PHOTO-DOWNLOAD-50", "photo downloads draw 30 units")
fault(
    "status-read-cost-30",
    "RATE-COST-STATUS-READ-FILE-DELETE-10",
    "invitation status reads and staged-file deletes draw 30 units",
)
fault(
    "credential-writes-cost-30",
    "RATE-COST-CREDENTIAL-WRITE-ABOVE-READ",
    "credential creates and updates draw 30 units, a read's cost",
)
fault("trigger-cost-30", "RATE-COST-TRIGGER-ABOVE-READS", "a trigger draws 30 units, a read's cost")
fault("trigger-cost-50", "RATE-COST-TRIGGER-100", "a trigger draws 50 units")
fault(
    "retry-after-one-second",
    "RATE-RETRY-AFTER-LOWER-BOUND",
    "429 answers always advise Retry-After: 1",
)
# -- reading request bodies and requests (issue 12) ----------------------------------------------
fault(
    "content-type-ignored",
    "CONV-JSON-MEDIA-TYPE",
    "a JSON body is read whatever Content-Type it is declared with",
)
fault(
    "json-read-leniently",
    "CONV-JSON-READABLE",
    "bodies are read as Python's json reads them: UTF-16, NaN and Infinity accepted, nesting and "
    "number length unbounded",
    lasting=True,
)
fault(
    "lone-surrogate-stored",
    "CONV-TEXT-FAITHFUL",
    "a string with a lone surrogate escape is accepted and stored (its reads then fail)",
    lasting=True,
)
fault(
    "nul-truncates-text",
    "CONV-TEXT-NUL",
    "a string holding U+0000 is accepted and stored cut at the NUL, as C-string storage keeps it",
)
fault(
    "huge-start-fails",
    "PAGE-START-BOUNDED",
    "a paging start beyond 32 bits overflows inside the server (an unhandled 500)",
)
fault(
    "http-layer-plain-text",
    "ERR-BODY-HTTP-LAYER",
    "requests refused by the HTTP layer (over-long header or URL, bytes that are not HTTP) get "
    "uvicorn's text/plain 400",
)
