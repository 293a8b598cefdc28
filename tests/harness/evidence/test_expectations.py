"""Expectations (``--expectations FILE``): known failures keep a run green, a new failure or a
stale entry turns it red, an unknown entry stops it before its first test, and the
certification verdict ignores them all.

The runs are the watchlist match suite as a user runs it, a few of its tests selected, in a
process of their own against the embedded reference server with faults switched on (the
self-check plugin's ``--reference-fault``): WL-MATCH-DEDUP broken by match-duplicates-not-
collapsed is the known failure; WL-MATCH-TYPE-KINDS broken by match-type-per-field the new one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
import yaml

from amws_conformance.harness.evidence.expectations import (
    ExpectationsError,
    blamed_rules,
    forgiven,
    from_report,
    judge,
    load,
)
from tests._served import PACKAGE

SUITE = "suites/rules/test_watchlist_match.py"
DEDUP = "test_several_hits_on_one_entry_count_once"
MERGED = "test_identity_and_vehicle_hits_are_merged"
KNOWN = "match-duplicates-not-collapsed"  # breaks WL-MATCH-DEDUP: the dedup tests fail
NEW = "match-type-per-field"  # breaks WL-MATCH-TYPE-KINDS: the merged-hits test fails too


def _run(folder: Path, *options: str, faults: tuple[str, ...] = ()) -> tuple[int, str, Any]:
    """The selected tests against the embedded server with ``faults``: exit status, output,
    and the report (None when none was written)."""
    report = folder / "report"
    command = [sys.executable, "-m", "pytest", SUITE, "-q", "-p", "no:cacheprovider"]
    command += ["-p", "amws_conformance.selfcheck.plugin", "-k", f"{DEDUP} or {MERGED}"]
    command += [arg for fault in faults for arg in ("--reference-fault", fault)]
    command += ["--conformance-report", str(report), *options]
    # As a user starts it: not as a worker of an xdist session running this test.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "AMWS_"))}
    done = subprocess.run(
        command, cwd=PACKAGE, env=env, capture_output=True, text=True, check=False
    )
    found = report / "report.json"
    document = json.loads(found.read_text(encoding="utf-8")) if found.exists() else None
    return done.returncode, done.stdout + done.stderr, document


@pytest.fixture(scope="module")
def known(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """A run with the known fault, no expectations, and the file written from its report."""
    folder = tmp_path_factory.mktemp("known")
    status, output, document = _run(folder, faults=(KNOWN,))
    assert status == 1, output[-3000:]
    written, report = folder / "expectations.yaml", folder / "report" / "report.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "amws_conformance.harness.cli",
            "expectations",
            "--from",
            str(report),
        ],
        cwd=PACKAGE,
        capture_output=True,
        text=True,
        check=True,
    )
    written.write_text(result.stdout, encoding="utf-8")
    return written, document


def test_the_written_file_lists_the_failed_rule_with_its_failure_line(
    known: tuple[Path, Any],
) -> None:
    written, document = known
    text = written.read_text(encoding="utf-8")
    assert text.startswith("# ")  # commented
    entries = yaml.safe_load(text)
    assert [e.get("rule") for e in entries] == ["WL-MATCH-DEDUP"]
    assert entries[0]["reason"].startswith("AssertionError")
    assert f"{DEDUP}[identity]" in text  # the comment names the tests that failed it
    assert load(written).entries[0].id == "WL-MATCH-DEDUP"
    assert document["rules"]["WL-MATCH-DEDUP"]["verdict"] == "failed"


def test_a_listed_known_failure_exits_0_and_the_verdict_still_counts_it(
    known: tuple[Path, Any], tmp_path: Path
) -> None:
    written, _ = known
    status, output, document = _run(tmp_path, "--expectations", str(written), faults=(KNOWN,))
    assert status == 0, output[-3000:]
    assert "2 expected fail, 0 failed unexpectedly, 0 stale" in output
    # The certification verdict is the real one.
    assert document["verdict"].startswith("not conformant")
    assert document["rules"]["WL-MATCH-DEDUP"]["verdict"] == "failed"
    block = document["expectations"]
    assert block["entries"][0]["status"] == "expected-fail"
    assert len(block["expected_failures"]) == 2 and not block["unexpected_failures"]
    assert block["sha256"] and block["file"] == str(written)
    test = document["tests"][f"{SUITE}::{DEDUP}[identity]"]
    assert test["outcome"] == "failed"
    assert test["expectation"]["status"] == "expected-fail"
    assert document["exit_status"] == 0


def test_a_new_failure_beside_the_known_one_exits_1(
    known: tuple[Path, Any], tmp_path: Path
) -> None:
    written, _ = known
    status, output, document = _run(tmp_path, "--expectations", str(written), faults=(KNOWN, NEW))
    assert status == 1, output[-3000:]
    block = document["expectations"]
    assert block["unexpected_failures"] == [f"{SUITE}::{MERGED}"]
    assert len(block["expected_failures"]) == 2
    assert f"not expected: {SUITE}::{MERGED}" in output


def test_an_entry_that_passes_now_is_stale_and_exits_1(
    known: tuple[Path, Any], tmp_path: Path
) -> None:
    written, _ = known
    # The fault is gone (fixed), and a test entry for a test that passes joins the rule's.
    fixed = tmp_path / "expectations.yaml"
    entries = yaml.safe_load(written.read_text(encoding="utf-8"))
    entries.append({"test": f"{SUITE}::{MERGED}", "reason": "was broken", "link": "https://x/1"})
    fixed.write_text(yaml.safe_dump(entries), encoding="utf-8")
    status, output, document = _run(tmp_path, "--expectations", str(fixed))
    assert status == 1, output[-3000:]
    block = document["expectations"]
    assert block["stale"] == ["rule:WL-MATCH-DEDUP", f"test:{SUITE}::{MERGED}"]
    assert [e["status"] for e in block["entries"]] == ["stale", "stale"]
    assert "stale: rule:WL-MATCH-DEDUP passes now; remove it from the file" in output
    assert "AMWS exit status 1: an expectation is stale" in output
    assert document["tests"][f"{SUITE}::{MERGED}"]["expectation"]["status"] == "stale"
    assert document["verdict"].startswith("incomplete")  # a partial run, nothing failed


@pytest.mark.parametrize(
    ("entry", "named"),
    [
        ({"rule": "WL-NO-SUCH-RULE", "reason": "x"}, "an unknown rule: WL-NO-SUCH-RULE"),
        ({"test": f"{SUITE}::test_gone", "reason": "x"}, f"an unknown test: {SUITE}::test_gone"),
    ],
)
def test_an_unknown_rule_or_test_stops_the_run_before_its_first_test(
    tmp_path: Path, entry: dict[str, str], named: str
) -> None:
    path = tmp_path / "expectations.yaml"
    path.write_text(yaml.safe_dump([entry]), encoding="utf-8")
    status, output, document = _run(tmp_path, "--expectations", str(path))
    assert status == pytest.ExitCode.USAGE_ERROR
    assert f"expectations {path}: entry 1 names {named}" in output
    assert document is None and " passed" not in output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rule: X", "must be a list of entries"),
        ("- rule: X", "entry 1: reason must be a non-empty text"),
        ("- {rule: X, test: Y, reason: r}", "entry 1: must name exactly one rule or one test"),
        ("- {rule: X, reason: r, owner: me}", "entry 1: unknown field owner"),
        ("- {rule: X, reason: r}\n- {rule: X, reason: s}", "entry 2 repeats rule:X"),
        ("- [", "not YAML"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_entry(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "e.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ExpectationsError, match=message):
        load(path)


def test_a_failure_is_put_down_to_the_rules_its_verdicts_fail() -> None:
    rules = ["A", "B"]
    assert blamed_rules({"rules": rules, "phase": "call"}) == rules
    assert blamed_rules({"rules": rules, "phase": "call", "violated": ["ERR-X"]}) == ["ERR-X"]
    assert blamed_rules({"rules": rules, "phase": "setup"}) == []
    assert blamed_rules({"rules": rules, "phase": "call", "cause": "no answer"}) == []
    assert blamed_rules({"rules": rules, "phase": "teardown", "call_passed": True}) == []


def test_judging_leaves_the_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "e.yaml"
    path.write_text("- {test: 'm::t', reason: known}\n", encoding="utf-8")
    document: dict[str, Any] = {
        "verdict": "not conformant",
        "rules": {"A": {"verdict": "blocked", "tests": ["m::t"]}},
        "tests": {"m::t": {"outcome": "failed", "rules": ["A"], "phase": "setup"}},
    }
    block = judge(load(path), document)
    assert block["expected_failures"] == ["m::t"] and document["verdict"] == "not conformant"
    # A set-up failure blames no rule: the expectation covers the test, no failed rule.
    assert forgiven(block, document) == set()
    # Written back from such a report, the set-up failure (no rule to blame) is a test entry.
    document["failures"] = {"m::t": {"reason": "E   RuntimeError: no fixture\nmore"}}
    written = yaml.safe_load(from_report(document))
    assert written == [{"test": "m::t", "reason": "RuntimeError: no fixture"}]


def test_a_rule_is_forgiven_when_an_entry_names_it_or_each_of_its_failures_was_expected(
    tmp_path: Path,
) -> None:
    path = tmp_path / "e.yaml"
    path.write_text("- {rule: A, reason: known}\n- {test: 'm::b1', reason: known}\n", "utf-8")
    document: dict[str, Any] = {
        "rules": {
            "A": {"verdict": "failed", "tests": ["m::a"]},
            "B": {"verdict": "failed", "tests": ["m::b1", "m::b2"]},
            "C": {"verdict": "failed", "tests": ["m::c"]},
        },
        "tests": {
            "m::a": {"outcome": "failed", "rules": ["A"], "phase": "call"},
            "m::b1": {"outcome": "failed", "rules": ["B"], "phase": "call"},
            "m::b2": {"outcome": "failed", "rules": ["B"], "phase": "call"},
            "m::c": {"outcome": "failed", "rules": ["C"], "phase": "call"},
        },
    }
    block = judge(load(path), document)
    # B has one unexpected failure (b2): not forgiven; C is in no entry.
    assert forgiven(block, document) == {"A"}


def test_expected_failures_read_as_expected_in_junit_and_on_the_terminal(
    known: tuple[Path, Any], tmp_path: Path
) -> None:
    """CI's test view agrees with the exit status: the known failures are xfail there, with
    no traceback on the terminal, while report.json counts them as they failed."""
    written, _ = known
    junit = tmp_path / "junit.xml"
    status, output, document = _run(
        tmp_path, "--expectations", str(written), f"--junitxml={junit}", faults=(KNOWN,)
    )
    assert status == 0, output[-3000:]
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None
    assert suite.get("failures") == "0" and suite.get("errors") == "0"
    expected = [
        case
        for case in suite.iter("testcase")
        if (skipped := case.find("skipped")) is not None and skipped.get("type") == "pytest.xfail"
    ]
    assert len(expected) == 2
    assert "2 xfailed" in output and " failed" not in output.split("AMWS")[0]
    assert "Traceback" not in output and "AssertionError" not in output.split("AMWS")[0]
    counted = document["expectations"]["expected_failures"]
    assert len(counted) == 2
    assert all(document["tests"][nodeid]["outcome"] == "failed" for nodeid in counted)
