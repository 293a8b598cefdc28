"""A run's plan at work: which plan, the tests it keeps in order, its forecast, its deadline.

The plugin asks it three things: which collected tests to keep (the rest are *not run
(plan)*), the one line printed before the first test (plan, units per bucket, minutes on the
profile's buckets), and, before each test, whether the test would still end before
``--max-minutes`` (otherwise it is *not run (time)*, and so is every test after it). The
deadline holds for a running test too: once the cleanup needs all the time left, the test's
next request ends it as *not run (time)* and the cleanup starts.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import spec
from harness._forecast import Bucket, Model, Step, forecast, minimum
from harness._plan import CostTable, Plan, build, units_of
from harness._profile import KEY_NAMES
from harness._spend import FAILED_AUTH

if TYPE_CHECKING:
    from harness._profile import Profile
    from harness._run import Run

TIME_LEFT_OUT = "not run (time)"
UNPACED = "rate_limit"  # drained on purpose by its tests, never paced by the client


def default_plan(profile: Profile | None) -> str:
    """``deep`` where the profile raises both the full key's and the failed-authentication
    buckets above the documented one (the embedded reference server: it costs minutes), else
    ``certify`` (silent on rate limits, or the documented bucket somewhere it matters)."""
    if profile is None:
        return "deep"
    documented = spec.rate_limit()

    def raised(size: Mapping[str, int]) -> bool:
        return (
            size["capacity"] > documented.capacity
            and size["refill_per_minute"] > documented.refill_per_minute
        )

    cheap = raised(profile.bucket("full")) and raised(profile.unauthenticated_bucket())
    return "deep" if cheap else "certify"


def buckets_of(profile: Profile) -> dict[str, Bucket]:
    """The paced buckets, as the profile says the target enforces them."""
    found = {n: profile.bucket(n) for n in KEY_NAMES if n != UNPACED and profile.has_key(n)}
    found[FAILED_AUTH] = profile.unauthenticated_bucket()
    return {n: Bucket(s["capacity"], s["refill_per_minute"]) for n, s in found.items()}


@dataclass
class Schedule:
    plan: Plan
    table: CostTable
    order: list[str] = field(default_factory=list)  # the kept tests, in run order
    left_out: int = 0
    forecast_seconds: float | None = None
    deadline: float | None = None  # time.monotonic() by which the last test must end
    out_of_time: bool = False
    _paid: set[str] = field(default_factory=set)

    @classmethod
    def for_run(cls, name: str, table: CostTable | None = None) -> Schedule:
        table = table if table is not None else CostTable.load()
        return cls(build(name, table), table)

    def keep(self, nodeids: Sequence[str]) -> list[bool]:
        """Which of the collected tests the plan runs; remembers their order."""
        kept = [self.plan.selects(n, self.table) for n in nodeids]
        self.order = [n for n, k in zip(nodeids, kept, strict=True) if k]
        self.left_out = len(nodeids) - len(self.order)
        return kept

    def interleave(self, nodeids: Sequence[str], profile: Profile | None) -> list[int]:
        """An order of ``nodeids`` in which buckets drain side by side (indexes into it).

        A serial run waits for one bucket at a time. A test that spends only buckets other
        than the full key's, and shares no module set-up, can run anywhere: it moves to the
        first module boundary where its buckets already hold what it spends, so it runs while
        they refilled during the full key's waits. Modules stay whole (their set-ups are made
        once) and keep their order.
        """
        if profile is None:
            return list(range(len(nodeids)))
        buckets = buckets_of(profile)
        model = Model(buckets)
        paid: set[str] = set()

        def floating(nodeid: str) -> bool:
            entry = self.table.tests.get(nodeid)
            if entry is None or not entry.get("units") or "full" in entry["units"]:
                return False
            module = nodeid.split("::")[0]
            return not any(u.startswith(f"setup:{module}") for u in entry.get("uses", ()))

        free = [i for i, n in enumerate(nodeids) if floating(n)]
        fixed = [i for i, n in enumerate(nodeids) if not floating(n)]
        order: list[int] = []
        module = None
        for index in fixed:
            here = nodeids[index].split("::")[0]
            if here != module:
                module = here
                for waiting in list(free):
                    step = self._step(nodeids[waiting], set(paid))
                    if model.wait_for(step.units) == 0:
                        model.spend(self._step(nodeids[waiting], paid), 0.0, False)
                        order.append(waiting)
                        free.remove(waiting)
            model.spend(self._step(nodeids[index], paid), 0.0, False)
            order.append(index)
        return order + free

    def longest_first(self, nodeids: Sequence[str]) -> list[int]:
        """An order of ``nodeids`` by the table's seconds (indexes into it): the test files that
        took longest first, and in each file its longest tests first. A file's tests stay
        together, so its module set-ups are made once per worker.

        For parallel workers that take one test at a time: the longest real-time waits (the
        webhook retries) start at once, beside the other workers' tests, instead of ending
        the run alone."""

        def seconds(nodeid: str) -> float:
            return float(self.table.tests.get(nodeid, {}).get("seconds", 0.0))

        files: dict[str, float] = {}
        for nodeid in nodeids:
            module = nodeid.split("::")[0]
            files[module] = files.get(module, 0.0) + seconds(nodeid)
        place = {module: index for index, module in enumerate(files)}

        def key(index: int) -> tuple[float, int, float, int]:
            module = nodeids[index].split("::")[0]
            return (-files[module], place[module], -seconds(nodeids[index]), index)

        return sorted(range(len(nodeids)), key=key)

    # -- the forecast -------------------------------------------------------------------
    def _step(self, nodeid: str, paid: set[str]) -> Step:
        entry = self.table.tests.get(nodeid, {})
        units = dict(entry.get("units", {}))
        for setup in entry.get("uses", ()):
            if setup not in paid:
                paid.add(setup)
                for bucket, spent in self.table.setup_units(setup).items():
                    units[bucket] = units.get(bucket, 0) + spent
        return Step(
            units,
            int(entry.get("requests", 0)),
            float(entry.get("seconds", 0.0)),
            float(entry.get("target_seconds", 0.0)),
        )

    def units(self) -> dict[str, int]:
        preflight = self.table.measured.get("preflight", {})
        spent = units_of(self.order, self.table)
        for bucket, units in preflight.get("units", {}).items():
            spent[bucket] = spent.get(bucket, 0) + units
        return spent

    def predict(self, profile: Profile, latency: float) -> float:
        """Seconds the kept tests take on the profile's buckets, run in order."""
        paid: set[str] = set()
        preflight = self.table.measured.get("preflight", {})
        steps = [Step(dict(preflight.get("units", {})), int(preflight.get("requests", 0)))]
        steps += [self._step(n, paid) for n in self.order]
        self.forecast_seconds = forecast(
            steps,
            buckets_of(profile),
            latency=latency,
            real_time_waits=profile.section("control") is None,
        )
        return self.forecast_seconds

    def line(self, profile: Profile, latency: float) -> str:
        """The one line printed before the first test."""
        seconds = self.predict(profile, latency)
        units = self.units()
        buckets = buckets_of(profile)
        shown = ", ".join(f"{b} {u:,}" for b, u in sorted(units.items(), key=lambda i: -i[1]))
        slowest = minimum({b: u for b, u in units.items() if b != UNPACED}, buckets)
        return (
            f"amws plan {self.plan.name}: {len(self.order)} tests ({self.left_out} left out); "
            f"units {shown or 'none measured'}; forecast {seconds / 60:.1f} min on this "
            f"profile's buckets (slowest bucket alone {slowest / 60:.1f} min)"
        )

    # -- the deadline -------------------------------------------------------------------
    def fits(self, nodeid: str, run: Run, pending: Mapping[str, int]) -> bool:
        """Whether ``nodeid``, and then the cleanup of everything made so far (``pending``
        units per bucket), would end before the deadline, from the pacers' state now."""
        if self.out_of_time:
            return False
        if self.deadline is None or run.profile is None:
            return True
        buckets = buckets_of(run.profile)
        model = Model(buckets, tokens=run.tokens_now())
        step = self._step(nodeid, set(self._paid))
        needed = model.spend(step, run.latency, run.profile.section("control") is None)
        needed += model.spend(Step(dict(pending)), run.latency, False)
        if time.monotonic() + needed > self.deadline:
            self.out_of_time = True
            return False
        self._paid |= set(self.table.tests.get(nodeid, {}).get("uses", ()))
        return True

    def cleanup_must_start(self, run: Run, pending: Mapping[str, int]) -> bool:
        """Whether the tests must stop sending now so that the cleanup of ``pending`` units per
        bucket ends before the deadline: the forecast of a test may be wrong (a target slower
        than its preflight said), the deadline never is."""
        if self.deadline is None or run.profile is None:
            return False
        model = Model(buckets_of(run.profile), tokens=run.tokens_now())
        # Twice the measured latency a delete: a slow target's answers vary.
        needed = model.spend(Step(dict(pending)), 2 * run.latency, False)
        if time.monotonic() + needed >= self.deadline:
            self.out_of_time = True
        return self.out_of_time

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.plan.name,
            "tests": len(self.order),
            "left_out": self.left_out,
            "uncovered": list(self.plan.uncovered),
            "forecast_minutes": (
                None if self.forecast_seconds is None else round(self.forecast_seconds / 60, 1)
            ),
            "cost_table": self.table.measured.get("commit"),
        }
