"""harness/evidence/replay.py: a report's failed rules run again once the target is fixed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import yaml

from amws_conformance.harness.evidence.replay import selection, word
from tests._served import PACKAGE, ordinary_env, serve

FAILING = "suites/rules/test_conventions.py::test_non_uuid_path_value_answers_422[deleteFile-uuid]"
PASSING = "suites/rules/test_errors.py::test_unknown_uuid_answers_404[deleteCostCenter]"


def test_each_bad_rule_reads_what_became_of_it() -> None:
    assert word("failed", {"verdict": "passed"}) == "FIXED"
    assert word("failed", {"verdict": "failed"}) == "STILL FAILING"
    assert word("failed", {"verdict": "blocked", "blocked_by": ["X"]}) == "NOW BLOCKED (by X)"
    assert word("blocked", {"verdict": "blocked"}) == "STILL BLOCKED"
    assert word("flaky", {"verdict": "skipped", "skip_reasons": ["no key"]}).startswith(
        "NOT DECIDED (skipped: no key"
    )


def test_the_tests_behind_bad_rules_are_chosen() -> None:
    report = {
        "rules": {
            "A": {"verdict": "failed", "tests": ["t1", "t2"]},
            "B": {"verdict": "passed", "tests": ["t3"]},
            "C": {"verdict": "failed", "tests": []},
        },
        "tests": {"t1": {"outcome": "failed"}, "t2": {"outcome": "passed"}, "t3": {}, "t4": {}},
        # A global check saw C broken in t4, a test of another rule.
        "global_check_violations": [
            {"test": "t4", "rule": "C"},
            {"test": "preflight", "rule": "C"},
        ],
    }
    assert selection(report) == ["t1", "t4"]


def _cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "amws_conformance.harness.cli", *arguments],
        cwd=PACKAGE,
        env=ordinary_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_fixed_target_reads_fixed_and_diff_compares_the_reports(tmp_path: Path) -> None:
    server, profile = serve(tmp_path, faults=["bad-uuid-404"])
    old, new = tmp_path / "old", tmp_path / "new"
    try:
        first = _cli(
            "run",
            "--target",
            str(profile),
            "--conformance-report",
            str(old),
            "--",
            FAILING,
            PASSING,
        )
        assert first.returncode == 1, first.stdout[-3000:]
        control = yaml.safe_load(profile.read_text())["control"]
        httpx.put(
            f"{control['url']}/faults",
            json={"active": []},
            headers={"Authorization": f"Bearer {control['token']}"},
        ).raise_for_status()
        replay = _cli("replay", str(old), "--target", str(profile), "-o", str(new))
        assert replay.returncode == 0, replay.stdout[-3000:]
        assert "CONV-UUID-PATH-422  failed → FIXED" in replay.stdout
        # The run's forecast line counts the replayed test alone.
        assert re.search(r"amws plan \w+: 1 tests \(0 left out\)", replay.stdout), replay.stdout
        document = json.loads((new / "report.json").read_text())
        assert document["replay"]["tests"] == [FAILING]
        assert document["tests"][PASSING]["outcome"] == "passed"  # carried over
        assert document["verdict"] != json.loads((old / "report.json").read_text())["verdict"]
        assert document["replay"]["units"] < document["replay"]["of_units"]
        diff = _cli("diff", str(old / "report.json"), str(new / "report.json"))
        assert diff.returncode == 0 and "CONV-UUID-PATH-422  failed → passed" in diff.stdout
    finally:
        server.terminate()
        server.wait(timeout=10)
