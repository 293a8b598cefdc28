"""How the reference server is served over HTTP: uvicorn, with the documented error body even
for requests that never reach the application.

uvicorn answers a request it cannot parse (bytes that are not HTTP/1.1, a request line or
header block longer than h11's 16 KiB buffer, a bad Content-Length) itself, with a text/plain
400. :func:`uvicorn_options` puts a small subclass of its h11 protocol in its place that sends
the same status with the ``{code, reason}`` body every other error carries (ERR-BODY-HTTP-LAYER).
The protocol is named explicitly so that installing httptools never swaps it out, and WebSocket
upgrades are not offered (the interface has none; an Upgrade header is served as plain HTTP).

How such a refusal is answered (and the app's own refusal of an over-long head) is decided by
``HttpLayerPolicy``, asked of the server in force at every refusal: the fault of the HTTP layer
plugs in there.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import h11
from starlette.requests import Request
from starlette.responses import Response
from uvicorn.protocols.http.h11_impl import H11Protocol

from amws_conformance.reference_server._errors import ApiError
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._shaping import ShapingPolicy, error_response

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

HTTP_LAYER_REASON = "the request could not be read as HTTP/1.1 within the header size limit"
# h11 refuses a request head that is still incomplete past 16 KiB (uvicorn's default buffer),
# but reads a longer one that arrives whole. The app refuses every head past the same size,
# so the answer never depends on how the bytes were split on the way.
MAX_REQUEST_HEAD = 16 * 1024
HEAD_TOO_LONG = f"the request line and headers exceed {MAX_REQUEST_HEAD} bytes"


def head_size(scope: Any) -> int:
    """Bytes of a request's line and headers, near enough (separators counted)."""
    line = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"") + 16
    return line + sum(len(name) + len(value) + 4 for name, value in scope.get("headers", []))


class HttpLayerPolicy(Policy):
    """How requests refused at the HTTP layer are answered: with the documented body."""

    def unreadable(self, protocol: ReferenceH11Protocol, msg: str) -> None:
        """Answer bytes that are no HTTP/1.1 request (``msg``: uvicorn's reason): documented 400."""
        body = json.dumps(ApiError(400, HTTP_LAYER_REASON).body()).encode("utf-8")
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode("ascii")),
            (b"connection", b"close"),
        ]
        try:
            for event in (
                h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                h11.Data(data=body),
                h11.EndOfMessage(),
            ):
                protocol.transport.write(protocol.conn.send(event))
        except h11.LocalProtocolError:
            # An answer to an earlier request of the connection is under way: no second
            # answer can be framed, so the connection just ends (as uvicorn itself would).
            pass
        protocol.transport.close()

    def head_too_long(self, request: Request) -> Response:
        """The app's answer to a head past the HTTP layer's size: the same documented 400."""
        return error_response(ApiError(400, HEAD_TOO_LONG), request, ShapingPolicy(self.server))


class ReferenceH11Protocol(H11Protocol):
    """uvicorn's h11 protocol whose own refusals carry the documented error body."""

    reference: ServerView  # bound per server by :func:`protocol_for`

    def send_400_response(self, msg: str) -> None:
        self.reference.policy(HttpLayerPolicy).unreadable(self, msg)


def protocol_for(server: ServerView) -> type[ReferenceH11Protocol]:
    """The protocol class of one server (its policy in force is asked at every refusal)."""
    return type("ReferenceH11Protocol", (ReferenceH11Protocol,), {"reference": server})


def uvicorn_options(server: ServerView) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.Config`` that every way of serving the app shares."""
    return {"http": protocol_for(server), "ws": "none"}
