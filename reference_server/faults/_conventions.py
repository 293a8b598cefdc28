"""Faults of conventions, errors, paging, authentication, isolation and rate limits."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from uvicorn.protocols.http.h11_impl import H11Protocol

import spec
from reference_server._encryption import EncryptionPolicy
from reference_server._errors import ApiError, invalid_fields
from reference_server._http import HttpLayerPolicy, ReferenceH11Protocol
from reference_server._json_body import LONE_SURROGATE, JsonBodyPolicy, lone_surrogate
from reference_server._pipeline import RequestPolicy
from reference_server._shaping import ShapingPolicy
from reference_server._validation import ValidationPolicy
from reference_server.domain._common import RecordPolicy
from reference_server.domain.invites import DENIED_KIND, VISITOR_FIELDS, InvitePolicy
from reference_server.domain.locations import LocationPolicy
from reference_server.domain.reference_data import ReferenceDataPolicy
from reference_server.faults._model import overrides, swap
from reference_server.rate_bucket import DOCUMENTED, BucketPolicy, BucketSize

if TYPE_CHECKING:
    from reference_server._state import ApiKey, Server


@overrides("echo-rejected-value", "ERR-NO-ECHO", "422 reasons quote the rejected value")
class _EchoRejectedValue(ValidationPolicy):
    def reasons(self, errors: dict[str, str], body: Any) -> dict[str, str]:
        errors = super().reasons(errors, body)
        if not isinstance(body, dict):
            return errors
        return {k: f"{v} (got {body.get(k)!r})" for k, v in errors.items()}


@overrides(
    "offset-ignored",
    "CONV-TIMESTAMP-OFFSET-CONVERTED",
    "a timestamp's offset is dropped, not converted",
)
class _OffsetIgnored(ValidationPolicy):
    def timestamp(self, text: str) -> str | None:
        return super().timestamp(re.sub(r"(Z|[+-][0-9]{2}:?[0-9]{2})$", "", text))


_MILLIS = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})\.[0-9]{3}Z$")


def _strip_millis(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_millis(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_strip_millis(v) for v in node]
    if isinstance(node, str):
        return _MILLIS.sub(r"\1Z", node)
    return node


@overrides(
    "no-milliseconds", "CONV-TIMESTAMP-UTC-MILLIS", "timestamps are returned without milliseconds"
)
class _NoMilliseconds(ShapingPolicy):
    def timestamps(self, body: Any) -> Any:
        return _strip_millis(super().timestamps(body))


@overrides("bad-uuid-404", "CONV-UUID-PATH-422", "a non-UUID path value answers 404 instead of 422")
class _BadUuid404(RequestPolicy):
    def malformed_path(self, errors: dict[str, str]) -> ApiError:
        return ApiError(404, "no record with that identifier")


@overrides(
    "malformed-json-422", "ERR-400-BODY", "an unreadable JSON body answers 422 instead of 400"
)
class _MalformedJson422(JsonBodyPolicy):
    def syntax_error(self) -> ApiError:
        return invalid_fields({"body": "is not valid"})


@overrides(
    "empty-path-parameter-422",
    "ERR-400-MISSING-PATH-PARAMETER",
    "an empty path parameter answers 422 (a malformed UUID) instead of 400",
)
class _EmptyPathParameter422(RequestPolicy):
    def empty_segment_missing(self) -> bool:
        return False


@overrides(
    "unknown-field-rejected", "CONV-UNKNOWN-FIELDS-IGNORED", "an unknown request field gets 422"
)
class _UnknownFieldRejected(ValidationPolicy):
    def unknown_field_refusals(self, body: Any, known: set[str]) -> dict[str, str]:
        refusals = super().unknown_field_refusals(body, known)
        if not isinstance(body, dict):
            return refusals
        return {**refusals, **{n: "is not a known field" for n in sorted(set(body) - known)}}


@overrides(
    "write-returns-record", "CONV-WRITE-ACKNOWLEDGEMENT", "writes answer with the stored record"
)
class _WriteReturnsRecord(ShapingPolicy):
    def write_answer(self, op: spec.Operation, body: Any) -> Any:
        body = super().write_answer(op, body)
        acknowledged = isinstance(body, dict) and set(body) == {"code", "message", "uuid"}
        if not acknowledged or op.method == "GET":
            return body
        record = self.server.store.get_any(body["uuid"])
        if record is None:
            return body
        return {k: v for k, v in record.items() if not k.startswith("_")}


@overrides(
    "paging-total-wrong", "PAGE-TOTAL-COUNT", "totalCount reports the page size, not the total"
)
class _PagingTotalWrong(ShapingPolicy):
    def page(self, body: dict[str, Any]) -> dict[str, Any]:
        # Read off the envelope as the handler made it, before any other paging fault.
        body["totalCount"] = body.get("countReturned", 0)
        return super().page(body)


@overrides("bearer-not-stripped", "AUTH-BEARER-PREFIX", "a Bearer-prefixed key is not recognised")
class _BearerNotStripped(RequestPolicy):
    def key_value(self, header: str) -> str:
        return header


@overrides("disabled-key-accepted", "AUTH-DISABLED-KEY-401", "a disabled key authenticates")
class _DisabledKeyAccepted(RequestPolicy):
    def authenticates(self, key: ApiKey) -> bool:
        return True


@overrides("readonly-can-write", "AUTH-PERMISSION-READ-WRITE", "write permissions are not checked")
class _ReadonlyCanWrite(RequestPolicy):
    def permitted(self, key: ApiKey, op: spec.Operation) -> bool:
        return super().permitted(key, op) or not str(op.permission).startswith("Read")


RELAY_CONTROL = "Access Control Point Relay Control"


@overrides(
    "relay-control-with-read", "AUTH-RELAY-CONTROL-SEPARATE", "reading points allows the trigger"
)
class _RelayControlWithRead(RequestPolicy):
    def permitted(self, key: ApiKey, op: spec.Operation) -> bool:
        return super().permitted(key, op) or (
            op.permission == RELAY_CONTROL and "Read Access Control Points" in key.permissions
        )


@overrides("cross-system-read", "CONV-SYSTEM-SCOPE-404", "another system's record can be read")
class _CrossSystemRead(RecordPolicy):
    def read_scope(self, system: str) -> str | None:
        return None


@overrides("list-leaks-other-system", "CONV-SYSTEM-SCOPE-LISTS", "name lists include other systems")
class _ListLeaksOtherSystem(ReferenceDataPolicy):
    def list_scope(self, system: str) -> str | None:
        return None


@overrides(
    "encryption-ignored", "AUTH-PAYLOAD-ENCRYPTION", "responses to an encrypting key are plain"
)
class _EncryptionIgnored(EncryptionPolicy):
    def answer_settings(self, key: ApiKey | None) -> dict[str, Any] | None:
        return None


@overrides(
    "localhost-not-enforced", "AUTH-RESTRICT-TO-LOCALHOST", "the loopback-only setting is ignored"
)
class _LocalhostNotEnforced(RequestPolicy):
    def client_admitted(self, client: str) -> bool:
        return True


@overrides("no-retry-after", "RATE-RETRY-AFTER-HEADER", "429 answers carry no Retry-After header")
class _NoRetryAfter(RequestPolicy):
    def retry_after(self, wait: int) -> dict[str, str]:
        return {}


@overrides(
    "bucket-never-refills", "RATE-REFILL-800-PER-MINUTE", "the bucket does not refill over time"
)
class _BucketNeverRefills(BucketPolicy):
    def refill_per_minute(self, configured: BucketSize) -> int:
        return 0


@overrides(
    "bucket-too-large", "RATE-BUCKET-2000", "documented buckets hold 4000 units instead of 2000"
)
class _BucketTooLarge(BucketPolicy):
    def capacity(self, configured: BucketSize) -> int:
        return 4000 if configured == DOCUMENTED else super().capacity(configured)


@overrides("failed-auth-free", "RATE-COST-FAILED-AUTH-400", "failed authentications charge nothing")
class _FailedAuthFree(RequestPolicy):
    def charge_failed_authentication(self, bucket: str) -> None:
        return None


@overrides(
    "reads-free", "RATE-COST-LIST-READ-DELETE-STATUS-30", "reads, lists and deletes charge nothing"
)
class _ReadsFree(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        units = super().cost(op)
        return 0 if units == 30 and op.rate_cost == 30 else units


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


@overrides(
    "people-reads-carry-row-id", "CONV-UUID-IDENTIFIERS", "person and user reads add a numeric id"
)
class _PeopleReadsCarryRowId(ShapingPolicy):
    def read(self, op: spec.Operation, body: Any) -> Any:
        body = super().read(op, body)
        read = op.operation_id in ("getPerson", "getUser") and isinstance(body, dict)
        if read and "uuid" in body:
            body["id"] = int(body["uuid"][:7], 16)  # a row number of the vendor's own database
        return body


@overrides(
    "unreadable-timestamp-dropped",
    "CONV-TIMESTAMP-UNPARSABLE-422",
    "a timestamp that matches the pattern but is no real date is stored as null, not refused",
)
class _UnreadableTimestampDropped(ValidationPolicy):
    def timestamp(self, text: str) -> str | None:
        try:
            return super().timestamp(text)
        except ValueError:
            return None


@overrides(
    "body-uuid-wins", "CONV-UPDATE-BODY-UUID-IGNORED", "an update changes the body's uuid record"
)
class _BodyUuidWins(RequestPolicy):
    def addressed(self, op: spec.Operation, path: dict[str, str], body: Any) -> dict[str, str]:
        path = super().addressed(op, path, body)
        wins = op.method == "PUT" and "uuid" in path and isinstance(body, dict)
        if wins and isinstance(body.get("uuid"), str):
            return {**path, "uuid": body["uuid"]}
        return path


@overrides(
    "location-delete-kept", "CONV-HARD-DELETE", "deleteLocation acknowledges but keeps the record"
)
class _LocationDeleteKept(LocationPolicy):
    def removes_deleted_location(self) -> bool:
        return False


@overrides(
    "delete-keeps-references",
    "CONV-DELETE-DROPS-REFERENCES",
    "persons and users keep pointing at a deleted record",
)
class _DeleteKeepsReferences(RecordPolicy):
    def drops_references(self) -> bool:
        return False


@overrides("errors-as-plain-text", "CONV-RESPONSE-CONFORMS", "error bodies are sent as text/plain")
class _ErrorsAsPlainText(ShapingPolicy):
    def error_sent(self, body: dict[str, Any], error: ApiError) -> Response:
        return Response(json.dumps(body), error.status, error.headers, media_type="text/plain")


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


@overrides(
    "person-read-snake-case", "CONV-CAMELCASE-RESPONSES", "getPerson answers snake_case names"
)
class _PersonReadSnakeCase(ShapingPolicy):
    def read(self, op: spec.Operation, body: Any) -> Any:
        body = super().read(op, body)
        if op.operation_id != "getPerson" or not isinstance(body, dict):
            return body
        return {_snake(k): v for k, v in body.items()}


@overrides(
    "reference-checked-across-systems",
    "CONV-REFERENCE-MUST-EXIST",
    "a reference to another system's record is accepted",
)
class _ReferenceCheckedAcrossSystems(RecordPolicy):
    def reference_scope(self, system: str) -> str | None:
        return None


# -- errors ----------------------------------------------------------------------------------


@overrides("error-code-as-text", "ERR-BODY-SHAPE", "error bodies carry code as a string")
class _ErrorCodeAsText(ShapingPolicy):
    def error_body(self, error: ApiError) -> dict[str, Any]:
        body = super().error_body(error)
        body["code"] = str(error.status)
        return body


@overrides(
    "validation-stops-at-first",
    "ERR-422-REASON-FORMAT",
    "a 422 names only the first offending field",
)
class _ValidationStopsAtFirst(ValidationPolicy):
    def reported(self, errors: dict[str, str]) -> dict[str, str]:
        return dict(list(super().reported(errors).items())[:1])


_REFUSED_BODIES = "refused-body-accepted-on-retry"  # memory: digests of bodies refused with 422


@overrides(
    "refused-body-accepted-on-retry",
    "ERR-422-FINAL",
    "a body refused with 422 is accepted unvalidated when it is sent again",
)
class _RefusedBodyAcceptedOnRetry(RequestPolicy):
    def body_refused(self, raw: bytes, body: Any, error: ApiError) -> Any:
        if error.status == 422:
            refused = self.memory(_REFUSED_BODIES)
            digest = hashlib.sha256(raw).hexdigest()
            if digest in refused:
                return body
            refused[digest] = True
        return super().body_refused(raw, body, error)


def _refused_after_all(refusal: ApiError, request: Request, response: Response) -> Response:
    """The refusal of a request that ran all the same; a read's result rides along."""
    body = refusal.body()
    if request.method == "GET" and response.media_type == "application/json":
        result = json.loads(bytes(response.body))
        body = {**result, **body} if isinstance(result, dict) else {**body, "entries": result}
    return JSONResponse(body, status_code=refusal.status, headers=refusal.headers)


@overrides(
    "rate-limited-request-applied",
    "ERR-429-TEMPORARY",
    "a request answered 429 is carried out all the same",
)
class _RateLimitedRequestApplied(RequestPolicy):
    def carries_out_refused(self, error: ApiError, key: ApiKey, op: spec.Operation) -> bool:
        # Only a request its key may make: a 403 would have followed the 429.
        return (error.status == 429 and self.permitted(key, op)) or super().carries_out_refused(
            error, key, op
        )

    def refused_answer(self, refusal: ApiError, request: Request, response: Response) -> Response:
        return _refused_after_all(refusal, request, response)


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


@overrides("envelope-without-count", "PAGE-ENVELOPE-FIELDS", "paged envelopes lack countReturned")
class _EnvelopeWithoutCount(ShapingPolicy):
    def page(self, body: dict[str, Any]) -> dict[str, Any]:
        body = super().page(body)
        body.pop("countReturned", None)
        return body


@overrides("start-index-always-zero", "PAGE-START-INDEX-ECHO", "startIndex is always 0")
class _StartIndexAlwaysZero(ShapingPolicy):
    def page(self, body: dict[str, Any]) -> dict[str, Any]:
        body = super().page(body)
        body["startIndex"] = 0
        return body


@overrides("limit-ignored", "PAGE-COUNT-RETURNED", "a page holds every record from start on")
class _LimitIgnored(RequestPolicy):
    def paging_asked(self, asked: dict[str, Any]) -> dict[str, Any]:
        asked = super().paging_asked(asked)
        if isinstance(asked.get("limit"), int):
            asked["limit"] = 1_000_000
        return asked


@overrides(
    "page-starts-early",
    "PAGE-ITERATION",
    "start is read one-based, so every page after the first repeats a record",
)
class _PageStartsEarly(RequestPolicy):
    def paging_asked(self, asked: dict[str, Any]) -> dict[str, Any]:
        asked = super().paging_asked(asked)
        if isinstance(asked.get("start"), int):
            asked["start"] = max(0, asked["start"] - 1)
        return asked


# -- authentication ------------------------------------------------------------------------------


@overrides("missing-header-403", "AUTH-HEADER-REQUIRED", "a request without a header answers 403")
class _MissingHeader403(RequestPolicy):
    def header(self, request: Request) -> str | None:
        found = super().header(request)
        if found is None:
            raise ApiError(403, "no API key was given")
        return found


@overrides(
    "keyless-checks-header",
    "AUTH-KEYLESS-OPERATIONS",
    "signed links and the virtual reader refuse an unknown Authorization header with 401",
)
class _KeylessChecksHeader(RequestPolicy):
    def keyless_header(self, header: str | None) -> None:
        super().keyless_header(header)
        if header and self.server.key_by_value(header.removeprefix("Bearer ")) is None:
            raise ApiError(401, "unknown API key")


@overrides(
    "path-checked-before-key",
    "AUTH-HEADER-LENGTH",
    "path UUIDs are checked before the Authorization header",
)
class _PathCheckedBeforeKey(RequestPolicy):
    def path_checked_first(self) -> bool:
        return True


@overrides(
    "key-compared-by-prefix",
    "AUTH-INVALID-KEY-401",
    "a value sharing a key's first 32 characters authenticates as that key",
)
class _KeyComparedByPrefix(RequestPolicy):
    def key_for(self, value: str) -> ApiKey | None:
        found = super().key_for(value)
        if found is not None:
            return found
        store = self.server.store
        for system in self.server.systems():
            for record in store.all("apikey", system):
                if record["value"][:32] == value[:32]:
                    return self.server.key_by_value(record["value"])
        return None


@overrides(
    "session-cookie",
    "AUTH-NO-SESSION",
    "answers set a session cookie that authenticates later requests without a header",
)
class _SessionCookie(RequestPolicy):
    def header(self, request: Request) -> str | None:
        found = super().header(request)
        return request.cookies.get("session") if found is None else found

    def answered(self, response: Response, request: Request, key: ApiKey | None) -> Response:
        response = super().answered(response, request, key)
        if key is not None:
            response.set_cookie("session", request.headers.get("authorization", ""))
        return response


@overrides(
    "refused-write-applied",
    "AUTH-403-NOTHING-CHANGED",
    "a write refused with 403 is carried out before the refusal",
)
class _RefusedWriteApplied(RequestPolicy):
    def carries_out_refused(self, error: ApiError, key: ApiKey, op: spec.Operation) -> bool:
        write = error.status == 403 and op.method != "GET"
        return write or super().carries_out_refused(error, key, op)

    def refused_answer(self, refusal: ApiError, request: Request, response: Response) -> Response:
        return _refused_after_all(refusal, request, response)


@overrides(
    "refused-read-leaks-result",
    "AUTH-403-NO-PARTIAL-RESULT",
    "a read refused with 403 carries the result next to the error",
)
class _RefusedReadLeaksResult(RequestPolicy):
    def carries_out_refused(self, error: ApiError, key: ApiKey, op: spec.Operation) -> bool:
        read = error.status == 403 and op.method == "GET"
        return read or super().carries_out_refused(error, key, op)

    def refused_answer(self, refusal: ApiError, request: Request, response: Response) -> Response:
        return _refused_after_all(refusal, request, response)


@overrides(
    "override-list-merged",
    "AUTH-ENCRYPTION-OVERRIDE-LIST",
    "a key's override list is added to the default list instead of replacing it",
)
class _OverrideListMerged(EncryptionPolicy):
    def settings(self, key: ApiKey | None) -> dict[str, Any] | None:
        settings = super().settings(key)
        if not settings or not settings.get("fields"):
            return settings
        default = spec.openapi()["x-default-encrypted-fields"]
        return {**settings, "fields": [*settings["fields"], *default]}


# -- rate limits ---------------------------------------------------------------------------------


_REFUSED_UNTIL = "system-wide-throttle"  # memory: system -> server-clock time it may retry


@overrides(
    "system-wide-throttle",
    "RATE-PER-KEY-BUCKET",
    "once one key is answered 429, every key of its system is refused until it may retry",
)
class _SystemWideThrottle(RequestPolicy):
    def charge_key(self, key: ApiKey, units: int) -> None:
        until, now = self.memory(_REFUSED_UNTIL), self.server.clock.timestamp()
        left = until.get(key.system, 0.0) - now
        if left > 0:
            wait = str(math.ceil(left))
            raise ApiError(429, "rate limit exhausted", headers={"Retry-After": wait})
        try:
            super().charge_key(key, units)
        except ApiError as error:
            if error.status == 429:
                wait_s = float(error.headers.get("Retry-After", "1"))
                until[key.system] = self.server.clock.timestamp() + wait_s
            raise


@overrides("invite-writes-cost-30", "RATE-COST-INVITE-WRITE-50", "invitation writes draw 30 units")
class _InviteWritesCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id in ("createInvite", "updateInvite") else super().cost(op)


@overrides("photo-upload-cost-30", "RATE-COST-PHOTO-UPLOAD-50", "photo uploads draw 30 units")
class _PhotoUploadCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id == "uploadFile" else super().cost(op)


@overrides(
    "photo-downloads-cost-30", "RATE-COST-PHOTO-DOWNLOAD-50", "photo downloads draw 30 units"
)
class _PhotoDownloadsCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        downloads = ("downloadPhoto", "downloadThumbnail")
        return 30 if op.operation_id in downloads else super().cost(op)


@overrides(
    "status-read-cost-30",
    "RATE-COST-STATUS-READ-FILE-DELETE-10",
    "invitation status reads and staged-file deletes draw 30 units",
)
class _StatusReadCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id in ("getInviteStatus", "deleteFile") else super().cost(op)


@overrides(
    "credential-writes-cost-30",
    "RATE-COST-CREDENTIAL-WRITE-ABOVE-READ",
    "credential creates and updates draw 30 units, a read's cost",
)
class _CredentialWritesCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        writes = ("createCredential", "updateCredential")
        return 30 if op.operation_id in writes else super().cost(op)


@overrides(
    "trigger-cost-30", "RATE-COST-TRIGGER-ABOVE-READS", "a trigger draws 30 units, a read's cost"
)
class _TriggerCost30(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id == "triggerAccessControlPoint" else super().cost(op)


@overrides("trigger-cost-50", "RATE-COST-TRIGGER-100", "a trigger draws 50 units")
class _TriggerCost50(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 50 if op.operation_id == "triggerAccessControlPoint" else super().cost(op)


@overrides(
    "retry-after-one-second",
    "RATE-RETRY-AFTER-LOWER-BOUND",
    "429 answers always advise Retry-After: 1",
)
class _RetryAfterOneSecond(RequestPolicy):
    def retry_after(self, wait: int) -> dict[str, str]:
        return super().retry_after(1)


# -- reading request bodies and requests (issue 12) ----------------------------------------------


@overrides(
    "content-type-ignored",
    "CONV-JSON-MEDIA-TYPE",
    "a JSON body is read whatever Content-Type it is declared with",
)
class _ContentTypeIgnored(JsonBodyPolicy):
    def media_type_accepted(self, content_type: str | None) -> bool:
        return True


@overrides(
    "json-read-leniently",
    "CONV-JSON-READABLE",
    "bodies are read as Python's json reads them: UTF-16, NaN and Infinity accepted, nesting and "
    "number length unbounded",
    lasting=True,
)
class _JsonReadLeniently(JsonBodyPolicy):
    def parsed(self, raw: bytes) -> Any:
        # The unbounded reading the body reader exists to prevent.
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise self.syntax_error() from None
        if self.lone_surrogates_refused() and lone_surrogate(body):
            raise ApiError(400, LONE_SURROGATE)
        return body


@overrides(
    "lone-surrogate-stored",
    "CONV-TEXT-FAITHFUL",
    "a string with a lone surrogate escape is accepted and stored (its reads then fail)",
    lasting=True,
)
class _LoneSurrogateStored(JsonBodyPolicy):
    def lone_surrogates_refused(self) -> bool:
        return False


def _truncated_at_nul(body: Any) -> Any:
    """Every string cut at its first NUL, as C-string storage keeps it."""
    if isinstance(body, str):
        return body.split("\x00", 1)[0]
    if isinstance(body, dict):
        return {key: _truncated_at_nul(value) for key, value in body.items()}
    if isinstance(body, list):
        return [_truncated_at_nul(value) for value in body]
    return body


@overrides(
    "nul-truncates-text",
    "CONV-TEXT-NUL",
    "a string holding U+0000 is accepted and stored cut at the NUL, as C-string storage keeps it",
)
class _NulTruncatesText(ValidationPolicy):
    def text_as_stored(self, body: Any) -> Any:
        return _truncated_at_nul(super().text_as_stored(body))

    def nul_refusals(self, body: Any, known: set[str]) -> dict[str, str]:
        return {}


@overrides(
    "huge-start-fails",
    "PAGE-START-BOUNDED",
    "a paging start beyond 32 bits overflows inside the server (an unhandled 500)",
)
class _HugeStartFails(ValidationPolicy):
    def start_out_of_range(self) -> None:
        # As a 32-bit integer conversion would: the catch-all answers the 500.
        raise OverflowError("start does not fit a 32-bit integer")


@overrides(
    "http-layer-plain-text",
    "ERR-BODY-HTTP-LAYER",
    "requests refused by the HTTP layer (over-long header or URL, bytes that are not HTTP) get "
    "uvicorn's text/plain 400",
)
class _HttpLayerPlainText(HttpLayerPolicy):
    def unreadable(self, protocol: ReferenceH11Protocol, msg: str) -> None:
        H11Protocol.send_400_response(protocol, msg)

    def head_too_long(self, request: Request) -> Response:
        return Response("Invalid HTTP request received.", 400, media_type="text/plain")


def listed_wholesale(server: Server, request: Request, path: str, kind: str) -> Response | None:
    """A keyed GET on ``path``, a collection the spec gives no list, answering all its records."""
    if request.method != "GET" or request.url.path != path:
        return None
    key = server.key_by_value(request.headers.get("authorization", "").removeprefix("Bearer "))
    if key is None:
        return None
    records = server.store.all(kind, key.system)
    return JSONResponse([{k: v for k, v in r.items() if not k.startswith("_")} for r in records])
