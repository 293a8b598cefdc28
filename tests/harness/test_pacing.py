"""The client-side bucket model waits exactly as long as the documented bucket needs."""

from __future__ import annotations

from harness._pacing import Pacer


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
    assert time.slept == [30.0]  # 400 units at 800 per minute


def test_share_splits_the_bucket_between_workers() -> None:
    time = FakeTime()
    pacer = Pacer(2000, 800, share=2, clock=time.clock, sleep=time.sleep)
    pacer.acquire(1000)
    pacer.acquire(400)
    assert time.slept == [60.0]  # half the refill rate


def test_a_429_empties_the_model() -> None:
    time = FakeTime()
    pacer = Pacer(2000, 800, clock=time.clock, sleep=time.sleep)
    pacer.drained()
    pacer.acquire(80)
    assert time.slept == [6.0]
