"""report.html read back with an HTML parser: the header's facts, the chart, the rule table's
links to each rule's evidence, the folding of repeated failures and the page's size bound."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.harness.evidence.html import render

LIMIT = 5_000_000  # bytes: what a page of a thousand failures may weigh at most
OPENAPI_SHA = "a" * 64
RULES_SHA = "b" * 64


class Page(HTMLParser):
    """Every element's attributes, the text under each id'd element, and the table rows."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: dict[str, str] = {}  # id -> tag
        self.text_of: dict[str, list[str]] = {}
        self.hrefs: list[str] = []
        self.titles: list[str] = []
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.rows: list[list[tuple[str, str | None]]] = []  # rule table: (cell text, its link)
        self._open: list[tuple[str, str | None]] = []  # (tag, id) of the open elements
        self._in_table = False
        self._cell: list[str] | None = None
        self._link: str | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.tags.append((tag, values))
        if "id" in values:
            assert values["id"] not in self.ids, f"id {values['id']} twice"
            self.ids[values["id"]] = tag
            self.text_of[values["id"]] = []
        if "href" in values:
            self.hrefs.append(values["href"])
        if "title" in values:
            self.titles.append(values["title"])
        if tag in ("meta", "input", "br"):
            return
        self._open.append((tag, values.get("id")))
        if tag == "table" and values.get("id") == "rule-table":
            self._in_table = True
        if self._in_table and tag == "tr":
            self.rows.append([])
        if self._in_table and tag == "td":
            self._cell, self._link = [], None
        if self._cell is not None and tag == "a":
            self._link = values.get("href")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("meta", "input", "br"):
            return
        while self._open:
            open_tag, _ = self._open.pop()
            if open_tag == tag:
                break
        if tag == "td" and self._cell is not None:
            self.rows[-1].append(("".join(self._cell).strip(), self._link))
            self._cell = None
        if tag == "table":
            self._in_table = False

    def handle_data(self, data: str) -> None:
        for _, element in self._open:
            if element is not None:
                self.text_of[element].append(data)
        if self._cell is not None:
            self._cell.append(data)

    def text(self, element: str) -> str:
        return " ".join("".join(self.text_of[element]).split())


def _exchange(i: int, size: int = 1500) -> dict[str, Any]:
    return {
        "method": "POST",
        "url": f"http://target.example/api/ws/v1/departments?n={i}",
        "request_headers": {"authorization": "***", "content-type": "application/json"},
        "request_body": {"name": f"amws-run-{i}"},
        "status": 200,
        "response_headers": {"content-type": "application/json"},
        "response_body": '{"uuid": "' + "x" * size + '"}',
    }


def _reason(function: str, message: str) -> str:
    source = "\n".join(f"    line {n} of {function}" for n in range(40))
    deciding = f"E       AssertionError: {message}\nE       assert 200 == 201\n"
    return f"{source}\n>       assert status == 201\n{deciding}"


def document(
    failures: int, functions: int, distinct: bool = False, body: int = 1500
) -> dict[str, Any]:
    """A not-conformant run: ``failures`` failed tests spread over ``functions`` test functions
    of the catalogue's first rules; each fails the same way (UUIDs aside) unless ``distinct``."""
    catalogue = spec.rules()
    rules: dict[str, dict[str, Any]] = {}
    tests: dict[str, dict[str, Any]] = {}
    failed: dict[str, dict[str, Any]] = {}
    for i in range(failures):
        rule = catalogue[i % functions % len(catalogue)]
        node = f"suites/rules/test_x.py::test_{i % functions}[op-{i}]"
        word = f"case {i} " * 8 if distinct else f"uuid 123e4567-e89b-42d3-a456-{i:012d}"
        message = f"the target answered 200, the documents say 201 ({word}) [{rule.id}]"
        tests[node] = {"outcome": "failed", "rules": [rule.id], "phase": "call", "violated": []}
        failed[node] = {
            "reason": _reason(f"test_{i % functions}", message),
            "rules": [rule.id],
            "transcript": [_exchange(i, body), _exchange(i + 1, body), _exchange(i + 2, body)],
        }
    for n, rule in enumerate(catalogue[functions:]):
        tests[f"suites/rules/test_y.py::test_ok_{n}"] = {"outcome": "passed", "rules": [rule.id]}
    by_rule: dict[str, list[str]] = {}
    for node, entry in tests.items():
        for rule_id in entry["rules"]:
            by_rule.setdefault(rule_id, []).append(node)
    for rule in catalogue:
        rules[rule.id] = {
            "verdict": "failed" if catalogue.index(rule) < functions else "passed",
            "level": rule.level,
            "source": rule.source,
            "title": rule.title,
            "tests": by_rule.get(rule.id, []),
            "informative_tests": [],
            "certifies": rule.normative,
            "skip_reasons": [],
            "blocked_by": [],
            "global_check_failures": [],
        }
    return {
        "generated_at": "2025-01-02T03:04:05+00:00",
        "started_at": "2025-01-02T02:50:00+00:00",
        "duration_seconds": 845.2,
        "seed": 424242,
        "suite": {"name": "amws-conformance", "version": "9.8.7"},
        "spec": {
            "openapi_version": "1.0",
            "openapi_sha256": OPENAPI_SHA,
            "rules_sha256": RULES_SHA,
        },
        "target": {"name": "mock", "base_url": "http://target.example", "run_id": "feedc0de"},
        "verdict": "not conformant",
        "plan": {"name": "deep", "tests": len(tests), "left_out": 0, "forecast_minutes": 3.5},
        "root_causes": [
            {
                "cause": "the target answered 200, the documents say 201",
                "tests": list(failed),
                "failed_rules": sorted({r for f in failed.values() for r in f["rules"]}),
                "blocked_rules": [],
                "example": "AssertionError: the target answered 200",
            }
        ],
        "undecided": {},
        "normative_not_certifiable": [],
        "rules": rules,
        "failures": failed,
        "tests": tests,
        "cleanup_problems": [],
        "exit_status": 1,
    }


def test_the_header_says_the_verdict_the_counts_and_the_runs_facts() -> None:
    doc = document(failures=30, functions=10)
    doc["rate_units"] = {"keys": {"full": 12345}, "failed_auth": 800, "unplanned_429": 2}
    page = Page(render(doc))
    assert page.text("verdict") == "not conformant"
    facts = page.text("facts")
    for fact in ("feedc0de", "424242", "deep", "14 min 5 s", "9.8.7", "mock", "full 12,345"):
        assert fact in facts, fact
    assert OPENAPI_SHA in page.titles and RULES_SHA in page.titles
    counts = page.text("counts")
    passed = len(doc["tests"]) - 30
    assert f"tests {len(doc['tests'])}" in counts and "failed 30" in counts
    assert f"passed {passed}" in counts
    normative = sum(1 for r in doc["rules"].values() if r["certifies"])
    assert f"certifying normative rules {normative}" in counts


def test_the_header_says_how_much_of_the_contract_the_run_can_catch() -> None:
    doc = document(failures=1, functions=1)
    assert "contract" not in Page(render(doc)).text("facts")  # a report without the figure
    doc["plan"]["mutants"] = {"caught": 769, "of": 1085}
    assert "769 of 1,085 mutants (70.9 %)" in Page(render(doc)).text("facts")


def test_the_header_says_why_the_run_exits_as_it_does() -> None:
    doc = document(failures=1, functions=1)
    doc["exit_status"] = 0
    doc["exit_reason"] = (
        "exit status 0: every certifying rule in the run's scope passed; 1 informative"
    )
    assert "1 informative" in Page(render(doc)).text("exit-reason")
    del doc["exit_reason"]  # a report written before the field existed
    assert "exit-reason" not in render(doc)


def test_the_chart_is_inline_svg_per_document_and_per_resource() -> None:
    page = Page(render(document(failures=30, functions=10)))
    assert page.ids["chart"] == "section"
    svgs = [attrs for tag, attrs in page.tags if tag == "svg"]
    assert len(svgs) == 2
    assert "per document" in page.text("chart") and "per resource" in page.text("chart")
    assert sum(1 for tag, _ in page.tags if tag == "rect") >= 4
    # Nothing is fetched: no script, style sheet or image comes from elsewhere.
    for tag, attrs in page.tags:
        assert not attrs.get("src") and not (tag == "link" and attrs.get("href")), tag


def _stopped(doc: dict[str, Any], node: str, rules: list[str], **fields: Any) -> None:
    """Add a failed test whose failure (a set-up's, another rule's check) stopped ``rules``."""
    message = str(fields.pop("message"))
    doc["tests"][node] = {"outcome": "failed", "rules": rules, **fields}
    doc["failures"][node] = {"reason": _reason("t", message), "rules": rules, "transcript": []}
    for rule in rules:
        doc["rules"][rule]["tests"].append(node)


def test_every_rule_in_the_table_links_to_its_evidence() -> None:
    doc = document(failures=30, functions=10)
    first, second, third = list(doc["rules"])[:3]
    # A check of the first rule broke in a test of the first two: the second is blocked there.
    _stopped(
        doc,
        "suites/rules/test_z.py::test_both",
        [first, second],
        violated=[first],
        phase="call",
        message=f"[{first}] broken by a global check",
    )
    # A set-up failed under a test of the third rule: blocked, by no rule.
    _stopped(
        doc,
        "suites/rules/test_z.py::test_setup",
        [third],
        phase="setup",
        message="fixture could not make its record",
    )
    page = Page(render(doc))
    # The second rule failed on its own: the failure that stopped its other test is pointed to.
    assert "1 more test of this rule stopped by other failures" in page.text(f"rule-{second}")
    assert f"[{first}] broken by a global check" in page.text(f"rule-{first}")
    rows = [cells for cells in page.rows if cells]  # the heading's row has no td
    assert len(rows) == len(doc["rules"])
    for cells in rows:
        rule_id, link = cells[0]
        assert link == f"#rule-{rule_id}" and page.ids[f"rule-{rule_id}"] == "section"
        assert doc["rules"][rule_id]["source"] in [text for text, _ in cells]
    # A failed rule's evidence, one click away, starts with the deciding assertion line.
    failed = next(r for r, v in doc["rules"].items() if v["verdict"] == "failed")
    evidence = page.text(f"rule-{failed}")
    assert "AssertionError: the target answered 200, the documents say 201" in evidence
    assert f"[{failed}]" in evidence
    # Every link lands on an element of the page: nothing leads elsewhere.
    for href in page.hrefs:
        assert href.startswith("#") and href[1:] in page.ids, href


def test_failures_of_one_test_the_same_way_are_folded() -> None:
    doc = document(failures=1000, functions=20)
    text = render(doc)
    page = Page(text)
    blocks = [a for tag, a in page.tags if tag == "div" and "failure" in a.get("class", "")]
    assert len([b for b in blocks if "ref" not in b["class"]]) == 20
    assert "1,000 failed tests, folded into 20 blocks" in page.text("evidence")
    assert page.text("f1").count("49 more tests failed the same way") == 1
    assert len(text.encode()) < 1_000_000


def test_other_failures_of_one_function_are_its_variants() -> None:
    # One test function over 30 operations, each failing with a message of its own.
    doc = document(failures=30, functions=1, distinct=True)
    page = Page(render(doc))
    assert "30 failed tests, folded into 1 blocks" in page.text("evidence")
    block = page.text("f1")
    assert "29 more tests of this function failed differently (29 variants)" in block
    # Each variant keeps its own deciding line.
    assert all(f"case {i} " in block for i in range(30))


@pytest.mark.parametrize(
    ("functions", "distinct", "body"),
    [(40, False, 1500), (300, True, 1500), (1200, True, 4000)],
    ids=["repeated", "variants", "all-apart"],
)
def test_a_thousand_failures_stay_under_the_bound(
    functions: int, distinct: bool, body: int
) -> None:
    doc = document(failures=1200, functions=functions, distinct=distinct, body=body)
    text = render(doc)
    assert len(text.encode()) <= LIMIT, f"{len(text.encode()):,} bytes"
    # Whatever had to give way, every failure's deciding line is still on the page.
    page = Page(text)
    evidence = page.text("evidence")
    assert all(f"op-{i}]" in evidence for i in range(0, 1200, 97))


def test_lone_surrogates_in_evidence_are_written_as_escapes() -> None:
    doc = document(failures=2, functions=2)
    first = next(iter(doc["failures"].values()))
    first["transcript"][0]["response_body"] = '{"name": "broken \ud800 text"}'
    first["reason"] += "E       AssertionError: sent 'x\ud800'\n"
    text = render(doc)
    text.encode("utf-8")  # raises on a lone surrogate
    assert "\\ud800" in text


def test_the_page_shows_expectations_and_flaky_tests_when_the_document_has_them() -> None:
    doc = document(failures=3, functions=3)
    first, second = list(doc["failures"])[:2]
    rule = doc["tests"][first]["rules"][0]
    mark = {"entry": f"rule:{rule}", "reason": "known gap", "link": None}
    doc["tests"][first]["expectation"] = {**mark, "status": "expected-fail"}
    flaky = "suites/rules/test_y.py::test_ok_0"
    doc["tests"][flaky]["outcome"] = "flaky"
    doc["tests"][flaky]["reruns"] = [{"outcome": "passed", "phase": None, "line": ""}]
    doc["flaky"] = [flaky]
    doc["stability"] = 3
    doc["expectations"] = {
        "file": "expectations.yaml",
        "sha256": "c" * 64,
        "entries": [
            {
                "rule": rule,
                "reason": "known gap",
                "link": None,
                "status": "expected-fail",
                "tests": [first],
            },
            {
                "test": "suites/rules/test_y.py::test_ok_1",
                "reason": "fixed since",
                "link": "https://tracker.example/issue/7",
                "status": "stale",
                "tests": [],
            },
        ],
        "expected_failures": [first],
        "unexpected_failures": [second],
        "stale": ["test:suites/rules/test_y.py::test_ok_1"],
    }
    page = Page(render(doc))
    assert "expected fail 1" in page.text("counts") and "flaky 1" in page.text("counts")
    listed = page.text("expectations")
    for words in ("expected fail 1", "failed 1", "stale 1", "known gap", "fixed since"):
        assert words in listed, words
    assert f"{flaky} failed, then passed" in listed
    assert "https://tracker.example/issue/7" in page.hrefs
    assert "3 reruns" in page.text("facts")
    # The failure that was expected says so beside its rules.
    assert "expected fail" in page.text(f"rule-{rule}") and "known gap" in page.text(f"rule-{rule}")
    # And a document without them (an older report.json) renders too.
    for key in ("flaky", "stability", "expectations", "seed", "duration_seconds"):
        doc.pop(key)
    assert "not conformant" in Page(render(doc)).text("verdict")
