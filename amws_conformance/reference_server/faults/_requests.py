"""Faults of reading a request: its JSON body, the validation of its fields, its path and paging.

Each fault overrides one decision of the body reader, the validation, the request pipeline or
the shaping of a paged envelope (``JsonBodyPolicy``, ``ValidationPolicy``, ``RequestPolicy``,
``ShapingPolicy``; the policy seam, ``reference_server/_policy.py``). Two helpers serve the
faults of other modules: ``listed_wholesale`` (a collection the spec gives no list, answered
whole) and ``cut_to_page`` (a list cut by paging parameters it does not take).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from amws_conformance import spec
from amws_conformance.reference_server._errors import ApiError, invalid_fields
from amws_conformance.reference_server._json_body import (
    LONE_SURROGATE,
    JsonBodyPolicy,
    lone_surrogate,
)
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server._shaping import ShapingPolicy
from amws_conformance.reference_server._validation import ValidationPolicy
from amws_conformance.reference_server.faults._model import overrides

if TYPE_CHECKING:
    from amws_conformance.reference_server._server import ServerView


@overrides(
    "offset-ignored",
    "CONV-TIMESTAMP-OFFSET-CONVERTED",
    "a timestamp's offset is dropped, not converted",
)
class _OffsetIgnored(ValidationPolicy):
    def timestamp(self, text: str) -> str | None:
        return super().timestamp(re.sub(r"(Z|[+-][0-9]{2}:?[0-9]{2})$", "", text))


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
    "paging-total-wrong", "PAGE-TOTAL-COUNT", "totalCount reports the page size, not the total"
)
class _PagingTotalWrong(ShapingPolicy):
    def page(self, body: dict[str, Any]) -> dict[str, Any]:
        # Read off the envelope as the handler made it, before any other paging fault.
        body["totalCount"] = body.get("countReturned", 0)
        return super().page(body)


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
    "any-version-served",
    "VER-PATH-V1",
    "paths under /api/ws/ without v1, or with another version, are served as the v1 operations",
)
class _AnyVersionServed(RequestPolicy):
    def routed_path(self, path: str) -> str:
        return re.sub(r"^/api/ws(/v[0-9]+)?/", "/api/ws/v1/", super().routed_path(path))


def listed_wholesale(server: ServerView, request: Request, path: str, kind: str) -> Response | None:
    """A keyed GET on ``path``, a collection the spec gives no list, answering all its records."""
    if request.method != "GET" or request.url.path != path:
        return None
    key = server.key_by_value(request.headers.get("authorization", "").removeprefix("Bearer "))
    if key is None:
        return None
    records = server.store.all(kind, key.system)
    return JSONResponse([{k: v for k, v in r.items() if not k.startswith("_")} for r in records])


T = TypeVar("T")


def cut_to_page(rows: list[T], query: Mapping[str, str]) -> list[T]:
    """The rows cut by start and limit, query parameters these lists do not take."""
    start = int(query.get("start", "0") or 0)
    limit = int(query.get("limit", "0") or 0) or len(rows)
    return rows[start : start + limit]
