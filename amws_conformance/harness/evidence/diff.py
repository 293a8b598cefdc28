"""``amws-conformance diff OLD/report.json NEW/report.json``: how the rule verdicts of two runs
differ, for a vendor tracking their implementation from run to run.

A rule *regressed* when it passed in the old run and failed in the new one, or is flaky there
(a test of it failed, then passed on a rerun: a failure was seen). Only a regression makes the
exit status non-zero (1). A rule that passed and is now blocked, skipped or not run is listed
as *no longer decided*, not as a regression: no test showed it broken; what blocked it (a
failing set-up, another rule, a target that stopped answering) is a failure of its own,
reported under its own name. Likewise a rule failing now that was undecided before (blocked,
skipped, not run) is *newly failing*, not regressed: it never passed in the old run. A rule
*fixed* failed or was flaky and now passes. Rules present in one report only (the catalogues
differ) came or went. Every other change of verdict is listed as it is.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

DECIDED_BAD = ("failed", "flaky")
UNDECIDED = ("blocked", "skipped", "not-run")


@dataclass
class Change:
    rule: str
    level: str
    old: str | None  # the verdict as shown: "blocked by X" where blocked
    new: str | None

    def line(self) -> str:
        return f"  {self.rule}  {self.old or '-'} → {self.new or '-'}  ({self.level})"


@dataclass
class Diff:
    """Changed rules by kind; ``verdict``: the runs' verdicts, old and new."""

    verdict: tuple[str, str]
    regressed: list[Change] = field(default_factory=list)
    fixed: list[Change] = field(default_factory=list)
    newly_failing: list[Change] = field(default_factory=list)
    newly_passing: list[Change] = field(default_factory=list)
    no_longer_decided: list[Change] = field(default_factory=list)
    other: list[Change] = field(default_factory=list)
    came: list[Change] = field(default_factory=list)
    went: list[Change] = field(default_factory=list)


# The sections as printed, in order: the attribute and its heading.
SECTIONS = (
    ("regressed", "regressed (passed before; failed or flaky now)"),
    ("fixed", "fixed (failed or flaky before; passed now)"),
    ("newly_failing", "newly failing (not decided before: blocked, skipped or not run)"),
    ("newly_passing", "newly passing (not decided before)"),
    (
        "no_longer_decided",
        "no longer decided (passed or failed before; blocked, skipped or not run now: "
        "not counted as a regression)",
    ),
    ("other", "other verdict changes"),
    ("came", "came: rules in the new report only"),
    ("went", "went: rules in the old report only"),
)


def shown(verdict: Mapping[str, Any] | None) -> str | None:
    """A rule's verdict as one word, with what blocked it."""
    if verdict is None:
        return None
    word = str(verdict["verdict"])
    if word == "blocked" and verdict.get("blocked_by"):
        return f"blocked by {', '.join(verdict['blocked_by'])}"
    return word


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> Diff:
    """The rule verdicts of two report.json documents, sorted into the kinds of change."""
    diff = Diff(verdict=(str(old.get("verdict")), str(new.get("verdict"))))
    before, after = old["rules"], new["rules"]
    for rule in sorted(set(before) | set(after)):
        was, now = before.get(rule), after.get(rule)
        level = (now or was or {}).get("level", "?")
        change = Change(rule, level, shown(was), shown(now))
        if was is None:
            diff.came.append(change)
            continue
        if now is None:
            diff.went.append(change)
            continue
        a, b = was["verdict"], now["verdict"]
        if a == b:
            continue
        if a == "passed" and b in DECIDED_BAD:
            diff.regressed.append(change)
        elif a in DECIDED_BAD and b == "passed":
            diff.fixed.append(change)
        elif a in UNDECIDED and b in DECIDED_BAD:
            diff.newly_failing.append(change)
        elif a in UNDECIDED and b == "passed":
            diff.newly_passing.append(change)
        elif b in UNDECIDED and a not in UNDECIDED:
            diff.no_longer_decided.append(change)
        else:
            diff.other.append(change)
    return diff


def render(diff: Diff, out: TextIO) -> None:
    old, new = diff.verdict
    print(f"verdict: {old}" + ("" if old == new else f" → {new}"), file=out)
    for name, heading in SECTIONS:
        changes: list[Change] = getattr(diff, name)
        if changes:
            print(f"{heading}: {len(changes)}", file=out)
            for change in changes:
                print(change.line(), file=out)
    counts = ", ".join(
        f"{name.replace('_', ' ')} {len(getattr(diff, name))}" for name, _ in SECTIONS
    )
    print(counts, file=out)


def _load(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(document, dict) or not isinstance(document.get("rules"), dict):
        raise ValueError("not a conformance report (no rules)")
    return document


def main(old: Path, new: Path, out: TextIO = sys.stdout) -> int:
    """Print the diff; 1 when a rule regressed, 0 when none did, 2 when a file is unusable."""
    documents = []
    for path in (old, new):
        try:
            documents.append(_load(path))
        except (OSError, ValueError) as error:
            print(f"amws-conformance diff: {path}: {error}", file=sys.stderr)
            return 2
    diff = compare(*documents)
    render(diff, out)
    return 1 if diff.regressed else 0
