"""A client-side model of the target's token bucket, so no test meets a 429 it did not ask for."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

RESERVE_SECONDS = 0.1


class Pacer:
    """Waits before a request until the modelled bucket holds its cost.

    The model starts full and refills continuously like the documented bucket. It can only
    under-estimate what the target spent (other clients, other nodes), which the client
    covers by honouring ``Retry-After``.
    """

    def __init__(
        self,
        capacity: int,
        refill_per_minute: int,
        *,
        share: int = 1,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        on_wait: Callable[[float], None] | None = None,
    ) -> None:
        # Parallel workers pacing one key each get an equal share of it.
        self.capacity = capacity / share
        self.rate = refill_per_minute / 60 / share
        self._tokens = self.capacity
        self._clock = clock
        self._sleep = sleep
        self._stamp = clock()
        self._lock = threading.Lock()
        self._on_wait = on_wait  # told before a pause, so a paced run does not look hung
        self.waited = 0.0
        self.spent = 0

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    def acquire(self, cost: int) -> None:
        """Block until ``cost`` units fit, then take them."""
        with self._lock:
            self._refill()
            need = min(cost, self.capacity) - self._tokens
            if need > 0:
                # A little beyond the bare need: the target's bucket refills from when each
                # request reached it, so a request that arrives a few milliseconds sooner than
                # the one before would otherwise find it short of a fraction of a unit.
                pause = need / self.rate + RESERVE_SECONDS
                if self._on_wait is not None:
                    self._on_wait(pause)
                self._sleep(pause)
                self.waited += pause
                self._refill()
            self._tokens -= cost
            self.spent += cost

    def available(self) -> float:
        """Units the model holds now."""
        with self._lock:
            self._refill()
            return self._tokens

    def drained(self) -> None:
        """The target said 429: the bucket is empty whatever the model thought."""
        with self._lock:
            self._tokens = 0.0
            self._stamp = self._clock()
