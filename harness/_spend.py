"""What a run spends on the target's rate buckets, counted once per answered request.

A request the target answered with 429 charged nothing (the bucket refused it), so it is not
counted; every other answer of a keyed operation costs its ``x-rate-cost``, or the failed-
authentication charge when it was a 401. Units are booked per bucket (the key's name, and
``failed_auth`` for the deliberately bad headers) and per test, so the planner's cost table
can be measured from a run. Records the run's cleanup deletes are booked to the test that
created them: removing a record is part of what creating it costs.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import spec

FAILED_AUTH_COST = spec.rate_limit().failed_authentication_cost
FAILED_AUTH = "failed_auth"  # the bucket name of the deliberately failing headers


def answered_cost(operation: spec.Operation, status: int) -> int:
    """Units the target charged for one answer of a keyed operation."""
    if status == 429:
        return 0
    if status == 401:
        return FAILED_AUTH_COST
    return int(operation.rate_cost or 0)


@dataclass
class Spend:
    """Units and requests of a run, per bucket and per test."""

    units: Counter[str] = field(default_factory=Counter)
    by_test: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    requests: Counter[str] = field(default_factory=Counter)
    unplanned_429: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def book(self, test: str, bucket: str, units: int) -> None:
        with self._lock:
            self.requests[test] += 1
            if units:
                self.units[bucket] += units
                self.by_test[test][bucket] += units

    def refused(self) -> None:
        """A 429 the caller did not provoke: the pacing model was wrong about the bucket."""
        with self._lock:
            self.unplanned_429 += 1

    def export(self) -> dict[str, Any]:
        """A JSON-ready copy (xdist workers send it to the controller)."""
        with self._lock:
            return {
                "units": dict(self.units),
                "by_test": {t: dict(c) for t, c in self.by_test.items()},
                "requests": dict(self.requests),
                "unplanned_429": self.unplanned_429,
            }


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Several :meth:`Spend.export` results as one."""
    units: Counter[str] = Counter()
    requests: Counter[str] = Counter()
    by_test: dict[str, Counter[str]] = defaultdict(Counter)
    unplanned = 0
    for part in parts:
        units.update(part["units"])
        requests.update(part["requests"])
        for test, spent in part["by_test"].items():
            by_test[test].update(spent)
        unplanned += part["unplanned_429"]
    return {
        "units": dict(units),
        "by_test": {t: dict(c) for t, c in by_test.items()},
        "requests": dict(requests),
        "unplanned_429": unplanned,
    }
