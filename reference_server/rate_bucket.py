"""Token buckets: one per API key (and per unauthenticated caller), refilled continuously."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass

import spec


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


class RateBuckets:
    """Charges costs against named buckets; a bucket starts full."""

    def __init__(self, now: Callable[[], float], size_of: Callable[[str], BucketSize]) -> None:
        self._now = now
        self._size_of = size_of
        self._states: dict[str, _State] = {}
        self._lock = threading.Lock()

    def _refilled(self, name: str) -> tuple[_State, BucketSize]:
        size = self._size_of(name)
        now = self._now()
        state = self._states.get(name)
        if state is None:
            state = self._states[name] = _State(tokens=float(size.capacity), stamp=now)
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
                return None
            if size.refill_per_minute <= 0:
                return 3600
            missing = min(cost, size.capacity) - state.tokens
            return max(1, math.ceil(missing * 60 / size.refill_per_minute))

    def remaining(self, name: str) -> float:
        with self._lock:
            return self._refilled(name)[0].tokens

    def reset(self) -> None:
        with self._lock:
            self._states.clear()
