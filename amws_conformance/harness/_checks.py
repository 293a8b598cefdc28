"""Checks every response must pass, each named for the rule it enforces.

The client applies them to every exchange (``check``); the contract suite registers the same
functions as schemathesis checks.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

import httpx

from amws_conformance import spec
from amws_conformance.spec._schemas import pointer

_ISO = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}")
_UTC_MILLIS = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}(Z|\+00:?00)$"
)
_ENVELOPE = {"entries", "startIndex", "countReturned", "totalCount"}
_ACK = ("code", "message", "uuid")


def normative(rule_id: str) -> bool:
    """Whether a breach of this rule may fail a test (assumed rules are informative)."""
    return rule_id in _normative_ids()


@functools.cache
def _normative_ids() -> frozenset[str]:
    return frozenset(rule.id for rule in spec.rules() if rule.normative)


class RuleViolation(AssertionError):
    """A check of a named rule failed: the test that met it failed *on that rule*. A test
    tagged with other rules, which never reached its own assertions, is blocked by it."""

    def __init__(self, message: str, rules: list[str]) -> None:
        super().__init__(message)
        self.rules = rules


def violated_rules(error: BaseException) -> list[str]:
    """The rules a failure says were broken: those of every :class:`RuleViolation` in it (an
    exception group holds several); empty for a plain assertion."""
    if isinstance(error, RuleViolation):
        return sorted(set(error.rules))
    if isinstance(error, BaseExceptionGroup):
        return sorted({r for inner in error.exceptions for r in violated_rules(inner)})
    return []


@dataclass(frozen=True)
class Violation:
    rule: str
    message: str

    def __str__(self) -> str:
        return f"[{self.rule}] {self.message}"


def _response_spec(op: spec.Operation, status: int) -> tuple[dict[str, Any] | None, str | None]:
    """The response object for a status and the JSON pointer of its location."""
    responses = op.raw["responses"]
    key = str(status) if str(status) in responses else f"{str(status)[0]}XX"
    if key not in responses:
        return None, None
    node = responses[key]
    if "$ref" in node:
        return spec.resolve(node), node["$ref"].removeprefix("#/")
    return node, pointer("paths", op.path, op.method.lower(), "responses", key)


def documents_status(op: spec.Operation, status: int) -> bool:
    """Whether the spec lists ``status`` for ``op``: an answer with any other status breaks
    CONV-RESPONSE-CONFORMS, whichever test sees it."""
    return _response_spec(op, status)[0] is not None


def body_of(response: httpx.Response) -> Any:
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def _strings(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def _media_matches(media: str, documented: str) -> bool:
    documented = documented.split(";")[0].strip()
    if documented == "*/*":
        return True
    if documented.endswith("/*"):
        return media.startswith(documented[:-1])
    return media == documented


# -- one function per rule -------------------------------------------------------------
def response_conforms(op: spec.Operation, response: httpx.Response) -> list[Violation]:
    """CONV-RESPONSE-CONFORMS (and RATE-RETRY-AFTER-HEADER for 429)."""
    found: list[Violation] = []
    status = response.status_code
    documented, location = _response_spec(op, status)
    if documented is None:
        return [
            Violation("CONV-RESPONSE-CONFORMS", f"{op.operation_id} answered undocumented {status}")
        ]
    content = documented.get("content") or {}
    media = response.headers.get("content-type", "").split(";")[0].strip()
    if content and not any(_media_matches(media, m) for m in content):
        found.append(Violation("CONV-RESPONSE-CONFORMS", f"{status} has content type {media!r}"))
    for name, header in (documented.get("headers") or {}).items():
        header = spec.resolve(header)
        if header.get("required") and name.lower() not in response.headers:
            rule = "RATE-RETRY-AFTER-HEADER" if name == "Retry-After" else "CONV-RESPONSE-CONFORMS"
            found.append(Violation(rule, f"{status} lacks the {name} header"))
        elif name.lower() in response.headers:
            value: Any = response.headers[name]
            if spec.resolve(header.get("schema", {})).get("type") == "integer" and value.isdigit():
                value = int(value)
            if not spec.validator_for(header.get("schema", {})).is_valid(value):
                found.append(
                    Violation("CONV-RESPONSE-CONFORMS", f"header {name} has a wrong value")
                )
    json_media = next((m for m in content if m.startswith("application/json")), None)
    if json_media is not None and location is not None:
        body = body_of(response)
        if body is None:
            found.append(Violation("CONV-RESPONSE-CONFORMS", f"{status} body is not JSON"))
        else:
            validator = spec.validator_at(f"{location}/content/{pointer(json_media)}/schema")
            error = next(iter(validator.iter_errors(body)), None)
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path) or "body"
                message = f"{status} body at {where}: {error.message[:200]}"
                found.append(Violation("CONV-RESPONSE-CONFORMS", message))
    return found


def error_body_shape(op: spec.Operation, response: httpx.Response) -> list[Violation]:
    """ERR-BODY-SHAPE: a failure carries an integer ``code`` (text on the virtual reader, whose
    shape READER-RESPONSE-FORMAT checks); ERR-BODY-CODE-IS-STATUS and READER-CODE-IS-STATUS-TEXT
    (assumed): that code repeats the HTTP status."""
    body = body_of(response)
    status = response.status_code
    if status < 400 or not isinstance(body, dict) or "code" not in body:
        return []
    reader = "Virtual reader" in op.tags
    if not reader and not isinstance(body["code"], int):
        return [Violation("ERR-BODY-SHAPE", "body code is not an integer")]
    if str(body["code"]) != str(status):
        rule = "READER-CODE-IS-STATUS-TEXT" if reader else "ERR-BODY-CODE-IS-STATUS"
        return [Violation(rule, f"body code {body['code']!r} differs from HTTP {status}")]
    return []


def no_echo(request_body: Any, response: httpx.Response) -> list[Violation]:
    """ERR-NO-ECHO: a rejected value never comes back in the failure."""
    body = body_of(response)
    if (
        response.status_code < 400
        or not isinstance(request_body, dict)
        or not isinstance(body, dict)
    ):
        return []
    named = body.get("errors") if isinstance(body.get("errors"), dict) else {}
    for field in named or request_body:
        value = request_body.get(field)
        if isinstance(value, str) and len(value) >= 4 and value in response.text:
            return [Violation("ERR-NO-ECHO", f"the rejected value of {field} is echoed")]
    return []


def utc_timestamps(response: httpx.Response) -> list[Violation]:
    """CONV-TIMESTAMP-UTC-MILLIS: every instant in a response is UTC with milliseconds."""
    for text in _strings(body_of(response)):
        if _ISO.match(text) and not _UTC_MILLIS.match(text):
            return [
                Violation(
                    "CONV-TIMESTAMP-UTC-MILLIS", f"timestamp {text!r} is not UTC with milliseconds"
                )
            ]
    return []


@functools.cache
def _success_operations() -> frozenset[str]:
    """The writes whose acknowledgement says ``success`` (the reference-data and people
    resources the rule lists)."""
    rule = next(r for r in spec.rules() if r.id == "CONV-WRITE-ACKNOWLEDGEMENT")
    return frozenset(rule.operations)


def acknowledgement(
    op: spec.Operation, request_body: Any, response: httpx.Response
) -> list[Violation]:
    """CONV-WRITE-ACKNOWLEDGEMENT: a successful write answers ``{code: integer, message: string,
    uuid}`` and none of the record's fields (a field the request sent, other than those three);
    ``message`` is ``success`` for the reference-data and people resources. Extra keys that are
    not the record's are not a breach: the documents only say the record is not returned.
    CONV-ACK-CODE-IS-STATUS (assumed): ``code`` repeats the HTTP status."""
    status = response.status_code
    documented, _ = _response_spec(op, status)
    schema = ((documented or {}).get("content") or {}).get("application/json", {}).get("schema", {})
    if status >= 300 or schema.get("$ref") != "#/components/schemas/Acknowledgement":
        return []
    rule = "CONV-WRITE-ACKNOWLEDGEMENT"
    body = body_of(response)
    if not isinstance(body, dict):
        return [Violation(rule, f"{op.operation_id} answered {body!r:.120}, not an object")]
    code, message, uuid = body.get("code"), body.get("message"), body.get("uuid")
    found = []
    if not isinstance(code, int) or isinstance(code, bool):
        found.append(Violation(rule, f"{op.operation_id}: code {code!r:.40} is not an integer"))
    if not isinstance(message, str):
        found.append(Violation(rule, f"{op.operation_id}: message {message!r:.40} is not text"))
    elif op.operation_id in _success_operations() and message != "success":
        found.append(Violation(rule, f"{op.operation_id}: message {message!r:.40}, not 'success'"))
    if not isinstance(uuid, str) or not spec.uuid_pattern().fullmatch(uuid):
        found.append(Violation(rule, f"{op.operation_id}: uuid {uuid!r:.60} is not a UUID"))
    elif op.path_parameters and op.method in ("PUT", "DELETE"):
        # An update or delete acknowledges the record it addressed: the path's last identifier.
        addressed = spec.uuid_pattern().findall(response.request.url.path)
        if addressed and uuid.lower() != addressed[-1].lower():
            found.append(
                Violation(rule, f"{op.operation_id}: uuid {uuid} is not the record addressed")
            )
    sent = set(request_body) if isinstance(request_body, dict) else set()
    echoed = sorted((sent & set(body)) - set(_ACK))
    if echoed:
        found.append(Violation(rule, f"{op.operation_id} answered the record: {echoed}"))
    if isinstance(code, int) and code != status:
        found.append(
            Violation("CONV-ACK-CODE-IS-STATUS", f"{op.operation_id}: code {code} on HTTP {status}")
        )
    return found


def paging(
    op: spec.Operation, query: dict[str, Any], request_body: Any, response: httpx.Response
) -> list[Violation]:
    """PAGE-START-INDEX-ECHO, PAGE-COUNT-RETURNED, PAGE-TOTAL-COUNT on every paged envelope."""
    body = body_of(response)
    if response.status_code != 200 or not isinstance(body, dict) or not set(body) >= _ENVELOPE:
        return []
    asked = {**(request_body if isinstance(request_body, dict) else {}), **(query or {})}
    found: list[Violation] = []
    entries, start, count, total = (
        body["entries"],
        body["startIndex"],
        body["countReturned"],
        body["totalCount"],
    )
    if isinstance(entries, list) and count != len(entries):
        found.append(
            Violation("PAGE-COUNT-RETURNED", f"countReturned {count} but {len(entries)} entries")
        )
    requested = asked.get("start")
    if requested is not None and str(requested).isdigit() and int(requested) != start:
        found.append(Violation("PAGE-START-INDEX-ECHO", f"asked start {requested}, got {start}"))
    limit = asked.get("limit")
    if limit is not None and str(limit).isdigit() and count > int(limit):
        found.append(Violation("PAGE-COUNT-RETURNED", f"{count} entries exceed limit {limit}"))
    numbers = all(isinstance(n, int) for n in (total, start, count))
    if numbers and count and start + count > total:
        message = f"startIndex {start} + {count} exceeds totalCount {total}"
        found.append(Violation("PAGE-TOTAL-COUNT", message))
    return found


def check(
    op: spec.Operation,
    request_body: Any,
    response: httpx.Response,
    query: dict[str, Any] | None = None,
) -> list[Violation]:
    """Every global check for one exchange."""
    found = response_conforms(op, response)
    if any(v.message.startswith(f"{op.operation_id} answered undocumented") for v in found):
        return found
    return (
        found
        + error_body_shape(op, response)
        + no_echo(request_body, response)
        + utc_timestamps(response)
        + acknowledgement(op, request_body, response)
        + paging(op, query or {}, request_body, response)
    )
