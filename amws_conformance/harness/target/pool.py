"""The keys of one key class: a lone key, or a pool the client spends from side by side.

The documents put the rate allowance on each API key, and a target's administrator can make
several keys with the same permissions. Each key of a pool has its own bucket (its own pacer),
and the client sends each request with the key whose modelled bucket holds most now: a run
drains the pool's buckets side by side instead of waiting on one.

A test that needs one key's identity (it empties a bucket and reads it back, or watches one
key's rate headers) must not be spread: while the run pins the pools (:attr:`KeyPool.pinned`,
set by the plugin from the test's marks), every request of a class goes with the pool's first
key, the one ``Profile.key`` names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from amws_conformance.harness.target.pacing import Pacer


@dataclass(frozen=True)
class PoolKey:
    """One key of a class. ``label`` names it wherever the run reports it (``full`` for a lone
    key, ``full[1]`` for a pool's second: the profile field, never the value)."""

    label: str
    header: str | None = field(repr=False)
    pacer: Pacer | None = None


def label(key_class: str, index: int, size: int) -> str:
    """What the ``index``-th key of a class of ``size`` keys is called in reports."""
    return key_class if size == 1 else f"{key_class}[{index}]"


def key_class(label: str) -> str:
    """The class a key's label belongs to (``full[1]`` -> ``full``)."""
    return label.split("[", 1)[0]


def _held(key: PoolKey) -> float:
    return key.pacer.available() if key.pacer is not None else 0.0


@dataclass
class KeyPool:
    """The keys a client may send a request with; :meth:`take` picks one."""

    keys: list[PoolKey]
    # Whether the run wants one key's identity now (the current test's marks say so).
    pinned: Callable[[], bool] = lambda: False

    @property
    def first(self) -> PoolKey:
        return self.keys[0]

    def take(self, cost: int | None, *, pinned: bool = False) -> PoolKey:
        """The key the next request goes with, ``cost`` units taken from its bucket (None: the
        request is not paced): the first key while pinned, else the one holding most."""
        if len(self.keys) == 1 or pinned or self.pinned():
            key = self.keys[0]
        else:
            key = max(self.keys, key=_held)
        if cost is not None and key.pacer is not None:
            key.pacer.acquire(cost)
        return key

    def drop(self, labels: Sequence[str]) -> None:
        """Stop using the keys named (the preflight saw them behave otherwise than their
        class); the first key is never dropped: a class without it is a profile problem."""
        self.keys[1:] = [k for k in self.keys[1:] if k.label not in labels]
