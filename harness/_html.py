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

import html
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness._explain import curl_block, figures_block, replay_banner
from harness._verdicts import cause_of, failure_line, rule_outcome

# Rule verdicts and test outcomes, in the order the page lists them; a name not listed here (a
# verdict a later version adds) is shown after them, in a neutral colour.
ORDER = (
    "failed",
    "stale",
    "flaky",
    "blocked",
    "expected-fail",
    "passed",
    "skipped",
    "not-run",
)
COLOURS = {
    "passed": "#2e7d32",
    "failed": "#c62828",
    "blocked": "#ef6c00",
    "skipped": "#b59a00",
    "not-run": "#9e9e9e",
    "flaky": "#8e24aa",
    "expected-fail": "#1e88e5",
    "stale": "#6d4c41",
}
OTHER_COLOUR = "#607d8b"

# The page's bound, in bytes, with room to spare under the 5 MB a vendor's browser should
# have to open. The first pass gives the failures' exchanges and sources up to EVIDENCE_BUDGET
# bytes of HTML and lists up to TESTS_LISTED tests per block; a page still too large is
# rendered again with the next, smaller allowance (report.json keeps everything).
SIZE_LIMIT = 4_500_000
EVIDENCE_BUDGET = 3_000_000
TESTS_LISTED = 200
STAGES = ((EVIDENCE_BUDGET, TESTS_LISTED), (1_500_000, 100), (500_000, 40), (0, 10))
MESSAGE_CHARS = 1_200  # the deciding lines of one failure, at most MESSAGE_LINES of them
MESSAGE_LINES = 16
BODY_CHARS = 2_000  # one request or response body

_CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f;
background:#fff}
main{padding:1rem 1.5rem 3rem;max-width:1500px}
a{color:#0b57d0}
h1{font-size:1.35rem;margin:0}
h2{font-size:1.15rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
h3{font-size:1rem;margin:0}
code,pre,.mono{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,monospace;font-size:12px}
header{display:flex;flex-wrap:wrap;gap:.4rem 1.5rem;align-items:center}
.verdict{font-size:1.25rem;font-weight:700;padding:.25rem .8rem;border-radius:6px}
.tone-ok{background:#d7f2d7;color:#14532d}.tone-bad{background:#fad4d4;color:#7f1d1d}
.tone-partial{background:#fbeec0;color:#6b4e00}
.facts{display:flex;flex-wrap:wrap;gap:.1rem 1.6rem;margin:.6rem 0;padding:.5rem .7rem;
background:#f6f7f9;border-radius:6px}
.facts div{white-space:nowrap}
.facts b{color:#555;font-weight:600;margin-right:.3rem}
.counts{display:flex;flex-wrap:wrap;gap:.35rem 1.4rem;margin:.3rem 0}
.counts>span>b{margin-right:.3rem}
.pill{display:inline-block;padding:0 .45rem;border-radius:9px;color:#fff;font-size:12px;
font-weight:600;margin:0 .15rem;white-space:nowrap}
.charts{display:flex;flex-wrap:wrap;gap:.5rem 2.5rem;align-items:flex-start}
.charts figure{margin:0}.charts figcaption{font-weight:600;margin-bottom:.2rem}
.legend{margin-left:1rem;font-size:13px}
.note{color:#555}
.warn{background:#fff4e5;border-left:4px solid #ef6c00;padding:.4rem .7rem}
table{border-collapse:collapse;margin:.4rem 0;width:100%}
td,th{border-bottom:1px solid #e3e3e3;padding:.2rem .45rem;text-align:left;vertical-align:top}
th{background:#f0f1f3;position:sticky;top:0}
.js th[data-sort]{cursor:pointer}.js th[data-sort]:after{content:" \\2195";color:#999}
td.num,th.num{text-align:right}
#rule-table td:first-child{white-space:nowrap}
.filter input{position:absolute;opacity:0}
.filter label{display:inline-block;border:1px solid #ccc;border-radius:12px;padding:0 .6rem;
margin:.15rem .1rem;cursor:pointer}
.filter input:checked+label{background:#1d1d1f;color:#fff;border-color:#1d1d1f}
.filter input:focus-visible+label{outline:2px solid #0b57d0}
.rule{border-top:1px solid #e3e3e3;padding:.45rem 0 .35rem}
.rule:target{background:#fffbe6}
.rule h3 .src{font-weight:400;color:#555}
.failure{border-left:4px solid #c62828;background:#fcf6f6;margin:.4rem 0;padding:.35rem .6rem}
.failure.ref{border-left-color:#bbb;background:#f7f7f7}
.variant{border-top:1px dashed #e0c0c0;padding:.25rem 0 0 .4rem;margin:.25rem 0}
.variant .msg{font-weight:500}
.failure:target{outline:2px solid #f9a825}
.msg{white-space:pre-wrap;margin:0;font-weight:600;color:#7f1d1d;word-break:break-word}
pre{background:#f3f3f3;padding:.45rem;white-space:pre-wrap;word-break:break-word;margin:.3rem 0;
max-height:30rem;overflow:auto}
details{margin:.15rem 0}summary{cursor:pointer;color:#333}
ul.tests{margin:.2rem 0;padding-left:1.2rem;columns:2 40rem}
ul.tests li{word-break:break-all}
"""

_SCRIPT = """
document.documentElement.classList.add("js");
document.querySelectorAll("table[data-sortable]").forEach(function (table) {
  table.querySelectorAll("th[data-sort]").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var up = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var key = function (row) {
        var cell = row.cells[column], v = cell.getAttribute("data-v");
        return v === null ? cell.textContent : v;
      };
      var numeric = th.getAttribute("data-sort") === "num";
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var c = numeric ? Number(x) - Number(y) : x.localeCompare(y);
        return up ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _text(value: str) -> str:
    """Escaped for an element's content, where quotes need no escape (exchanges, sources)."""
    return html.escape(value, quote=False)


def _cut(value: Any, limit: int = 300) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit] + "…"


def _slug(value: str) -> str:
    """An id fragment made of the characters ids and CSS selectors take without escaping."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in value)


def _rule_links(rules: Iterable[str], shown: int | None = None) -> str:
    """Links to rules' evidence; past ``shown`` of them, the rest behind a toggle."""
    links = [f"<a href='#rule-{_esc(r)}'>{_esc(r)}</a>" for r in rules]
    if shown is None or len(links) <= shown + 2:
        return ", ".join(links)
    return (
        ", ".join(links[:shown])
        + f"<details><summary>{len(links) - shown} more</summary>"
        + ", ".join(links[shown:])
        + "</details>"
    )


def _rank(name: str) -> tuple[int, str]:
    return (ORDER.index(name) if name in ORDER else len(ORDER), name)


def _colour(name: str) -> str:
    return COLOURS.get(name, OTHER_COLOUR)


def _pill(name: str, count: int | None = None) -> str:
    text = name.replace("-", " ") + (f" {count:,}" if count is not None else "")
    return f"<span class='pill' style='background:{_colour(name)}'>{_esc(text)}</span>"


def _pills(counts: Mapping[str, int]) -> str:
    return "".join(_pill(k, counts[k]) for k in sorted(counts, key=_rank) if counts[k])


def _duration(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "-"
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min {rest} s" if minutes else f"{seconds:.1f} s"


def _tone(verdict: str) -> str:
    if verdict == "conformant":
        return "tone-ok"
    return "tone-partial" if verdict.startswith("incomplete") else "tone-bad"


# -- the charts -----------------------------------------------------------------------------
def _bars(title: str, groups: Mapping[str, Counter[str]], width: int = 430) -> str:
    """A horizontal stacked bar per group: its rules by verdict, the total at the end."""
    label_w, row, gap, pad = 70, 12, 2, 4
    names = sorted(groups)
    longest = max((sum(c.values()) for c in groups.values()), default=1) or 1
    scale = (width - label_w - 40) / longest
    height = pad * 2 + len(names) * (row + gap)
    out = [
        f"<figure><figcaption>{_esc(title)}</figcaption>",
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' role='img' "
        f"aria-label='{_esc(title)}' font-size='11' font-family='system-ui,sans-serif'>",
    ]
    for i, name in enumerate(names):
        y = pad + i * (row + gap)
        counts = groups[name]
        out.append(
            f"<text x='{label_w - 6}' y='{y + row - 2}' text-anchor='end'>{_esc(name)}</text>"
        )
        x = float(label_w)
        for verdict in sorted(counts, key=_rank):
            w = counts[verdict] * scale
            out.append(
                f"<rect x='{x:.1f}' y='{y}' width='{w:.1f}' height='{row}' "
                f"fill='{_colour(verdict)}'><title>{_esc(name)}: {counts[verdict]} "
                f"{_esc(verdict)}</title></rect>"
            )
            x += w
        out.append(
            f"<text x='{x + 4:.1f}' y='{y + row - 2}' fill='#555'>{sum(counts.values())}</text>"
        )
    out.append("</svg></figure>")
    return "".join(out)


def _charts(rules: Mapping[str, Mapping[str, Any]]) -> str:
    per_document: dict[str, Counter[str]] = defaultdict(Counter)
    per_resource: dict[str, Counter[str]] = defaultdict(Counter)
    seen: Counter[str] = Counter()
    for rule_id, rule in rules.items():
        if not rule.get("certifies"):
            continue
        verdict = str(rule.get("verdict"))
        per_document[str(rule.get("source", "")).split(" §")[0]][verdict] += 1
        per_resource[rule_id.split("-")[0]][verdict] += 1
        seen[verdict] += 1
    if not seen:
        return ""
    legend = "".join(_pill(v) for v in sorted(seen, key=_rank))
    return (
        "<section id='chart'><h2>Certifying normative rules by verdict "
        f"<span class='legend'>{legend}</span></h2><div class='charts'>"
        + _bars("per document", per_document, 330)
        + _bars("per resource (rule id prefix)", per_resource)
        + "</div></section>"
    )


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
