"""``amws-conformance costs``: measure the cost table the run planner selects tests by.

It runs every suite (the deep plan) against an embedded reference server and keeps, per test
and per shared set-up, the units each bucket was charged for the answered requests, the
number of requests, the seconds it took and the time it asked to pass on the target. Given
the self-check's kill matrix (``--kill-matrix``), each test also names the faults it kills, so
that a plan can keep one killer of every fault of the rules it certifies. The table is
committed (``harness/costs.json``); a project test fails when it goes stale.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from amws_conformance.harness.plan.plan import COST_TABLE, CostTable, without_fault
from amws_conformance.harness.plan.spend import SETUP
from amws_conformance.harness.target.preflight import PREFLIGHT

ROOT = Path(__file__).resolve().parents[2]


def kills_from_matrix(matrix: dict[str, Any]) -> dict[str, list[str]]:
    """Per test, the faults of the self-check's kill matrix it was seen to kill."""
    kills: dict[str, list[str]] = {}
    for fault in matrix["faults"]:
        for nodeid in fault["failed_tests"]:
            kills.setdefault(without_fault(nodeid, fault["name"]), []).append(fault["name"])
    return kills


def table_from_report(document: dict[str, Any], matrix: dict[str, Any] | None = None) -> CostTable:
    """The cost table a deep run's ``report.json`` measured; with a self-check's kill matrix,
    each test also names the faults it kills (``fault:NAME`` elements a plan may cover)."""
    kills = kills_from_matrix(matrix) if matrix else {}
    setups = {
        name: entry
        for name, entry in document["setups"].items()
        if name.startswith(SETUP) and entry["units"]
    }
    tests = {}
    for nodeid, entry in document["tests"].items():
        tests[nodeid] = {
            "units": entry["units"],
            "requests": entry["requests"],
            "seconds": entry["seconds"],
            "target_seconds": entry["target_seconds"],
            # Only the set-ups that cost something are worth the planner's attention.
            "uses": [u for u in entry["uses"] if u in setups],
            "rules": entry["rules"],
            "decides": entry["decides"],
            # A test that skipped on the reference server, or that runs only against the
            # embedded one, is a plan's last resort for a rule.
            "skipped": entry["outcome"] == "skipped" or "embedded" in entry.get("requires", ()),
            "covers": entry["covers"] + [f"fault:{name}" for name in kills.get(nodeid, [])],
            # The operations it calls, its shared set-ups' included: the self-check runs a
            # mutant of an operation's answers under the tests that call it.
            "operations": sorted(
                set(entry.get("operations", ()))
                | {
                    o
                    for u in entry["uses"]
                    for o in document["setups"].get(u, {}).get("operations", ())
                }
            ),
        }
    measured = {
        "at": document["generated_at"],
        "commit": _commit(),
        "outcomes": _outcomes(document),
        "preflight": document["setups"].get(PREFLIGHT, {}),
        # Which rule each fault breaks: a plan proves the faults of the rules it certifies.
        "faults": {f["name"]: f["rule"] for f in matrix["faults"]} if matrix else {},
        # The spec-derived mutants among them (the self-check marks each): a plan covers them
        # within its budget, the hand-written faults of its rules always.
        "mutants": sorted(f["name"] for f in matrix["faults"] if f.get("mutant")) if matrix else [],
    }
    return CostTable(tests=tests, setups=setups, measured=measured)


def _outcomes(document: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for entry in document["tests"].values():
        counts[entry["outcome"]] = counts.get(entry["outcome"], 0) + 1
    return counts


def _commit() -> str | None:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return done.stdout.strip() or None


def measure(extra: Sequence[str] = ()) -> dict[str, Any]:
    """Run the suites (deep) against an embedded reference server; its report.json."""
    with tempfile.TemporaryDirectory(prefix="amws-costs-") as folder:
        command = [
            sys.executable,
            "-m",
            "pytest",
            "suites",
            "-q",
            "-p",
            "no:cacheprovider",
            "--plan",
            "deep",
            "--conformance-report",
            folder,
            # Serial, as the table has always been measured: one server, one order of the
            # tests, each shared set-up made once (harness/plan/workers.py would start workers).
            "-n",
            "0",
            *extra,
        ]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        report = Path(folder) / "report.json"
        if done.returncode != 0 or not report.exists():
            raise RuntimeError(
                "the suites did not pass, so their costs are not worth a table:\n"
                + done.stdout[-3000:]
                + done.stderr[-1000:]
            )
        loaded: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
        return loaded


def merged(matrices: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Several kill matrices as one: every test seen killing each fault."""
    if not matrices:
        return None
    faults: dict[str, dict[str, Any]] = {}
    for matrix in matrices:
        for fault in matrix["faults"]:
            slot = faults.setdefault(fault["name"], {**fault, "failed_tests": []})
            slot["failed_tests"] = sorted(set(slot["failed_tests"]) | set(fault["failed_tests"]))
    return {"faults": list(faults.values())}


def refute(table: CostTable, outcome: dict[str, Any]) -> list[str]:
    """Take back the kills a later self-check disproved: a fault that survived a run takes its
    credit from every test that ran under it there (a kill matrix of all faults in one session
    can see a test fail under a fault for what an earlier fault left behind; a plan picking
    that test would not kill it). The faults refuted, each named once."""
    refuted = []
    for fault in outcome["faults"]:
        if fault["killed"] or not fault.get("ran_tests"):
            continue
        element = f"fault:{fault['name']}"
        for nodeid in fault["ran_tests"]:
            entry = table.tests.get(without_fault(nodeid, fault["name"]))
            if entry is not None and element in entry.get("covers", ()):
                entry["covers"] = [c for c in entry["covers"] if c != element]
                if fault["name"] not in refuted:
                    refuted.append(fault["name"])
    return refuted


def main(
    output: str | None,
    from_report: str | None,
    kill_matrices: list[str],
    refuted_by: Sequence[str] = (),
) -> int:
    if from_report:
        document = json.loads(Path(from_report).read_text(encoding="utf-8"))
    else:
        document = measure()
    matrices = [json.loads(Path(m).read_text(encoding="utf-8")) for m in kill_matrices]
    table = table_from_report(document, merged(matrices))
    for path in refuted_by:
        taken = refute(table, json.loads(Path(path).read_text(encoding="utf-8")))
        print(f"{path}: kills taken back for {len(taken)} faults: {', '.join(taken) or 'none'}")
    table.dump(Path(output) if output else COST_TABLE)
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(table.measured["outcomes"].items()))
    stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    print(f"cost table of {len(table.tests)} tests ({outcomes}) written at {stamp}")
    return 0
