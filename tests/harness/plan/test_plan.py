"""The run planner: set cover over measured costs, shared set-ups paid once, the staleness
test of the cost table, and the plans' coverage."""

from __future__ import annotations

from pathlib import Path

import pytest

from amws_conformance import spec
from amws_conformance.harness.plan import plan as _plan
from amws_conformance.harness.plan.plan import Candidate, CostTable, build, cover, stale, units_of


def _table(**tests: dict) -> CostTable:
    return CostTable(tests=dict(tests), setups={}, measured={})


def _c(nodeid: str, decides: set[str], full: int, uses: frozenset[str] = frozenset()) -> Candidate:
    return Candidate(nodeid, frozenset(decides), {"full": full}, 1, uses)


def test_cover_takes_the_cheaper_of_two_deciders() -> None:
    chosen = cover({"A"}, [_c("t1", {"A"}, 500), _c("t2", {"A"}, 100)], _table())
    assert [c.nodeid for c in chosen] == ["t2"]


def test_a_rule_only_one_test_decides_forces_that_test_in() -> None:
    pool = [_c("dear", {"A", "B"}, 5000), _c("cheap", {"A"}, 10)]
    chosen = {c.nodeid for c in cover({"A", "B"}, pool, _table())}
    assert chosen == {"dear"}  # B forces it in; it covers A too, so cheap is redundant


def test_one_test_deciding_two_rules_beats_two_tests_costing_more() -> None:
    pool = [_c("both", {"A", "B"}, 150), _c("a", {"A"}, 100), _c("b", {"B"}, 100)]
    assert [c.nodeid for c in cover({"A", "B"}, pool, _table())] == ["both"]


def test_a_shared_set_up_is_paid_once() -> None:
    table = CostTable(setups={"setup:s": {"units": {"full": 1000}}})
    pool = [
        _c("u1", {"A"}, 50, frozenset({"setup:s"})),
        _c("u2", {"B"}, 50, frozenset({"setup:s"})),
        _c("alone", {"B"}, 300),
    ]
    chosen = [c.nodeid for c in cover({"A", "B"}, pool, table)]
    # A forces u1 (and its set-up) in; then u2 adds 50, not 1050, and beats alone.
    assert chosen == ["u1", "u2"]
    table.tests = {"u1": {"units": {"full": 50}, "uses": ["setup:s"]}}
    table.tests["u2"] = {"units": {"full": 50}, "uses": ["setup:s"]}
    assert units_of(["u1", "u2"], table) == {"full": 1100}


def test_elements_nobody_decides_are_reported_not_invented() -> None:
    chosen = cover({"A", "Z"}, [_c("t", {"A"}, 1)], _table())
    assert [c.nodeid for c in chosen] == ["t"]


def test_certify_covers_every_certifying_rule_and_prefers_scenario_tests() -> None:
    table = _table(
        **{
            "suites/rules/a.py::t1": {"units": {"full": 300}, "decides": ["DEPT-WRITE-ACK"]},
            "suites/contract/c.py::t2": {"units": {"full": 10}, "decides": ["DEPT-WRITE-ACK"]},
            "suites/stateful/s.py::t3": {"units": {"full": 10}, "decides": ["LOC-NOT-FOUND"]},
            "suites/rules/a.py::t4": {"units": {"full": 1}, "decides": [], "covers": ["x"]},
        }
    )
    plan = build("certify", table)
    # The contract test is cheaper, but certifies nothing on its own; the stateful one is the
    # only decider of its rule, so it comes in for it.
    assert plan.keeps == {"suites/rules/a.py::t1", "suites/stateful/s.py::t3"}
    assert not plan.uncovered


def test_certify_samples_every_permission_of_the_matrix() -> None:
    tests = {
        f"m::{op}-{way}": {
            "units": {way: 30},
            "decides": ["AUTH-PERMISSION-READ-WRITE"],
            "covers": [f"permission:{perm}"],
        }
        for op, perm in (
            ("getDepartment", "Read Departments"),
            ("listDepartments", "Read Departments"),
            ("createDepartment", "Write Departments"),
        )
        for way in ("none", "readonly")
        if not (way == "readonly" and perm.startswith("Read"))
    }
    plan = build("certify", _table(**tests))
    sampled = {e for n in plan.keeps for e in tests[n]["covers"]}
    assert sampled == {"permission:Read Departments", "permission:Write Departments"}
    assert len(plan.keeps) == 2


def test_deep_keeps_everything_and_unknown_tests_always_run() -> None:
    table = _table(**{"known": {"units": {"full": 10}, "decides": []}})
    assert build("deep", table).selects("known", table)
    gate = build("gate", table)
    assert not gate.selects("known", table)
    assert gate.selects("brand-new-test", table)  # no cost known: run it, never hide it


def test_stale_table_names_the_test_and_passes_once_refreshed() -> None:
    table = _table(a={"units": {"full": 1000}}, b={"units": {"full": 100}}, gone={"units": {}})
    measured = {
        "a": {"units": {"full": 1600}},  # moved by 60 %
        "b": {"units": {"full": 250}},  # moved by 150, within the 200-unit slack
        "new": {"units": {"full": 30}},
    }
    problems = stale(table, measured)
    assert problems == [
        "a: full 1000 units in the table, 1600 measured",
        "new: not in the cost table",
        "gone: in the cost table, no such test",
    ]
    refreshed = CostTable(tests={n: dict(m) for n, m in measured.items()})
    assert stale(refreshed, measured) == []


def test_table_round_trips_atomically(tmp_path: Path) -> None:
    table = CostTable(tests={"t": {"units": {"full": 1}}}, setups={}, measured={"at": "now"})
    path = tmp_path / "costs.json"
    table.dump(path)
    assert CostTable.load(path).tests == table.tests
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("name", ["certify", "gate"])
def test_the_shipped_table_gives_each_plan_full_coverage(name: str) -> None:
    plan = build(name, CostTable.load())
    assert plan.keeps, "the shipped cost table is empty"
    assert not plan.uncovered, plan.uncovered


def test_a_test_that_skipped_where_measured_is_the_last_resort() -> None:
    table = _table(
        **{
            "suites/rules/a.py::skips": {
                "units": {},
                "decides": ["CONV-SYSTEM-SCOPE-404", "DEPT-FIELD-LENGTH"],
                "skipped": True,
            },
            "suites/rules/a.py::runs": {
                "units": {"full": 90},
                "decides": ["CONV-SYSTEM-SCOPE-404"],
            },
        }
    )
    plan = build("certify", table)
    # Free, but it decided nothing where it was measured: the test that ran is preferred,
    # and the skipping one is kept only for the rule nothing else decides.
    assert plan.keeps == {"suites/rules/a.py::runs", "suites/rules/a.py::skips"}
    only = _table(**{"suites/rules/a.py::runs": table.tests["suites/rules/a.py::runs"]})
    only.tests["suites/rules/a.py::skips"] = {**table.tests["suites/rules/a.py::skips"]}
    only.tests["suites/rules/a.py::skips"]["decides"] = ["CONV-SYSTEM-SCOPE-404"]
    assert build("certify", only).keeps == {"suites/rules/a.py::runs"}


def test_certify_keeps_a_killer_of_each_fault_of_the_rules_it_decides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from amws_conformance.harness.plan.costs import kills_from_matrix

    matrix = {
        "faults": [
            {
                "name": "weak-spot",
                "rule": "DEPT-WRITE-ACK",
                "failed_tests": ["m::strong[fault=weak-spot]"],
            },
            {
                "name": "assumed-one",
                "rule": "INV-UPDATE-200",
                "failed_tests": ["m::informative[x-fault=assumed-one]"],
            },
        ]
    }
    kills = kills_from_matrix(matrix)
    assert kills == {"m::strong": ["weak-spot"], "m::informative[x]": ["assumed-one"]}
    table = _table(
        **{
            "m::cheap": {"units": {"full": 10}, "decides": ["DEPT-WRITE-ACK"]},
            "m::strong": {
                "units": {"full": 90},
                "decides": ["DEPT-WRITE-ACK"],
                "covers": ["fault:weak-spot"],
            },
            "m::informative[x]": {
                "units": {"full": 5},
                "decides": [],
                "covers": ["fault:assumed-one"],
            },
        }
    )
    table.measured = {"faults": {f["name"]: f["rule"] for f in matrix["faults"]}}
    # The cheap test decides the rule but does not catch its fault: the killer is kept
    # instead; the fault of an assumed rule asks for nothing (without a fault share).
    rules = _plan.plan_rules()
    del rules["certify"]["fault_share"]
    monkeypatch.setattr(_plan, "plan_rules", lambda: rules)
    assert build("certify", table).keeps == {"m::strong"}


def test_certify_adds_the_cheapest_killers_of_other_faults_up_to_its_share() -> None:
    table = _table(
        **{
            "m::strong": {"units": {"full": 90}, "decides": ["DEPT-WRITE-ACK"]},
            "m::dear": {"units": {"full": 400}, "covers": ["fault:assumed-one"]},
            "m::cheap": {"units": {"full": 40}, "covers": ["fault:assumed-one"]},
        }
    )
    table.measured = {"faults": {"assumed-one": "INV-UPDATE-200"}}
    # One fault in the catalogue, no killer kept for the rules decided: the share (96 %)
    # asks for a killer of it, and the cheaper one is taken.
    assert build("certify", table).keeps == {"m::strong", "m::cheap"}


def test_a_fault_matrix_id_maps_back_to_the_plain_test() -> None:
    from amws_conformance.harness.plan.plan import without_fault

    base = "suites/rules/t.py::test_x"
    assert without_fault(f"{base}[fault=f1]", "f1") == base
    assert without_fault(f"{base}[fault=f1-Group]", "f1") == f"{base}[Group]"
    assert without_fault(f"{base}[Group-fault=f1]", "f1") == f"{base}[Group]"
    assert without_fault(f"{base}[fault=f1-x-y]", "f1") == f"{base}[x-y]"


def test_mutant_killers_join_by_mutants_per_unit_within_the_bucket_budget() -> None:
    table = CostTable(
        tests={
            "cheap_many": {"units": {"full": 100}, "covers": ["fault:m:1", "fault:m:2"]},
            "cheap_one": {"units": {"full": 100}, "covers": ["fault:m:3"]},
            "dear_one": {"units": {"full": 900}, "covers": ["fault:m:4"]},
        },
        measured={"mutants": ["m:1", "m:2", "m:3", "m:4"]},
    )
    pool = [table.candidate(n) for n in sorted(table.tests)]
    wanted = {"fault:m:1", "fault:m:2", "fault:m:3", "fault:m:4"}
    added = _plan._within_budget([], pool, table, wanted, budget={"full": 250})
    # Two mutants for 100 units first, then one for 100; the 900-unit killer does not fit.
    assert [c.nodeid for c in added] == ["cheap_many", "cheap_one"]
    everything = _plan._within_budget([], pool, table, wanted, budget={"full": 10_000})
    assert {c.nodeid for c in everything} == set(table.tests)


def test_the_mutant_budget_is_what_one_documented_bucket_pays_for() -> None:
    documented = spec.rate_limit()
    assert _plan.bucket_budget(10) == documented.capacity + 10 * documented.refill_per_minute
    # A bucket the target does not declare is the documented one.
    assert _plan.budgets(10)["full"] == _plan.bucket_budget(10)


def test_a_raised_quota_buys_more_of_the_budget_and_a_pool_does_not() -> None:
    """The budget is one key's, as the target declares it: certify on a raised quota takes
    the mutant killers a documented key's minutes do not pay for; keys added to a pool of
    documented ones make it faster, not larger."""
    table = CostTable(
        tests={
            "base": {"units": {"full": 100}, "decides": ["DEPT-WRITE-ACK"]},
            "killer": {"units": {"full": 60_000}, "covers": ["fault:m:1"]},
        },
        measured={"faults": {"m:1": "DEPT-WRITE-ACK"}, "mutants": ["m:1"]},
    )
    documented = build("certify", table)
    raised = build("certify", table, {"full": {"capacity": 10**6, "refill_per_minute": 10**6}})
    assert "killer" not in documented.keeps and "killer" in raised.keeps
    budget = _plan.budgets(47, {"full": {"capacity": 2000, "refill_per_minute": 800}})
    assert budget["full"] == _plan.bucket_budget(47) == budget["readonly"]


def test_mutants_of_rules_certify_does_not_prove_come_after_with_what_is_left() -> None:
    """A mutant of an assumed rule's constraint is still the contract's: certify takes its
    killer once the killers of its proven rules' mutants are in, within the same budget."""
    table = CostTable(
        tests={
            "base": {"units": {"full": 100}, "decides": ["DEPT-WRITE-ACK"]},
            "proven": {"units": {"full": 1_000}, "covers": ["fault:m:1"]},
            "assumed": {"units": {"full": 10}, "covers": ["fault:m:2"]},
        },
        measured={
            "faults": {"m:1": "DEPT-WRITE-ACK", "m:2": "CONV-TIMESTAMP-NO-OFFSET-UTC"},
            "mutants": ["m:1", "m:2"],
        },
    )
    assert build("certify", table).keeps == {"base", "proven", "assumed"}
    tight = {"full": {"capacity": 1_105, "refill_per_minute": 0}}  # room for the first only
    assert build("certify", table, tight).keeps == {"base", "proven"}


def test_mutants_do_not_count_toward_the_hand_written_fault_share() -> None:
    table = CostTable(
        tests={
            "hand": {"units": {"full": 100}, "covers": ["fault:h"]},
            "mutant": {"units": {"full": 1}, "covers": ["fault:m:1", "fault:m:2"]},
        },
        measured={"faults": {"h": "R", "m:1": "R", "m:2": "R"}, "mutants": ["m:1", "m:2"]},
    )
    pool = [table.candidate(n) for n in sorted(table.tests)]
    added = _plan._proving([], pool, table, share=1.0)
    assert [c.nodeid for c in added] == ["hand"]
