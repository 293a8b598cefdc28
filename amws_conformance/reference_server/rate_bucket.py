"""Token buckets: one per API key (and per unauthenticated caller), refilled continuously.

A bucket that has refilled to capacity is the same as one never used (a new bucket starts
full), so its state is dropped once it would be full again. Without that, every unknown key
value sent (each pays from a bucket of its own, RATE-COST-FAILED-AUTH-400) would leave one
entry behind for the life of the server. A sweep runs when the table has doubled since the
last one (so its cost per charge stays constant however many names come and go) and at least
once a minute of the server clock while charges arrive (so a burst of names is forgotten soon
after it has refilled, not only when the next burst comes).

The size a bucket has is given by the server (``RateBuckets``' ``size_of``); the server asks
``bucket_policy.BucketPolicy``, which is where the rate faults plug in.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

from amws_conformance import spec


@dataclass(frozen=True)
class BucketSize:
    capacity: int
    refill_per_minute: int


DOCUMENTED = BucketSize(spec.rate_limit().capacity, spec.rate_limit().refill_per_minute)
# The demo deployment's quota for keys that are not there to test the bucket itself.
RAISED = BucketSize(capacity=1_000_000, refill_per_minute=1_000_000)


@dataclass
class _State:
    tokens: float
    stamp: float
    full_at: float = math.inf  # server-clock time at which the bucket is full again


def _full_at(state: _State, size: BucketSize) -> float:
    missing = size.capacity - state.tokens
    if missing <= 0:
        return state.stamp
    if size.refill_per_minute <= 0:
        return math.inf  # never refills: kept for good (only a fault does this)
    return state.stamp + missing * 60 / size.refill_per_minute


class RateBuckets:
    """Charges costs against named buckets; a bucket starts full."""

    SWEEP_ABOVE = 1024  # below this many buckets no sweep is forced by size
    SWEEP_EVERY_SECONDS = 60.0

    def __init__(self, now: Callable[[], float], size_of: Callable[[str], BucketSize]) -> None:
        self._now = now
        self._size_of = size_of
        self._states: dict[str, _State] = {}
        self._lock = threading.Lock()
        self._sweep_at = self.SWEEP_ABOVE
        self._next_sweep = -math.inf

    def _refilled(self, name: str, *, keep: bool = True) -> tuple[_State, BucketSize]:
        size = self._size_of(name)
        now = self._now()
        state = self._states.get(name)
        if state is None:
            state = _State(tokens=float(size.capacity), stamp=now)
            if keep:
                self._states[name] = state
        elapsed = max(0.0, now - state.stamp)
        state.tokens = min(size.capacity, state.tokens + elapsed * size.refill_per_minute / 60)
        state.stamp = now
        return state, size

    def charge(self, name: str, cost: int) -> int | None:
        """Take ``cost`` units; return ``None`` on success or the whole seconds to wait."""
        with self._lock:
            state, size = self._refilled(name)
            if state.tokens >= cost:
                state.tokens -= cost
                wait = None
            elif size.refill_per_minute <= 0:
                wait = 3600
            else:
                missing = min(cost, size.capacity) - state.tokens
                wait = max(1, math.ceil(missing * 60 / size.refill_per_minute))
            state.full_at = _full_at(state, size)
            if state.full_at <= state.stamp:
                del self._states[name]  # a free request left it full: nothing to remember
            if len(self._states) > self._sweep_at or state.stamp >= self._next_sweep:
                self._sweep(state.stamp)
            return wait

    def _sweep(self, now: float) -> None:
        """Forget every bucket that has refilled to capacity by ``now``."""
        self._states = {n: s for n, s in self._states.items() if s.full_at > now}
        self._sweep_at = max(self.SWEEP_ABOVE, 2 * len(self._states))
        self._next_sweep = now + self.SWEEP_EVERY_SECONDS

    def remaining(self, name: str) -> float:
        with self._lock:
            return self._refilled(name, keep=False)[0].tokens

    def __len__(self) -> int:
        """How many buckets are remembered (the rest are full)."""
        with self._lock:
            return len(self._states)

    def reset(self) -> None:
        with self._lock:
            self._states.clear()
            self._sweep_at = self.SWEEP_ABOVE
            self._next_sweep = -math.inf
