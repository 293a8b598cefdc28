"""Run plans: which tests a run starts, chosen by rule coverage and the measured cost table.

- ``deep`` runs everything.
- ``certify`` is a weighted set cover: the cheapest selection, by the cost table's units, that
  decides every certifying normative rule and every coverage element ``plans.yaml`` asks for
  (a sampled permission matrix). A rule only one test decides forces that test in. The
  contract and stateful suites certify nothing on their own: they join only for a rule no
  scenario test decides.
- ``gate`` is the same cover over the short, fixed list of rules in ``plans.yaml``.

A test's cost is its own units plus those of the shared set-ups it uses (module fixtures,
values made once per run) that no test chosen before it paid for. A plan selects tests; it
never changes one. What it leaves out is reported as *not run (plan)*.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from amws_conformance import spec

PLANS = ("gate", "certify", "deep")
HERE = Path(__file__).parents[1]  # the harness folder: plans.yaml, costs.json
COST_TABLE = HERE / "costs.json"
PLAN_FILE = HERE / "plans.yaml"


@dataclass(frozen=True)
class Candidate:
    """A test as the planner sees it: what it decides, what it costs, what it shares."""

    nodeid: str
    decides: frozenset[str]
    units: Mapping[str, int]
    requests: int = 0
    uses: frozenset[str] = frozenset()


@dataclass
class CostTable:
    """Per test and per shared set-up: units per bucket and requests, as measured by
    ``amws-conformance costs`` against the reference server; per test also what it decides
    (its normative rules when its outcome may decide them, and its coverage elements)."""

    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    setups: dict[str, dict[str, Any]] = field(default_factory=dict)
    measured: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path = COST_TABLE) -> CostTable:
        if not path.exists():
            return cls()
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(tests=data["tests"], setups=data["setups"], measured=data["measured"])

    def dump(self, path: Path = COST_TABLE) -> None:
        """Write atomically: a half-written table is never read."""
        document = {
            "measured": self.measured,
            "setups": dict(sorted(self.setups.items())),
            "tests": dict(sorted(self.tests.items())),
        }
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)

    def candidate(self, nodeid: str) -> Candidate:
        entry = self.tests[nodeid]
        return Candidate(
            nodeid,
            frozenset(entry.get("decides", ())) | frozenset(entry.get("covers", ())),
            dict(entry.get("units", {})),
            int(entry.get("requests", 0)),
            frozenset(entry.get("uses", ())),
        )

    def setup_units(self, name: str) -> dict[str, int]:
        return dict(self.setups.get(name, {}).get("units", {}))


def without_fault(nodeid: str, fault: str) -> str:
    """A fault matrix's test id back to the plain one (the cost table's): its fault parameter
    may stand alone, first or last among the test's own parameters."""
    return (
        nodeid.replace(f"[fault={fault}]", "")
        .replace(f"[fault={fault}-", "[")
        .replace(f"-fault={fault}]", "]")
    )


def stale(
    table: CostTable,
    measured: Mapping[str, Mapping[str, Any]],
    *,
    tolerance: float = 0.25,
    slack: int = 200,
) -> list[str]:
    """Why the table no longer describes the suites, one line per test (empty: it does).

    Meant for a deep run. A test that ran but is missing from the table, a table entry of a
    test that no longer exists, or a bucket whose units moved by more than ``tolerance`` of
    the table's figure and more than ``slack`` units (so cheap tests do not flap on one more
    read) makes it stale.
    """
    problems = []
    for nodeid, run in measured.items():
        if run.get("outcome") == "not-run":
            continue  # a plan or the clock left it out: nothing was measured
        if nodeid not in table.tests:
            problems.append(f"{nodeid}: not in the cost table")
            continue
        known, now = dict(table.tests[nodeid].get("units", {})), dict(run.get("units", {}))
        for bucket in sorted(set(known) | set(now)):
            before, after = known.get(bucket, 0), now.get(bucket, 0)
            if abs(after - before) > max(slack, tolerance * before):
                problems.append(f"{nodeid}: {bucket} {before} units in the table, {after} measured")
    problems += [f"{n}: in the cost table, no such test" for n in table.tests if n not in measured]
    return problems


def plan_rules() -> dict[str, Any]:
    """``plans.yaml``: the gate's rules and the coverage elements each plan adds."""
    loaded: dict[str, Any] = yaml.safe_load(PLAN_FILE.read_text(encoding="utf-8"))
    return loaded


def total(units: Mapping[str, int]) -> int:
    return sum(units.values())


def _price(candidate: Candidate, paid: set[str], table: CostTable) -> float:
    shared = sum(total(table.setup_units(s)) for s in candidate.uses - paid)
    # Among tests of equal units, fewer requests win (they take less time).
    return total(candidate.units) + shared + candidate.requests * 1e-3


def cover(universe: Iterable[str], pool: Iterable[Candidate], table: CostTable) -> list[Candidate]:
    """Weighted greedy set cover, then a pass dropping tests the others already cover.

    Forced first: an element only one candidate decides. Elements no candidate decides stay
    uncovered (the caller reports them). Ties go to the smaller node id, so a table always
    gives the same plan.
    """
    wanted = set(universe)
    pool = [c for c in pool if c.decides & wanted]
    deciders: dict[str, list[Candidate]] = {}
    for candidate in pool:
        for element in candidate.decides & wanted:
            deciders.setdefault(element, []).append(candidate)
    chosen = {only[0].nodeid: only[0] for only in deciders.values() if len(only) == 1}
    paid = {s for c in chosen.values() for s in c.uses}
    left = set(deciders) - {e for c in chosen.values() for e in c.decides}
    while left:
        best = min(
            (c for c in pool if c.nodeid not in chosen and c.decides & left),
            key=lambda c: (_price(c, paid, table) / len(c.decides & left), c.nodeid),
        )
        chosen[best.nodeid] = best
        paid |= best.uses
        left -= best.decides
    for candidate in sorted(chosen.values(), key=lambda c: -total(c.units)):
        others = [c for c in chosen.values() if c is not candidate]
        if candidate.decides & wanted <= {e for c in others for e in c.decides}:
            del chosen[candidate.nodeid]
    return sorted(chosen.values(), key=lambda c: c.nodeid)


@dataclass(frozen=True)
class Plan:
    """A plan's selection: the tests it keeps, and the elements it could not cover."""

    name: str
    keeps: frozenset[str]
    uncovered: tuple[str, ...] = ()
    everything: bool = False

    def selects(self, nodeid: str, table: CostTable) -> bool:
        # A test the table does not know yet is new: it runs (the staleness test flags it).
        return self.everything or nodeid in self.keeps or nodeid not in table.tests


def certifying_rules(table: CostTable) -> set[str]:
    """Normative rules some test of the table may decide (the others are informative)."""
    normative = {rule.id for rule in spec.rules() if rule.normative}
    return {r for entry in table.tests.values() for r in entry.get("decides", ())} & normative


def build(
    name: str, table: CostTable, declared: Mapping[str, Mapping[str, int]] | None = None
) -> Plan:
    """The plan ``name`` over the tests of ``table``. ``declared``: per bucket, the size one key
    of it has on the target (``capacity``, ``refill_per_minute``; the documented bucket where
    it names none), which sets what a plan's budget in minutes buys there."""
    if name == "deep":
        return Plan(name, frozenset(table.tests), everything=True)
    rules = plan_rules()[name]
    covers = tuple(rules.get("covers", ()))
    elements = {
        e
        for entry in table.tests.values()
        for e in entry.get("covers", ())
        if e.startswith(covers) and covers
    }
    decided = certifying_rules(table) if name == "certify" else set(rules["rules"])
    # A plan keeps a test that kills each fault of the rules it proves (where the table knows
    # the kill matrix), so the plan alone still proves its tests can fail: certify proves every
    # normative rule it runs a test of (those it reports informatively too), the gate its own.
    proves = decided | _normative() if name == "certify" else decided
    breaks = table.measured.get("faults", {})
    mutants = {f"fault:{m}" for m in table.measured.get("mutants", ())}
    # The spec-derived mutants are covered within the plan's budget (below), not at any price:
    # first those of the rules the plan proves, then, with what the budget has left, the others
    # (a constraint an assumed rule of ours encodes is still one the contract states).
    every_mutant = {e for entry in table.tests.values() for e in entry.get("covers", ())} & mutants
    elements = {e for e in elements if not e.startswith("fault:") or breaks.get(e[6:]) in proves}
    wanted_mutants = elements & mutants
    elements -= mutants
    universe = decided | elements
    candidates = [table.candidate(n) for n in sorted(table.tests)]
    deep_only = tuple(rules.get("deep_only", ())) or ("\0",)
    ran = {n for n, e in table.tests.items() if not e.get("skipped")}
    # Widening pools: scenario tests that ran where the table was measured; then those that
    # skipped there (they may run elsewhere); then the deep-only suites, for what is left.
    pools = [
        [c for c in candidates if c.nodeid in ran and not c.nodeid.startswith(deep_only)],
        [c for c in candidates if not c.nodeid.startswith(deep_only)],
        candidates,
    ]
    chosen: list[Candidate] = []
    for pool in pools:
        left = universe - {e for c in chosen for e in c.decides}
        if left:
            chosen += cover(left, pool, table)
    if "mutant_budget_minutes" in rules:
        budget = budgets(float(rules["mutant_budget_minutes"]), declared)
        chosen += _within_budget(chosen, pools[1], table, wanted_mutants, budget)
        others = every_mutant - wanted_mutants
        chosen += _within_budget(chosen, pools[1], table, others, budget)
    if "fault_share" in rules:
        chosen += _proving(chosen, pools[0], table, float(rules["fault_share"]))
    covered = {e for c in chosen for e in c.decides}
    return Plan(name, frozenset(c.nodeid for c in chosen), tuple(sorted(universe - covered)), False)


def bucket_budget(minutes: float, size: Mapping[str, int] | None = None) -> int:
    """Units one key's bucket (``size``; the documented one by default) pays for in
    ``minutes`` of real time, from full."""
    documented = spec.rate_limit()
    capacity = size["capacity"] if size else documented.capacity
    refill = size["refill_per_minute"] if size else documented.refill_per_minute
    return int(capacity + refill * minutes)


def budgets(
    minutes: float, declared: Mapping[str, Mapping[str, int]] | None = None
) -> defaultdict[str, int]:
    """Per bucket, the units one key of it pays for in ``minutes`` on the target (``declared``),
    the documented bucket's for a bucket it does not name. One key's, never a pool's: a pool
    makes a plan faster, not larger, so a plan's tests are the same for one key or several
    of documented size. Where the target declares a raised quota, the budget grows with it."""
    documented = bucket_budget(minutes)
    found: defaultdict[str, int] = defaultdict(lambda: documented)
    for bucket, size in (declared or {}).items():
        found[bucket] = bucket_budget(minutes, size)
    return found


def _within_budget(
    chosen: list[Candidate],
    pool: list[Candidate],
    table: CostTable,
    wanted: set[str],
    budget: Mapping[str, int],
) -> list[Candidate]:
    """Killers of the spec-derived mutants, the most mutants per unit first, added while every
    bucket the plan spends from stays within its ``budget`` units (what one key of the bucket
    pays for in the plan's time): the plan as sensitive to the contract as its time allows."""
    spent = units_of([c.nodeid for c in chosen], table)
    paid = {s for c in chosen for s in c.uses}
    taken = {c.nodeid for c in chosen}
    covered = {e for c in chosen for e in c.decides} & wanted
    added: list[Candidate] = []
    while True:
        options = [c for c in pool if c.nodeid not in taken and (c.decides & wanted) - covered]
        affordable = []
        for option in options:
            extra = dict(option.units)
            for setup in option.uses - paid:
                for bucket, units in table.setup_units(setup).items():
                    extra[bucket] = extra.get(bucket, 0) + units
            if all(spent.get(b, 0) + u <= budget[b] for b, u in extra.items()):
                affordable.append((option, extra))
        if not affordable:
            return added
        best, extra = min(
            affordable,
            key=lambda pair: (
                _price(pair[0], paid, table) / len((pair[0].decides & wanted) - covered),
                pair[0].nodeid,
            ),
        )
        added.append(best)
        taken.add(best.nodeid)
        paid |= best.uses
        covered |= best.decides & wanted
        for bucket, units in extra.items():
            spent[bucket] = spent.get(bucket, 0) + units


def _normative() -> set[str]:
    return {rule.id for rule in spec.rules() if rule.normative}


def _proving(
    chosen: list[Candidate], pool: list[Candidate], table: CostTable, share: float
) -> list[Candidate]:
    """The cheapest killers of other faults of the catalogue, added until the plan's tests
    kill ``share`` of it (per the table's kill matrix): the faults of assumed rules, whose
    tests a plan keeps only for what they prove."""

    mutants = {f"fault:{m}" for m in table.measured.get("mutants", ())}

    def faults(candidate: Candidate) -> set[str]:
        return {e for e in candidate.decides if e.startswith("fault:")} - mutants

    # The share is of the hand-written catalogue; the mutants have a budget of their own.
    wanted = math.ceil(share * (len(table.measured.get("faults", {})) - len(mutants)))
    proven = {f for c in chosen for f in faults(c)}
    paid = {s for c in chosen for s in c.uses}
    taken = {c.nodeid for c in chosen}
    added: list[Candidate] = []
    while len(proven) < wanted:
        options = [c for c in pool if c.nodeid not in taken and faults(c) - proven]
        if not options:
            break
        best = min(
            options,
            key=lambda c: (_price(c, paid, table) / len(faults(c) - proven), c.nodeid),
        )
        added.append(best)
        taken.add(best.nodeid)
        proven |= faults(best)
        paid |= best.uses
    return added


def units_of(nodeids: Iterable[str], table: CostTable) -> dict[str, int]:
    """Units per bucket of running ``nodeids``: their own, and each shared set-up once."""
    spent: dict[str, int] = {}
    paid: set[str] = set()
    for nodeid in nodeids:
        entry = table.tests.get(nodeid, {})
        parts = [entry.get("units", {})]
        for setup in entry.get("uses", ()):
            if setup not in paid:
                paid.add(setup)
                parts.append(table.setup_units(setup))
        for part in parts:
            for bucket, units in part.items():
                spent[bucket] = spent.get(bucket, 0) + units
    return spent


def caught_mutants(nodeids: Iterable[str], table: CostTable) -> tuple[int, int]:
    """How many of the spec-derived mutants the tests ``nodeids`` kill by the table's kill
    matrices, and how many there are: how much of the contract a plan can catch breaking.

    A lower bound: the table records each mutant's killers among the tests generated for its
    operation and, for a status no operation documents, every test calling it; a plan may
    kill more (``amws-conformance selfcheck --plan NAME`` measures it)."""
    mutants = {f"fault:{m}" for m in table.measured.get("mutants", ())}
    caught = {
        element
        for nodeid in nodeids
        for element in table.tests.get(nodeid, {}).get("covers", ())
        if element in mutants
    }
    return len(caught), len(mutants)
