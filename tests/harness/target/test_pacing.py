"""The client-side bucket model waits as long as the documented bucket needs (and a tenth of a
second more, so the target's bucket is never a fraction of a unit short)."""

from __future__ import annotations

import pytest

from amws_conformance.harness.target.pacing import RESERVE_SECONDS, Pacer


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_no_wait_while_the_bucket_holds_the_cost() -> None:
    time = FakeTime()
    pacer = Pacer(2000, 800, clock=time.clock, sleep=time.sleep)
    for _ in range(66):
        pacer.acquire(30)
    assert time.slept == []
    assert pacer.spent == 1980


def test_waits_for_the_refill_when_empty() -> None:
    time = FakeTime()
    pacer = Pacer(2000, 800, clock=time.clock, sleep=time.sleep)
    pacer.acquire(2000)
    pacer.acquire(400)
    # 400 units at 800 per minute, and the small reserve against the target's arrival jitter.
    assert time.slept == [pytest.approx(30.0 + RESERVE_SECONDS)]


def test_share_splits_the_bucket_between_workers() -> None:
    time = FakeTime()
    pacer = Pacer(2000, 800, share=2, clock=time.clock, sleep=time.sleep)
    pacer.acquire(1000)
    pacer.acquire(400)
    assert time.slept == [pytest.approx(60.0 + RESERVE_SECONDS)]  # half the refill rate


def test_a_429_empties_the_model() -> None:
    time = FakeTime()
    pacer = Pacer(2000, 800, clock=time.clock, sleep=time.sleep)
    pacer.drained()
    pacer.acquire(80)
    assert time.slept == [pytest.approx(6.0 + RESERVE_SECONDS)]
