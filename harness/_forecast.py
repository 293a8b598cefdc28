"""How long a plan takes on the target's buckets, worked out before the first test.

The run is serial: tests start one after another, each spending units from one or more
buckets, and every bucket refills in real time while any test runs. So the forecast replays
the plan in order on a model of each bucket (full at the start, like the client's pacer): a
test takes as long as its requests take, or longer when one of its buckets must first refill
to cover what it spends. Real-time waits a test asks of the target (where no control plane
moves the clock) are added on top.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Bucket:
    capacity: float
    refill_per_minute: float

    @property
    def per_second(self) -> float:
        return self.refill_per_minute / 60


@dataclass(frozen=True)
class Step:
    """One test of the plan, as the cost table measured it."""

    units: Mapping[str, int]
    requests: int = 0
    seconds: float = 0.0  # the wall time it took where no bucket held it back
    target_seconds: float = 0.0  # time it asks to pass on the target (clock moves or sleeps)


@dataclass
class Model:
    """The buckets of a run, as the client's pacer sees them."""

    buckets: Mapping[str, Bucket]
    tokens: dict[str, float] = field(default_factory=dict)
    clock: float = 0.0

    def __post_init__(self) -> None:
        self.tokens = {name: b.capacity for name, b in self.buckets.items()} | self.tokens

    def wait_for(self, units: Mapping[str, int]) -> float:
        """Seconds until every bucket holds what ``units`` asks of it (no refill: never)."""
        wait = 0.0
        for name, spent in units.items():
            bucket = self.buckets.get(name)
            if bucket is None or spent <= 0:
                continue  # a bucket the client does not pace (the drained rate_limit key)
            # A test spends over its whole duration; what it needs beyond a full bucket
            # arrives while it runs, which the pacer also waits for.
            missing = spent - self.tokens[name]
            if missing > 0:
                wait = max(wait, missing / bucket.per_second if bucket.per_second else float("inf"))
        return wait

    def spend(self, step: Step, latency: float, real_time_waits: bool) -> float:
        """Run one step on the model; the seconds it took."""
        busy = max(step.seconds, step.requests * latency)
        if real_time_waits:
            busy += step.target_seconds
        took = max(busy, self.wait_for(step.units))
        # What refilled while the test ran, less what it spent; never above capacity (the
        # pacer's bucket, like the target's, cannot hold more).
        for name, bucket in self.buckets.items():
            left = self.tokens[name] + took * bucket.per_second - step.units.get(name, 0)
            self.tokens[name] = min(bucket.capacity, left)
        self.clock += took
        return took


def forecast(
    steps: Iterable[Step],
    buckets: Mapping[str, Bucket],
    *,
    latency: float = 0.005,
    real_time_waits: bool = False,
) -> float:
    """Seconds the steps take, in order, on ``buckets`` (all full at the start)."""
    model = Model(buckets)
    return sum(model.spend(step, latency, real_time_waits) for step in steps)


def minimum(units: Mapping[str, int], buckets: Mapping[str, Bucket]) -> float:
    """The least time any run spending ``units`` can take: its slowest bucket's refill time."""
    return max(
        (
            max(0.0, spent - buckets[name].capacity) / buckets[name].per_second
            for name, spent in units.items()
            if name in buckets and buckets[name].per_second
        ),
        default=0.0,
    )


# What a test may ask of a target before it gives up and is skipped as not configured, so that
# no run goes on without end: a burst that drains a bucket sends at most this many requests,
# and a wait for time to pass on a target without a control plane lasts at most this long.
MAX_DRAIN_REQUESTS = 1000
MAX_REAL_TIME_WAIT_SECONDS = 900.0


def drain_requests(bucket: Bucket, cost: int, slack_seconds: float) -> int:
    """Requests of ``cost`` units a burst sends at most to empty ``bucket`` from full, with what
    it refills during ``slack_seconds`` and two more to see the refusal."""
    return int((bucket.capacity + slack_seconds * bucket.per_second) // cost) + 2


def undrainable(bucket: Bucket, cost: int, slack_seconds: float) -> str | None:
    """Why a burst of ``cost`` units a request cannot drain ``bucket`` within the bound (None
    when it can): the reason a test skips with, naming the figures."""
    needed = drain_requests(bucket, cost, slack_seconds)
    if needed <= MAX_DRAIN_REQUESTS:
        return None
    return (
        f"not configured: draining the declared bucket of {bucket.capacity:,.0f} units "
        f"(+{bucket.refill_per_minute:,.0f} a minute) at {cost} units a request takes "
        f"{needed:,} requests, over the bound of {MAX_DRAIN_REQUESTS:,}"
    )
