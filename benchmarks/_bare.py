"""A bare ASGI app answering every request with fixed bytes, served like the reference server.

``python -m benchmarks._bare --answer METHOD STATUS FILE --content-type TYPE --url-out FILE``
listens on a free loopback port and writes its base URL to ``--url-out`` once listening. Each
``--answer`` says what a request of that method gets: the status and the bytes of the file
(a ``GET`` the reference server's list, a ``POST`` its create acknowledgement). The app reads
a request's body to its end before answering, as any app serving a write must. The socket and
uvicorn settings are the ones of ``amws-reference serve``, so the two differ only in the
application.
"""

from __future__ import annotations

import argparse
import socket
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

Message = MutableMapping[str, Any]
App = Callable[..., Awaitable[None]]


def make_app(answers: Mapping[str, tuple[int, bytes]], content_type: str) -> App:
    """The app answering a request of each method of ``answers`` with its status and bytes."""
    prepared = {}
    for method, (status, body) in answers.items():
        headers = [
            (b"content-type", content_type.encode("latin-1")),
            (b"content-length", str(len(body)).encode()),
        ]
        start = {"type": "http.response.start", "status": status, "headers": headers}
        prepared[method.upper()] = (start, {"type": "http.response.body", "body": body})

    async def app(
        scope: Message,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body", False):
            pass  # the body is read to its end, as the reference server reads it
        start, answer = prepared[scope["method"]]
        await send(start)
        await send(answer)

    return app


def main() -> int:
    import uvicorn

    parser = argparse.ArgumentParser(prog="benchmarks._bare", description=__doc__)
    parser.add_argument(
        "--answer",
        nargs=3,
        action="append",
        required=True,
        metavar=("METHOD", "STATUS", "FILE"),
        help="a request of METHOD is answered STATUS with the bytes of FILE",
    )
    parser.add_argument("--content-type", required=True)
    parser.add_argument("--url-out", required=True, help="write the base URL here once listening")
    args = parser.parse_args()
    answers = {m: (int(s), Path(f).read_bytes()) for m, s, f in args.answer}
    app = make_app(answers, args.content_type)
    # As in reference_server.cli.serve: an explicit IPPROTO_TCP so asyncio turns Nagle off.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    Path(args.url_out).write_text(f"http://127.0.0.1:{sock.getsockname()[1]}", encoding="utf-8")
    # The protocols amws-reference serve pins (reference_server/_http.py: h11, no WebSocket),
    # named here too, so that installing httptools never serves the two differently.
    config = uvicorn.Config(app, log_level="warning", access_log=False, http="h11", ws="none")
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
