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

:func:`certification` is the whole of that as one pure function over what ``report.json``
holds (its ``tests``, its ``global_check_violations`` and the rule catalogue's levels): the
report plugin writes its result, and ``amws-conformance verify`` recomputes it from a bundled
report alone and compares.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from amws_conformance import spec

SETUP_CAUSE = "set-up"
UNANSWERED = "no answer"  # a request got none: refused connection, unknown host, time-out
NOT_RUN_UNREACHABLE = "not run (target unreachable)"
NOT_SELECTED = "not run (no test of it was selected)"
PLAN_LEFT_OUT = "not run (plan)"
# Exit statuses that follow the run's certifying verdict. pytest's own others stay as pytest
# sets them: 2 interrupted, 3 internal error, 4 usage error (an unusable profile), 5 no tests.
EXIT_CONFORMANT = 0
EXIT_NOT_CONFORMANT = 1
EXIT_INCOMPLETE = 6
# Rule verdicts, in the order reports count them. A rule is *flaky* when a test deciding it
# failed and then passed on a rerun (--stability): never counted as passed.
SUMMARY = ("passed", "failed", "flaky", "blocked", "skipped", "not-run")
# What a test entry of report.json carries beside its outcome for the verdicts: why a failure
# blocks rather than fails (phase, violated, cause, call_passed), and what makes the test
# informative only (assumed_operations).
FAILURE_FIELDS = ("phase", "violated", "cause", "call_passed")
# Values that differ between two meetings of one breach: UUIDs, and long numbers (times,
# counters). Short numbers stay: a status code is part of what broke.
_NOISE = re.compile(rf"{spec.uuid_pattern().pattern}|\d{{5,}}")
# Record data in a failure line: quoted text, and the innermost bracketed value (taken out
# again and again until none is left); a value pytest cut short leaves an opening bracket.
_QUOTED = re.compile(r"(?<!\w)'[^'\n]*'|\"[^\"\n]*\"")
_BRACKETED = re.compile(r"\{[^{}\[\]]*\}|\[[^{}\[\]]*\]")
_UNCLOSED = re.compile(r"[{\[].*$")
# What is left of a shaped line once its placeholders, assert keywords and punctuation go: a
# line with nothing left ("assert … == …") says nothing of what broke, so its place does.
_CONTENT = re.compile(r"…|\b(?:assert|in|not|is|and|or|None|True|False|AssertionError)\b|\W")
# Where a failure was raised: the last "path.py:line: Error" line of pytest's text.
_CRASH = re.compile(r"^(\S+\.py):(\d+): \w+", re.M)


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
    if "flaky" in seen:  # it failed once: a pass beside it does not make the rule passed
        return "flaky", []
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


def _assert_line(reason: str | None) -> str:
    """The first ``E   assert …`` line of a failure text (what was compared), if any."""
    for line in (reason or "").splitlines():
        if line.startswith("E ") and line[1:].strip().startswith("assert "):
            return line[1:].strip()
    return ""


def _shape(line: str) -> str:
    """A failure line with the record data taken out: identifiers, long numbers, quoted
    strings, and whatever a dict, list or set shows, so that one breach met with different
    records reads the same."""
    line = _QUOTED.sub("…", _NOISE.sub("…", line))
    while True:
        shorter = _BRACKETED.sub("…", line)
        if shorter == line:
            break
        line = shorter
    return _UNCLOSED.sub("…", line)


def cause_of(entry: Mapping[str, Any]) -> str:
    """The root cause a failed test is grouped under: the rule a check found broken, else its
    deciding line (and what it compared) with the record data taken out, so that the same
    breach met with different records reads as one cause."""
    if entry.get("cause"):
        return str(entry["cause"])
    violated = entry.get("violated") or ()
    if violated:
        return ", ".join(sorted(violated))
    prefix = f"{SETUP_CAUSE}: " if entry.get("phase") == "setup" else ""
    reason = entry.get("reason")
    line = _shape(failure_line(reason))
    compared = _shape(_assert_line(reason))
    if compared and compared != line:
        line = f"{line} — {compared}"
    if not _CONTENT.sub("", line):
        crashes = _CRASH.findall(reason or "")
        if crashes:  # the same bare comparison at one place is one breach; elsewhere, another
            line = f"{line} (at {crashes[-1][0]}:{crashes[-1][1]})"
    return prefix + line[:160]


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


@dataclass(frozen=True)
class CatalogueRule:
    """What the verdicts need of one rule of the catalogue."""

    id: str
    level: str  # normative or assumed
    source: str
    title: str

    @property
    def normative(self) -> bool:
        return self.level == "normative"


def catalogue() -> list[CatalogueRule]:
    """This suite's rule catalogue (``spec/rules.yaml``), in file order."""
    return [CatalogueRule(r.id, r.level, r.source, r.title) for r in spec.rules()]


def binding(entry: Mapping[str, Any], level: Mapping[str, str]) -> bool:
    """Whether a test's outcome may decide the normative rules it names: not when it also
    checks an assumed rule or reached an operation of assumed shape."""
    if entry.get("assumed_operations"):
        return False
    return all(level.get(rule) != "assumed" for rule in entry["rules"])


def decides(entry: Mapping[str, Any], level: Mapping[str, str]) -> list[str]:
    """The normative rules a test's outcome may decide."""
    if not binding(entry, level):
        return []
    return [r for r in entry["rules"] if level.get(r) == "normative"]


def rule_verdicts(
    tests: Mapping[str, Mapping[str, Any]],
    rules: Iterable[CatalogueRule],
    violations: Iterable[Mapping[str, str]],
) -> dict[str, dict[str, Any]]:
    """Every rule's verdict from report.json's ``tests`` and ``global_check_violations``."""
    rules = list(rules)
    by_rule: dict[str, list[str]] = defaultdict(list)
    for nodeid, entry in tests.items():
        for rule_id in entry["rules"]:
            by_rule[rule_id].append(nodeid)
    global_failures: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for violation in violations:
        global_failures[violation["rule"]].append((violation["test"], violation["message"]))
    level = {rule.id: rule.level for rule in rules}
    verdicts: dict[str, dict[str, Any]] = {}
    for rule in rules:
        named = by_rule.get(rule.id, [])
        # A test that also checks an assumed rule, or that reached an operation of assumed
        # shape (x-assumed), may fail for a choice the documents leave open: it never
        # decides a normative rule while the rule has other tests; a rule observed only
        # that way is reported and left out of certification.
        deciding = [t for t in named if not rule.normative or binding(tests[t], level)]
        judged = deciding or named
        # A breach a global check saw counts wherever it was seen: in a test of this rule,
        # in any test whose outcome may decide normative rules, or outside any test (the
        # preflight). Tests relying on assumed operations observe only informatively.
        found = [
            f"{n}: {m}"
            for n, m in global_failures.get(rule.id, [])
            if n in judged or n not in tests or binding(tests[n], level)
        ]
        verdict, blocked_by = aggregate(
            [rule_outcome(tests[t], rule.id) for t in judged], bool(found)
        )
        skips = sorted(
            {
                tests[t]["reason"]
                for t in judged
                if tests[t]["outcome"] in ("skipped", "not-run") and tests[t].get("reason")
            }
        )
        verdicts[rule.id] = {
            "verdict": verdict,
            "level": rule.level,
            "source": rule.source,
            "title": rule.title,
            "tests": named,
            "informative_tests": [t for t in named if t not in deciding],
            "certifies": rule.normative and bool(deciding or not named),
            "skip_reasons": skips,
            "blocked_by": blocked_by,
            "global_check_failures": found[:5],
        }
    return verdicts


def undecided(normative: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """How many certifying rules were neither passed nor failed, per reason: the plan or the
    clock left them out, a key or capability is not configured, a set-up blocked them, a
    test of them was flaky."""
    reasons: Counter[str] = Counter()
    for verdict in normative.values():
        if verdict["verdict"] in ("passed", "failed"):
            continue
        if verdict["verdict"] == "flaky":
            reasons["flaky"] += 1
        elif verdict["blocked_by"]:
            reasons["blocked by " + ", ".join(verdict["blocked_by"])] += 1
        else:
            reasons[(verdict["skip_reasons"] or [NOT_SELECTED])[0].split(": ")[0]] += 1
    return dict(reasons.most_common())


def certification(
    tests: Mapping[str, Mapping[str, Any]],
    rules: Iterable[CatalogueRule],
    violations: Iterable[Mapping[str, str]],
    unreachable_since: str | None = None,
    stopped: str | None = None,
    interrupted: str | None = None,
) -> dict[str, Any]:
    """The verdict part of report.json, from its per-test entries (outcome, rules, reason,
    assumed_operations and the :data:`FAILURE_FIELDS`), the global-check violations and the
    catalogue's rule levels.

    The run is *conformant* when every certifying normative rule passed, *not conformant*
    when one failed, else *incomplete*. Expectations play no part; a flaky rule is not passed.
    """
    verdicts = rule_verdicts(tests, rules, violations)
    normative = {k: v for k, v in verdicts.items() if v["certifies"]}
    counts = Counter(v["verdict"] for v in normative.values())
    if counts["failed"]:
        verdict = "not conformant"
    elif normative and counts["passed"] == len(normative):
        verdict = "conformant"
    else:
        verdict = "incomplete"  # nothing failed, but not every rule was decided
    if unreachable_since:
        verdict += f" — target unreachable since {unreachable_since}"
    if interrupted:
        verdict += f" — interrupted ({interrupted})"
    if stopped:
        verdict = f"incomplete — stopped before any test: {stopped}"
    return {
        "verdict": verdict,
        "normative_summary": {k: counts.get(k, 0) for k in SUMMARY},
        # Tests by outcome: every outcome counts here, whether or not it moves a rule.
        "test_summary": dict(sorted(Counter(e["outcome"] for e in tests.values()).items())),
        # Why certifying rules were left undecided (a verdict of incomplete says which).
        "undecided": undecided(normative),
        # Normative rules whose every test goes through an operation of assumed shape or
        # checks an assumed rule beside them: reported, left out of certification.
        "normative_not_certifiable": sorted(
            k for k, v in verdicts.items() if v["level"] == "normative" and not v["certifies"]
        ),
        "rules": verdicts,
        # Tests that check assumed rules only: informative.
        "informative_tests": [
            nodeid
            for nodeid, e in tests.items()
            if e["rules"] and all(verdicts.get(r, {}).get("level") == "assumed" for r in e["rules"])
        ],
    }


def counted_failures(rules: Mapping[str, Mapping[str, Any]], strict: bool = False) -> list[str]:
    """The failed rules an exit status counts: the certifying ones; with ``strict``
    (--strict-informative) every failed rule, assumed and informative-only ones too."""
    return sorted(
        rule for rule, v in rules.items() if v["verdict"] == "failed" and (v["certifies"] or strict)
    )


def informative_failures(rules: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Failed rules that never decide certification: assumed rules, and normative rules seen
    only beside our assumptions."""
    return sorted(r for r, v in rules.items() if v["verdict"] == "failed" and not v["certifies"])


def undecided_in_scope(rules: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Certifying rules the run meant to decide and did not: skipped, blocked, flaky, or not
    run for time or an unreachable target. A rule the plan or the selection left out is not
    in the run's scope, so a gate or ``-k`` run that passed all it chose is complete."""
    left_out = (PLAN_LEFT_OUT, NOT_SELECTED)
    return sorted(
        rule
        for rule, v in rules.items()
        if v["certifies"]
        and v["verdict"] not in ("passed", "failed")
        and not (v["verdict"] == "not-run" and all(r in left_out for r in v["skip_reasons"]))
    )


def exit_status(
    rules: Mapping[str, Mapping[str, Any]], strict: bool = False, forgiven: Iterable[str] = ()
) -> int:
    """The run's exit status from its rule verdicts: 1 when a counted rule failed (the
    ``forgiven`` ones aside: known failures), else 6 when a certifying rule in scope was left
    undecided, else 0. Informative failures count only with ``strict``."""
    if set(counted_failures(rules, strict)) - set(forgiven):
        return EXIT_NOT_CONFORMANT
    return EXIT_INCOMPLETE if undecided_in_scope(rules) else EXIT_CONFORMANT


def exit_line(
    rules: Mapping[str, Mapping[str, Any]],
    status: int,
    strict: bool = False,
    forgiven: Iterable[str] = (),
    stale: bool = False,
) -> str:
    """One line saying why the run exits as it does (``stale``: an expectation passes now)."""
    failed = [r for r in counted_failures(rules, strict) if r not in set(forgiven)]
    informative = informative_failures(rules)
    undecided = undecided_in_scope(rules)
    said = {
        EXIT_NOT_CONFORMANT: f"{len(failed)} counted rule(s) failed: {_some(failed)}"
        if failed
        else "an expectation is stale (its rule or test passes now)",
        EXIT_INCOMPLETE: f"{len(undecided)} certifying rule(s) in the run's scope left "
        f"undecided: {_some(undecided)}",
        EXIT_CONFORMANT: "every certifying rule in the run's scope passed",
    }.get(status, "pytest's own status")
    line = f"AMWS exit status {status}: {said}"
    if informative and not strict:
        line += (
            f"; {len(informative)} informative rule(s) failed, not counted "
            f"(--strict-informative counts them): {_some(informative)}"
        )
    return line


def _some(ids: list[str], shown: int = 6) -> str:
    return ", ".join(ids[:shown]) + (f" and {len(ids) - shown} more" if len(ids) > shown else "")
