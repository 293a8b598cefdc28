"""The forecast: a plan replayed in order on models of the target's buckets."""

from __future__ import annotations

import pytest

from harness._forecast import Bucket, Step, forecast, minimum
from harness._pacing import Pacer

DOCUMENTED = Bucket(2000, 800)


def test_within_the_bucket_only_the_requests_take_time() -> None:
    steps = [Step({"full": 30}, requests=1) for _ in range(60)]  # 1800 units
    assert forecast(steps, {"full": DOCUMENTED}, latency=0.01) == pytest.approx(0.6)


def test_beyond_the_bucket_the_refill_sets_the_pace() -> None:
    steps = [Step({"full": 50}, requests=1) for _ in range(100)]  # 5000 units
    seconds = forecast(steps, {"full": DOCUMENTED}, latency=0.0)
    # 3000 units beyond capacity at 800 a minute: 225 s, the bucket's own minimum.
    assert seconds == pytest.approx(225, rel=0.01)
    assert minimum({"full": 5000}, {"full": DOCUMENTED}) == pytest.approx(225)


def test_buckets_refill_while_other_buckets_are_spent() -> None:
    """Interleaved tests of two buckets: the run is bound by the slower one, not the sum."""
    steps = []
    for _ in range(20):
        steps.append(Step({"full": 200}, requests=4))
        steps.append(Step({"failed_auth": 100}, requests=1))
    buckets = {"full": DOCUMENTED, "failed_auth": DOCUMENTED}
    seconds = forecast(steps, buckets, latency=0.0)
    slowest = minimum({"full": 4000, "failed_auth": 2000}, buckets)
    assert seconds == pytest.approx(slowest, rel=0.05)


def test_an_unpaced_bucket_never_holds_the_run_back() -> None:
    steps = [Step({"rate_limit": 4000}, requests=140, seconds=1.0)]
    assert forecast(steps, {"full": DOCUMENTED}) == pytest.approx(1.0)


def test_real_time_waits_count_only_where_no_control_plane_moves_the_clock() -> None:
    steps = [Step({}, target_seconds=150.0)]
    assert forecast(steps, {}, real_time_waits=True) == pytest.approx(150)
    assert forecast(steps, {}, real_time_waits=False) == pytest.approx(0)


def test_the_forecast_agrees_with_the_pacer() -> None:
    """The pacer and the forecast model the same bucket: the seconds the pacer sleeps for a
    sequence of costs are the seconds the forecast gives it."""
    now = [0.0]
    pacer = Pacer(2000, 800, clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    costs = [50, 30, 75, 400, 100] * 40
    for cost in costs:
        pacer.acquire(cost)
    steps = [Step({"full": c}) for c in costs]
    assert forecast(steps, {"full": DOCUMENTED}, latency=0.0) == pytest.approx(now[0], rel=0.02)
