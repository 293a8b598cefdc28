"""Response shaping: the documented error bodies and the last touches of every JSON answer.

What a refusal's body holds and how it is sent, and what a successful JSON answer looks like
on its way out, are the decisions of ``ShapingPolicy`` (``server.policy(ShapingPolicy)``),
where the response faults plug in. The declarative status swaps of the catalogue are applied
here too (``swap_status``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from amws_conformance import spec
from amws_conformance.reference_server._errors import ApiError
from amws_conformance.reference_server._policy import Policy

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView


class ShapingPolicy(Policy):
    """The decisions of shaping an answer: one method each, the documented answer."""

    # Refusals.
    def error_body(self, error: ApiError) -> dict[str, Any]:
        """The body of a refusal: ``code`` (the status as a number), ``reason`` and ``message``."""
        return error.body()

    def error_sent(self, body: dict[str, Any], error: ApiError) -> Response:
        """How a refusal's body is sent: as JSON, with the refusal's status and headers."""
        return JSONResponse(body, status_code=error.status, headers=error.headers)

    # Successful JSON answers.
    def page(self, body: dict[str, Any]) -> dict[str, Any]:
        """A paged envelope as answered: as the handler made it."""
        return body

    def read(self, op: spec.Operation, body: Any) -> Any:
        """A record read as answered: as the handler made it."""
        return body

    def timestamps(self, body: Any) -> Any:
        """The timestamps of an answer: as the handler gave them (UTC, with milliseconds)."""
        return body

    def write_answer(self, op: spec.Operation, body: Any) -> Any:
        """The answer of a write: the handler's acknowledgement."""
        return body


# The decisions that reshape a successful answer: a handler's own bytes are sent unless one
# of them is bent, so the correct server never reads back what it has just written.
_ANSWER_DECISIONS = ("page", "read", "timestamps", "write_answer")


def error_response(error: ApiError, request: Request, policy: ShapingPolicy) -> Response:
    """The failure body; the virtual reader's operations carry ``code`` as text (doc3)."""
    op = getattr(request.state, "operation", None)
    if op is not None and "Virtual reader" in op.tags:
        body = error.body()
        body = {"code": str(error.status), "reason": body["reason"], "message": error.detail}
    else:
        body = policy.error_body(error)
    return policy.error_sent(body, error)


_RESHAPING: dict[type[ShapingPolicy], bool] = {}


def _reshapes(bent: type[ShapingPolicy]) -> bool:
    """Whether a policy class bends any decision that reshapes a successful answer."""
    found = _RESHAPING.get(bent)
    if found is None:
        found = any(getattr(bent, d) is not getattr(ShapingPolicy, d) for d in _ANSWER_DECISIONS)
        _RESHAPING[bent] = found
    return found


def shaped(policy: ShapingPolicy, op: spec.Operation, response: Response) -> Response:
    """A handler's JSON answer as the shaping decisions in force have it."""
    if response.media_type != "application/json" or not _reshapes(type(policy)):
        return response
    body = json.loads(bytes(response.body))
    if isinstance(body, dict) and "totalCount" in body:
        body = policy.page(body)
    body = policy.read(op, body)
    body = policy.timestamps(body)
    body = policy.write_answer(op, body)
    headers = {
        k: v
        for k, v in response.headers.items()
        if k.lower() not in ("content-length", "content-type")
    }
    return JSONResponse(body, status_code=response.status_code, headers=headers)


def swap_status(server: ServerView, op: spec.Operation | None, response: Response) -> Response:
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
