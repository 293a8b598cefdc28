"""``amws-conformance diff``: which rules two runs judge differently, and a non-zero exit status
only when a rule that passed now fails (or is flaky)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from amws_conformance.harness.evidence.diff import compare, main
from tests.harness._runs import FAULT_RULE, Run, amws


def _report(**verdicts: str) -> dict[str, Any]:
    rules = {}
    for rule, verdict in verdicts.items():
        word, _, by = verdict.partition(" by ")
        rules[rule.replace("_", "-")] = {
            "verdict": word,
            "level": "normative",
            "blocked_by": [by] if by else [],
        }
    return {"verdict": "incomplete", "rules": rules}


def test_a_clean_run_then_one_fault_names_exactly_the_faults_rule_as_regressed(
    clean_run: Run, faulty_run: Run
) -> None:
    done = amws("diff", clean_run.report / "report.json", faulty_run.report / "report.json")
    assert done.returncode == 1, done.stdout + done.stderr
    old = json.loads((clean_run.report / "report.json").read_text(encoding="utf-8"))
    new = json.loads((faulty_run.report / "report.json").read_text(encoding="utf-8"))
    diff = compare(old, new)
    assert [c.rule for c in diff.regressed] == [FAULT_RULE]
    assert f"  {FAULT_RULE}  passed → failed" in done.stdout
    # Nothing else moved: the other tests' rules passed in both runs.
    assert (diff.fixed, diff.newly_failing, diff.no_longer_decided, diff.other) == ([],) * 4
    # The other way round the same rule is fixed, and nothing regressed.
    back = amws("diff", faulty_run.report / "report.json", clean_run.report / "report.json")
    assert back.returncode == 0, back.stdout
    assert [c.rule for c in compare(new, old).fixed] == [FAULT_RULE]


def test_regressed_means_passed_then_failed_or_flaky() -> None:
    old = _report(A="passed", B="passed", C="passed", D="failed", E="flaky", F="not-run")
    new = _report(A="failed", B="flaky", C="blocked by X", D="passed", E="passed", F="failed")
    diff = compare(old, new)
    assert [c.rule for c in diff.regressed] == ["A", "B"]
    assert [c.rule for c in diff.fixed] == ["D", "E"]
    # Passed, then not decided: no test showed it broken; listed apart, not a regression.
    assert [(c.rule, c.new) for c in diff.no_longer_decided] == [("C", "blocked by X")]
    # Failing now, never passed before: new information, not a regression.
    assert [c.rule for c in diff.newly_failing] == ["F"]


def test_rules_that_came_and_went_and_other_changes() -> None:
    old = _report(A="passed", GONE="failed", M="failed", S="skipped")
    new = _report(A="passed", NEW="passed", M="flaky", S="not-run")
    diff = compare(old, new)
    assert [c.rule for c in diff.came] == ["NEW"]
    assert [c.rule for c in diff.went] == ["GONE"]
    assert [(c.rule, c.old, c.new) for c in diff.other] == [
        ("M", "failed", "flaky"),
        ("S", "skipped", "not-run"),
    ]
    assert diff.regressed == []


def test_exit_status_zero_without_regression_and_two_for_a_file_that_is_no_report(
    tmp_path: Path,
) -> None:
    old, new, bad = tmp_path / "old.json", tmp_path / "new.json", tmp_path / "bad.json"
    old.write_text(json.dumps(_report(A="passed", B="failed")), encoding="utf-8")
    new.write_text(json.dumps(_report(A="blocked by set-up", B="passed")), encoding="utf-8")
    bad.write_text("{}", encoding="utf-8")
    out = io.StringIO()
    assert main(old, new, out) == 0
    assert "fixed (failed or flaky before; passed now): 1\n  B  failed → passed" in out.getvalue()
    assert main(new, old, io.StringIO()) == 1  # B passed, then failed
    assert main(old, bad, io.StringIO()) == 2
