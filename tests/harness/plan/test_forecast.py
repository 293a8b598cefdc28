"""The forecast: a plan replayed in order on models of the target's buckets."""

from __future__ import annotations

from typing import Any

import pytest

from amws_conformance.harness.plan.forecast import (
    MAX_DRAIN_REQUESTS,
    MAX_REAL_TIME_WAIT_SECONDS,
    Bucket,
    Drain,
    Model,
    Step,
    forecast,
    minimum,
    on_target,
)
from amws_conformance.harness.plan.plan import CostTable
from amws_conformance.harness.plan.schedule import Schedule, buckets_of
from amws_conformance.harness.target.pacing import Pacer
from amws_conformance.harness.target.profile import validate

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


# -- drains: what a test that empties a bucket on purpose costs on the declared one ---------------
RAISED = Bucket(1_000_000_000, 1_000_000_000)


# A drain as the cost table measured it on the documented bucket: a full-bucket wait of 151 s
# (2000 units at 800 a minute, and a second), then 19 s of its own waits.
def _drain(declared: Bucket, target_seconds: float = 170.0) -> Step:
    units = {"rate_limit": 2255, "full": 255}
    drain = Drain("rate_limit", DOCUMENTED, declared)
    return Step(units, requests=80, seconds=0.25, target_seconds=target_seconds, drain=drain)


def test_a_drain_on_the_bucket_it_was_measured_on_runs_as_measured() -> None:
    step = _drain(DOCUMENTED)
    assert on_target(step, real_time_waits=True) == (step, None)
    assert forecast([step], {}, latency=0.0, real_time_waits=True) == pytest.approx(170.25)


def test_an_undrainable_declared_bucket_costs_nothing() -> None:
    """A 10^9-unit bucket takes millions of requests to drain: the test skips as not configured
    (the suite's bound), so the forecast counts no second for it and says why."""
    step = _drain(RAISED)
    ran, reason = on_target(step, real_time_waits=False)
    assert reason is not None and f"over the bound of {MAX_DRAIN_REQUESTS:,}" in reason
    assert ran.units == {} and ran.requests == 0 and ran.seconds == 0
    assert forecast([step], {"full": DOCUMENTED}, latency=0.01) == 0
    # Nor does it hold back the full key's bucket it would have spent from.
    assert Model({"full": DOCUMENTED}).wait_for(ran.units) == 0


def test_in_real_time_an_undrainable_drain_costs_the_wait_before_it_skips() -> None:
    # The full-bucket wait comes first: a minute and a second on a bucket refilling in one...
    assert forecast([_drain(RAISED)], {}, real_time_waits=True) == pytest.approx(61)
    # ... and none at all where that wait is over the bound (the wait itself skips the test).
    slow = Bucket(1_000_000_000, 1_000_000)
    reason = on_target(_drain(slow), real_time_waits=True)[1]
    assert reason is not None and f"{MAX_REAL_TIME_WAIT_SECONDS:,.0f} s" in reason
    assert forecast([_drain(slow)], {}, real_time_waits=True) == 0
    # A drain that never waited skips at no cost at all.
    assert forecast([_drain(RAISED, target_seconds=0)], {}, real_time_waits=True) == 0


def test_a_drainable_larger_bucket_scales_the_drain() -> None:
    """Twice the documented bucket (and its refill): twice the requests, units and wall time,
    the same full-bucket wait (the same refill time) and the test's own waits."""
    ran, reason = on_target(_drain(Bucket(4000, 1600)), real_time_waits=True)
    assert reason is None
    assert ran.requests == 160 and ran.units == {"rate_limit": 4510, "full": 255}
    assert ran.seconds == pytest.approx(0.5) and ran.target_seconds == pytest.approx(170)
    # Four times the capacity at the documented refill: four times the full-bucket wait.
    ran, _ = on_target(_drain(Bucket(8000, 800)), real_time_waits=True)
    assert ran.target_seconds == pytest.approx(601 + 19)


# -- a plan's forecast on a profile ----------------------------------------------------------------
def _profile(bucket: dict[str, int] | None, control: bool = True) -> Any:
    keys = {n: f"{n[0]}" * 64 for n in ("full", "readonly", "rate_limit")}
    data: dict[str, Any] = {"name": "t", "base_url": "https://example.test", "keys": keys}
    if bucket is not None:
        per_key = {n: bucket for n in keys}
        data["rate_limits"] = {"default": bucket, "per_key": per_key, "unauthenticated": bucket}
    if control:
        data["control"] = {"url": "https://example.test/_reference", "token": "t" * 48}
    return validate(data)


def _schedule(new: tuple[str, ...] = ()) -> Schedule:
    drains = {"units": {"rate_limit": 2000, "readonly": 30}, "requests": 22, "seconds": 0.03}
    table = CostTable(
        measured={},
        setups={},
        tests={
            "s.py::drain": {**drains, "target_seconds": 151.0},
            "s.py::failures": {"units": {"failed_auth": 2000}, "requests": 6, "seconds": 0.01},
            # Fewer failures than the bucket holds less one: no drain, the bucket is paced.
            "s.py::refused": {"units": {"failed_auth": 1600}, "requests": 7, "seconds": 0.01},
            "s.py::reads": {"units": {"full": 300}, "requests": 10, "seconds": 0.5},
        },
    )
    schedule = Schedule.for_run("deep", table)
    schedule.keep([*table.tests, *new])  # a test the table does not hold yet always runs
    return schedule


def test_a_plan_counts_only_what_runs_and_names_what_it_left_out() -> None:
    """On a profile declaring 10^9 units for every key, the drains skip as not configured: the
    forecast is the other tests' time, and its line and the report say what it left out (and
    that it knows nothing of a test the cost table does not hold)."""
    raised = _profile({"capacity": 10**9, "refill_per_minute": 10**9})
    schedule = _schedule(new=("s.py::new",))
    line = schedule.line(raised, 0.001)
    assert schedule.forecast_seconds == pytest.approx(0.51)
    assert set(schedule.skipping) == {"s.py::drain", "s.py::failures"}
    assert line.endswith(
        "; not counted: 2 tests that skip as not configured on its buckets "
        f"(a drain over {MAX_DRAIN_REQUESTS:,} requests), 1 test the cost table does not hold yet"
    )
    described = schedule.describe()
    assert described["forecast_seconds"] == 0.5 and described["forecast_latency"] == 0.001
    assert set(described["forecast_skips"]) == {"s.py::drain", "s.py::failures"}
    # Without a control plane the drain waits its bucket's refill (61 s) before it skips.
    assert schedule.predict(_profile(raised.data["rate_limits"]["default"], False), 0.001) == (
        pytest.approx(61.51)
    )


def test_on_the_documented_buckets_every_test_counts_as_measured() -> None:
    schedule = _schedule()
    line = schedule.line(_profile(None), 0.001)
    assert schedule.skipping == {} and "not counted" not in line
    steps = [Step({})] + [schedule._step(n, set()) for n in schedule.order]
    assert schedule.forecast_seconds == pytest.approx(
        forecast(steps, buckets_of(_profile(None)), latency=0.001)
    )


# -- pools -----------------------------------------------------------------------------------------
def _pooled(full: int, readonly: int = 1) -> Any:
    keys: dict[str, Any] = {
        "full": [f"{i}" * 64 for i in range(full)] if full > 1 else "f" * 64,
        "readonly": [f"r{i}" * 32 for i in range(readonly)] if readonly > 1 else "r" * 64,
    }
    return validate({"name": "t", "base_url": "https://example.test", "keys": keys})


def test_a_pool_is_one_bucket_of_its_keys_summed_and_one_key_is_its_own() -> None:
    assert buckets_of(_pooled(1))["full"] == DOCUMENTED
    assert buckets_of(_pooled(3, 2))["full"] == Bucket(6000, 2400)
    assert buckets_of(_pooled(3, 2))["readonly"] == Bucket(4000, 1600)
    assert buckets_of(_pooled(1), {"full": 4})["full"] == Bucket(8000, 3200)
    # The run's keys per class name the rate_limit key too: it is drained on purpose, never
    # paced, so it is no bucket of the model whatever they say.
    assert "rate_limit" not in buckets_of(_profile(None), {"rate_limit": 1, "full": 1})


def _reads(units: int) -> Schedule:
    table = CostTable(
        measured={},
        setups={},
        tests={f"s.py::t{i}": {"units": {"full": 100}, "requests": 1} for i in range(units // 100)},
    )
    schedule = Schedule.for_run("deep", table)
    schedule.keep(list(table.tests))
    return schedule


def test_a_pool_shortens_the_forecast_by_its_refill() -> None:
    schedule = _reads(20_000)  # 18,000 units beyond one bucket: 22.5 min at 800 a minute
    assert schedule.predict(_pooled(1), 0.0) / 60 == pytest.approx(22.5, rel=0.01)
    # Three keys: 14,000 beyond 6,000 at 2,400 a minute.
    assert schedule.predict(_pooled(3), 0.0) / 60 == pytest.approx(14000 / 2400, rel=0.01)


def test_over_the_max_minutes_the_line_says_which_pool_brings_it_under() -> None:
    schedule = _reads(20_000)
    line = schedule.line(_pooled(1), 0.0, minutes=9)
    # 2 keys: 16,000 / 1,600 = 10 min, not under; 3 keys: 5.8 min.
    assert line.endswith("; under 9 min with 3 keys in keys.full (forecast 5.8 min)"), line
    assert schedule.forecast_seconds == pytest.approx(22.5 * 60, rel=0.01)  # the profile's own
    assert "under" not in schedule.line(_pooled(3), 0.0, minutes=9)


def test_where_keys_do_not_help_the_line_says_so() -> None:
    table = CostTable(
        measured={},
        setups={},
        tests={f"s.py::f{i}": {"units": {"failed_auth": 400}, "requests": 1} for i in range(50)},
    )
    schedule = Schedule.for_run("deep", table)
    schedule.keep(list(table.tests))
    assert "no pool of up to" in schedule.line(_pooled(1), 0.0, minutes=5)


def test_interleaving_moves_tests_of_other_buckets_but_never_one_of_the_drained_key() -> None:
    """A test spending only the readonly bucket may run while the full key waits; one that also
    sends with the rate_limit key stays where it is: that bucket is drained on purpose and never
    modelled, so moved next to a drain it would meet a 429 it did not ask for."""
    table = CostTable(
        measured={},
        setups={},
        tests={
            "a.py::writes": {"units": {"full": 4000}, "requests": 40},
            "b.py::more_writes": {"units": {"full": 4000}, "requests": 40},
            "c.py::reads": {"units": {"readonly": 300}, "requests": 10},
            "c.py::reads_with_the_drained_key": {
                "units": {"readonly": 30, "rate_limit": 30},
                "requests": 2,
            },
        },
    )
    schedule = Schedule.for_run("deep", table)
    names = list(table.tests)
    order = [names[i] for i in schedule.interleave(names, _pooled(1))]
    assert order.index("c.py::reads") < order.index("b.py::more_writes")  # floated forward
    assert order[-1] == "c.py::reads_with_the_drained_key"  # kept after the rest


def test_the_line_and_the_report_say_how_many_mutants_the_plan_catches() -> None:
    table = CostTable(
        measured={"mutants": ["m:1", "m:2", "m:3", "m:4"]},
        tests={
            "s.py::two": {"units": {"full": 30}, "covers": ["fault:m:1", "fault:m:2", "x"]},
            "s.py::again": {"units": {"full": 30}, "covers": ["fault:m:2"]},
            "s.py::hand": {"units": {"full": 30}, "covers": ["fault:hand-written"]},
        },
    )
    schedule = Schedule.for_run("deep", table)
    schedule.keep(list(table.tests))
    assert schedule.line(_profile(None), 0.001).endswith(
        "; contract: catches 2 of 4 spec-derived mutants by the cost table (50.0 %)"
    )
    assert schedule.describe()["mutants"] == {"caught": 2, "of": 4}
    without = Schedule.for_run("deep", CostTable(tests={"s.py::t": {"units": {}}}))
    without.keep(["s.py::t"])
    assert "contract" not in without.line(_profile(None), 0.001)
