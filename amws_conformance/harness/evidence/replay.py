"""``amws-conformance replay REPORT --target P``: run again only what a report found wrong.

A vendor fixes one thing at a time. The replay reads a run's report.json, picks the tests
behind its failed, blocked and flaky rules (each rule's tests that failed or were flaky, and
the tests in which a global check saw the rule broken), and runs them alone on the target,
with the report's seed and plan, so that the same payloads go out. The run is an ordinary run
(its forecast line, pacing and cleanup as any run's) whose own report is written to
``OUT/run/``.

Then each of the report's bad rules is judged again and printed FIXED, STILL FAILING or NOW
BLOCKED (or NOT DECIDED, with why), and a new report is written to ``OUT``: the old report's
test outcomes with the replayed tests' new ones put in their place, every verdict recomputed
from them by the function ``verify`` uses. It has report.json's format, so ``amws-conformance
diff OLD/report.json OUT/report.json`` compares the two; its units, duration and plan are the
replay's own, and its ``replay`` field says what was run again and what was carried over.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from amws_conformance.harness import _launch
from amws_conformance.harness.evidence.bundle import PROFILE
from amws_conformance.harness.evidence.html import render
from amws_conformance.harness.evidence.verdicts import (
    catalogue,
    certification,
    exit_line,
    exit_status,
    root_causes,
)

BAD = ("failed", "blocked", "flaky")
EXIT_UNUSABLE = 2


class ReplayError(Exception):
    """The report cannot be replayed; ``str(error)`` says why."""


def load(path: Path) -> tuple[dict[str, Any], Path]:
    """A report.json (given as the file or its folder), and its folder."""
    file = path / "report.json" if path.is_dir() else path
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ReplayError(f"{file}: cannot read a report ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("tests"), dict):
        raise ReplayError(f"{file}: not a conformance report (no tests)")
    return document, file.parent


def bad_rules(document: Mapping[str, Any]) -> dict[str, str]:
    """The report's failed, blocked and flaky rules and their verdicts."""
    return {
        rule: str(entry["verdict"])
        for rule, entry in sorted(document["rules"].items())
        if entry["verdict"] in BAD
    }


def selection(document: Mapping[str, Any]) -> list[str]:
    """The tests behind the bad rules, in the report's order."""
    bad = set(bad_rules(document))
    tests = document["tests"]
    chosen: set[str] = set()
    for rule in bad:
        for nodeid in document["rules"][rule].get("tests", ()):
            if tests.get(nodeid, {}).get("outcome") in ("failed", "flaky"):
                chosen.add(nodeid)
    for violation in document.get("global_check_violations") or ():
        if violation.get("rule") in bad and violation.get("test") in tests:
            chosen.add(violation["test"])
    return [nodeid for nodeid in tests if nodeid in chosen]


def units(document: Mapping[str, Any]) -> int:
    """Units a report's run spent on every bucket together."""
    spent = document.get("rate_units") or {}
    return sum(int(v) for v in (spent.get("keys") or {}).values()) + int(
        spent.get("failed_auth", 0) or 0
    )


def merge(
    old: Mapping[str, Any], new: Mapping[str, Any], replayed: Sequence[str]
) -> dict[str, Any]:
    """The old report with the replayed tests' outcomes of ``new``, verdicts recomputed."""
    ran = [n for n in replayed if n in new["tests"]]
    again = set(ran)
    tests = {n: (new["tests"][n] if n in again else e) for n, e in old["tests"].items()}
    failures = {n: f for n, f in (old.get("failures") or {}).items() if n not in again}
    failures.update({n: f for n, f in (new.get("failures") or {}).items() if n in again})
    # A violation outside any test (the preflight) is the replay's: it ran the preflight again.
    violations = [
        v
        for v in old.get("global_check_violations") or ()
        if v.get("test") in old["tests"] and v.get("test") not in again
    ]
    violations += [
        v
        for v in new.get("global_check_violations") or ()
        if v.get("test") in again or v.get("test") not in new["tests"]
    ]
    judged = certification(
        tests,
        catalogue(),
        violations,
        new.get("unreachable_since"),
        new.get("stopped"),
        new.get("interrupted"),
    )
    full = {
        n: {**e, "reason": failures.get(n, {}).get("reason", e.get("reason"))}
        for n, e in tests.items()
    }
    status = exit_status(judged["rules"])
    document = dict(new)
    document.update(
        {
            "verdict": judged["verdict"],
            "normative_summary": judged["normative_summary"],
            "test_summary": judged["test_summary"],
            "undecided": judged["undecided"],
            "normative_not_certifiable": judged["normative_not_certifiable"],
            "informative_tests": judged["informative_tests"],
            "rules": judged["rules"],
            "root_causes": root_causes({n: e for n, e in full.items() if e["outcome"] == "failed"}),
            "tests": tests,
            "failures": failures,
            "global_check_violations": violations,
            "coverage": old.get("coverage", new.get("coverage")),
            "flaky": [n for n, e in tests.items() if e["outcome"] == "flaky"],
            "exit_status": status,
            "exit_reason": exit_line(judged["rules"], status).removeprefix("AMWS "),
            "expectations": None,
            "replay": {
                "of_run_id": (old.get("target") or {}).get("run_id"),
                "of_generated_at": old.get("generated_at"),
                "of_verdict": old.get("verdict"),
                "of_units": units(old),
                "units": units(new),
                "tests": ran,
                "not_found": [n for n in replayed if n not in again],
                "carried_over": len(tests) - len(ran),
            },
        }
    )
    return document


def word(old: str, new: Mapping[str, Any] | None) -> str:
    """What became of a rule that was ``old`` (failed, blocked or flaky)."""
    if new is None:
        return "GONE (not in the catalogue now)"
    verdict = new["verdict"]
    if verdict == "passed":
        return "FIXED"
    if verdict in ("failed", "flaky"):
        return "STILL FAILING" + (" (flaky)" if verdict == "flaky" else "")
    if verdict == "blocked":
        by = ", ".join(new.get("blocked_by") or ())
        return (
            "NOW BLOCKED" + (f" (by {by})" if by else "") if old != "blocked" else "STILL BLOCKED"
        )
    reasons = "; ".join(new.get("skip_reasons") or ())
    return f"NOT DECIDED ({verdict}{': ' + reasons if reasons else ''})"


def report(old: Mapping[str, Any], merged: Mapping[str, Any], out: TextIO) -> None:
    """Per bad rule of the old report, what the replay found; then what it cost."""
    before = bad_rules(old)
    width = max((len(r) for r in before), default=0)
    for rule, verdict in before.items():
        print(
            f"  {rule.ljust(width)}  {verdict} → {word(verdict, merged['rules'].get(rule))}",
            file=out,
        )
    regressed = [
        r
        for r, e in merged["rules"].items()
        if e["verdict"] in ("failed", "flaky")
        and old["rules"].get(r, {}).get("verdict") == "passed"
    ]
    for rule in regressed:
        print(
            f"  {rule.ljust(width)}  passed → FAILING NOW (a replayed test of it failed)", file=out
        )
    replay = merged["replay"]
    fixed = sum(1 for r in before if merged["rules"].get(r, {}).get("verdict") == "passed")
    share = replay["units"] / replay["of_units"] if replay["of_units"] else 0.0
    print(
        f"amws replay: {fixed} of {len(before)} rules fixed; {len(replay['tests'])} tests run "
        f"again, {replay['units']:,} units ({share:.1%} of the original run's "
        f"{replay['of_units']:,}); verdict now: {merged['verdict']}",
        file=out,
    )


def default_output(folder: Path) -> Path:
    return folder.parent / f"{folder.name}-replay"


def main(
    source: Path,
    target: str | None,
    output: Path | None,
    passed: Sequence[str] = (),
    out: TextIO = sys.stdout,
) -> int:
    """Replay; the exit status is the new report's (0 conformant, 1 not, 6 incomplete), 2
    when the report cannot be replayed, or the run's own when it wrote no report."""
    try:
        old, folder = load(source)
    except ReplayError as error:
        print(f"amws-conformance replay: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    tests = selection(old)
    if not tests:
        print(
            f"amws replay: {source} has no failed, blocked or flaky rule with a test to run again",
            file=out,
        )
        return 0
    output = output or default_output(folder)
    raw = output / "run"
    shutil.rmtree(raw, ignore_errors=True)
    plan = (old.get("plan") or {}).get("name")
    print(
        f"amws replay: {len(tests)} tests behind {len(bad_rules(old))} failed, blocked or flaky "
        f"rules of {source}, seed {old.get('seed')}",
        file=out,
        flush=True,
    )
    extra = [*tests, "--seed", str(old.get("seed", 0)), *passed]
    try:
        arguments = _launch.pytest_arguments(target, plan, str(raw), extra)
    except (_launch.SuitesMissing, _launch.UnknownTest) as error:
        print(f"amws-conformance replay: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    returncode = subprocess.call(_launch.command(arguments))
    try:
        new, _ = load(raw)
    except ReplayError:
        print(
            f"amws-conformance replay: the run wrote no report (exit {returncode})", file=sys.stderr
        )
        return returncode or EXIT_UNUSABLE
    merged = merge(old, new, tests)
    output.mkdir(parents=True, exist_ok=True)
    (output / "report.json").write_text(json.dumps(merged, indent=2), encoding="utf-8")
    (output / "report.html").write_text(render(merged), encoding="utf-8")
    if (raw / PROFILE).exists():
        shutil.copyfile(raw / PROFILE, output / PROFILE)
    report(old, merged, out)
    print(
        f"amws replay: wrote {output / 'report.json'} (compare: amws-conformance diff "
        f"{folder / 'report.json'} {output / 'report.json'})",
        file=out,
    )
    return int(merged["exit_status"])
