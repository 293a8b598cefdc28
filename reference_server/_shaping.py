"""Response shaping: the documented error bodies, and the response seam of the fault catalogue."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

import spec
from reference_server._errors import ApiError
from reference_server._state import Server
from reference_server.faults import Faults

_MILLIS = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})\.[0-9]{3}Z$")


def error_response(error: ApiError, request: Request, faults: Faults | None = None) -> Response:
    """The failure body; the virtual reader's operations carry ``code`` as text (doc3)."""
    body = error.body()
    op = getattr(request.state, "operation", None)
    if op is not None and "Virtual reader" in op.tags:
        body = {"code": str(error.status), "reason": body["reason"], "message": error.detail}
    elif faults is not None and faults.on("error-code-as-text"):
        body["code"] = str(error.status)
    if faults is not None and faults.on("errors-as-plain-text"):
        text = json.dumps(body)
        return Response(text, error.status, error.headers, media_type="text/plain")
    return JSONResponse(body, status_code=error.status, headers=error.headers)


def refused_after_all(error: ApiError, request: Request, response: Response) -> Response:
    """The refusal of a request that ran anyway (faults only); a read's result rides along."""
    body = error.body()
    if request.method == "GET" and response.media_type == "application/json":
        result = json.loads(bytes(response.body))
        body = {**result, **body} if isinstance(result, dict) else {**body, "entries": result}
    return JSONResponse(body, status_code=error.status, headers=error.headers)


def _strip_millis(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_millis(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_strip_millis(v) for v in node]
    if isinstance(node, str):
        return _MILLIS.sub(r"\1Z", node)
    return node


def swap_status(server: Server, op: spec.Operation | None, response: Response) -> Response:
    """The response seam of declarative status faults (``_swap`` in the catalogue)."""
    if op is None:
        return response
    status = server.faults.swapped_status(op.operation_id, response.status_code)
    if status == response.status_code:
        return response
    body = json.loads(bytes(response.body)) if response.media_type == "application/json" else None
    if isinstance(body, dict) and str(body.get("code")) == str(response.status_code):
        body["code"] = status if isinstance(body["code"], int) else str(status)
    headers = {
        k: v
        for k, v in response.headers.items()
        if k.lower() not in ("content-length", "content-type")
    }
    if body is None:
        return Response(bytes(response.body), status, headers, media_type=response.media_type)
    return JSONResponse(body, status_code=status, headers=headers)


_RESPONSE_FAULTS = (
    "no-milliseconds",
    "write-returns-record",
    "paging-total-wrong",
    "envelope-without-count",
    "start-index-always-zero",
    "people-reads-carry-row-id",
    "person-read-snake-case",
)


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def _paging_faults(faults: Faults, body: dict[str, Any]) -> dict[str, Any]:
    if faults.on("paging-total-wrong"):
        body["totalCount"] = body.get("countReturned", 0)
    if faults.on("envelope-without-count"):
        body.pop("countReturned", None)
    if faults.on("start-index-always-zero"):
        body["startIndex"] = 0
    return body


def apply_faults(server: Server, op: spec.Operation, response: Response) -> Response:
    faults = server.faults
    if response.media_type != "application/json":
        return response
    if not any(faults.on(n) for n in _RESPONSE_FAULTS):
        return response
    body = json.loads(bytes(response.body))
    if isinstance(body, dict) and "totalCount" in body:
        body = _paging_faults(faults, body)
    read = op.operation_id in ("getPerson", "getUser") and isinstance(body, dict)
    if faults.on("people-reads-carry-row-id") and read and "uuid" in body:
        body["id"] = int(body["uuid"][:7], 16)  # a row number of the vendor's own database
    if faults.on("person-read-snake-case") and read and op.operation_id == "getPerson":
        body = {_snake(k): v for k, v in body.items()}
    if faults.on("no-milliseconds"):
        body = _strip_millis(body)
    acknowledged = isinstance(body, dict) and set(body) == {"code", "message", "uuid"}
    if faults.on("write-returns-record") and acknowledged and op.method != "GET":
        record = server.store.get_any(body["uuid"])
        if record is not None:
            body = {k: v for k, v in record.items() if not k.startswith("_")}
    headers = {
        k: v
        for k, v in response.headers.items()
        if k.lower() not in ("content-length", "content-type")
    }
    return JSONResponse(body, status_code=response.status_code, headers=headers)
