"""Stability reruns (``--stability N``): a test that fails and then passes on a rerun is
*flaky*, listed apart and never counted as passed; a test failing every attempt stays failed;
report.json records every attempt, and what every attempt made is cleaned up.

The flaky test is made so by the reference server's match-duplicates-every-other fault, which
breaks WL-MATCH-DEDUP on every second match that could show it: the test's first attempt
fails, its rerun passes. A last test runs two tests of its own in a nested pytest, with
--stability and --expectations read from the profile.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from amws_conformance.harness.evidence.verdicts import EXIT_INCOMPLETE
from tests._served import PACKAGE
from tests.harness.lifecycle.test_interrupted_runs import Served

SUITE = "suites/rules/test_watchlist_match.py"
DEDUP = f"{SUITE}::test_several_hits_on_one_entry_count_once[identity]"
EVERY_OTHER = "match-duplicates-every-other"


def _run(folder: Path, *options: str) -> tuple[int, str, Any]:
    """The one dedup test, as a user runs it: exit status, output, report."""
    report = folder / "report"
    command = [sys.executable, "-m", "pytest", SUITE, "-q", "-p", "no:cacheprovider"]
    command += ["-k", "test_several_hits_on_one_entry_count_once and identity"]
    command += ["--conformance-report", str(report), *options]
    done = subprocess.run(
        command,
        cwd=PACKAGE,
        env={k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "AMWS_"))},
        capture_output=True,
        text=True,
        check=False,
    )
    document = json.loads((report / "report.json").read_text(encoding="utf-8"))
    return done.returncode, done.stdout + done.stderr, document


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """A served reference server with the every-other fault on, switched through its
    control plane as the self-check does."""
    server = Served(tmp_path)
    control = server.profile["control"]
    httpx.put(
        f"{control['url']}/faults",
        json={"active": [EVERY_OTHER]},
        headers={"Authorization": f"Bearer {control['token']}"},
    ).raise_for_status()
    yield server
    server.stop()


def test_stability_3_reports_a_test_passing_on_a_rerun_as_flaky(
    served: Served, tmp_path: Path
) -> None:
    before = served.stored()
    status, output, document = _run(
        tmp_path,
        "--target",
        str(served.profile_path),
        "--state-dir",
        str(served.state),
        "--stability",
        "3",
    )
    # The test passed on its rerun: nothing failed, but a flaky rule is undecided.
    assert status == EXIT_INCOMPLETE, output[-3000:]
    test = document["tests"][DEDUP]
    assert test["outcome"] == "flaky"
    assert test["phase"] == "call"  # the first attempt's failure stays on record
    assert [r["outcome"] for r in test["reruns"]] == ["passed"]
    assert document["flaky"] == [DEDUP] and document["stability"] == 3
    # Never counted as passed: the rule is flaky, and the run cannot be conformant.
    assert document["rules"]["WL-MATCH-DEDUP"]["verdict"] == "flaky"
    assert document["normative_summary"]["passed"] == 0
    assert document["undecided"].get("flaky") == 1
    assert "flaky 1 (1 test(s) passed only on a rerun" in output
    assert DEDUP not in document["failures"]
    # What both attempts made (a watchlist entry each, the shared watchlists) is gone.
    assert not document["cleanup_problems"]
    assert served.left_since(before) == []


def test_a_test_failing_every_attempt_stays_failed_with_each_attempt_recorded(
    tmp_path: Path,
) -> None:
    status, output, document = _run(
        tmp_path,
        "-p",
        "amws_conformance.selfcheck.plugin",
        "--reference-fault",
        "match-duplicates-not-collapsed",
        "--stability",
        "2",
    )
    assert status == 1, output[-3000:]
    test = document["tests"][DEDUP]
    assert test["outcome"] == "failed"
    assert [(r["outcome"], r["phase"]) for r in test["reruns"]] == [("failed", "call")] * 2
    assert all(r["line"].startswith("AssertionError") for r in test["reruns"])
    assert document["flaky"] == []
    assert document["rules"]["WL-MATCH-DEDUP"]["verdict"] == "failed"
    assert document["verdict"].startswith("not conformant")


def test_without_stability_nothing_is_rerun(tmp_path: Path) -> None:
    status, _, document = _run(
        tmp_path, "-p", "amws_conformance.selfcheck.plugin", "--reference-fault", EVERY_OTHER
    )
    assert status == 1
    assert document["tests"][DEDUP]["outcome"] == "failed"
    assert document["tests"][DEDUP]["reruns"] == [] and document["stability"] == 0


def test_the_profile_carries_stability_and_expectations(pytester: pytest.Pytester) -> None:
    """Both run options may live in the profile; its expectations path is read from the
    profile's folder. No target is met: the tests below never ask for it."""
    pytester.makepyfile(
        test_two="""
import pathlib
import pytest
import yaml

@pytest.mark.rule("WL-MATCH-DEDUP")
def test_fails_once():
    first = pathlib.Path("attempted")
    if not first.exists():
        first.write_text("1")
        raise AssertionError("the first attempt fails")

@pytest.mark.rule("AUTH-BEARER-PREFIX")
def test_known():
    raise AssertionError("a known failure")
"""
    )
    folder = pytester.path / "profiles"
    folder.mkdir()
    (folder / "known.yaml").write_text(
        "- rule: AUTH-BEARER-PREFIX\n  reason: tracked elsewhere\n", encoding="utf-8"
    )
    profile = yaml.safe_load((PACKAGE / "fixtures/profiles/embedded.yaml").read_text())
    profile.update(stability=2, expectations="known.yaml")
    (folder / "target.yaml").write_text(yaml.safe_dump(profile), encoding="utf-8")
    report = pytester.path / "report"
    result = pytester.runpytest(
        "--target",
        str(folder / "target.yaml"),
        "--conformance-report",
        str(report),
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == EXIT_INCOMPLETE  # the known failure forgiven, the flaky rule undecided
    document = json.loads((report / "report.json").read_text(encoding="utf-8"))
    assert document["stability"] == 2
    assert document["flaky"] == ["test_two.py::test_fails_once"]
    assert document["expectations"]["file"] == str(folder / "known.yaml")
    assert document["expectations"]["expected_failures"] == ["test_two.py::test_known"]
    known = document["tests"]["test_two.py::test_known"]
    # An expected failure is not rerun (it is shown as xfail), and is counted as it failed.
    assert known["outcome"] == "failed" and known["reruns"] == []
    assert known["expectation"]["status"] == "expected-fail"
