"""A live reference server (real uvicorn, real sockets) for the server's own tests."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from amws_conformance import spec
from amws_conformance.reference_server import bootstrap, build_server, create_app
from amws_conformance.reference_server._http import uvicorn_options
from amws_conformance.reference_server._state import Server
from tests._threaded import ThreadedServer


class LiveServer:
    """A reference server running on a free loopback port in a background thread."""

    def __init__(
        self,
        faults: tuple[str, ...] = (),
        *,
        db: str = ":memory:",
        documented_buckets: bool = False,
        throttles: dict[str, spec.Throttle] | None = None,
        pools: dict[str, int] | None = None,
    ) -> None:
        self.server: Server = build_server(
            db, faults, documented_buckets=documented_buckets, throttles=throttles, pools=pools
        )
        self._served = ThreadedServer(
            create_app(self.server), "reference server", **uvicorn_options(self.server)
        )

    def __enter__(self) -> LiveServer:
        self.base_url = self._served.__enter__().base_url
        self.profile: dict[str, Any] = bootstrap.profile(self.server, self.base_url)
        return self

    def __exit__(self, *exc: object) -> None:
        self._served.__exit__(*exc)

    def client(self, key: str | None = "full", *, bearer: bool = False) -> httpx.Client:
        headers = {}
        if key is not None:
            value = self.profile["keys"][key]
            value = value["key"] if isinstance(value, dict) else value
            value = value[0] if isinstance(value, list) else value  # a pool: its first key
            headers["Authorization"] = f"Bearer {value}" if bearer else value
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=10)

    def control(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {self.profile['control']['token']}"},
            timeout=10,
        )


@pytest.fixture(scope="session")
def live() -> Iterator[LiveServer]:
    with LiveServer() as server:
        yield server


@pytest.fixture(scope="session")
def api(live: LiveServer) -> Iterator[httpx.Client]:
    """A client with the ``full`` key."""
    with live.client("full") as client:
        yield client


@pytest.fixture(scope="session")
def control(live: LiveServer) -> Iterator[httpx.Client]:
    with live.control() as client:
        yield client


@pytest.fixture
def unique() -> Callable[[str], str]:
    """Distinct names per test, so tests share one server without colliding."""

    def make(prefix: str = "t") -> str:
        return f"{prefix}-{uuid.uuid4().hex[:10]}"

    return make


@pytest.fixture
def faulty() -> Iterator[Callable[..., LiveServer]]:
    """Start a server with the named faults switched on (stopped after the test)."""
    started: list[LiveServer] = []

    def start(*faults: str) -> LiveServer:
        server = LiveServer(faults).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.__exit__(None, None, None)
