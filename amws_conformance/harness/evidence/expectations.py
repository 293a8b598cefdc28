"""Expectations (``--expectations FILE``): the failures a vendor already knows of, so that a CI
gate stays green on them and turns red on anything new.

The file is YAML, a list of entries; each names one rule or one test and says why it fails::

    - rule: WL-MATCH-DEDUP
      reason: our match answers one hit per field (ticket 4411)
      link: https://tracker.example/4411
    - test: suites/rules/test_files.py::test_upload_limit
      reason: the staging proxy caps uploads at 1 MB

A failed test is *expected* when an entry names it, or names a rule its failure is put down to
(:func:`blamed_rules`). A run whose every failure is expected exits 0. An entry whose test or
rule now passes is *stale* and fails the run until it is removed, so the file never hides a fix.
An entry naming a rule or test the suite does not have stops the run before its first test.
The certification verdict ignores all of this: ``report.json`` always counts the real results;
the file only changes the exit status and marks the tests and rules it covers.

``amws-conformance expectations --from report.json`` writes such a file from a run
(:func:`from_report`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from amws_conformance.harness.evidence.verdicts import failure_line

KINDS = ("rule", "test")
EXPECTED = "expected-fail"
STALE = "stale"
NOT_OBSERVED = "not-observed"  # its tests were skipped, not run, or not selected
_FIELDS = {*KINDS, "reason", "link"}


class ExpectationsError(Exception):
    """The expectations file cannot be used; ``str(error)`` is one line naming the entry."""


@dataclass(frozen=True)
class Entry:
    kind: str  # rule or test
    id: str
    reason: str
    link: str | None = None

    @property
    def key(self) -> str:
        """How reports name the entry: ``rule:ID`` or ``test:NODEID``."""
        return f"{self.kind}:{self.id}"


@dataclass(frozen=True)
class Expectations:
    file: str
    sha256: str
    entries: tuple[Entry, ...]

    def covering(self, nodeid: str, test: Mapping[str, Any]) -> Entry | None:
        """The entry that expects this failed test (its fields as a report entry holds them:
        rules, phase, violated, cause), if one does."""
        by_key = {entry.key: entry for entry in self.entries}
        keys = [f"test:{nodeid}", *(f"rule:{r}" for r in blamed_rules(test))]
        return next((by_key[key] for key in keys if key in by_key), None)

    def check(self, rules: Collection[str], tests: Collection[str] | None = None) -> None:
        """Refuse an entry naming a rule not in ``rules``, or (given ``tests``) a test not in
        ``tests``: one line naming the first."""
        for number, entry in enumerate(self.entries, 1):
            known = rules if entry.kind == "rule" else tests
            if known is not None and entry.id not in known:
                raise ExpectationsError(
                    f"expectations {self.file}: entry {number} names an unknown {entry.kind}: "
                    f"{entry.id}"
                )


def load(path: str | Path) -> Expectations:
    """Read and check the form of an expectations file (not yet whether its ids exist)."""
    path = Path(path)
    where = f"expectations {path}"
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise ExpectationsError(f"{where}: cannot be read ({error.strerror})") from None
    try:
        data = yaml.safe_load(raw) or []
    except yaml.YAMLError as error:
        raise ExpectationsError(f"{where}: not YAML ({str(error).splitlines()[0]})") from None
    if not isinstance(data, list):
        raise ExpectationsError(f"{where}: must be a list of entries (rule or test, reason)")
    entries: list[Entry] = []
    seen: set[str] = set()
    for number, item in enumerate(data, 1):
        entry = _entry(item, f"{where}: entry {number}")
        if entry.key in seen:
            raise ExpectationsError(f"{where}: entry {number} repeats {entry.key}")
        seen.add(entry.key)
        entries.append(entry)
    return Expectations(str(path), hashlib.sha256(raw).hexdigest(), tuple(entries))


def _entry(item: Any, where: str) -> Entry:
    if not isinstance(item, dict):
        raise ExpectationsError(f"{where}: must be a mapping with rule or test, and reason")
    unknown = sorted(set(map(str, item)) - _FIELDS)
    if unknown:
        raise ExpectationsError(f"{where}: unknown field {unknown[0]} (rule, test, reason, link)")
    named = [kind for kind in KINDS if kind in item]
    if len(named) != 1:
        raise ExpectationsError(f"{where}: must name exactly one rule or one test")
    kind = named[0]
    for field in (kind, "reason"):
        if not isinstance(item.get(field), str) or not item[field].strip():
            raise ExpectationsError(f"{where}: {field} must be a non-empty text")
    link = item.get("link")
    if link is not None and not isinstance(link, str):
        raise ExpectationsError(f"{where}: link must be a text")
    return Entry(kind, item[kind].strip(), item["reason"].strip(), link)


def blamed_rules(test: Mapping[str, Any]) -> list[str]:
    """The rules a failed test's failure is put down to, as its rules' verdicts read it: those
    a check found broken, else the test's own rules when its own assertion failed; none when a
    set-up failed, a request got no answer, or only its teardown failed."""
    if test.get("phase") == "teardown" and test.get("call_passed"):
        return []
    if test.get("cause"):
        return []
    violated = list(test.get("violated") or ())
    if violated:
        return sorted(violated)
    if test.get("phase") == "setup":
        return []
    return list(test["rules"])


def _failing(outcome: str) -> bool:
    return outcome in ("failed", "flaky")


def judge(expectations: Expectations, document: dict[str, Any]) -> dict[str, Any]:
    """Mark ``document`` (a report.json being written) with what ``expectations`` say of its
    results: ``expectations`` at the top, ``expectation`` on each test an entry covers. The
    verdicts are left as they are. Returns the ``expectations`` block."""
    tests: dict[str, dict[str, Any]] = document["tests"]
    rules: Mapping[str, Mapping[str, Any]] = document["rules"]
    by_key = {entry.key: entry for entry in expectations.entries}
    covered: dict[str, list[str]] = {key: [] for key in by_key}  # entry -> failed tests
    expected: list[str] = []
    unexpected: list[str] = []
    for nodeid, test in tests.items():
        if not _failing(test["outcome"]):
            continue
        keys = [f"test:{nodeid}", *(f"rule:{r}" for r in blamed_rules(test))]
        hits = [key for key in keys if key in by_key]
        for key in hits:
            covered[key].append(nodeid)
        if hits:
            expected.append(nodeid)
            test["expectation"] = _mark(by_key[hits[0]], EXPECTED)
        elif test["outcome"] == "failed":  # a flaky test does not fail the run
            unexpected.append(nodeid)
    entries: list[dict[str, Any]] = []
    stale: list[str] = []
    for entry in expectations.entries:
        status = _status(entry, covered[entry.key], tests, rules)
        if status == STALE:
            stale.append(entry.key)
            for nodeid in _tests_of(entry, tests, rules):
                tests[nodeid].setdefault("expectation", _mark(entry, STALE))
        entries.append(
            {
                entry.kind: entry.id,
                "reason": entry.reason,
                "link": entry.link,
                "status": status,
                "tests": covered[entry.key],
            }
        )
    block = {
        "file": expectations.file,
        "sha256": expectations.sha256,
        "entries": entries,
        "expected_failures": expected,
        "unexpected_failures": unexpected,
        "stale": stale,
    }
    document["expectations"] = block
    return block


def _mark(entry: Entry, status: str) -> dict[str, Any]:
    return {"entry": entry.key, "reason": entry.reason, "link": entry.link, "status": status}


def _tests_of(
    entry: Entry, tests: Mapping[str, Any], rules: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    if entry.kind == "test":
        return [entry.id] if entry.id in tests else []
    return [t for t in rules.get(entry.id, {}).get("tests", ()) if t in tests]


def _status(
    entry: Entry,
    covered: list[str],
    tests: Mapping[str, Mapping[str, Any]],
    rules: Mapping[str, Mapping[str, Any]],
) -> str:
    """expected-fail when the run failed what the entry names; stale when that passed; else
    not-observed (skipped, not run, not selected: a partial run proves nothing either way)."""
    if covered:
        return EXPECTED
    if entry.kind == "test":
        outcome = tests.get(entry.id, {}).get("outcome")
        return STALE if outcome == "passed" else NOT_OBSERVED
    verdict = rules.get(entry.id, {}).get("verdict")
    if verdict in ("failed", "flaky"):  # a check outside any test saw it broken
        return EXPECTED
    return STALE if verdict == "passed" else NOT_OBSERVED


def forgiven(block: Mapping[str, Any], document: Mapping[str, Any]) -> set[str]:
    """The failed rules the expectations cover: named by an entry that met its failure, or
    whose every failed test was expected. The exit status does not count them."""
    expected = set(block["expected_failures"])
    named = {e["rule"] for e in block["entries"] if "rule" in e and e["status"] == EXPECTED}
    blamed: dict[str, set[str]] = {}
    for nodeid, test in document["tests"].items():
        if test["outcome"] == "failed":
            for rule in blamed_rules(test):
                blamed.setdefault(rule, set()).add(nodeid)
    return named | {rule for rule, tests in blamed.items() if tests <= expected}


def summary(block: Mapping[str, Any]) -> list[str]:
    """Lines for the terminal: what was expected, what is stale, what was not expected."""
    lines = [
        f"AMWS expectations ({block['file']}): {len(block['expected_failures'])} expected fail, "
        f"{len(block['unexpected_failures'])} failed unexpectedly, {len(block['stale'])} stale"
    ]
    lines += [f"  stale: {key} passes now; remove it from the file" for key in block["stale"]]
    lines += [f"  not expected: {nodeid}" for nodeid in block["unexpected_failures"][:20]]
    return lines


# -- writing one from a run -----------------------------------------------------------------
def from_report(report: Mapping[str, Any], source: str = "report.json") -> str:
    """An expectations file (YAML, commented) listing what failed in ``report``: each rule a
    failure was put down to, and each failed test whose failure names no rule; the reason is
    the failure's first line. Given back to a run with the same results, every failure is
    expected and nothing is stale."""
    tests: Mapping[str, Mapping[str, Any]] = report.get("tests", {})
    failures: Mapping[str, Mapping[str, Any]] = report.get("failures", {})
    by_rule: dict[str, list[str]] = {}
    alone: list[str] = []
    for nodeid, test in tests.items():
        if test["outcome"] != "failed":
            continue
        blamed = blamed_rules(test)
        for rule in blamed:
            by_rule.setdefault(rule, []).append(nodeid)
        if not blamed:
            alone.append(nodeid)
    for rule_id, verdict in report.get("rules", {}).items():
        if verdict["verdict"] == "failed" and rule_id not in by_rule:
            by_rule[rule_id] = []  # seen broken by a check outside any test (the preflight)

    def reason(nodeids: Iterable[str], rule_id: str | None = None) -> str:
        for nodeid in nodeids:
            line = failure_line(failures.get(nodeid, {}).get("reason"))
            if line:
                return line
        if rule_id is not None:
            for found in report["rules"][rule_id].get("global_check_failures", ()):
                return str(found).split(": ", 1)[-1]
        return "failed (no failure text in the report)"

    target = report.get("target", {})
    flaky = [n for n, t in tests.items() if t["outcome"] == "flaky"]
    lines = [
        f"# Expectations written by `amws-conformance expectations --from {source}`",
        f"# on {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')} from the run of "
        f"{report.get('generated_at', '?')}",
        f"# against {target.get('name', '?')} ({target.get('base_url', '?')}), plan "
        f"{(report.get('plan') or {}).get('name', '?')}, verdict: {report.get('verdict', '?')}.",
        "#",
        "# Pass it with --expectations FILE (or the profile's `expectations`): these failures",
        "# then read as expected fail and the run exits 0 while nothing new fails; an entry",
        "# that passes again is stale and fails the run until it is removed. The certification",
        "# verdict in report.json ignores this file. Each entry names a rule or a test; say why",
        "# in `reason` (here: the failure's first line) and point `link` at your tracker.",
    ]
    if flaky:
        lines.append(f"# Not listed: {len(flaky)} flaky test(s), which do not fail a run.")
    entries: list[tuple[list[str], dict[str, str]]] = [
        (nodeids, {"rule": rule_id, "reason": reason(nodeids, rule_id)})
        for rule_id, nodeids in sorted(by_rule.items())
    ]
    entries += [([nodeid], {"test": nodeid, "reason": reason([nodeid])}) for nodeid in alone]
    if not entries:
        lines.append("# Nothing failed in that run.")
        return "\n".join(lines) + "\n[]\n"
    for nodeids, entry in entries:
        lines.append("")
        if "rule" in entry:
            lines.append("# failed in:" if nodeids else "# failed a check outside any test")
            lines += [f"#   {nodeid}" for nodeid in nodeids[:5]]
            if len(nodeids) > 5:
                lines.append(f"#   and {len(nodeids) - 5} more")
        dumped = yaml.safe_dump([entry], sort_keys=False, allow_unicode=True, width=1000)
        lines.append(dumped.rstrip("\n"))
    return "\n".join(lines) + "\n"


def main_from(report: Path) -> int:
    """``amws-conformance expectations --from report.json``: the file on standard output."""
    try:
        document = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        print(f"amws-conformance expectations: cannot read {report}: {error}", file=sys.stderr)
        return 1
    if not isinstance(document, dict) or "tests" not in document:
        print(f"amws-conformance expectations: {report} is no run's report.json", file=sys.stderr)
        return 1
    sys.stdout.write(from_report(document, str(report)))
    return 0
