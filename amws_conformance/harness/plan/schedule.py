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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from amws_conformance import fixtures, spec
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
from amws_conformance.harness.plan.plan import CostTable, Plan, build, caught_mutants, units_of
from amws_conformance.harness.plan.spend import FAILED_AUTH
from amws_conformance.harness.target.profile import DOCUMENTED_BUCKET, KEY_NAMES, Profile

if TYPE_CHECKING:
    from amws_conformance.harness._run import Run

TIME_LEFT_OUT = "not run (time)"
MAX_POOL = 12  # the most keys a class the pool advice considers
UNPACED = "rate_limit"  # drained on purpose by its tests, never paced by the client
EMBEDDED_SHAPE = Path(fixtures.__file__).parent / "profiles" / "embedded.yaml"


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


def pool_sizes(profile: Profile, pools: Mapping[str, int] | None = None) -> dict[str, int]:
    """Keys per paced class: as the profile gives them (one, or a pool's), or as ``pools`` says
    where it names the class. The rate_limit class is never paced, whatever ``pools`` says."""
    given = pools or {}
    return {
        n: given.get(n, len(profile.pool(n)))
        for n in KEY_NAMES
        if n != UNPACED and profile.has_key(n)
    }


def buckets_of(profile: Profile, pools: Mapping[str, int] | None = None) -> dict[str, Bucket]:
    """The paced buckets, as the profile says the target enforces them. A class with a pool
    of ``n`` keys is one bucket ``n`` times the key's: the client sends each request with the
    fullest key, so the pool drains and refills as one. ``pools``: keys per class instead of
    the profile's (what another pool would give)."""
    declared = declared_buckets(profile)
    found = {
        n: Bucket(declared[n]["capacity"] * count, declared[n]["refill_per_minute"] * count)
        for n, count in pool_sizes(profile, pools).items()
    }
    failed = declared[FAILED_AUTH]
    found[FAILED_AUTH] = Bucket(failed["capacity"], failed["refill_per_minute"])
    return found


def declared_buckets(profile: Profile) -> dict[str, dict[str, int]]:
    """Per bucket the plan books units to, the size one key of it has as the profile declares
    (the documented bucket unless overridden): what a plan's budget in minutes buys there."""
    found = {n: dict(profile.bucket(n)) for n in KEY_NAMES}
    found[FAILED_AUTH] = dict(profile.unauthenticated_bucket())
    return found


def embedded_shape() -> Profile:
    """The profile the embedded reference server writes, as far as it is known before the
    server starts (it starts on the first test): the shape its demo deployment always has,
    raised quotas on every key but ``rate_limit`` included (fixtures/profiles/embedded.yaml)."""
    data = yaml.safe_load(EMBEDDED_SHAPE.read_text(encoding="utf-8"))
    return Profile(data=data, source="the embedded reference server")


def drained_buckets(profile: Profile) -> dict[str, Bucket]:
    """The buckets tests empty on purpose, as the profile declares them: the ``rate_limit``
    key's, and the one a fresh unknown key's failures pay from (the ``default`` bucket, which
    the failed-authentication test drains)."""
    default = (profile.data.get("rate_limits") or {}).get("default") or DOCUMENTED_BUCKET
    found = {UNPACED: profile.bucket(UNPACED), FAILED_AUTH: default}
    return {n: Bucket(s["capacity"], s["refill_per_minute"]) for n, s in found.items()}


# The cost table is measured on the embedded reference server, where the drained buckets are
# the documented one.
MEASURED_DRAIN = Bucket(DOCUMENTED_BUCKET["capacity"], DOCUMENTED_BUCKET["refill_per_minute"])
# The dearest request of each drained bucket: a burst to the first 429 leaves less than it.
DEAREST = {
    UNPACED: max(int(op.rate_cost or 0) for op in spec.operations()),
    FAILED_AUTH: spec.rate_limit().failed_authentication_cost,
}


@dataclass
class Schedule:
    plan: Plan
    table: CostTable
    order: list[str] = field(default_factory=list)  # the kept tests, in run order
    left_out: int = 0
    forecast_seconds: float | None = None
    # Kept tests the forecast counts for nothing: they skip on the profile's buckets (why).
    skipping: dict[str, str] = field(default_factory=dict)
    latency: float | None = None  # seconds a request, as the forecast took it
    deadline: float | None = None  # time.monotonic() by which the last test must end
    max_minutes: float | None = None  # what the deadline was set from (--max-minutes)
    # Keys per class the run spends from where not the profile's (the preflight left some out).
    pools: dict[str, int] | None = None
    out_of_time: bool = False
    _paid: set[str] = field(default_factory=set)

    @classmethod
    def for_run(
        cls, name: str, table: CostTable | None = None, profile: Profile | None = None
    ) -> Schedule:
        """The plan ``name`` for a target with ``profile`` (its declared buckets set what the
        plan's budget buys; the documented buckets without one)."""
        table = table if table is not None else CostTable.load()
        declared = declared_buckets(profile) if profile is not None else None
        return cls(build(name, table, declared), table)

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
            if UNPACED in entry["units"]:
                # The rate_limit key's bucket is drained on purpose and never modelled: a test
                # moved next to a drain would meet a 429 it did not ask for.
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
    def _step(self, nodeid: str, paid: set[str], profile: Profile | None = None) -> Step:
        """``nodeid`` as the table measured it (the shared set-ups not in ``paid`` added); with
        ``profile``, the bucket it drains on purpose, if any: one it left less than its dearest
        request's units in (what a burst to the first 429 leaves)."""
        entry = self.table.tests.get(nodeid, {})
        units = dict(entry.get("units", {}))
        for setup in entry.get("uses", ()):
            if setup not in paid:
                paid.add(setup)
                for bucket, spent in self.table.setup_units(setup).items():
                    units[bucket] = units.get(bucket, 0) + spent
        drain = None
        if profile is not None:
            declared = drained_buckets(profile)
            drained = [
                b for b in declared if units.get(b, 0) > MEASURED_DRAIN.capacity - DEAREST[b]
            ]
            if drained:
                drain = Drain(drained[0], MEASURED_DRAIN, declared[drained[0]])
        return Step(
            units,
            int(entry.get("requests", 0)),
            float(entry.get("seconds", 0.0)),
            float(entry.get("target_seconds", 0.0)),
            drain,
        )

    def units(self) -> dict[str, int]:
        preflight = self.table.measured.get("preflight", {})
        spent = units_of(self.order, self.table)
        for bucket, units in preflight.get("units", {}).items():
            spent[bucket] = spent.get(bucket, 0) + units
        return spent

    def predict(
        self, profile: Profile, latency: float, pools: Mapping[str, int] | None = None
    ) -> float:
        """Seconds the kept tests take on the profile's buckets, run in order; the tests that
        will skip there as not configured count for nothing (``skipping`` names them).
        ``pools``: keys per class instead of the profile's."""
        paid: set[str] = set()
        preflight = self.table.measured.get("preflight", {})
        steps = [Step(dict(preflight.get("units", {})), int(preflight.get("requests", 0)))]
        tests = [self._step(n, paid, profile) for n in self.order]
        real_time = profile.section("control") is None
        self.skipping = {}
        for nodeid, step in zip(self.order, tests, strict=True):
            reason = on_target(step, real_time)[1]
            if reason is not None:
                self.skipping[nodeid] = reason
        self.latency = latency
        buckets = buckets_of(profile, self.pools if pools is None else pools)
        self.forecast_seconds = forecast(
            steps + tests, buckets, latency=latency, real_time_waits=real_time
        )
        return self.forecast_seconds

    def pools_for(
        self, profile: Profile, latency: float, minutes: float, most: int = MAX_POOL
    ) -> tuple[dict[str, int], float] | None:
        """Keys per class that bring the forecast under ``minutes``, and that forecast in
        seconds; None where no pool of up to ``most`` keys a class does (the run is bound by
        something keys do not share: the failed-authentication bucket, real-time waits).

        Greedy: one more key at a time, to the class whose extra key shortens the forecast
        most; the fewest keys for the time, not a search of every combination."""
        sizes = pool_sizes(profile, self.pools)
        seconds = self.predict(profile, latency, sizes)
        try:
            while seconds > minutes * 60:
                trials = {
                    n: self.predict(profile, latency, {**sizes, n: c + 1})
                    for n, c in sizes.items()
                    if c < most
                }
                best = min(trials, key=lambda n: trials[n], default=None)
                if best is None or trials[best] >= seconds:
                    return None
                sizes[best] += 1
                seconds = trials[best]
            return sizes, seconds
        finally:
            self.predict(profile, latency)  # the forecast of the profile as it is stays kept

    def line(self, profile: Profile, latency: float, minutes: float | None = None) -> str:
        """The one line printed before the first test; with ``minutes`` (``--max-minutes``)
        that the forecast exceeds, the pool of keys per class that would bring it under."""
        seconds = self.predict(profile, latency)
        units = self.units()
        buckets = buckets_of(profile, self.pools)
        shown = ", ".join(f"{b} {u:,}" for b, u in sorted(units.items(), key=lambda i: -i[1]))
        slowest = minimum({b: u for b, u in units.items() if b != UNPACED}, buckets)
        left = []
        if self.skipping:
            left.append(
                f"{_tests(len(self.skipping))} that skip as not configured on its buckets "
                f"({_bounds(self.skipping.values())})"
            )
        unknown = sum(1 for n in self.order if n not in self.table.tests)
        if unknown:
            left.append(f"{_tests(unknown)} the cost table does not hold yet")
        skipped = f"; not counted: {', '.join(left)}" if left else ""
        pools = {n: c for n, c in pool_sizes(profile, self.pools).items() if c > 1}
        keys = " (" + ", ".join(f"{c} {n} keys" for n, c in pools.items()) + ")" if pools else ""
        advice = ""
        minutes = self.max_minutes if minutes is None else minutes
        if minutes is not None and seconds > minutes * 60:
            advice = "; " + self._advice(profile, latency, minutes)
        return (
            f"amws plan {self.plan.name}: {len(self.order)} tests ({self.left_out} left out); "
            f"units {shown or 'none measured'}; forecast {seconds / 60:.1f} min on this "
            f"profile's buckets{keys} (slowest bucket alone {slowest / 60:.1f} min){skipped}"
            f"{advice}{self._contract()}"
        )

    def _contract(self) -> str:
        """The plan's sensitivity to the contract, as a clause of the plan line."""
        caught, mutants = caught_mutants(self.order, self.table)
        if not mutants:
            return ""
        return (
            f"; contract: catches {caught:,} of {mutants:,} spec-derived mutants by the cost "
            f"table ({100 * caught / mutants:.1f} %)"
        )

    def _advice(self, profile: Profile, latency: float, minutes: float) -> str:
        """What pool would bring the forecast under ``minutes``, said in one clause."""
        found = self.pools_for(profile, latency, minutes)
        if found is None:
            return (
                f"no pool of up to {MAX_POOL} keys a class brings it under {minutes:g} min "
                "(the failed-authentication bucket and real-time waits are not a key's)"
            )
        sizes, seconds = found
        now = pool_sizes(profile, self.pools)
        more = ", ".join(f"{c} keys in keys.{n}" for n, c in sizes.items() if c != now.get(n))
        return f"under {minutes:g} min with {more} (forecast {seconds / 60:.1f} min)"

    # -- the deadline -------------------------------------------------------------------
    def fits(self, nodeid: str, run: Run, pending: Mapping[str, int]) -> bool:
        """Whether ``nodeid``, and then the cleanup of everything made so far (``pending``
        units per bucket), would end before the deadline, from the pacers' state now."""
        if self.out_of_time:
            return False
        if self.deadline is None or run.profile is None:
            return True
        model = Model(buckets_of(run.profile, self.pools), tokens=run.tokens_now())
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
        model = Model(buckets_of(run.profile, self.pools), tokens=run.tokens_now())
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
            # Unrounded, with the seconds a request it took: to hold against duration_seconds.
            "forecast_seconds": (
                None if self.forecast_seconds is None else round(self.forecast_seconds, 1)
            ),
            "forecast_latency": self.latency,
            "forecast_skips": dict(sorted(self.skipping.items())),
            "cost_table": self.table.measured.get("commit"),
            # How much of the contract the run's tests can catch breaking (the table's view).
            "mutants": dict(
                zip(("caught", "of"), caught_mutants(self.order, self.table), strict=True)
            ),
        }


def _bounds(reasons: Iterable[str]) -> str:
    """The bounds the skipping tests are over, each named once."""
    found = []
    if any("drain" in r for r in reasons):
        found.append(f"a drain over {MAX_DRAIN_REQUESTS:,} requests")
    if any("wait" in r and "drain" not in r for r in reasons):
        found.append(f"a real-time wait over {MAX_REAL_TIME_WAIT_SECONDS:,.0f} s")
    return " or ".join(found)


def _tests(count: int) -> str:
    return f"{count} test" if count == 1 else f"{count} tests"
