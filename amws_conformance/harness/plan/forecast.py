"""How long a plan takes on the target's buckets, worked out before the first test.

The run is serial: tests start one after another, each spending units from one or more
buckets, and every bucket refills in real time while any test runs. So the forecast replays
the plan in order on a model of each bucket (full at the start, like the client's pacer): a
test takes as long as its requests take, or longer when one of its buckets must first refill
to cover what it spends. Real-time waits a test asks of the target (where no control plane
moves the clock) are added on top.

The cost table measured every test on the reference server's buckets. A test that drains a
bucket on purpose (the rate-limit tests empty the ``rate_limit`` key's bucket, or the one a
failed authentication pays from) spends what the *declared* bucket holds, not the measured one:
:func:`on_target` scales such a test to the declared bucket, and counts nothing for it where it
will skip as not configured (a drain over :data:`MAX_DRAIN_REQUESTS`, a wait over
:data:`MAX_REAL_TIME_WAIT_SECONDS`), so the forecast counts what will run and says what it left
out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class Bucket:
    capacity: float
    refill_per_minute: float

    @property
    def per_second(self) -> float:
        return self.refill_per_minute / 60


@dataclass(frozen=True)
class Drain:
    """A test empties ``bucket`` on purpose: the cost table measured it emptying ``measured``,
    the target holds ``declared``."""

    bucket: str
    measured: Bucket
    declared: Bucket


@dataclass(frozen=True)
class Step:
    """One test of the plan, as the cost table measured it."""

    units: Mapping[str, int]
    requests: int = 0
    seconds: float = 0.0  # the wall time it took where no bucket held it back
    target_seconds: float = 0.0  # time it asks to pass on the target (clock moves or sleeps)
    drain: Drain | None = None  # the bucket it empties on purpose, if any


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
        """Run one step on the model; the seconds it took (nothing where it will skip)."""
        step = on_target(step, real_time_waits)[0]
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


# The refill a burst is sized for beyond the bucket's capacity: the rate-limit suite's
# SLACK_SECONDS (how long one burst may take).
DRAIN_SLACK_SECONDS = 15.0


def _full_again(bucket: Bucket) -> float:
    """The wait of the suite's full-bucket fixture: the whole refill time and a second."""
    if bucket.per_second <= 0:
        return math.inf  # never refills: no wait makes it full
    return math.ceil(bucket.capacity / bucket.per_second) + 1


def on_target(step: Step, real_time_waits: bool) -> tuple[Step, str | None]:
    """``step`` as it runs on the declared buckets, and why it skips there (None: it runs; a
    step that skips spends nothing but a wait made before it skips).

    A step that drains no bucket, or the bucket it was measured on, runs as measured. A drain
    of another bucket sends more (or fewer) requests, spends more units and takes longer in
    proportion to what the declared bucket gives a burst (its capacity and what refills during
    one); it skips as not configured where that is over :data:`MAX_DRAIN_REQUESTS` requests. A
    drain that waits starts with a wait for its bucket to be full (the suite's full-bucket
    fixture): the declared bucket's refill time, which replaces the measured one. In real time,
    a first wait over :data:`MAX_REAL_TIME_WAIT_SECONDS` skips the test before anything else; a
    drain over the bound skips it after that wait.
    """
    drain = step.drain
    if drain is None or drain.declared == drain.measured:
        return step, None
    measured, declared = drain.measured, drain.declared
    waits = step.target_seconds > 0
    first = _full_again(declared) if waits else 0.0
    if real_time_waits and first > MAX_REAL_TIME_WAIT_SECONDS:
        return Step({}), (
            f"a wait of {first:,.0f} s over the bound of {MAX_REAL_TIME_WAIT_SECONDS:,.0f} s"
        )

    def burst(bucket: Bucket) -> float:
        return bucket.capacity + DRAIN_SLACK_SECONDS * bucket.per_second

    grows = burst(declared) / burst(measured)
    requests = math.ceil(step.requests * grows)
    if requests > MAX_DRAIN_REQUESTS:
        return Step({}, target_seconds=first), (
            f"a drain of about {requests:,} requests over the bound of {MAX_DRAIN_REQUESTS:,}"
        )
    units = dict(step.units)
    units[drain.bucket] = math.ceil(units.get(drain.bucket, 0) * grows)
    measured_first = _full_again(measured) if waits else 0.0
    return replace(
        step,
        units=units,
        requests=requests,
        seconds=step.seconds * grows,
        target_seconds=max(0.0, step.target_seconds - measured_first) + first,
        drain=None,
    ), None
