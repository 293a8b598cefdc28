"""The self-check's command line: which faults a run takes."""

from __future__ import annotations

import pytest

from amws_conformance import spec
from amws_conformance.harness._checks import documents_status
from amws_conformance.reference_server.faults import CATALOGUE
from amws_conformance.selfcheck.cli import GLOBAL_RULE, main, named_also


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


def test_the_global_check_names_only_mutants_answering_an_undocumented_status() -> None:
    credited = [f for f in CATALOGUE.values() if named_also(f)]
    assert credited and all(named_also(f) == GLOBAL_RULE for f in credited)
    for fault in credited:
        assert fault.constraint and fault.swap is not None  # spec-derived swaps only
        op = spec.operation(fault.operations[0])
        assert documents_status(op, fault.swap[0]) and not documents_status(op, fault.swap[1])
    # A swap to a status the operation documents (a permission refused with 401) is caught
    # only by its own rule's tests; a hand-written swap never leans on the global check.
    assert named_also(CATALOGUE["getDepartment:status:403-answered-401"]) is None
    assert not any(named_also(f) for f in CATALOGUE.values() if not f.constraint)
