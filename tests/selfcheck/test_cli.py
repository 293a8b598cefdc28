"""The self-check's command line: which faults a run takes."""

from __future__ import annotations

import pytest

from selfcheck.cli import main


def test_a_rule_without_faults_is_refused_before_anything_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--skip-baseline", "--rule", "NO-SUCH-RULE"])
    assert stopped.value.code == 2
    assert "no fault of the catalogue breaks NO-SUCH-RULE" in capsys.readouterr().err


def test_rule_selects_only_that_rules_faults(capsys: pytest.CaptureFixture[str]) -> None:
    # A fault named by --faults that breaks another rule is left out, so nothing is left.
    with pytest.raises(SystemExit):
        main(["--skip-baseline", "--faults", "bad-uuid-404", "--rule", "ROLE-NAME-UNIQUE"])
    assert "no fault named by --faults breaks ROLE-NAME-UNIQUE" in capsys.readouterr().err
