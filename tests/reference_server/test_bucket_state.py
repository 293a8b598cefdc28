"""Rate-bucket state stays bounded (issue 12): a bucket is forgotten once it would be full
again, so unknown key values sent by the thousand leave nothing behind once refilled, while
every documented charge is kept as long as it matters. The clock is the server's injectable
one; nothing here sleeps."""

from __future__ import annotations

import secrets

import httpx

from amws_conformance.reference_server.rate_bucket import DOCUMENTED, RateBuckets
from tests.reference_server.conftest import LiveServer

V1 = "/api/ws/v1"
REFILL_SECONDS = 60 * 400 / DOCUMENTED.refill_per_minute  # one failed authentication's 400


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_15000_unknown_keys_are_forgotten_once_refilled() -> None:
    clock = Clock()
    buckets = RateBuckets(clock, lambda name: DOCUMENTED)
    for number in range(15_000):
        assert buckets.charge(f"anon:key:{number}", 400) is None
    # Each is 400 units short for REFILL_SECONDS; while short, each is remembered.
    assert len(buckets) == 15_000
    assert buckets.remaining("anon:key:14999") == DOCUMENTED.capacity - 400
    clock.now += REFILL_SECONDS + 60
    buckets.charge("anon:key:one-more", 400)
    assert len(buckets) == 1  # only the newest is still short
    assert buckets.remaining("anon:key:0") == DOCUMENTED.capacity  # a forgotten one is full


def test_a_drained_bucket_is_kept_until_it_is_full_again() -> None:
    clock = Clock()
    buckets = RateBuckets(clock, lambda name: DOCUMENTED)
    buckets.SWEEP_ABOVE = 0  # sweep at every charge: the strictest case
    assert buckets.charge("key", DOCUMENTED.capacity) is None
    for number in range(100):
        buckets.charge(f"other-{number}", 0)  # free charges leave nothing behind
    assert len(buckets) == 1
    clock.now += 60  # 800 of 2000 back: still drained, still remembered
    assert buckets.charge("key", 1000) is not None
    assert buckets.remaining("key") == 800
    clock.now += 90  # full again: forgotten at the next sweep, and exactly as full as kept
    buckets.charge("other", 1)
    assert len(buckets) == 1
    assert buckets.remaining("key") == DOCUMENTED.capacity


def test_unknown_keys_through_http_leave_a_bounded_table(faulty) -> None:
    live: LiveServer = faulty()
    buckets = live.server.buckets
    buckets.SWEEP_ABOVE = 50  # this server only: a sweep forced by size comes sooner
    with httpx.Client(base_url=live.base_url, timeout=10) as client:
        for _ in range(300):
            answer = client.get(
                f"{V1}/departments", headers={"Authorization": secrets.token_hex(40)}
            )
            assert answer.status_code == 401
        assert len(buckets) >= 300  # each unknown key has its own drained bucket
        with live.control() as control:
            moved = control.put("/_reference/clock", json={"advance_seconds": REFILL_SECONDS + 60})
            assert moved.status_code == 200, moved.text
        answer = client.get(f"{V1}/departments", headers={"Authorization": secrets.token_hex(40)})
        assert answer.status_code == 401
    assert len(buckets) <= 5  # the newest unknown key and any key still short of capacity
