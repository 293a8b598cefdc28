"""harness/plan/costs.py: a kill a plan's own self-check disproved is taken back from the table."""

from __future__ import annotations

from amws_conformance.harness.plan.costs import refute
from amws_conformance.harness.plan.plan import CostTable

BASE = "suites/rules/test_authentication.py::test_keys"


def _table() -> CostTable:
    return CostTable(
        tests={
            f"{BASE}[altered]": {"covers": ["fault:prefix", "x"]},
            f"{BASE}[unknown]": {"covers": ["fault:prefix", "fault:other"]},
        }
    )


def test_a_surviving_fault_takes_its_kill_back_from_the_tests_that_ran_under_it() -> None:
    table = _table()
    outcome = {
        "faults": [
            {
                "name": "prefix",
                "killed": False,
                "ran_tests": [f"{BASE}[fault=prefix-unknown]"],  # as the fault matrix names it
            }
        ]
    }
    assert refute(table, outcome) == ["prefix"]
    assert table.tests[f"{BASE}[unknown]"]["covers"] == ["fault:other"]
    # A test that did not run under it keeps its kill: the plan's run never tried it.
    assert table.tests[f"{BASE}[altered]"]["covers"] == ["fault:prefix", "x"]


def test_a_killed_fault_or_an_older_output_takes_nothing_back() -> None:
    table = _table()
    killed = {"name": "prefix", "killed": True, "ran_tests": [f"{BASE}[fault=prefix-unknown]"]}
    older = {"name": "other", "killed": False}  # written before ran_tests existed
    assert refute(table, {"faults": [killed, older]}) == []
    assert table.tests == _table().tests
