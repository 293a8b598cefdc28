"""The certification report: per-rule verdicts of a run, as ``report.json`` and ``report.html``."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from amws_conformance import spec
from amws_conformance.harness.evidence.bundle import (
    PROFILE,
    redacted_profile,
    sha256,
    suite_version,
)
from amws_conformance.harness.evidence.curl import deciding as deciding_curl
from amws_conformance.harness.evidence.expectations import (
    Expectations,
    forgiven,
    judge,
    summary,
)
from amws_conformance.harness.evidence.html import render
from amws_conformance.harness.evidence.observation import Observation
from amws_conformance.harness.evidence.stability import NOT_RUN, attempt, failed, record_rerun
from amws_conformance.harness.evidence.verdicts import (
    FAILURE_FIELDS,
    PLAN_LEFT_OUT,
    catalogue,
    certification,
    decides,
    exit_line,
    exit_status,
    root_causes,
)
from amws_conformance.harness.plan.rulemap import rules_of
from amws_conformance.harness.plan.spend import FAILED_AUTH, SETUP, merge
from amws_conformance.harness.target.preflight import PREFLIGHT
from amws_conformance.harness.target.profile import redact

if TYPE_CHECKING:
    from amws_conformance.harness._run import Run


def _file_hash(name: str) -> str:
    path = Path(spec.__file__).parent / name
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _interrupted(run: Run, session: pytest.Session) -> str | None:
    """Why the run was cut short by the user or its runner (a signal, Ctrl-C), if it was."""
    if run.interrupts is not None and run.interrupts.interrupted:
        return run.interrupts.interrupted
    if session.exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    return None


def _junit_path(config: pytest.Config) -> str | None:
    """Where pytest's --junitxml writes (absolute), if it was given."""
    path = config.getoption("xmlpath", None)
    return os.path.abspath(path) if path else None


def rate_units(spend: dict[str, Any], waited: dict[str, float]) -> dict[str, Any]:
    """Units the target charged per key for the answered requests (the spec's x-rate-cost; 400
    for a failed authentication; nothing for a 429), the failed-auth units of the bad-header
    clients apart, how long each bucket's pacing held requests back, and the 429 answers the
    run did not provoke."""
    keys = dict(spend["units"])
    per_key = {k: v for k, v in spend["by_key"].items() if k != FAILED_AUTH}
    return {
        "keys": keys,
        # Per key where a class is a pool (full[0], full[1]...); a lone key under its class.
        "per_key": dict(sorted(per_key.items())),
        "failed_auth": keys.pop(FAILED_AUTH, 0),
        "waited_seconds": waited,
        "unplanned_429": spend["unplanned_429"],
        "unplanned_429_where": spend["unplanned_where"],
        "requests": sum(spend["requests"].values()),
    }


def report_key(nodeid: str, location: tuple[str, int | None, str] | None) -> str:
    """The id a test is reported under. schemathesis gives the items of every operation one
    nodeid and puts the operation only in the name, so the name's parameters are added back."""
    name = location[2] if location else ""
    if nodeid.endswith("]") or "[" not in name:
        return nodeid
    return f"{nodeid}[{name.split('[', 1)[1]}"


def worker_output(run: Run) -> dict[str, Any]:
    """What a pytest-xdist worker's run saw that its test reports do not carry."""
    session = run.session
    return {
        "coverage": dict(session.coverage) if session else {},
        "spend": session.spend.export() if session else merge([]),
        "waited": run.waited_seconds(),
        "cleanup_gone": session.ledger.gone if session else 0,
        "cleanup_problems": list(run.cleanup_problems),
        "violations": [(n, v.rule, v.message) for n, v in session.violations] if session else [],
        "unreachable_since": session.health.since() if session and session.health.down else None,
    }


class Collector:
    """A pytest plugin object that remembers every test's rules and outcome."""

    def __init__(self, directory: str | None) -> None:
        self.directory = Path(directory) if directory else None
        self.tests: dict[str, dict[str, Any]] = {}
        self.summary_line = ""
        self.workers: list[dict[str, Any]] = []  # worker_output() of each xdist worker
        self.plan: dict[str, Any] | None = None  # the run plan, as Schedule.describe() says
        self.stopped: str | None = None  # why the run ended before its first test
        self.began = dt.datetime.now(dt.UTC)  # the session began (pytest_configure)
        self.profile_text: str | None = None  # the target profile, redacted, for the report
        self.stability = 0  # reruns of a failed test (--stability)
        self.expectations: Expectations | None = None  # the known failures (--expectations)
        self.secrets: list[str] = []  # the profile's secret values, cut out of failure texts

    def _redacted(self, text: str) -> str:
        return redact(text, self.secrets)

    def absorb(self, output: dict[str, Any]) -> None:
        """Add one xdist worker's :func:`worker_output` (the controller has no run of its own)."""
        self.workers.append(output)
        # Tests a worker's plan left out never report: the worker says which they were.
        for nodeid, entry in output.get("not_started", {}).items():
            self.tests.setdefault(nodeid, entry)

    def never_collected(self, tests: dict[str, dict[str, Any]], reason: str) -> None:
        """Tests of the cost table in folders the run did not even collect (the plan kept
        none of them): reported as not run, with the rules the table knows them by."""
        for nodeid, entry in tests.items():
            self.tests.setdefault(
                nodeid,
                {
                    "rules": list(entry.get("rules", ())),
                    "covers": list(entry.get("covers", ())),
                    "outcome": "not-run",
                    "reason": reason,
                },
            )

    def _plan_counts(self) -> dict[str, Any] | None:
        """The plan, with its counts taken from the tests (a controller of xdist workers never
        selected any itself)."""
        if self.plan is None:
            return None
        left = sum(1 for e in self.tests.values() if e["reason"] == PLAN_LEFT_OUT)
        return {**self.plan, "tests": len(self.tests) - left, "left_out": left}

    def not_started(self) -> dict[str, dict[str, Any]]:
        """The tests the run chose not to start, for the xdist controller."""
        return {n: e for n, e in self.tests.items() if e["outcome"] == "not-run" and e["reason"]}

    def cleanup_problems(self, run: Run) -> list[str]:
        problems: list[str] = self._merged(run)["cleanup_problems"]
        return problems

    def _merged(self, run: Run) -> dict[str, Any]:
        """Coverage, units, cleanup problems and global-check violations of the whole run."""
        parts = [worker_output(run), *self.workers]
        coverage: Counter[str] = Counter()
        waited: Counter[str] = Counter()
        for part in parts:
            coverage.update(part["coverage"])
            waited.update(part["waited"])
        return {
            "coverage": coverage,
            "spend": merge([part["spend"] for part in parts]),
            "waited": {k: round(v, 1) for k, v in waited.items()},
            "cleanup_gone": sum(part["cleanup_gone"] for part in parts),
            "cleanup_problems": [p for part in parts for p in part["cleanup_problems"]],
            "violations": [tuple(v) for part in parts for v in part["violations"]],
            "unreachable_since": min(
                (p["unreachable_since"] for p in parts if p.get("unreachable_since")), default=None
            ),
        }

    def collected(self, items: list[pytest.Item], reason: str | None = None) -> None:
        """Tests of the run; with ``reason``, tests it will not start (a plan left them out)."""
        for item in items:
            self.tests[report_key(item.nodeid, item.location)] = {
                "rules": rules_of(item),
                "covers": [c for m in item.iter_markers("covers") for c in m.args],
                "requires": [c for m in item.iter_markers("requires") for c in m.args],
                "outcome": "not-run",
                "reason": reason,
            }

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = self.tests.setdefault(
            report_key(report.nodeid, report.location),
            {"rules": [], "outcome": "not-run", "reason": None},
        )
        seen = Observation.of(report)
        if not entry["rules"]:
            # Under pytest-xdist the controller never collects: the rules ride on the report.
            entry["rules"] = seen.rules
        entry["seconds"] = entry.get("seconds", 0.0) + report.duration
        entry["assumed_operations"] = sorted(
            {*entry.get("assumed_operations", ()), *seen.assumed_operations}
        )
        # A failure an expectation covers is shown as xfail (skipped), and counted as it was.
        expected = seen.expected is not None
        if attempt(report):
            record_rerun(entry, report)  # a rerun of a failed test (--stability)
        elif report.skipped and report.when in ("setup", "call") and not expected:
            reason = (
                report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            ).removeprefix("Skipped: ")
            # A test the run chose not to start (out of time) was not run, not skipped.
            not_run = reason.startswith(NOT_RUN)
            entry.update(outcome="not-run" if not_run else "skipped", reason=reason)
        elif (failed(report) or expected) and entry["outcome"] != "failed":
            entry.update(
                outcome="failed",
                reason=self._redacted(report.longreprtext)[-3000:],
                phase=report.when,
                violated=seen.violated,
                cause=seen.cause,
                call_passed=entry["outcome"] == "passed",
            )
            if seen.transcript is not None:
                entry["transcript"] = seen.transcript
        elif report.when == "call" and entry["outcome"] != "failed":
            entry.update(outcome="passed")

    def _tests(self, spend: dict[str, Any], level: Mapping[str, str]) -> dict[str, dict[str, Any]]:
        """Per test: outcome, rules, what it may decide, and what it spent (its records'
        cleanup included; shared set-ups apart, named in ``uses``). With the reason of a skip
        or a test not run, the assumed operations it reached and the fields of a failure
        (phase, violated, cause, call_passed), an entry holds all that its rules' verdicts
        need: ``amws-conformance verify`` recomputes them from it. A failure's text is under
        ``failures``."""
        return {
            nodeid: {
                "outcome": entry["outcome"],
                "rules": entry["rules"],
                # The normative rules this test's outcome may decide (none when it also
                # checks an assumed rule or reached an operation of assumed shape).
                "decides": decides(entry, level),
                "reason": entry["reason"] if entry["outcome"] in ("skipped", "not-run") else None,
                "assumed_operations": entry.get("assumed_operations", []),
                **{name: entry[name] for name in FAILURE_FIELDS if name in entry},
                "covers": entry.get("covers", []),
                "requires": entry.get("requires", []),
                "units": spend["by_test"].get(nodeid, {}),
                "requests": spend["requests"].get(nodeid, 0),
                "uses": spend["uses"].get(nodeid, []),
                # The operations it called (its shared set-ups' are under setups).
                "operations": spend["operations"].get(nodeid, []),
                "seconds": round(entry.get("seconds", 0.0), 3),
                "target_seconds": spend["target_seconds"].get(nodeid, 0),
                # Each rerun of a failed test (--stability), in order.
                "reruns": entry.get("reruns", []),
            }
            for nodeid, entry in self.tests.items()
        }

    # -- verdicts ---------------------------------------------------------------------
    def document(self, run: Run, session: pytest.Session) -> dict[str, Any]:
        now = dt.datetime.now(dt.UTC)
        merged = self._merged(run)
        rules = catalogue()
        level = {rule.id: rule.level for rule in rules}
        tests = self._tests(merged["spend"], level)
        violations = [{"test": n, "rule": r, "message": m} for n, r, m in merged["violations"]]
        # The verdicts follow from what report.json holds, by the function verify uses too.
        interrupted = _interrupted(run, session)
        judged = certification(
            tests, rules, violations, merged["unreachable_since"], self.stopped, interrupted
        )
        verdicts = judged["rules"]
        coverage = merged["coverage"]
        failures = {
            nodeid: {
                "reason": e["reason"],
                "rules": e["rules"],
                "transcript": e.get("transcript", []),
                # The deciding (last) exchange as a curl command, secrets as variables.
                "curl": deciding_curl(e),
            }
            for nodeid, e in self.tests.items()
            if e["outcome"] == "failed"
        }
        return {
            "generated_at": now.isoformat(timespec="seconds"),
            "started_at": self.began.isoformat(timespec="seconds"),
            "duration_seconds": round((now - self.began).total_seconds(), 1),
            "seed": run.seed,
            "suite": {"name": "amws-conformance", "version": suite_version()},
            "spec": {
                "openapi_version": spec.openapi()["info"]["version"],
                "openapi_sha256": _file_hash("openapi.yaml"),
                "rules_sha256": _file_hash("rules.yaml"),
            },
            "target": run.describe(),
            # The target profile, secrets redacted, written beside this report (a certification
            # bundle carries it), and where --junitxml wrote its file.
            "profile": self._profile(run),
            "junit_xml": _junit_path(session.config),
            "verdict": judged["verdict"],
            # What the verdict says besides: why the run ended early, if it did.
            "unreachable_since": merged["unreachable_since"],
            "stopped": self.stopped,
            "interrupted": interrupted,
            "plan": self._plan_counts(),
            "forecast_minutes": (self.plan or {}).get("forecast_minutes"),
            "normative_summary": judged["normative_summary"],
            "test_summary": judged["test_summary"],
            # Failed tests by what broke, the largest group first.
            "root_causes": root_causes(self.tests),
            # Why certifying rules were left undecided (a verdict of incomplete says which).
            "undecided": judged["undecided"],
            # Normative rules whose every test goes through an operation of assumed shape or
            # checks an assumed rule beside them: reported, left out of certification.
            "normative_not_certifiable": judged["normative_not_certifiable"],
            "rules": verdicts,
            "failures": failures,
            "informative_tests": judged["informative_tests"],
            "coverage": {
                op.operation_id: coverage.get(op.operation_id, 0) for op in spec.operations()
            },
            "cleanup_problems": merged["cleanup_problems"],
            "rate_units": rate_units(merged["spend"], merged["waited"]),
            "cleanup_deletes_already_gone": merged["cleanup_gone"],
            "tests": tests,
            # Every breach a global check saw (the preflight's too), in order: the rules'
            # verdicts count them, and verify recomputes from them.
            "global_check_violations": violations,
            "setups": {
                name: {
                    "units": units,
                    "requests": merged["spend"]["requests"].get(name, 0),
                    "operations": merged["spend"]["operations"].get(name, []),
                }
                for name, units in merged["spend"]["by_test"].items()
                if name.startswith((SETUP, PREFLIGHT))
            },
            "exit_status": int(session.exitstatus),
            # Reruns of each failed test (--stability), and the tests that passed on one: never
            # counted as passed.
            "stability": self.stability,
            "flaky": [n for n, e in self.tests.items() if e["outcome"] == "flaky"],
            # What --expectations said of the results (write() fills it in); the verdict
            # above ignores it.
            "expectations": None,
        }

    def write(self, run: Run, session: pytest.Session) -> None:
        if not any(e["rules"] for e in self.tests.values()):
            return
        document = self.document(run, session)
        said = []
        strict = bool(session.config.getoption("--strict-informative", False))
        status = int(session.exitstatus)
        if status in (0, 1) and not self.stopped:
            # The exit status follows the certifying verdict (informative failures count only
            # when asked); known failures change it too, never the verdict.
            known: set[str] = set()
            stale = False
            if self.expectations is not None:
                block = judge(self.expectations, document)
                known, stale = forgiven(block, document), bool(block["stale"])
                said = summary(block)
            status = 1 if stale else exit_status(document["rules"], strict, known)
            session.exitstatus = status
            document["exit_status"] = status
            line = exit_line(document["rules"], status, strict, known, stale)
            # Why the run exits as it does, for report.html's header as for the terminal.
            document["exit_reason"] = line.removeprefix("AMWS ")
            said.append(line)
        s = document["normative_summary"]
        if self.stopped:
            self.summary_line = f"AMWS conformance: {document['verdict']}"
            self._write_files(document)
            return
        self.summary_line = (
            f"AMWS conformance: {document['verdict']} — normative rules passed {s['passed']}, "
            f"failed {s['failed']}, blocked {s['blocked']}, skipped {s['skipped']}, "
            f"not run {s['not-run']}"
            + (
                f"; {len(assumed)} more seen only beside our assumptions (informative)"
                if (assumed := document["normative_not_certifiable"])
                else ""
            )
            + (
                f"; flaky {s.get('flaky', 0)} ({len(flaky)} test(s) passed only on a rerun: "
                "not counted as passed)"
                if (flaky := document["flaky"])
                else ""
            )
        )
        self.summary_line = "\n".join([self.summary_line, *said])
        self._write_files(document)

    def _profile(self, run: Run) -> dict[str, str] | None:
        """The redacted profile's name beside the report and its sha256 (None: no profile)."""
        profile = run.profile
        self.profile_text = None if profile is None else redacted_profile(profile.data)
        if self.profile_text is None:
            return None
        return {"file": PROFILE, "sha256": sha256(self.profile_text.encode())}

    def _write_files(self, document: dict[str, Any]) -> None:
        if self.directory is None:
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        copy = self.directory / PROFILE
        if self.profile_text is None:
            copy.unlink(missing_ok=True)  # an earlier run's, into the same folder
        else:
            copy.write_bytes(self.profile_text.encode())
        (self.directory / "report.json").write_text(
            json.dumps(document, indent=2), encoding="utf-8"
        )
        (self.directory / "report.html").write_text(render(document), encoding="utf-8")
