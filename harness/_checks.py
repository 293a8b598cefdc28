"""Global checks applied to every exchange with the target, each naming the rule it enforces."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import httpx

import spec
from spec._schemas import pointer

_ISO = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}")
_UTC_MILLIS = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}(Z|\+00:?00)$"
)


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


def _json(response: httpx.Response) -> Any:
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


def check(op: spec.Operation, request_body: Any, response: httpx.Response) -> list[Violation]:
    """Everything the documents say about any response of this operation."""
    found: list[Violation] = []
    status = response.status_code
    documented, location = _response_spec(op, status)
    if documented is None:
        found.append(
            Violation("CONV-RESPONSE-CONFORMS", f"{op.operation_id} answered undocumented {status}")
        )
        return found
    body = _json(response)
    content = documented.get("content") or {}
    media = response.headers.get("content-type", "").split(";")[0].strip()
    if content and not any(
        media == m.split(";")[0] or (m.endswith("/*") and media.startswith(m[:-1])) for m in content
    ):
        found.append(Violation("CONV-RESPONSE-CONFORMS", f"{status} has content type {media!r}"))
    for name, header in (documented.get("headers") or {}).items():
        header = spec.resolve(header)
        if header.get("required") and name.lower() not in response.headers:
            rule = "RATE-RETRY-AFTER-HEADER" if name == "Retry-After" else "CONV-RESPONSE-CONFORMS"
            found.append(Violation(rule, f"{status} lacks the {name} header"))
        elif name.lower() in response.headers:
            value: Any = response.headers[name]
            schema = spec.resolve(header.get("schema", {}))
            if schema.get("type") == "integer":
                value = int(value) if value.isdigit() else value
            if not spec.validator_for(header.get("schema", {})).is_valid(value):
                found.append(
                    Violation("CONV-RESPONSE-CONFORMS", f"header {name} has a wrong value")
                )
    json_media = next((m for m in content if m.startswith("application/json")), None)
    if json_media is not None and location is not None:
        if body is None:
            found.append(Violation("CONV-RESPONSE-CONFORMS", f"{status} body is not JSON"))
        else:
            validator = spec.validator_at(f"{location}/content/{pointer(json_media)}/schema")
            error = next(iter(validator.iter_errors(body)), None)
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path) or "body"
                found.append(
                    Violation(
                        "CONV-RESPONSE-CONFORMS", f"{status} body at {where}: {error.message[:200]}"
                    )
                )
    if status >= 400 and isinstance(body, dict):
        found += _error_body(op, status, body, request_body, response.text)
    if body is not None:
        for text in _strings(body):
            if _ISO.match(text) and not _UTC_MILLIS.match(text):
                found.append(
                    Violation(
                        "CONV-TIMESTAMP-UTC-MILLIS",
                        f"timestamp {text!r} is not UTC with milliseconds",
                    )
                )
                break
    return found


def _error_body(
    op: spec.Operation, status: int, body: dict[str, Any], request_body: Any, text: str
) -> list[Violation]:
    found: list[Violation] = []
    reader = "Virtual reader" in op.tags
    if "code" in body and str(body["code"]) != str(status) and op.operation_id != "deleteRole":
        found.append(
            Violation("ERR-BODY-SHAPE", f"body code {body['code']!r} differs from HTTP {status}")
        )
    if not reader and "code" in body and not isinstance(body["code"], int):
        found.append(Violation("ERR-BODY-SHAPE", "body code is not an integer"))
    if isinstance(request_body, dict):
        named = body.get("errors") if isinstance(body.get("errors"), dict) else {}
        fields = named or request_body
        for field in fields:
            value = request_body.get(field)
            if isinstance(value, str) and len(value) >= 4 and value in text:
                found.append(Violation("ERR-NO-ECHO", f"the rejected value of {field} is echoed"))
                break
    return found
