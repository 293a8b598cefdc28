"""From test outcomes to rule verdicts: failed only where the rule itself broke."""

from __future__ import annotations

from typing import Any

from harness._verdicts import aggregate, cause_of, root_causes, rule_outcome

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
