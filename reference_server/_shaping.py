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

_MILLIS = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2})\.[0-9]{3}Z$")


def error_response(error: ApiError, request: Request) -> Response:
    """The failure body; the virtual reader's operations carry ``code`` as text (doc3)."""
    body = error.body()
    op = getattr(request.state, "operation", None)
    if op is not None and "Virtual reader" in op.tags:
        body = {"code": str(error.status), "reason": body["reason"], "message": error.detail}
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


def apply_faults(server: Server, op: spec.Operation, response: Response) -> Response:
    faults = server.faults
    if response.media_type != "application/json":
        return response
    if not any(
        faults.on(n) for n in ("no-milliseconds", "write-returns-record", "paging-total-wrong")
    ):
        return response
    body = json.loads(bytes(response.body))
    if faults.on("paging-total-wrong") and isinstance(body, dict) and "totalCount" in body:
        body["totalCount"] = body.get("countReturned", 0)
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
