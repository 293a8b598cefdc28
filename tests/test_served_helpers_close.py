"""The helpers that serve apps in threads of the test process close what they open: a transport
left to the garbage collector raises its ResourceWarning in whichever later test collects it,
and a test that records warnings then fails for a leak that is not its own."""

from __future__ import annotations

import gc
import warnings

import httpx

from tests._proxy import Proxy, passed_on
from tests.reference_server.conftest import LiveServer


def _served_through_a_proxy() -> None:
    with (
        LiveServer() as server,
        Proxy(server.base_url, lambda request, answer: passed_on(answer)) as proxy,
        httpx.Client(base_url=proxy.base_url) as client,
    ):
        for _ in range(3):  # kept-alive connections in the proxy's pool to the server
            assert client.get("/api/ws/v1/departments").status_code == 401


def test_a_proxy_leaves_no_transport_behind() -> None:
    gc.collect()  # what earlier tests left is theirs
    # Recorded from the start (the server threads' warnings too), and no collection until the
    # end: one in between would finalise a leak where nothing records it.
    gc.disable()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _served_through_a_proxy()
            gc.collect()  # the proxy and its client are garbage now
    finally:
        gc.enable()
    leaked = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaked == []
