"""``amws-selfcheck`` (also ``amws-conformance selfcheck``): proof that the suite notices each
fault of the catalogue.

For every fault of the reference server, the tests tagged with the fault's rule run against an
embedded server started with that fault; the fault is *killed* when at least one of them fails.
A baseline run without faults comes first: a rule whose tests fail on the correct server
proves nothing, so the self-check stops there.

This package is the only one that imports both sides: the reference server's fault catalogue
and the harness. Its runs load its own pytest plugin (``-p selfcheck.plugin``, see
:mod:`selfcheck.plugin`) and hand it each fault with its rule (``--fault-matrix NAME=RULE``),
so the harness and the suites never import the server, nor know of faults.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from amws_conformance import spec
from amws_conformance.harness._checks import documents_status
from amws_conformance.harness.evidence.verdicts import EXIT_CONFORMANT, EXIT_INCOMPLETE
from amws_conformance.harness.plan.plan import PLANS, CostTable, build
from amws_conformance.harness.plan.rulemap import collect
from amws_conformance.harness.plan.schedule import declared_buckets, embedded_shape
from amws_conformance.reference_server.faults import CATALOGUE, Fault

ROOT = Path(__file__).resolve().parent.parent
# The scenario suites. The contract suite is left out: its run time follows the example budget,
# and the business-rule checks it carries are the very functions the harness client applies to
# every exchange of these suites.
GLOBAL_RULE = "CONV-RESPONSE-CONFORMS"
DEFAULT_SUITES = ("suites/rules", "suites/webhooks", "suites/hardware", "suites/stateful")


@dataclass
class Outcome:
    name: str
    rule: str
    killed: bool
    tests: int
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    mutant: bool = False  # spec-derived, not hand-written
    ran: list[str] = field(default_factory=list)  # the tests that ran under it


# Per fault: how many tests ran under it, which, and the ids of those that failed.
Matrix = dict[str, dict[str, Any]]


def _pytest(*paths: str) -> list[str]:
    """A pytest of the self-check's own over ``paths``: quiet, and no cache left in the tree."""
    return [sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider"]


def _run_matrix(paths: Sequence[str], faults: Sequence[Fault], extra: Sequence[str] = ()) -> Matrix:
    """One pytest over ``paths`` running each tagged test under each of ``faults``."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "matrix.json"
        command = [
            *_pytest(*paths),
            # Pass/fail is all the self-check reads; plain asserts skip the costly rewriting.
            "--assert=plain",
            "-o",
            "addopts=",
            "--no-preflight",
            # Plugins the scenario suites never use, left out to start faster.
            "-p",
            "no:schemathesis",
            "-p",
            "no:xdist",
            "-p",
            "no:xdist.looponfail",
            # The fault matrix is the self-check's own plugin; the harness knows no faults.
            "-p",
            "amws_conformance.selfcheck.plugin",
            "--fault-matrix",
            ",".join(
                f"{f.name}={f.rule}" + (f"+{also}" if (also := named_also(f)) else "")
                for f in faults
            ),
            "--fault-matrix-out",
            str(out),
            *extra,
        ]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        if not out.exists():
            raise RuntimeError(
                "the fault matrix did not run: " + done.stdout[-1500:] + done.stderr[-1500:]
            )
        matrix: Matrix = json.loads(out.read_text(encoding="utf-8"))
        return matrix


def named_also(fault: Fault) -> str | None:
    """The global check's rule that also names ``fault`` wherever its operation is called: a
    spec-derived mutant answering, on one operation, a status the spec does not list for it
    breaks CONV-RESPONSE-CONFORMS in every test that meets that answer (None otherwise)."""
    # Spec-derived mutants only: a hand-written fault proves its own rule's tests can fail.
    if not fault.constraint or fault.swap is None or len(fault.operations) != 1:
        return None
    op = spec.operation(fault.operations[0])
    return None if documents_status(op, fault.swap[1]) else GLOBAL_RULE


def _calling(table: CostTable, faults: Sequence[Fault]) -> set[str]:
    """The tests (by the cost table) that call an operation one of ``faults`` changes for the
    global check to name."""
    ops = {f.operations[0] for f in faults if named_also(f)}
    return {n for n, e in table.tests.items() if ops & set(e.get("operations", ()))}


def _files_of(rule_map: dict[str, list[str]], rules: set[str]) -> list[str]:
    return sorted(
        {nodeid.split("::")[0] for nodeid, tagged in rule_map.items() if rules & set(tagged)}
    )


def _chunks(faults: list[Fault], rule_map: dict[str, list[str]], count: int) -> list[list[Fault]]:
    """Split the faults into ``count`` groups of about equal test counts; a fault that leaves
    unreadable records (``lasting``) gets a group, and so a server, of its own."""
    alone = [[f] for f in faults if f.lasting]
    faults = [f for f in faults if not f.lasting]
    weight = {f.name: sum(f.rule in tagged for tagged in rule_map.values()) for f in faults}
    groups: list[list[Fault]] = [[] for _ in range(max(1, count))]
    loads = [0] * len(groups)
    for fault in sorted(faults, key=lambda f: -weight[f.name]):
        lightest = loads.index(min(loads))
        groups[lightest].append(fault)
        loads[lightest] += weight[fault.name]
    return [g for g in groups if g] + alone


def run_matrix(
    faults: list[Fault],
    rule_map: dict[str, list[str]],
    workers: int,
    plan: str = "deep",
    every_test: bool = False,
) -> list[Outcome]:
    extra = ["--plan", plan] + (["--fault-matrix-every-test"] if every_test else [])

    table = CostTable.load() if any(named_also(f) for f in faults) else None
    known = {n.split("::")[0] for n in rule_map}

    def one(group: list[Fault]) -> Matrix:
        files = set(_files_of(rule_map, {f.rule for f in group}))
        if table is not None:  # and those whose tests meet a mutant the global check names
            files |= {n.split("::")[0] for n in _calling(table, group)} & known
        return _run_matrix(sorted(files), group, extra) if files else {}

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        results: Matrix = {}
        for part in pool.map(one, _chunks(faults, rule_map, workers)):
            results.update(part)
    seconds = round(time.monotonic() - start, 1)
    outcomes = []
    for fault in faults:
        got = results.get(fault.name, {"tests": 0, "failed": [], "ran": []})
        killed = bool(got["failed"])
        outcomes.append(
            Outcome(
                fault.name,
                fault.rule,
                killed,
                got["tests"],
                got["failed"],
                seconds,
                mutant=bool(fault.constraint),
                ran=got.get("ran", []),
            )
        )
    return outcomes


def _summary(outcomes: list[Outcome]) -> dict[str, object]:
    normative = sorted(r.id for r in spec.rules() if r.normative)
    proven = sorted({o.rule for o in outcomes if o.killed} & set(normative))
    return {
        "faults": [
            {
                "name": o.name,
                "rule": o.rule,
                "killed": o.killed,
                "tests": o.tests,
                "failed_tests": o.failed,
                # The tests that ran under it: where it survived, none of them kills it here
                # (``amws-conformance costs --refuted`` takes that back from the cost table).
                "ran_tests": o.ran,
                "mutant": o.mutant,
            }
            for o in outcomes
        ],
        "normative_rules": len(normative),
        "proven_rules": len(proven),
        "unproven_rules": [r for r in normative if r not in proven],
        # Rules no server fault can break (they bind clients or receivers), with the reason.
        "no_fault": {r.id: r.no_fault for r in spec.rules() if r.normative and r.no_fault},
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="amws-selfcheck",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--output", help="write the kill matrix as JSON here")
    parser.add_argument("--faults", help="comma-separated subset of the catalogue")
    parser.add_argument(
        "--kind",
        choices=("all", "hand-written", "mutants", "global-check"),
        default="all",
        help="the hand-written faults, the spec-derived mutants, or both (default); "
        "global-check: the mutants a global check names wherever their operation is called "
        "(with --every-test, each one's killers among all the tests calling it, for the cost "
        "table)",
    )
    parser.add_argument(
        "--mutant-sample",
        type=int,
        default=1,
        metavar="N",
        help="of the spec-derived mutants, only every N-th in catalogue order (a fixed sample "
        "across operations and kinds of constraint; default 1: all)",
    )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="RULE",
        help="only the faults of this rule (repeatable; with --faults, both must hold)",
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--suites",
        nargs="+",
        default=[p for p in DEFAULT_SUITES if (ROOT / p).exists()],
        help="test folders to draw each rule's tests from",
    )
    parser.add_argument(
        "--skip-baseline",
        action="store_true",
        help="trust that the suites already passed on the correct server (CI runs them first)",
    )
    parser.add_argument(
        "--plan",
        choices=PLANS,
        default="deep",
        help="draw each rule's tests only from this run plan's selection (default: all)",
    )
    parser.add_argument(
        "--every-test",
        action="store_true",
        help="run every test of a fault's rule under it, not only until one fails: the "
        "whole kill matrix, for the cost table (each fault's cheapest killer)",
    )
    args = parser.parse_args(argv)
    names = args.faults.split(",") if args.faults else list(CATALOGUE)
    unknown = [n for n in names if n not in CATALOGUE]
    if unknown:
        parser.error(f"unknown fault(s): {', '.join(unknown)}")
    faults = [CATALOGUE[n] for n in names]
    if args.kind == "global-check":
        faults = [f for f in faults if named_also(f)]
    elif args.kind != "all":
        faults = [f for f in faults if bool(f.constraint) == (args.kind == "mutants")]
    if args.mutant_sample > 1:
        derived = [f for f in faults if f.constraint]
        kept = {f.name for f in derived[:: args.mutant_sample]}
        faults = [f for f in faults if not f.constraint or f.name in kept]
    if args.rule:
        faults = [f for f in faults if f.rule in args.rule]
        if not faults:
            among = "named by --faults" if args.faults else "of the catalogue"
            parser.error(f"no fault {among} breaks {', '.join(args.rule)}")
    rule_map = collect(args.suites, str(ROOT))
    if args.plan != "deep":
        table = CostTable.load()
        # As the run on the reference server builds it: on its raised quotas.
        plan = build(args.plan, table, declared_buckets(embedded_shape()))
        rule_map = {n: r for n, r in rule_map.items() if plan.selects(n, table)}
        print(f"plan {args.plan}: {len(rule_map)} tests of the suites")
    rules = {f.rule for f in faults}
    if not args.skip_baseline:
        files = _files_of(rule_map, rules)
        baseline = subprocess.run(
            # Every failure counts here, assumed rules' too; a skip is no failure.
            [*_pytest(*files), "--rules", ",".join(sorted(rules)), "--strict-informative"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        if baseline.returncode not in (EXIT_CONFORMANT, EXIT_INCOMPLETE):
            print("baseline: the tagged tests fail without any fault:")
            print(baseline.stdout[-3000:])
            return 2
        print(f"baseline: the tests of {len(rules)} rules pass on the correct server")
    outcomes = run_matrix(faults, rule_map, args.workers, args.plan, args.every_test)
    width = max(len(o.name) for o in outcomes)
    for o in outcomes:
        mark = "killed  " if o.killed else "SURVIVED"
        print(f"{mark} {o.name:{width}}  {o.rule:40} {o.tests:4} tests")
    document = {"plan": args.plan, **_summary(outcomes)}
    killed = sum(o.killed for o in outcomes)
    print(f"\nfault matrix: {len(outcomes)} faults in {outcomes[0].seconds if outcomes else 0} s")
    proven, normative = document["proven_rules"], document["normative_rules"]
    share = 100 * killed / len(outcomes)
    print(f"\nfaults killed: {killed}/{len(outcomes)} ({share:.1f} %), plan {args.plan}")
    for label, part in (
        ("hand-written", [o for o in outcomes if not o.mutant]),
        ("spec-derived mutants", [o for o in outcomes if o.mutant]),
    ):
        if part:
            dead = sum(o.killed for o in part)
            print(f"  {label}: {dead}/{len(part)} ({100 * dead / len(part):.1f} %)")
    print(f"normative rules proven: {proven}/{normative} ({100 * proven // normative} %)")
    unproven, reasons = document["unproven_rules"], document["no_fault"]
    print(f"unproven normative rules ({len(unproven)}): " + ("" if unproven else "none"))
    subset = args.faults or args.rule  # a subset proves little: only the count
    for rule in [] if subset else unproven:
        print(f"  {rule}: {reasons.get(rule, 'no fault of the catalogue kills a test of it')}")
    if args.output:
        Path(args.output).write_text(json.dumps(document, indent=2), encoding="utf-8")
    return 0 if killed == len(outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
