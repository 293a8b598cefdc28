"""``amws-conformance selfcheck``: proof that the suite notices each fault of the catalogue.

For every fault of the reference server, the tests tagged with the fault's rule run against an
embedded server started with that fault; the fault is *killed* when at least one of them fails.
A baseline run without faults comes first: a rule whose tests fail on the correct server
proves nothing, so the self-check stops there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import spec
from harness._rulemap import collect
from reference_server.faults import CATALOGUE, Fault

ROOT = Path(__file__).resolve().parent.parent
# The scenario suites. The contract suite is left out: its run time follows the example budget,
# and the business-rule checks it carries are the very functions the harness client applies to
# every exchange of these suites.
DEFAULT_SUITES = ("suites/rules", "suites/webhooks", "suites/hardware", "suites/stateful")


@dataclass
class Outcome:
    name: str
    rule: str
    killed: bool
    tests: int
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class _Result:
    code: int
    ran: int
    failed: list[str]


def _pytest(paths: Sequence[str], rules: Sequence[str], faults: Sequence[str]) -> _Result:
    """Run the tests of ``rules`` in ``paths`` against a server with ``faults``."""
    with tempfile.TemporaryDirectory() as folder:
        junit = Path(folder) / "junit.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            *paths,
            "-q",
            "-p",
            "no:cacheprovider",
            # Pass/fail is all the self-check reads; plain asserts skip the costly rewriting.
            "--assert=plain",
            # Plugins the scenario suites never use, left out to start faster.
            "-p",
            "no:schemathesis",
            "-p",
            "no:xdist",
            "-p",
            "no:xdist.looponfail",
            "-o",
            "addopts=",
            "--no-preflight",
            "--rules",
            ",".join(rules),
            f"--junitxml={junit}",
        ]
        for fault in faults:
            command += ["--reference-fault", fault]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        if not junit.exists():
            return _Result(done.returncode, 0, [done.stdout[-500:] + done.stderr[-500:]])
        cases = ET.parse(junit).getroot().iter("testcase")
        ran, failed = 0, []
        for case in cases:
            if case.find("skipped") is not None:
                continue
            ran += 1
            if case.find("failure") is not None or case.find("error") is not None:
                failed.append(f"{case.get('classname')}::{case.get('name')}")
        return _Result(done.returncode, ran, failed)


def _files_of(rule_map: dict[str, list[str]], rules: set[str]) -> list[str]:
    return sorted(
        {nodeid.split("::")[0] for nodeid, tagged in rule_map.items() if rules & set(tagged)}
    )


def check_fault(fault: Fault, rule_map: dict[str, list[str]]) -> Outcome:
    files = _files_of(rule_map, {fault.rule})
    if not files:
        return Outcome(fault.name, fault.rule, killed=False, tests=0)
    start = time.monotonic()
    result = _pytest(files, [fault.rule], [fault.name])
    killed = result.code == 1 and bool(result.failed)
    seconds = round(time.monotonic() - start, 1)
    return Outcome(fault.name, fault.rule, killed, result.ran, result.failed, seconds)


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
            }
            for o in outcomes
        ],
        "normative_rules": len(normative),
        "proven_rules": len(proven),
        "unproven_rules": [r for r in normative if r not in proven],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="amws-conformance", description=__doc__)
    parser.add_argument("command", choices=["selfcheck"])
    parser.add_argument("--output", help="write the kill matrix as JSON here")
    parser.add_argument("--faults", help="comma-separated subset of the catalogue")
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
    args = parser.parse_args(argv)
    names = args.faults.split(",") if args.faults else list(CATALOGUE)
    unknown = [n for n in names if n not in CATALOGUE]
    if unknown:
        parser.error(f"unknown fault(s): {', '.join(unknown)}")
    faults = [CATALOGUE[n] for n in names]
    rule_map = collect(args.suites, str(ROOT))
    rules = {f.rule for f in faults}
    if not args.skip_baseline:
        baseline = _pytest(_files_of(rule_map, rules), sorted(rules), [])
        if baseline.code != 0:
            print(f"baseline: {len(baseline.failed)} tagged tests fail without any fault:")
            for test in baseline.failed[:20]:
                print(f"  {test}")
            return 2
        print(f"baseline: {baseline.ran} tests of {len(rules)} rules pass on the correct server")
    with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
        outcomes = list(pool.map(lambda f: check_fault(f, rule_map), faults))
    width = max(len(o.name) for o in outcomes)
    for o in outcomes:
        mark = "killed  " if o.killed else "SURVIVED"
        print(f"{mark} {o.name:{width}}  {o.rule:40} {o.tests:4} tests  {o.seconds:5.1f}s")
    document = _summary(outcomes)
    killed = sum(o.killed for o in outcomes)
    proven, normative = document["proven_rules"], document["normative_rules"]
    print(f"\nfaults killed: {killed}/{len(outcomes)} ({100 * killed // len(outcomes)} %)")
    print(f"normative rules proven: {proven}/{normative} ({100 * proven // normative} %)")
    unproven = document["unproven_rules"]
    print(f"unproven normative rules ({len(unproven)}): " + (", ".join(unproven) or "none"))
    if args.output:
        Path(args.output).write_text(json.dumps(document, indent=2), encoding="utf-8")
    return 0 if killed == len(outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
