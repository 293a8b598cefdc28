"""report.html: the certification report as one self-contained page a person can navigate.

It is rendered from the ``report.json`` document alone, so the page shows exactly what the
file says. The page needs no server and no network: its style sheet, its two charts (inline
SVG) and a few lines of script travel inside it, and everything stays readable with the script
off (the filter of the rule table is pure CSS; only sorting needs the script).

Reading order, top to bottom: the verdict, the counts and the run's facts; the rules by verdict
per document and per resource; the root causes of the failures; the rule table, whose every
rule id links to that rule's evidence; the evidence, rule by rule. A failure shows its deciding
assertion line and its rules first, then its request/response exchange and its test source and
traceback, each folded away in a ``<details>``.

Size: a target that fails a thousand tests fails most of them alike: one test function over
many operations, the same breach each time. The failures of one test function that left its
rules the same way (failed, or blocked by the same cause) make one block: the first failure in
full, the tests that failed with the same deciding line (values such as UUIDs aside) named under
it, and each other deciding line with its tests and last exchange behind a toggle. Exchanges,
sources and long test lists stop once an allowance is spent, and a page still over
:data:`SIZE_LIMIT` is rendered again with a smaller one, so the page of a run with thousands of
failures stays under 5 MB.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from amws_conformance.harness.evidence.explain import figures_block, replay_banner
from amws_conformance.harness.evidence.html_failures import (
    _Evidence,
    _plural,
)
from amws_conformance.harness.evidence.html_kit import (
    _CSS,
    _SCRIPT,
    SIZE_LIMIT,
    STAGES,
    TESTS_LISTED,
    _charts,
    _cut,
    _duration,
    _esc,
    _pill,
    _pills,
    _rule_links,
    _tone,
)
from amws_conformance.harness.evidence.html_rules import (
    _not_certifiable,
    _ordered,
    _rule_section,
    _rule_table,
)


# -- the page --------------------------------------------------------------------------------
def _header(doc: Mapping[str, Any]) -> str:
    target = doc.get("target") or {}
    plan = doc.get("plan") or {}
    suite = doc.get("suite") or {}
    hashes = doc.get("spec") or {}
    tests = doc.get("tests") or {}
    rules = doc.get("rules") or {}
    verdict = str(doc.get("verdict", "-"))
    outcomes = Counter(str(t.get("outcome")) for t in tests.values())
    expectations = Counter(
        str(t["expectation"].get("status"))
        for t in tests.values()
        if isinstance(t.get("expectation"), Mapping)
    )
    normative = Counter(str(r.get("verdict")) for r in rules.values() if r.get("certifies"))
    every = Counter(str(r.get("verdict")) for r in rules.values())
    seed = doc.get("seed", target.get("seed"))

    def fact(name: str, value: Any, full: Any = None) -> str:
        title = f" title='{_esc(full)}'" if full else ""
        return f"<div{title}><b>{_esc(name)}</b>{_esc(value)}</div>"

    def digest(name: str) -> str:
        value = str(hashes.get(name) or "-")
        return fact(name.replace("_", " "), value[:16] + ("…" if len(value) > 16 else ""), value)

    forecast = plan.get("forecast_minutes", doc.get("forecast_minutes"))
    facts = [
        fact("target", f"{target.get('name') or '-'} — {target.get('base_url') or 'embedded'}"),
        fact("run id", target.get("run_id", "-")),
        fact("seed", "-" if seed is None else seed),
        fact(
            "plan",
            f"{plan.get('name', '-')}: {plan.get('tests', len(tests)):,} tests, "
            f"{plan.get('left_out', 0):,} left out"
            + (f", forecast {forecast} min" if forecast is not None else ""),
        ),
        fact("duration", _duration(doc.get("duration_seconds"))),
        fact("started", doc.get("started_at", "-")),
        fact("generated", doc.get("generated_at", "-")),
        fact("suite", f"{suite.get('name', '-')} {suite.get('version', '-')}"),
        fact("OpenAPI", hashes.get("openapi_version", "-")),
        digest("openapi_sha256"),
        digest("rules_sha256"),
        fact("exit status", doc.get("exit_status", "-")),
    ]
    mutants = plan.get("mutants")
    if isinstance(mutants, Mapping) and mutants.get("of"):
        share = 100 * mutants.get("caught", 0) / mutants["of"]
        facts.append(
            fact(
                "contract",
                f"{mutants.get('caught', 0):,} of {mutants['of']:,} mutants ({share:.1f} %)",
                "spec-derived mutants (a documented bound, enum, pattern, required field or "
                "status broken by one step) this run's tests catch, by the cost table",
            )
        )
    units = doc.get("rate_units")
    if isinstance(units, Mapping):
        spent = {**(units.get("keys") or {}), "failed_auth": units.get("failed_auth", 0)}
        top = sorted(((k, v) for k, v in spent.items() if v), key=lambda i: -i[1])
        text = ", ".join(f"{k} {v:,}" for k, v in top[:3]) + (" …" if len(top) > 3 else "")
        full = ", ".join(f"{k} {v:,}" for k, v in top)
        facts.append(fact("units", text or "-", full))
        pooled = {k: v for k, v in (units.get("per_key") or {}).items() if "[" in k}
        if pooled:  # a pool: what each of its keys paid
            each = ", ".join(f"{k} {v:,}" for k, v in pooled.items())
            facts.append(fact("units per key", each, each))
        facts.append(fact("429 not asked for", units.get("unplanned_429", 0)))
    if doc.get("stability"):
        facts.append(fact("stability", f"{doc['stability']} reruns of a failed test at most"))
    counts = [
        f"<span><b>tests {len(tests):,}</b>{_pills(outcomes)}</span>",
        f"<span><b>certifying normative rules {sum(normative.values()):,}</b>"
        f"{_pills(normative)}</span>",
        f"<span><b>all rules {len(rules):,}</b>{_pills(every)}</span>",
    ]
    if expectations:
        counts.append(f"<span><b>expectations</b>{_pills(expectations)}</span>")
    out = [
        "<header>",
        "<h1>AMWS conformance report</h1>",
        f"<span class='verdict {_tone(verdict)}' id='verdict'>{_esc(verdict)}</span>",
        "</header>",
        replay_banner(doc),
        f"<div class='facts' id='facts'>{''.join(facts)}</div>",
        f"<div class='counts' id='counts'>{''.join(counts)}</div>",
        figures_block(doc),
    ]
    if doc.get("exit_reason"):
        out.append(f"<p class='note' id='exit-reason'>{_esc(doc['exit_reason'])}</p>")
    undecided = doc.get("undecided") or {}
    if undecided and not verdict.startswith("conformant"):
        out.append(
            f"<details class='note'><summary>why {sum(undecided.values()):,} certifying rules "
            "were neither passed nor failed</summary><ul>"
            + "".join(f"<li>{_esc(k)}: {v:,}</li>" for k, v in undecided.items())
            + "</ul></details>"
        )
    problems = doc.get("cleanup_problems") or []
    if problems:
        out.append(
            f"<p class='warn'>The cleanup left {len(problems)} problem(s): "
            + _esc("; ".join(map(str, problems[:5])))
            + "</p>"
        )
    return "".join(out)


def _causes(doc: Mapping[str, Any]) -> tuple[str, dict[str, str]]:
    causes = doc.get("root_causes") or []
    anchors = {str(c.get("cause")): f"cause-{i + 1}" for i, c in enumerate(causes)}
    if not causes:
        return "", anchors

    rows = [
        f"<tr id='cause-{i + 1}'><td>{_esc(c.get('cause', ''))}</td>"
        f"<td class='num'>{len(c.get('tests', ())):,}</td>"
        f"<td>{_rule_links(c.get('failed_rules', ()), 8)}</td>"
        f"<td>{_rule_links(c.get('blocked_rules', ()), 8)}</td>"
        f"<td class='mono'>{_esc(c.get('example', ''))}</td></tr>"
        for i, c in enumerate(causes)
    ]
    head = (
        "<table><thead><tr><th>cause</th><th class='num'>tests</th><th>rules failed</th>"
        "<th>rules blocked</th><th>example</th></tr></thead><tbody>"
    )
    shown = 10
    text = (
        "<section id='causes'><h2>Root causes</h2>"
        "<p class='note'>Failed tests grouped by what broke, the largest group first: one breach "
        "in a shared set-up reads as one cause.</p>"
        + head
        + "".join(rows[:shown])
        + "</tbody></table>"
    )
    if len(rows) > shown:
        text += (
            f"<details><summary>{len(rows) - shown:,} more causes</summary>{head}"
            + "".join(rows[shown:])
            + "</tbody></table></details>"
        )
    return text + "</section>", anchors


def _extras(doc: Mapping[str, Any]) -> str:
    """The expectations and stability results, when the run had them."""
    out = []
    rules = doc.get("rules") or {}
    tests = doc.get("tests") or {}
    expectations = doc.get("expectations")
    if isinstance(expectations, Mapping):
        counts = {
            "expected-fail": len(expectations.get("expected_failures") or ()),
            "failed": len(expectations.get("unexpected_failures") or ()),
            "stale": len(expectations.get("stale") or ()),
        }
        out.append(
            f"<p>Expectations file <code>{_esc(expectations.get('file', '-'))}</code> "
            f"<span class='mono' title='sha256'>{_esc(expectations.get('sha256', '-'))}</span>: "
            f"{_pill('expected-fail', counts['expected-fail'])} failed as the file expects, "
            f"{_pill('failed', counts['failed'])} failed unexpectedly, "
            f"{_pill('stale', counts['stale'])} entries pass now (stale: remove them). Only the "
            "run's exit status heeds the file; the certification verdict above does not.</p>"
        )
        rows = []
        for entry in expectations.get("entries") or ():
            if not isinstance(entry, Mapping):
                continue
            named = entry.get("rule") or entry.get("test") or entry.get("entry") or "-"
            target = (
                f"<a href='#rule-{_esc(named)}'>{_esc(named)}</a>"
                if named in rules
                else f"<code>{_esc(named)}</code>"
            )
            link = str(entry.get("link") or "")
            rows.append(
                f"<tr><td>{_pill(str(entry.get('status', '-')))}</td><td>{target}</td>"
                f"<td>{_esc(entry.get('reason', ''))}</td>"
                f"<td class='num'>{len(entry.get('tests') or ()):,}</td><td>"
                + (
                    f"<a href='{_esc(link)}' rel='noreferrer'>{_esc(_cut(link, 80))}</a>"
                    if link.startswith(("https://", "http://"))
                    else _esc(link)
                )
                + "</td></tr>"
            )
        if rows:
            out.append(
                "<table><thead><tr><th>status</th><th>entry</th><th>reason</th>"
                "<th class='num'>failed tests</th><th>link</th></tr></thead><tbody>"
                + "".join(rows)
                + "</tbody></table>"
            )
    flaky = [str(n) for n in doc.get("flaky") or ()]
    if flaky:
        items = []
        for nodeid in flaky[:TESTS_LISTED]:
            reruns = tests.get(nodeid, {}).get("reruns") or []
            attempts = ", ".join(str(r.get("outcome")) for r in reruns if isinstance(r, Mapping))
            items.append(
                f"<li><code>{_esc(nodeid)}</code> failed, then {_esc(attempts or '-')}</li>"
            )
        out.append(
            f"<p>{_pill('flaky', len(flaky))} failed first and passed on a rerun "
            f"(up to {_esc(doc.get('stability') or '-')} reruns): listed apart, never counted "
            "as passed.</p><ul class='tests'>" + "".join(items) + "</ul>"
        )
    if not out:
        return ""
    return (
        "<section id='expectations'><h2>Expectations and stability</h2>"
        + "".join(out)
        + "</section>"
    )


def render(doc: Mapping[str, Any]) -> str:
    """The whole page for one ``report.json`` document, within :data:`SIZE_LIMIT` where the
    failures' deciding lines alone leave room: each pass that comes out too large is done again
    with less room for exchanges, sources and test lists."""
    page = ""
    for budget, listed in STAGES:
        page = _page(doc, budget, listed)
        if len(page.encode("utf-8")) <= SIZE_LIMIT:
            break
    return page


def _page(doc: Mapping[str, Any], budget: int, listed: int) -> str:
    rules: Mapping[str, Mapping[str, Any]] = doc.get("rules") or {}
    causes, anchors = _causes(doc)
    evidence = _Evidence(doc, anchors, budget, listed)
    failing: Counter[str] = Counter()
    for fold in evidence.folds:
        for nodeid in fold.tests:
            for rule in doc["failures"][nodeid].get("rules") or ():
                failing[rule] += 1
    order = _ordered(rules)
    sections = "".join(_rule_section(r, rules[r], doc, evidence) for r in order)
    rest = evidence.rest()
    failed = len(doc.get("failures") or {})
    summary = (
        f"<p class='note'>{_plural(failed, 'failed test')}, folded into "
        f"{len(evidence.folds):,} blocks: one per test function and the rules it left the same "
        "way, its tests that failed alike listed under the first"
        + (
            f"; {evidence.cut:,} exchanges and sources left out to keep the page small"
            if evidence.cut
            else ""
        )
        + ".</p>"
    )
    page = "".join(
        [
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
            "<meta name='viewport' content='width=device-width,initial-scale=1'>",
            f"<title>AMWS conformance: {_esc(doc.get('verdict', '-'))}</title>",
            f"<style>{_CSS}</style></head><body><main>",
            _header(doc),
            _charts(rules),
            _extras(doc),
            causes,
            _rule_table(doc, order, failing),
            _not_certifiable(doc),
            "<section id='evidence'><h2>Evidence per rule</h2>",
            summary,
            sections,
            rest,
            "</section>",
            f"</main><script>{_SCRIPT}</script></body></html>",
        ]
    )
    # A target may answer, and a test may send, text with lone surrogates (JSON carries them
    # escaped); the page shows them as escapes, so that it can be written as UTF-8.
    return page.encode("utf-8", "backslashreplace").decode("utf-8")
