"""From test outcomes to rule verdicts: failed only where the rule itself was broken.

A test names its rules. When it fails, the question is which of them the target broke:

- a check of a named rule failed (:class:`harness._checks.RuleViolation`, a global check or a
  contract check): that rule failed; the test's other rules were never reached, so they are
  *blocked by* it;
- a fixture failed before the test body ran: the test's rules are blocked by the set-up;
- the test's own assertion failed: its rules failed;
- the test passed and only its teardown failed: its rules passed (their assertions held).

A rule's verdict then follows from its deciding tests and the global-check violations seen
anywhere in the run. Failures are grouped by root cause, the largest group first, so one
breach in a shared fixture reads as one cause, not as hundreds of failed rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import spec

SETUP_CAUSE = "set-up"
UNANSWERED = "no answer"  # a request got none: refused connection, unknown host, time-out
NOT_RUN_UNREACHABLE = "not run (target unreachable)"
# Values that differ between two meetings of one breach: UUIDs, and long numbers (times,
# counters). Short numbers stay: a status code is part of what broke.
_NOISE = re.compile(rf"{spec.uuid_pattern().pattern}|\d{{5,}}")


def rule_outcome(entry: Mapping[str, Any], rule: str) -> tuple[str, list[str]]:
    """What one test says of one of its rules: (outcome, the causes blocking it)."""
    outcome = entry["outcome"]
    if outcome != "failed":
        return outcome, []
    if entry.get("phase") == "teardown" and entry.get("call_passed"):
        return "passed", []
    if entry.get("cause"):
        return "blocked", [entry["cause"]]
    violated = list(entry.get("violated") or ())
    if violated:
        return ("failed", []) if rule in violated else ("blocked", violated)
    if entry.get("phase") == "setup":
        return "blocked", [entry.get("cause") or SETUP_CAUSE]
    return "failed", []


def aggregate(outcomes: Iterable[tuple[str, list[str]]], broken: bool) -> tuple[str, list[str]]:
    """A rule's verdict from its tests' outcomes; ``broken``: a global check saw it broken."""
    outcomes = list(outcomes)
    seen = {o for o, _ in outcomes}
    if broken or "failed" in seen:
        return "failed", []
    if "passed" in seen:
        return "passed", []
    if "blocked" in seen:
        return "blocked", sorted({c for o, causes in outcomes if o == "blocked" for c in causes})
    if "skipped" in seen:
        return "skipped", []
    return "not-run", []


def failure_line(reason: str | None) -> str:
    """The deciding line of a pytest failure text: its first ``E`` line, without the ``E``."""
    for line in (reason or "").splitlines():
        if line.startswith("E "):
            return line[1:].strip()
    lines = [line for line in (reason or "").splitlines() if line.strip()]
    return lines[-1].strip() if lines else ""


def cause_of(entry: Mapping[str, Any]) -> str:
    """The root cause a failed test is grouped under: the rule a check found broken, else its
    deciding line with the values (numbers, UUIDs) taken out, so that the same breach met with
    different records reads as one cause."""
    if entry.get("cause"):
        return str(entry["cause"])
    violated = entry.get("violated") or ()
    if violated:
        return ", ".join(sorted(violated))
    prefix = f"{SETUP_CAUSE}: " if entry.get("phase") == "setup" else ""
    return prefix + _NOISE.sub("…", failure_line(entry.get("reason")))[:160]


def root_causes(tests: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Failed tests grouped by :func:`cause_of`, the largest group first. Each group says which
    rules its tests failed and which they left blocked, and one failure line as its example."""
    groups: dict[str, dict[str, Any]] = {}
    for nodeid, entry in tests.items():
        if entry["outcome"] != "failed":
            continue
        cause = cause_of(entry)
        group = groups.setdefault(
            cause,
            {
                "cause": cause,
                "rules": sorted(entry.get("violated") or ()),
                "tests": [],
                "failed_rules": set(),
                "blocked_rules": set(),
                "example": failure_line(entry.get("reason"))[:300],
            },
        )
        group["tests"].append(nodeid)
        for rule in entry["rules"]:
            outcome, _ = rule_outcome(entry, rule)
            if outcome in ("failed", "blocked"):
                group[f"{outcome}_rules"].add(rule)
    ordered = sorted(groups.values(), key=lambda g: (-len(g["tests"]), g["cause"]))
    for group in ordered:
        group["failed_rules"] = sorted(group["failed_rules"])
        group["blocked_rules"] = sorted(group["blocked_rules"])
    return ordered
