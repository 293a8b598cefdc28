"""An ASGI app served by uvicorn on a free loopback port, in a thread of the test process."""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn


class ThreadedServer:
    """``with ThreadedServer(app) as served:`` answers on ``served.base_url`` (on ``port``, or
    one the system picks); other keyword arguments are uvicorn settings."""

    def __init__(self, app: Any, what: str = "server", port: int = 0, **options: Any) -> None:
        self.what = what
        # ``options`` go to uvicorn.Config as they are (the reference server's own protocol).
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self.base_url = ""

    def __enter__(self) -> ThreadedServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {self.what} did not start")
            time.sleep(0.01)
        port = self._server.servers[0].sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
