"""The evidence section of report.html: failures of one test function folded into one block,
with their deciding lines, exchanges, curl commands and test sources, within a size budget."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from amws_conformance.harness.evidence.explain import curl_block
from amws_conformance.harness.evidence.html_kit import (
    BODY_CHARS,
    MESSAGE_CHARS,
    MESSAGE_LINES,
    TESTS_LISTED,
    _cut,
    _esc,
    _pill,
    _rule_links,
    _text,
)
from amws_conformance.harness.evidence.verdicts import cause_of, failure_line, rule_outcome


# -- failures, folded ------------------------------------------------------------------------
@dataclass
class _Variant:
    """Failed tests of one test function with the same deciding line, values aside."""

    tests: list[str]
    entry: dict[str, Any]  # the first test's failure and test entry, merged


@dataclass
class _Fold:
    """The failures of one test function that named the same rules and left them the same
    way (failed, or blocked by the same cause): one block on the page."""

    anchor: str
    rules: list[str]
    variants: list[_Variant] = field(default_factory=list)
    shown: bool = False  # whether its full block is on the page already

    @property
    def entry(self) -> dict[str, Any]:
        return self.variants[0].entry

    @property
    def tests(self) -> list[str]:
        return [t for v in self.variants for t in v.tests]


def _deciding(reason: str, limit: int = MESSAGE_CHARS) -> str:
    """The ``E`` lines of a pytest failure text (the assertion and its explanation)."""
    lines = [line[1:].strip() for line in reason.splitlines() if line.startswith("E ")]
    lines = [line for line in lines if line]
    if len(lines) > MESSAGE_LINES:
        lines = [*lines[:MESSAGE_LINES], "…"]
    text = "\n".join(lines) if lines else failure_line(reason)
    return text if len(text) <= limit else text[:limit] + " …"


def _folds(doc: Mapping[str, Any]) -> tuple[list[_Fold], dict[str, _Fold]]:
    tests = doc.get("tests") or {}
    folds: dict[tuple[Any, ...], _Fold] = {}
    variants: dict[tuple[Any, ...], _Variant] = {}
    of_test: dict[str, _Fold] = {}
    for nodeid, failure in (doc.get("failures") or {}).items():
        entry = {**tests.get(nodeid, {}), **failure}
        entry.setdefault("outcome", "failed")
        rules = [str(r) for r in entry.get("rules") or ()]
        left = tuple((r, *rule_outcome(entry, r)[0:1]) for r in rules)
        blocked = tuple(sorted(c for r in rules for c in rule_outcome(entry, r)[1]))
        key = (nodeid.split("[", 1)[0], left, blocked)
        fold = folds.get(key)
        if fold is None:
            fold = folds[key] = _Fold(f"f{len(folds) + 1}", rules)
        variant = variants.get((*key, cause_of(entry)))
        if variant is None:
            variant = variants[(*key, cause_of(entry))] = _Variant([], entry)
            fold.variants.append(variant)
        variant.tests.append(nodeid)
        of_test[nodeid] = fold
    return list(folds.values()), of_test


def _exchange(exchange: Mapping[str, Any]) -> str:
    def body(value: Any) -> str:
        if value is None or value == "":
            return ""
        text: str
        if isinstance(value, str):
            try:
                text = json.dumps(json.loads(value), indent=1, ensure_ascii=False)
            except ValueError:
                text = value
        else:
            text = json.dumps(value, indent=1, ensure_ascii=False)
        return text if len(text) <= BODY_CHARS else text[:BODY_CHARS] + "\n… (cut; report.json)"

    def headers(values: Any) -> str:
        if not isinstance(values, Mapping):
            return ""
        return "".join(f"{k}: {_cut(v)}\n" for k, v in values.items())

    request = f"{exchange.get('method', '?')} {_cut(exchange.get('url', '?'), 1000)}\n"
    request += headers(exchange.get("request_headers")) + body(exchange.get("request_body"))
    response = f"→ {exchange.get('status', '?')}\n" + headers(exchange.get("response_headers"))
    response += body(exchange.get("response_body"))
    return f"<pre>{_text(request.rstrip())}</pre><pre>{_text(response.rstrip())}</pre>"


def _test_list(
    tests: list[str], outcome: Mapping[str, str] | None = None, limit: int = TESTS_LISTED
) -> str:
    items = [
        f"<li><code>{_esc(t)}</code>"
        + (f" {_pill(outcome[t])}" if outcome and t in outcome else "")
        + "</li>"
        for t in tests[:limit]
    ]
    if len(tests) > limit:
        items.append(f"<li>… and {len(tests) - limit:,} more (report.json)</li>")
    return "<ul class='tests'>" + "".join(items) + "</ul>"


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


class _Evidence:
    """Renders the folded failures, each in full once, the exchanges and sources only while
    ``budget`` (bytes of HTML) lasts."""

    def __init__(
        self, doc: Mapping[str, Any], causes: Mapping[str, str], budget: int, listed: int
    ) -> None:
        self.folds, self.of_test = _folds(doc)
        self.causes = causes  # a root cause's text -> its anchor
        self.budget = budget
        self.listed = listed  # tests a list names before "and N more"
        self.cut = 0  # failures shown without their exchanges or source, for the budget

    def _afford(self, text: str) -> str:
        """``text`` if the budget still holds it, else a note saying where it is."""
        if len(text) <= self.budget:
            self.budget -= len(text)
            return text
        self.budget = 0
        self.cut += 1
        return (
            "<p class='note'>Exchange and source left out to keep the page small; "
            "report.json has them.</p>"
        )

    def _rules_line(self, fold: _Fold) -> str:
        failed = [r for r in fold.rules if rule_outcome(fold.entry, r)[0] == "failed"]
        blocked = [r for r in fold.rules if r not in failed]
        parts = []
        if failed:
            parts.append("failed " + _rule_links(sorted(failed)))
        if blocked:
            parts.append("blocked " + _rule_links(sorted(blocked)))
        expectation = fold.entry.get("expectation")
        if isinstance(expectation, Mapping) and expectation.get("status"):
            parts.append(_pill(str(expectation["status"])) + _esc(expectation.get("reason", "")))
        return "<p>rules: " + "; ".join(parts) + "</p>"

    def _cause(self, entry: Mapping[str, Any]) -> str:
        cause = cause_of(entry)
        anchor = self.causes.get(cause)
        return f" — root cause <a href='#{anchor}'>{_esc(cause[:80])}</a>" if anchor else ""

    def _tests_line(self, variant: _Variant) -> str:
        first, more = variant.tests[0], variant.tests[1:]
        phase = variant.entry.get("phase")
        out = f"<p>test <code>{_esc(first)}</code>"
        if phase and phase != "call":
            out += f" (failed in its {_esc(phase)})"
        reruns = [r for r in variant.entry.get("reruns") or () if isinstance(r, Mapping)]
        if reruns:
            out += " — reruns: " + _esc(", ".join(str(r.get("outcome")) for r in reruns))
        out += self._cause(variant.entry) + "</p>"
        if more:
            out += (
                f"<details><summary>{_plural(len(more), 'more test')} failed the same "
                f"way</summary>{_test_list(more, limit=self.listed)}</details>"
            )
        return out

    def ref(self, fold: _Fold) -> str:
        """A fold shown elsewhere on the page: its first deciding line and a link to it."""
        line = failure_line(str(fold.entry.get("reason") or ""))
        return (
            f"<div class='failure ref'><p class='msg'>{_text(_cut(line, 300))}</p>"
            f"<p><a href='#{fold.anchor}'>evidence</a> ({_plural(len(fold.tests), 'test')})"
            "</p></div>"
        )

    def block(self, fold: _Fold) -> str:
        """The fold in full the first time it is asked for; later, a line pointing to it."""
        reason = str(fold.entry.get("reason") or "")
        if fold.shown:
            return self.ref(fold)
        message = f"<p class='msg'>{_text(_deciding(reason))}</p>"
        fold.shown = True
        first = fold.variants[0]
        out = [
            f"<div class='failure' id='{fold.anchor}'>",
            message,
            self._rules_line(fold),
            self._tests_line(first),
        ]
        transcript = [e for e in first.entry.get("transcript") or () if isinstance(e, Mapping)]
        evidence = curl_block(first.entry)
        if transcript:
            evidence += (
                f"<details><summary>request/response ({_plural(len(transcript), 'exchange')}, "
                "the last of the test)</summary>"
                + "".join(_exchange(e) for e in transcript)
                + "</details>"
            )
        evidence += (
            "<details><summary>test source and traceback</summary>"
            f"<pre>{_text(reason)}</pre></details>"
        )
        out.append(self._afford(evidence))
        others = fold.variants[1:]
        if others:
            # The same test function over other operations or values, failing otherwise: each
            # with its own deciding line and last exchange; the source is the same.
            parts = [
                f"<details><summary>{_plural(sum(len(v.tests) for v in others), 'more test')} "
                f"of this function failed differently ({_plural(len(others), 'variant')})"
                "</summary>"
            ]
            for variant in others:
                line = _deciding(str(variant.entry.get("reason") or ""), 300)
                parts.append(f"<div class='variant'><p class='msg'>{_text(line)}</p>")
                parts.append(self._tests_line(variant))
                last = [e for e in variant.entry.get("transcript") or () if isinstance(e, Mapping)]
                if last:
                    parts.append(
                        self._afford(
                            "<details><summary>last request/response</summary>"
                            f"{_exchange(last[-1])}</details>"
                        )
                    )
                parts.append("</div>")
            parts.append("</details>")
            out.append("".join(parts))
        out.append("</div>")
        return "".join(out)

    def rest(self) -> str:
        """The folds no rule's section showed in full: a set-up that failed under tests of
        rules that failed on their own, a failed test naming no rule of the catalogue."""
        left = [f for f in self.folds if not f.shown]
        if not left:
            return ""
        return "<h2 id='other-failures'>Other failures</h2>" + "".join(self.block(f) for f in left)
