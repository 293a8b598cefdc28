"""How a run answers SIGINT and SIGTERM: the same orderly stop, and a cleanup that finishes.

SIGTERM is what ``timeout``, CI runners and Kubernetes send; it stops the run as Ctrl-C does
(pytest's own interrupt: the tests stop, the session finishes, the cleanup runs). Once the run
is stopping (interrupted, or cleaning up after its last test), a further interrupt does not cut
the cleanup short: records pushed to door hardware go first anyway (see
:mod:`harness.lifecycle.ledger`), and the cleanup goes on. The second further one stops it
once those are gone and leaves the rest in the run's ledger file for ``amws-conformance sweep``.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

HANDLED = (signal.SIGINT, signal.SIGTERM)
STOP_AFTER = 2  # further interrupts after which only hardware deletes are finished


class Interrupts:
    """Installed in the main thread for the length of a run; restores what it replaced."""

    def __init__(self, say: Callable[[str], None] = print) -> None:
        self._say = say
        self._previous: dict[int, Any] = {}
        self._stopping = False  # interrupted once, or cleaning up
        self._deferring = 0  # depth of deferred() blocks the main thread is in
        self._pending: str | None = None  # an interrupt held back until a create is booked
        self.further = 0  # interrupts received while the run was stopping
        # The interrupt that stopped the tests, once raised: code under test may swallow the
        # KeyboardInterrupt (a broad except), so the run checks this before each next test.
        self.interrupted: str | None = None

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # only the main thread may set handlers (an in-process run of a test)
        for signum in HANDLED:
            self._previous[signum] = signal.signal(signum, self._handle)

    def restore(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if not self._stopping:
            if self._deferring:
                self._pending = name  # raised once the create's answer is in the ledger
                return
            # pytest's interrupt: the running test stops, the session finishes, cleanup runs.
            self._stopping = True
            self.interrupted = f"{name} received"
            raise KeyboardInterrupt(self.interrupted)
        self.further += 1
        if self.further < STOP_AFTER:
            self._say(
                f"amws: {name}: the cleanup goes on (credentials and records pushed to door "
                "hardware first); interrupt again to stop once those are deleted"
            )
        else:
            self._say(
                f"amws: {name}: stopping the cleanup once the credentials and hardware records "
                "are deleted; the rest stays in the ledger file for amws-conformance sweep"
            )

    @property
    def hardware_only(self) -> bool:
        """Whether the cleanup should delete only what is pushed to hardware, then stop."""
        return self.further >= STOP_AFTER

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """A create and the ledger's note of it: an interrupt waits for the block to end, so
        the record the target made is never lost between its answer and the ledger. (Only the
        main thread receives signals; other threads' creates need no holding back.)"""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1
        if not self._deferring and self._pending is not None:
            name, self._pending = self._pending, None
            self._stopping = True
            self.interrupted = f"{name} received"
            raise KeyboardInterrupt(self.interrupted)

    @contextmanager
    def cleaning(self) -> Iterator[None]:
        """While the block runs, an interrupt is counted and said, never raised."""
        self._stopping = True
        yield
