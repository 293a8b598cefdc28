"""Faults of what an answer carries and how errors are answered.

Timestamps and names in a record read, the acknowledgement of a write, the error body and its
422 reasons, and a refusal that does not stay one (422 and 451 are final, a 429 changes
nothing). Each fault overrides one decision of the shaping, validation or request policy
(``ShapingPolicy``, ``ValidationPolicy``, ``RequestPolicy``, ``HttpLayerPolicy``; the policy
seam, ``reference_server/_policy.py``), or of the domain's policy where the refusal is the
domain's (``InvitePolicy``); a status answered for another stays declarative (``swap``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from uvicorn.protocols.http.h11_impl import H11Protocol

from amws_conformance import spec
from amws_conformance.reference_server._errors import ApiError
from amws_conformance.reference_server._http import HttpLayerPolicy, ReferenceH11Protocol
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server._shaping import ShapingPolicy
from amws_conformance.reference_server._validation import ValidationPolicy
from amws_conformance.reference_server.domain.invites import (
    DENIED_KIND,
    VISITOR_FIELDS,
    InvitePolicy,
)
from amws_conformance.reference_server.faults._model import overrides, swap

if TYPE_CHECKING:
    from amws_conformance.reference_server._api_key import ApiKey


@overrides("echo-rejected-value", "ERR-NO-ECHO", "422 reasons quote the rejected value")
class _EchoRejectedValue(ValidationPolicy):
    def reasons(self, errors: dict[str, str], body: Any) -> dict[str, str]:
        errors = super().reasons(errors, body)
        if not isinstance(body, dict):
            return errors
        return {k: f"{v} (got {body.get(k)!r})" for k, v in errors.items()}


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


def refused_after_all(refusal: ApiError, request: Request, response: Response) -> Response:
    """The refusal of a request that ran all the same; a read's result rides along.

    Also the answer of the 403 faults that carry a refused request out (``_authentication``).
    """
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
        return refused_after_all(refusal, request, response)


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
