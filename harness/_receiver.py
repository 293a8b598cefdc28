"""The webhook receiver a run listens with: the reference receiver at the profile's address.

Tests wait for deliveries with a deadline (``wait_for``) instead of sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn

from reference_server.webhooks.receiver import create_receiver

Delivery = dict[str, Any]


class Receiver:
    """Runs the receiver at ``settings["listen"]`` until :meth:`stop`."""

    def __init__(self, settings: dict[str, Any], now: Callable[[], float] = time.time) -> None:
        app = create_receiver(
            settings.get("hmac_key"),
            settings.get("encryption"),
            settings.get("header"),
            now=now,
        )
        self.inbox = app.state.inbox
        host, _, port = settings["listen"].rpartition(":")
        config = uvicorn.Config(app, host=host, port=int(port), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def start(self, timeout: float = 10.0) -> Receiver:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the webhook receiver could not listen at its address")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def deliveries(self, status: str | None = None) -> list[Delivery]:
        return self.inbox.of_status(status)

    def rejections(self) -> list[dict[str, Any]]:
        with self.inbox.lock:
            return list(self.inbox.rejections)

    def failures(self) -> list[Delivery]:
        """Verified deliveries the receiver was told to answer with 503."""
        with self.inbox.lock:
            return list(self.inbox.failures)

    def wait_for(
        self,
        status: str,
        where: Callable[[Delivery], bool] = lambda _: True,
        timeout: float = 10.0,
    ) -> Delivery:
        """The first delivery of ``status`` that ``where`` accepts, within ``timeout`` seconds.

        A delivery the receiver refused meanwhile (bad signature, stale timestamp …) ends the
        wait at once: the target sent it, and it is not one the documents allow.
        """
        deadline = time.monotonic() + timeout
        refused_before = len(self.rejections())
        while True:
            for delivery in self.deliveries(status):
                if where(delivery):
                    return delivery
            refused = self.rejections()[refused_before:]
            if refused:
                raise AssertionError(f"the receiver refused a delivery: {refused[0]['reason']}")
            if time.monotonic() > deadline:
                seen = [(d["status"], d["path"]) for d in self.deliveries()][-10:]
                raise AssertionError(f"no {status} delivery within {timeout}s; last seen: {seen}")
            time.sleep(0.02)

    def quiet_for(
        self, status: str, where: Callable[[Delivery], bool] = lambda _: True, seconds: float = 1.0
    ) -> bool:
        """True when no matching delivery arrives during ``seconds`` (for "nothing is sent")."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if any(where(d) for d in self.deliveries(status)):
                return False
            time.sleep(0.05)
        return True
