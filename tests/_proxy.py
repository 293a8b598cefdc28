"""A target that differs from the reference server in one detail: a proxy in front of it.

The proxy forwards every request to the reference server and hands each answer to a rewrite
function before it goes back, so a project test can show what the suite says of a target that
deviates from one documented rule (a create answering 200) or only from one undocumented
detail (a 405 without an Allow header).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests._threaded import ThreadedServer

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

        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            yield
            # Its pooled connections live in the proxy's event loop: closed there, before the
            # loop ends, or their transports are finalised later in some other test, which
            # then sees a ResourceWarning (unclosed transport) that is not its own.
            await self._client.aclose()

        methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
        app = Starlette(routes=[Route("/{path:path}", forward, methods=methods)], lifespan=lifespan)
        self._served = ThreadedServer(app, "proxy")

    def __enter__(self) -> Proxy:
        self.base_url = self._served.__enter__().base_url
        return self

    def __exit__(self, *exc: object) -> None:
        self._served.__exit__(*exc)
