"""How the reference server is served over HTTP: uvicorn, with the documented error body even
for requests that never reach the application.

uvicorn answers a request it cannot parse (bytes that are not HTTP/1.1, a request line or
header block longer than h11's 16 KiB buffer, a bad Content-Length) itself, with a text/plain
400. :func:`uvicorn_options` puts a small subclass of its h11 protocol in its place that sends
the same status with the ``{code, reason}`` body every other error carries (ERR-BODY-HTTP-LAYER).
The protocol is named explicitly so that installing httptools never swaps it out, and WebSocket
upgrades are not offered (the interface has none; an Upgrade header is served as plain HTTP).
"""

from __future__ import annotations

import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from reference_server._errors import ApiError
from reference_server.faults import Faults

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


class ReferenceH11Protocol(H11Protocol):
    """uvicorn's h11 protocol whose own refusals carry the documented error body."""

    faults: Faults = Faults()  # bound per server by :func:`protocol_for`

    def send_400_response(self, msg: str) -> None:
        if self.faults.on("http-layer-plain-text"):
            super().send_400_response(msg)
            return
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
                self.transport.write(self.conn.send(event))
        except h11.LocalProtocolError:
            # An answer to an earlier request of the connection is under way: no second
            # answer can be framed, so the connection just ends (as uvicorn itself would).
            pass
        self.transport.close()


def protocol_for(faults: Faults) -> type[ReferenceH11Protocol]:
    """The protocol class of one server (its fault switches are read at every refusal)."""
    return type("ReferenceH11Protocol", (ReferenceH11Protocol,), {"faults": faults})


def uvicorn_options(faults: Faults) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.Config`` that every way of serving the app shares."""
    return {"http": protocol_for(faults), "ws": "none"}
