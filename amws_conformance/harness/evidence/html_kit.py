"""The parts of report.html every section uses: its style sheet and script, colours and
order of verdicts, escaping, pills, rule links and the charts."""

from __future__ import annotations

import html
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

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
