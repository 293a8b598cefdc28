"""A target that differs from the reference server in one detail: a proxy in front of it.

The proxy forwards every request to the reference server and hands each answer to a rewrite
function before it goes back, so a project test can show what the suite says of a target that
deviates from one documented rule (a create answering 200) or only from one undocumented
detail (a 405 without an Allow header).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

# (the request as received, the reference server's answer) -> the answer the caller gets
Rewrite = Callable[[Request, httpx.Response], Response]
_HOP = {"content-length", "transfer-encoding", "connection", "content-encoding"}


def passed_on(answer: httpx.Response, **changes: Any) -> Response:
    """The reference server's answer as a Starlette response, with ``changes`` (status_code,
    content, headers) applied."""
    headers = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP}
    return Response(
        content=changes.get("content", answer.content),
        status_code=changes.get("status_code", answer.status_code),
        headers=changes.get("headers", headers),
    )


class Proxy:
    """``with Proxy(upstream, rewrite) as proxy:`` serves on ``proxy.base_url``."""

    def __init__(self, upstream: str, rewrite: Rewrite) -> None:
        self.upstream, self.rewrite = upstream, rewrite
        self._client = httpx.AsyncClient(base_url=upstream, timeout=30)

        async def forward(request: Request) -> Response:
            # The path and query as sent, byte for byte: generated data goes through unparsed.
            target = httpx.URL(upstream).copy_with(
                raw_path=request.scope["raw_path"]
                + (b"?" + request.scope["query_string"] if request.scope["query_string"] else b"")
            )
            answer = await self._client.send(
                self._client.build_request(
                    request.method,
                    target,
                    headers=[(k, v) for k, v in request.headers.items() if k.lower() != "host"],
                    content=await request.body(),
                )
            )
            return self.rewrite(request, answer)

        methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
        app = Starlette(routes=[Route("/{path:path}", forward, methods=methods)])
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> Proxy:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("proxy did not start")
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
