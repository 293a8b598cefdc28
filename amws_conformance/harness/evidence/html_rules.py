"""The rules of report.html: the rule table (filtered by verdict, sortable), the normative rules
no test could certify, and each rule's evidence section."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from amws_conformance.harness.evidence.html_failures import (
    _Evidence,
    _Fold,
    _plural,
    _test_list,
)
from amws_conformance.harness.evidence.html_kit import (
    _colour,
    _esc,
    _pill,
    _rank,
    _slug,
)
from amws_conformance.harness.evidence.verdicts import rule_outcome


def _ordered(rules: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Rule ids, the worst verdicts first, the catalogue's order within a verdict."""
    position = {rule_id: i for i, rule_id in enumerate(rules)}
    return sorted(rules, key=lambda r: (_rank(str(rules[r].get("verdict"))), position[r]))


def _level(rule: Mapping[str, Any]) -> str:
    level = str(rule.get("level", "-"))
    return "normative*" if level == "normative" and not rule.get("certifies") else level


def _rule_table(doc: Mapping[str, Any], order: list[str], failing: Mapping[str, int]) -> str:
    rules = doc.get("rules") or {}
    verdicts = Counter(str(r.get("verdict")) for r in rules.values())
    names = sorted(verdicts, key=_rank)
    radios = ["<input type='radio' name='vf' id='vf-all' checked><label for='vf-all'>all</label>"]
    css = []
    for verdict in names:
        slug = _slug(verdict)
        radios.append(
            f"<input type='radio' name='vf' id='vf-{slug}'>"
            f"<label for='vf-{slug}'>{_esc(verdict.replace('-', ' '))} "
            f"{verdicts[verdict]:,}</label>"
        )
        css.append(f"#vf-{slug}:checked~table tbody tr:not(.v-{slug})")
    style = f"<style>{','.join(css)}{{display:none}}</style>" if css else ""
    rows = []
    for i, rule_id in enumerate(order):
        rule = rules[rule_id]
        verdict = str(rule.get("verdict"))
        blocked = rule.get("blocked_by") or []
        shown = verdict + (" by " + ", ".join(blocked) if blocked else "")
        rows.append(
            f"<tr class='v-{_slug(verdict)}'>"
            f"<td class='mono'><a href='#rule-{_esc(rule_id)}'>{_esc(rule_id)}</a></td>"
            f"<td data-v='{i:04d}'><span style='color:{_colour(verdict)};font-weight:600'>"
            f"{_esc(shown)}</span></td>"
            f"<td>{_esc(_level(rule))}</td><td>{_esc(rule.get('source', '-'))}</td>"
            f"<td>{_esc(rule.get('title', ''))}</td>"
            f"<td class='num'>{len(rule.get('tests') or ()):,}</td>"
            f"<td class='num'>{failing.get(rule_id, 0):,}</td></tr>"
        )
    return (
        "<section id='rules'><h2>Rules</h2>"
        "<p class='note'>Each rule id leads to its evidence. Worst verdicts first (with "
        "scripts on, a click on a heading sorts). normative*: a normative rule seen only "
        "beside our assumptions (informative, not counted).</p>"
        + style
        + "<div class='filter'>verdict: "
        + "".join(radios)
        + "<table id='rule-table' data-sortable><thead><tr>"
        "<th data-sort='text'>rule</th><th data-sort='text'>verdict</th>"
        "<th data-sort='text'>level</th><th data-sort='text'>document § section</th>"
        "<th data-sort='text'>title</th><th class='num' data-sort='num'>tests</th>"
        "<th class='num' data-sort='num'>failed tests</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></div></section>"
    )


def _not_certifiable(doc: Mapping[str, Any]) -> str:
    through = doc.get("normative_not_certifiable") or []
    if not through:
        return ""
    return (
        "<p class='note'>Normative rules seen only beside our assumptions: "
        + ", ".join(f"<a href='#rule-{_esc(r)}'>{_esc(r)}</a>" for r in through)
        + ". The documents state them, but every test of them also relies on a choice the "
        "documents leave open (an operation of assumed shape, or an assumed rule checked beside "
        "them), so their verdicts are informative and not counted in the verdict.</p>"
    )


def _rule_section(
    rule_id: str, rule: Mapping[str, Any], doc: Mapping[str, Any], evidence: _Evidence
) -> str:
    tests = doc.get("tests") or {}
    verdict = str(rule.get("verdict"))
    out = [
        f"<section class='rule v-{_slug(verdict)}' id='rule-{_esc(rule_id)}'>",
        f"<h3><span class='mono'>{_esc(rule_id)}</span> {_pill(verdict)} "
        f"<span class='src'>{_esc(rule.get('source', ''))} — {_esc(rule.get('title', ''))} "
        f"({_esc(_level(rule))})</span></h3>",
    ]
    blocked = rule.get("blocked_by") or []
    if blocked:
        out.append(
            "<p>blocked by "
            + ", ".join(
                f"<a href='#rule-{_esc(b)}'>{_esc(b)}</a>"
                if b in (doc.get("rules") or {})
                else _esc(b)
                for b in blocked
            )
            + "</p>"
        )
    for line in rule.get("global_check_failures") or []:
        out.append(f"<p class='msg'>global check: {_esc(line)}</p>")
    reasons = rule.get("skip_reasons") or []
    if reasons:
        out.append("<p class='note'>" + _esc("; ".join(map(str, reasons))) + "</p>")
    names = [str(t) for t in rule.get("tests") or ()]
    folds: list[_Fold] = []
    for name in names:
        fold = evidence.of_test.get(name)
        if fold is not None and fold not in folds:
            folds.append(fold)
    failing = [f for f in folds if rule_outcome(f.entry, rule_id)[0] == "failed"]
    others = [f for f in folds if f not in failing]
    out.extend(evidence.block(fold) for fold in failing)
    if failing and others:
        # The rule failed on its own; failures elsewhere that stopped its other tests are
        # shown where they belong, and only pointed to from here.
        stopped = sum(len(f.tests) for f in others)
        out.append(
            f"<details><summary>{_plural(stopped, 'more test')} of this rule stopped by other "
            "failures</summary>" + "".join(evidence.ref(fold) for fold in others) + "</details>"
        )
    else:
        out.extend(evidence.block(fold) for fold in others)
    if names:
        informative = set(rule.get("informative_tests") or ())
        outcome = {
            n: "informative"
            if n in informative and verdict != "failed"
            else str(tests.get(n, {}).get("outcome", "-"))
            for n in names
        }
        counts = Counter(str(tests.get(n, {}).get("outcome", "-")) for n in names)
        out.append(
            f"<details><summary>{len(names):,} test{'s' if len(names) > 1 else ''}: "
            + ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items(), key=lambda i: _rank(i[0])))
            + "</summary>"
            + _test_list(names, outcome, evidence.listed)
            + "</details>"
        )
    elif not (blocked or reasons):
        out.append("<p class='note'>No test of this rule was collected.</p>")
    out.append("</section>")
    return "".join(out)
