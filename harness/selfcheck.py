"""``amws-conformance selfcheck``: proof that the suite notices each fault of the catalogue.

For every fault of the reference server, the tests tagged with the fault's rule run against an
embedded server started with that fault; the fault is *killed* when at least one of them fails.
A baseline run without faults comes first: a rule whose tests fail on the correct server proves
nothing, so the self-check stops there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import spec
from reference_server.faults import CATALOGUE, Fault

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Outcome:
    name: str
    rule: str
    killed: bool
    tests: int
    failed: list[str]
    seconds: float


def _pytest(rules: Sequence[str], faults: Sequence[str], suites: str) -> tuple[int, list[str], int]:
    """Run the tagged tests; return (exit code, failing test ids, tests run)."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        suites,
        "-q",
        "-p",
        "no:cacheprovider",
        "--rules",
        ",".join(rules),
        "-o",
        "addopts=",
        "-rf",
    ]
    for fault in faults:
        command += ["--reference-fault", fault]
    result = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    failed = [
        line.split(" ", 2)[1] for line in result.stdout.splitlines() if line.startswith("FAILED ")
    ]
    ran = 0
    for line in result.stdout.splitlines()[-3:]:
        for word, count in zip(line.split()[1::2], line.split()[::2], strict=False):
            if word.rstrip(",") in ("passed", "failed", "error", "errors") and count.isdigit():
                ran += int(count)
    return result.returncode, failed, ran


def check_fault(fault: Fault, suites: str) -> Outcome:
    start = time.monotonic()
    code, failed, ran = _pytest([fault.rule], [fault.name], suites)
    killed = code == 1 and bool(failed)
    return Outcome(fault.name, fault.rule, killed, ran, failed, round(time.monotonic() - start, 1))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="amws-conformance selfcheck", description=__doc__)
    parser.add_argument("command", choices=["selfcheck"])
    parser.add_argument("--output", help="write the kill matrix as JSON here")
    parser.add_argument("--faults", help="comma-separated subset of the catalogue")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--suites", default="suites")
    args = parser.parse_args(argv)
    faults = (
        [CATALOGUE[n] for n in args.faults.split(",")] if args.faults else list(CATALOGUE.values())
    )
    rules = sorted({f.rule for f in faults})
    code, failed, ran = _pytest(rules, [], args.suites)
    if code != 0:
        print(f"baseline: {len(failed)} tagged tests fail without any fault: {failed[:10]}")
        return 2
    print(f"baseline: {ran} tests of {len(rules)} rules pass on the correct server")
    with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
        outcomes = list(pool.map(lambda f: check_fault(f, args.suites), faults))
    width = max(len(o.name) for o in outcomes)
    for o in outcomes:
        mark = "killed  " if o.killed else "SURVIVED"
        print(f"{mark} {o.name:{width}}  {o.rule:40} {o.tests:4} tests  {o.seconds:5.1f}s")
    normative = sorted(r.id for r in spec.rules() if r.normative)
    proven = sorted({o.rule for o in outcomes if o.killed} & set(normative))
    killed = sum(o.killed for o in outcomes)
    print(f"\nfaults killed: {killed}/{len(outcomes)} ({100 * killed / len(outcomes):.0f} %)")
    share = 100 * len(proven) / len(normative)
    print(f"normative rules proven: {len(proven)}/{len(normative)} ({share:.0f} %)")
    unproven = [r for r in normative if r not in proven]
    print("unproven normative rules: " + (", ".join(unproven) if unproven else "none"))
    if args.output:
        document = {
            "faults": [
                {k: v for k, v in asdict(o).items() if k in ("name", "rule", "killed", "tests")}
                | {"failed_tests": o.failed}
                for o in outcomes
            ],
            "normative_rules": len(normative),
            "proven_rules": len(proven),
            "unproven_rules": unproven,
        }
        Path(args.output).write_text(json.dumps(document, indent=2), encoding="utf-8")
    return 0 if killed == len(outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
