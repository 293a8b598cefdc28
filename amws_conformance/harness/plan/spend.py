"""What a run spends on the target's rate buckets, counted once per answered request.

A request the target answered with 429 charged nothing (the bucket refused it), so it is not
counted; every other answer of a keyed operation costs its ``x-rate-cost``, or the failed-
authentication charge when it was a 401. Units are booked per bucket (the key's name, and
``failed_auth`` for the deliberately bad headers) and per test, so the planner's cost table
can be measured from a run. Records the run's cleanup deletes are booked to the test that
created them: removing a record is part of what creating it costs.

What a shared set-up spends (a module- or session-scoped fixture, or a value made once with
:meth:`harness._run.Run.shared`) is booked to the set-up, under a ``setup:`` name, and every test
that uses it says so in ``uses``: a plan that keeps any of those tests pays for it once.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from amws_conformance import spec

FAILED_AUTH_COST = spec.rate_limit().failed_authentication_cost
FAILED_AUTH = "failed_auth"  # the bucket name of the deliberately failing headers
SETUP = "setup:"  # prefix of the names shared set-ups are booked under


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
    # Units per key where a class has a pool (``full[1]``); a lone key is its class.
    by_key: Counter[str] = field(default_factory=Counter)
    by_test: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    requests: Counter[str] = field(default_factory=Counter)
    # Seconds to each answer, per booking (the first 50): the preflight's give the latency.
    elapsed: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    unplanned_429: int = 0
    unplanned_where: Counter[str] = field(default_factory=Counter)
    uses: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    # Seconds a test asked to pass on the target (a clock move, or a sleep where the target
    # has no control plane): a plan's forecast adds them where they are real time.
    target_seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    # The operations each test (or shared set-up) called: the self-check runs a mutant of an
    # operation's answer only under the tests that call it.
    operations: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    current: str = ""  # whom a request is booked to now: a test, a set-up, the preflight
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @contextmanager
    def booked_to(self, name: str) -> Iterator[None]:
        """Book what the block spends to ``name`` instead of the current test."""
        before, self.current = self.current, name
        try:
            yield
        finally:
            self.current = before

    def passed(self, name: str, seconds: float) -> None:
        with self._lock:
            self.target_seconds[name] += seconds

    def called(self, test: str, operation: str) -> None:
        with self._lock:
            self.operations[test].add(operation)

    def used(self, test: str, setup: str) -> None:
        with self._lock:
            self.uses[test].add(setup)

    def book(self, test: str, bucket: str, units: int, elapsed: float = 0.0, key: str = "") -> None:
        """One answered request of ``test``: ``units`` from ``bucket`` (a key class, or the
        failed-authentication bucket), paid by the key labelled ``key`` (default: the class)."""
        with self._lock:
            self.requests[test] += 1
            if len(self.elapsed[test]) < 50:
                self.elapsed[test].append(elapsed)
            if units:
                self.units[bucket] += units
                self.by_key[key or bucket] += units
                self.by_test[test][bucket] += units

    def refused(self, test: str, bucket: str, request: str = "") -> None:
        """A 429 the caller did not provoke: the pacing model was wrong about the bucket.
        ``request``: which one got it (``GET /path``), for the report to say."""
        with self._lock:
            self.unplanned_429 += 1
            self.unplanned_where[f"{test} ({bucket})" + (f": {request}" if request else "")] += 1

    def export(self) -> dict[str, Any]:
        """A JSON-ready copy (xdist workers send it to the controller)."""
        with self._lock:
            return {
                "units": dict(self.units),
                "by_key": dict(self.by_key),
                "by_test": {t: dict(c) for t, c in self.by_test.items()},
                "requests": dict(self.requests),
                "unplanned_429": self.unplanned_429,
                "unplanned_where": dict(self.unplanned_where),
                "uses": {t: sorted(u) for t, u in self.uses.items()},
                "target_seconds": dict(self.target_seconds),
                "operations": {t: sorted(o) for t, o in self.operations.items()},
            }


def merge(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Several :meth:`Spend.export` results as one."""
    units: Counter[str] = Counter()
    by_key: Counter[str] = Counter()
    requests: Counter[str] = Counter()
    by_test: dict[str, Counter[str]] = defaultdict(Counter)
    uses: dict[str, set[str]] = defaultdict(set)
    target_seconds: Counter[str] = Counter()
    operations: dict[str, set[str]] = defaultdict(set)
    where: Counter[str] = Counter()
    unplanned = 0
    for part in parts:
        where.update(part.get("unplanned_where", {}))
        target_seconds.update(part.get("target_seconds", {}))
        for test, setups in part.get("uses", {}).items():
            uses[test].update(setups)
        for test, called in part["operations"].items():
            operations[test].update(called)
        units.update(part["units"])
        by_key.update(part["by_key"])
        requests.update(part["requests"])
        for test, spent in part["by_test"].items():
            by_test[test].update(spent)
        unplanned += part["unplanned_429"]
    return {
        "units": dict(units),
        "by_key": dict(by_key),
        "by_test": {t: dict(c) for t, c in by_test.items()},
        "requests": dict(requests),
        "unplanned_429": unplanned,
        "unplanned_where": dict(where),
        "uses": {t: sorted(u) for t, u in uses.items()},
        "target_seconds": dict(target_seconds),
        "operations": {t: sorted(o) for t, o in operations.items()},
    }
