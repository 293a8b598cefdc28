"""From test outcomes to rule verdicts: failed only where the rule itself broke."""

from __future__ import annotations

from typing import Any

from amws_conformance.harness.evidence.verdicts import (
    EXIT_CONFORMANT,
    EXIT_INCOMPLETE,
    EXIT_NOT_CONFORMANT,
    PLAN_LEFT_OUT,
    CatalogueRule,
    aggregate,
    cause_of,
    certification,
    exit_line,
    exit_status,
    root_causes,
    rule_outcome,
    undecided_in_scope,
)

ACK = "CONV-WRITE-ACKNOWLEDGEMENT"


def _failed(rules: list[str], **entry: Any) -> dict[str, Any]:
    return {"rules": rules, "outcome": "failed", "phase": "call", "reason": "", **entry}


def test_a_check_of_another_rule_blocks_the_tests_own_rules() -> None:
    entry = _failed(["ACL-USABLE-ON-CREDENTIALS"], violated=[ACK])
    assert rule_outcome(entry, "ACL-USABLE-ON-CREDENTIALS") == ("blocked", [ACK])


def test_a_check_of_the_tests_own_rule_fails_it_and_blocks_the_others() -> None:
    entry = _failed([ACK, "DEPT-WRITE-ACK"], violated=[ACK])
    assert rule_outcome(entry, ACK) == ("failed", [])
    assert rule_outcome(entry, "DEPT-WRITE-ACK") == ("blocked", [ACK])


def test_the_tests_own_assertion_fails_its_rules() -> None:
    assert rule_outcome(_failed(["DEPT-NAME-UNIQUE"]), "DEPT-NAME-UNIQUE") == ("failed", [])


def test_a_fixture_failure_blocks() -> None:
    entry = _failed(["DEPT-NAME-UNIQUE"], phase="setup", reason="E   AssertionError: 500")
    assert rule_outcome(entry, "DEPT-NAME-UNIQUE") == ("blocked", ["set-up"])


def test_a_teardown_failure_after_a_passing_call_keeps_the_pass() -> None:
    entry = _failed(["DEPT-NAME-UNIQUE"], phase="teardown", call_passed=True)
    assert rule_outcome(entry, "DEPT-NAME-UNIQUE") == ("passed", [])


def test_no_answer_blocks() -> None:
    entry = _failed(["DEPT-NAME-UNIQUE"], cause="no answer")
    assert rule_outcome(entry, "DEPT-NAME-UNIQUE") == ("blocked", ["no answer"])


def test_a_rule_fails_on_any_failure_passes_on_any_pass_else_is_blocked() -> None:
    assert aggregate([("passed", []), ("failed", [])], broken=False) == ("failed", [])
    assert aggregate([("passed", [])], broken=True) == ("failed", [])
    assert aggregate([("blocked", [ACK]), ("passed", [])], broken=False) == ("passed", [])
    assert aggregate([("blocked", [ACK]), ("blocked", ["set-up"])], broken=False) == (
        "blocked",
        [ACK, "set-up"],
    )
    assert aggregate([("skipped", []), ("not-run", [])], broken=False) == ("skipped", [])
    assert aggregate([], broken=False) == ("not-run", [])


def test_failures_group_by_root_cause_largest_first() -> None:
    tests = {
        "a": _failed(["R1"], violated=[ACK]),
        "b": _failed(["R2"], violated=[ACK]),
        "c": _failed(["R3"], reason="E   AssertionError: assert 200 == 404"),
        "d": {"rules": ["R4"], "outcome": "passed"},
    }
    groups = root_causes(tests)
    assert [g["cause"] for g in groups] == [ACK, "AssertionError: assert 200 == 404"]
    assert groups[0]["tests"] == ["a", "b"] and groups[0]["blocked_rules"] == ["R1", "R2"]
    assert groups[1]["failed_rules"] == ["R3"]


def test_a_cause_leaves_out_what_differs_between_records() -> None:
    one = _failed(
        ["R"], reason="E   AssertionError: 0b7f3a52-6a2f-4d0e-9a51-0c3c7e5d2a11 at 1764150000"
    )
    two = _failed(
        ["R"], reason="E   AssertionError: 11111111-2222-4333-8444-555555555555 at 1764159999"
    )
    assert cause_of(one) == cause_of(two)
    assert "404" in cause_of(_failed(["R"], reason="E   assert 404 == 200"))


def test_a_flaky_test_never_makes_its_rule_passed() -> None:
    assert rule_outcome({"rules": ["R"], "outcome": "flaky"}, "R") == ("flaky", [])
    assert aggregate([("flaky", []), ("passed", [])], broken=False) == ("flaky", [])
    assert aggregate([("flaky", []), ("failed", [])], broken=False) == ("failed", [])


LEVELS = [
    CatalogueRule("N1", "normative", "doc1 § A", "one"),
    CatalogueRule("N2", "normative", "doc1 § A", "two"),
    CatalogueRule("A1", "assumed", "doc1 § B", "ours"),
]


def _passed(rules: list[str], **entry: Any) -> dict[str, Any]:
    return {"rules": rules, "outcome": "passed", "reason": None, **entry}


def test_certification_from_report_entries_alone() -> None:
    tests = {"t1": _passed(["N1"]), "t2": _passed(["N2"]), "t3": _passed(["A1"])}
    judged = certification(tests, LEVELS, [])
    assert judged["verdict"] == "conformant"
    assert judged["test_summary"] == {"passed": 3}
    assert judged["informative_tests"] == ["t3"]
    # A breach a global check saw in any deciding test fails the rule.
    seen = [{"test": "t1", "rule": "N2", "message": "no acknowledgement"}]
    judged = certification(tests, LEVELS, seen)
    assert judged["verdict"] == "not conformant"
    assert judged["rules"]["N2"]["global_check_failures"] == ["t1: no acknowledgement"]


def test_a_flaky_rule_leaves_the_run_incomplete_and_says_why() -> None:
    tests = {"t1": _passed(["N1"]), "t2": {**_passed(["N2"]), "outcome": "flaky"}}
    judged = certification(tests, LEVELS, [])
    assert judged["rules"]["N2"]["verdict"] == "flaky"
    assert judged["verdict"] == "incomplete"
    assert judged["undecided"] == {"flaky": 1}
    assert judged["normative_summary"]["flaky"] == 1


def test_a_test_relying_on_an_assumed_operation_decides_no_normative_rule() -> None:
    tests = {
        "t1": _passed(["N1"]),
        "t2": _failed(["N1"], assumed_operations=["createInvite"]),
        "t3": _failed(["N2"], assumed_operations=["createInvite"]),
    }
    judged = certification(tests, LEVELS, [])
    assert judged["rules"]["N1"]["verdict"] == "passed"
    assert judged["rules"]["N1"]["informative_tests"] == ["t2"]
    # Seen only through such a test: reported, left out of certification.
    assert judged["normative_not_certifiable"] == ["N2"]
    assert judged["verdict"] == "conformant"


def test_the_verdict_says_why_a_run_ended_early() -> None:
    tests = {"t1": _passed(["N1"]), "t2": _passed(["N2"])}
    assert certification(tests, LEVELS, [], unreachable_since="10:00:00")["verdict"] == (
        "conformant — target unreachable since 10:00:00"
    )
    assert certification(tests, LEVELS, [], stopped="keys.full refused")["verdict"] == (
        "incomplete — stopped before any test: keys.full refused"
    )
    assert certification(tests, LEVELS, [], interrupted="SIGTERM received")["verdict"] == (
        "conformant — interrupted (SIGTERM received)"
    )


def _skipped(rules: list[str], reason: str, outcome: str = "skipped") -> dict[str, Any]:
    return {"rules": rules, "outcome": outcome, "reason": reason}


def test_only_informative_failures_exit_0_and_count_when_strict() -> None:
    tests = {"t1": _passed(["N1"]), "t2": _passed(["N2"]), "t3": _failed(["A1"])}
    rules = certification(tests, LEVELS, [])["rules"]
    assert exit_status(rules) == EXIT_CONFORMANT
    line = exit_line(rules, EXIT_CONFORMANT)
    assert line.startswith("AMWS exit status 0: every certifying rule")
    assert "1 informative rule(s) failed, not counted" in line and "A1" in line
    assert "\n" not in line
    assert exit_status(rules, strict=True) == EXIT_NOT_CONFORMANT
    assert "A1" in exit_line(rules, EXIT_NOT_CONFORMANT, strict=True)


def test_a_normative_failure_exits_1_unless_it_is_a_known_failure() -> None:
    tests = {"t1": _failed(["N1"]), "t2": _passed(["N2"])}
    rules = certification(tests, LEVELS, [])["rules"]
    assert exit_status(rules) == EXIT_NOT_CONFORMANT
    assert exit_status(rules, forgiven=["N1"]) == EXIT_CONFORMANT
    # Seen only beside an assumption, the same failure is informative.
    tests["t1"]["assumed_operations"] = ["createInvite"]
    assert exit_status(certification(tests, LEVELS, [])["rules"]) == EXIT_CONFORMANT


def test_a_rule_left_undecided_in_scope_exits_incomplete_but_not_one_left_out() -> None:
    not_configured = {"t1": _passed(["N1"]), "t2": _skipped(["N2"], "not configured: keys.x")}
    rules = certification(not_configured, LEVELS, [])["rules"]
    assert undecided_in_scope(rules) == ["N2"]
    assert exit_status(rules) == EXIT_INCOMPLETE
    assert "N2" in exit_line(rules, EXIT_INCOMPLETE)
    for left_out in (
        {"t1": _passed(["N1"]), "t2": _skipped(["N2"], PLAN_LEFT_OUT, "not-run")},
        {"t1": _passed(["N1"])},  # no test of N2 was selected
    ):
        rules = certification(left_out, LEVELS, [])["rules"]
        assert undecided_in_scope(rules) == [] and exit_status(rules) == EXIT_CONFORMANT
    for in_scope in (
        _skipped(["N2"], "not run (time)", "not-run"),
        _failed(["N2"], phase="setup"),
        {**_passed(["N2"]), "outcome": "flaky"},
    ):
        rules = certification({"t1": _passed(["N1"]), "t2": in_scope}, LEVELS, [])["rules"]
        assert exit_status(rules) == EXIT_INCOMPLETE, in_scope


def test_failures_that_differ_only_in_record_data_are_one_root_cause() -> None:
    """The eleven signed-link failures of an independent implementation: one helper found no
    link field on eleven different reads, and each message carried its record."""

    def reason(n: int) -> str:
        record = (
            f"{{'uuid': '0b7f3a52-6a2f-4d0e-9a51-0c3c7e5d2a{n:02d}', 'firstName': "
            f"'amws-1a2b3c4d-P{n}', 'hasPhoto': True, 'links': {{'img': '/s/{n}'}}, "
            f"'tags': [{n}, 'x{n}']}}"
        )
        return (
            f"E       AssertionError: the read has no photo link: {record}\n"
            "E       assert False\n"
            "E        +  where False = isinstance(None, str)\n\n"
            "suites/rules/test_media_links.py:122: AssertionError"
        )

    tests = {f"t{n}": _failed([f"LINK-{n}"], reason=reason(n)) for n in range(11)}
    tests["other"] = _failed(
        ["R"], reason="E   AssertionError: {'code': 500}\nE   assert 500 == 201"
    )
    groups = root_causes(tests)
    assert len(groups) == 2
    assert len(groups[0]["tests"]) == 11 and len(groups[0]["failed_rules"]) == 11
    assert "the read has no photo link" in groups[0]["cause"]
    assert "amws-" not in groups[0]["cause"] and "img" not in groups[0]["cause"]
    # What was compared stays part of the cause: another status is another breach.
    assert "assert 500 == 201" in groups[1]["cause"]
    other_status = _failed(["R"], reason="E   AssertionError: {'code': 422}\nE   assert 422 == 201")
    assert cause_of(other_status) != groups[1]["cause"]


def test_a_bare_comparison_is_grouped_by_where_it_failed() -> None:
    """With the record data out, "assert … == …" says nothing of what broke: such failures
    group by the place that raised them, one group per place."""

    def bare(left: str, right: str, where: str) -> dict[str, Any]:
        reason = f"E       AssertionError: assert '{left}' == '{right}'\n\n{where}: AssertionError"
        return _failed(["R"], reason=reason)

    here, there = "suites/rules/test_x.py:10", "suites/rules/test_y.py:20"
    tests = {
        "a": bare("amws-1-a", "x", here),
        "b": bare("amws-2-b", "y", here),
        "c": bare("amws-3-c", "z", there),
    }
    groups = root_causes(tests)
    assert sorted(len(g["tests"]) for g in groups) == [1, 2]
    assert any(here in g["cause"] for g in groups) and any(there in g["cause"] for g in groups)
