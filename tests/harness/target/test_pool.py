"""Key pools: each request goes with the fullest key, a pinned run with the first."""

from __future__ import annotations

from amws_conformance.harness.target.pacing import Pacer
from amws_conformance.harness.target.pool import KeyPool, PoolKey, key_class, label


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _pool(size: int, clock: _Clock, pinned: list[bool] | None = None) -> KeyPool:
    keys = [
        PoolKey(label("full", i, size), f"key{i}", Pacer(2000, 800, clock=clock, sleep=clock.sleep))
        for i in range(size)
    ]
    flag = pinned if pinned is not None else [False]
    return KeyPool(keys, pinned=lambda: flag[0])


def test_requests_go_to_the_fullest_key_so_the_pool_drains_evenly() -> None:
    clock = _Clock()
    pool = _pool(3, clock)
    used = [pool.take(50).label for _ in range(120)]  # 6000 units: all three buckets, no wait
    assert {name: used.count(name) for name in set(used)} == {
        "full[0]": 40,
        "full[1]": 40,
        "full[2]": 40,
    }
    assert clock.now == 0.0  # three buckets held it: nothing waited


def test_one_key_alone_waits_where_a_pool_does_not() -> None:
    clock = _Clock()
    alone = _pool(1, clock)
    for _ in range(60):
        alone.take(50)
    assert clock.now > 60  # 1000 units beyond one bucket at 800 a minute


def test_a_pinned_run_sends_everything_with_the_first_key() -> None:
    clock, pinned = _Clock(), [True]
    pool = _pool(3, clock, pinned)
    assert {pool.take(50).label for _ in range(10)} == {"full[0]"}
    pinned[0] = False
    assert pool.take(50).label == "full[1]"  # the fullest again once unpinned


def test_an_unpaced_request_takes_nothing_from_any_bucket() -> None:
    clock = _Clock()
    pool = _pool(2, clock)
    before = [k.pacer.available() for k in pool.keys if k.pacer]
    pool.take(None)
    assert [k.pacer.available() for k in pool.keys if k.pacer] == before


def test_a_left_out_key_is_never_used_and_the_first_never_left_out() -> None:
    clock = _Clock()
    pool = _pool(3, clock)
    pool.drop(["full[1]", "full[0]"])
    assert [k.label for k in pool.keys] == ["full[0]", "full[2]"]
    assert {pool.take(50).label for _ in range(20)} == {"full[0]", "full[2]"}


def test_labels_name_the_profile_field_not_the_value() -> None:
    assert label("full", 0, 1) == "full"
    assert label("full", 1, 3) == "full[1]"
    assert key_class("full[1]") == "full" and key_class("readonly") == "readonly"
    assert "key1" not in repr(PoolKey("full[1]", "key1"))
