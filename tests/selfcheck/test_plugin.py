"""The self-check's pytest plugin (selfcheck/plugin.py), run in a nested pytest against a live
reference server: the fault matrix and ``--reference-fault`` belong to it, not to the harness's
plugin, which users load."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from amws_conformance.selfcheck.plugin import fault_rules
from tests.reference_server.conftest import LiveServer

MATRIX = "bearer-not-stripped=AUTH-BEARER-PREFIX,paging-total-wrong=PAGE-TOTAL-COUNT"
TESTS = """
import pytest

def _active(control):
    return control.get("/_reference/faults").json()["active"]

@pytest.mark.rule("AUTH-BEARER-PREFIX")
def test_first(control):
    assert _active(control) == ["bearer-not-stripped"]
    raise AssertionError("caught it")

@pytest.mark.rule("AUTH-BEARER-PREFIX")
def test_second(control):
    raise AssertionError("must be skipped: its fault is already killed")

@pytest.mark.rule("PAGE-TOTAL-COUNT")
@pytest.mark.parametrize("n", [1, 2])
def test_paging(control, n):
    assert _active(control) == ["paging-total-wrong"]

@pytest.mark.rule("DEPT-LIST-SHAPE")
def test_other_rule():
    raise AssertionError("no fault of the matrix breaks its rule: deselected")
"""


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


def _profile(pytester: pytest.Pytester, server: LiveServer) -> Path:
    path = pytester.path / "target.yaml"
    path.write_text(yaml.safe_dump(server.profile), encoding="utf-8")
    return path


def _matrix_run(
    pytester: pytest.Pytester, server: LiveServer, out: Path, *extra: str
) -> pytest.RunResult:
    """``test_matrix.py`` under the fault matrix, the kill matrix written to ``out``."""
    return pytester.runpytest(
        "-p",
        "amws_conformance.selfcheck.plugin",
        "--target",
        str(_profile(pytester, server)),
        "--no-preflight",
        "--fault-matrix",
        MATRIX,
        "--fault-matrix-out",
        str(out),
        *extra,
        "-p",
        "no:cacheprovider",
    )


def test_pairs_are_read_in_order_and_checked() -> None:
    assert list(fault_rules("b=R2, a=R1")) == ["b", "a"]
    assert fault_rules(None) == {}
    with pytest.raises(pytest.UsageError, match="is not NAME=RULE"):
        fault_rules("lonely")


def test_the_harness_alone_knows_no_faults(pytester: pytest.Pytester) -> None:
    helped = pytester.runpytest("--help")
    assert "--fault-matrix" not in helped.stdout.str()
    assert "--reference-fault" not in helped.stdout.str()
    pytester.makepyfile("def test_x():\n    pass\n")
    refused = pytester.runpytest("--fault-matrix", MATRIX)
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    with_plugin = pytester.runpytest("-p", "amws_conformance.selfcheck.plugin", "--help")
    with_plugin.stdout.fnmatch_lines(["*--fault-matrix=FAULTS*", "*--reference-fault=NAME*"])


def test_each_test_runs_under_the_faults_of_its_rules(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    pytester.makepyfile(test_matrix=TESTS)
    pytester.makeconftest(
        """
import pytest
from amws_conformance.harness._session import PLAN_NAME_KEY

@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    for item in items:
        print("plan name", item.stash[PLAN_NAME_KEY])
"""
    )
    out = pytester.path / "matrix.json"
    result = _matrix_run(pytester, server, out, "-s")
    result.assert_outcomes(passed=2, failed=1, skipped=1, deselected=1)
    first = "test_matrix.py::test_first[fault=bearer-not-stripped]"
    paging = [f"test_matrix.py::test_paging[fault=paging-total-wrong-{n}]" for n in (1, 2)]
    assert json.loads(out.read_text(encoding="utf-8")) == {
        "bearer-not-stripped": {"tests": 1, "failed": [first], "ran": [first]},
        "paging-total-wrong": {"tests": 2, "failed": [], "ran": paging},
    }
    # The run's plan knows each test by its plain name, the cost table's.
    result.stdout.fnmatch_lines(
        [
            "*plan name test_matrix.py::test_first",
            "*plan name test_matrix.py::test_paging[[]1[]]",
        ],
        consecutive=False,
    )


def test_every_test_runs_when_the_whole_kill_matrix_is_wanted(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    pytester.makepyfile(test_matrix=TESTS)
    out = pytester.path / "matrix.json"
    _matrix_run(pytester, server, out, "--fault-matrix-every-test").assert_outcomes(
        passed=2, failed=2, deselected=1
    )
    found = json.loads(out.read_text(encoding="utf-8"))
    assert found["bearer-not-stripped"]["tests"] == 2
    assert len(found["bearer-not-stripped"]["failed"]) == 2


CREDITED = """
import pytest

@pytest.mark.rule("DEPT-LIST-SHAPE")
def test_reads(api):
    api.get("/api/ws/v1/departments")

@pytest.mark.rule("DEPT-LIST-SHAPE")
def test_fails_for_its_own_reason(api):
    raise AssertionError("a failure that names no rule proves nothing of the mutant")

@pytest.mark.rule("DEPT-LIST-SHAPE")
def test_reads_something_else(api):
    api.get("/api/ws/v1/roles")
"""


def test_a_mutant_the_global_check_names_is_killed_by_any_test_calling_its_operation(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    """A mutant answering a status the spec does not list (a list answering 201) breaks
    CONV-RESPONSE-CONFORMS wherever the operation is called: it runs under the tests the cost
    table says call the operation, whatever their rules, and only a failure naming that rule
    kills it."""
    pytester.makepyfile(test_matrix=CREDITED)
    calls = {
        "test_reads": ["listDepartments"],
        "test_fails_for_its_own_reason": ["listDepartments"],
        "test_reads_something_else": ["listRoles"],
    }
    table = {
        "measured": {},
        "setups": {},
        "tests": {
            f"test_matrix.py::{name}": {
                "units": {},
                "operations": ops,
                "rules": ["DEPT-LIST-SHAPE"],
            }
            for name, ops in calls.items()
        },
    }
    path = pytester.path / "costs.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    out = pytester.path / "matrix.json"
    mutant = "listDepartments:status:200-answered-201"
    result = pytester.runpytest(
        "-p",
        "amws_conformance.selfcheck.plugin",
        "--target",
        str(_profile(pytester, server)),
        "--no-preflight",
        "--cost-table",
        str(path),
        "--fault-matrix",
        f"{mutant}=AUTH-PERMISSION-READ-WRITE+CONV-RESPONSE-CONFORMS",
        "--fault-matrix-out",
        str(out),
        "--fault-matrix-every-test",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(failed=2, deselected=1)
    reads = f"test_matrix.py::test_reads[fault={mutant}]"
    own = f"test_matrix.py::test_fails_for_its_own_reason[fault={mutant}]"
    assert json.loads(out.read_text(encoding="utf-8")) == {
        mutant: {"tests": 2, "failed": [reads], "ran": [reads, own]}
    }
