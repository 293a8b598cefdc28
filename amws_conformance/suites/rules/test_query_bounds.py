"""Every documented query-parameter constraint, decided at its edges: per list operation and
rule, each bound is accepted and one step beyond it is refused with the status the list
documents for a bad parameter; a paging start left out starts at its documented default.

The query counterpart of test_contract_bounds.py: the constraints come from
:func:`spec.constraints` (the documents only), each test is tagged with the rule
:func:`spec.rule_for` finds for them, so a small plan catches every spec-derived mutant of a
paging parameter. Accepted edges share one request (every parameter at its lower bounds, then
every one at its upper bounds); a refusal is one request per value, since a 400 need not say
which parameter it refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.spec._constraints import Constraint, constraints, rule_for, syntax
from amws_conformance.suites.rules._bodies import Maker

RANGE = ("minimum", "maximum")


@dataclass(frozen=True)
class QueryCase:
    """The documented query constraints of one operation that one rule's tests decide."""

    op: str
    rule: str
    found: tuple[Constraint, ...]

    def bounds(self) -> list[Constraint]:
        return [c for c in self.found if c.keyword in RANGE]


def _kind(c: Constraint) -> str:
    return syntax(c) if c.keyword in ("pattern", "format") else c.keyword


def cases() -> list[Any]:
    grouped: dict[tuple[str, str], list[Constraint]] = {}
    for c in constraints():
        # A UUID parameter's pattern says what it names; the documents do not say a malformed
        # one is refused, so it is no bound of this module (its rule decides the filter).
        if c.where != "query" or c.keyword in ("format", "pattern"):
            continue
        rule = rule_for(c, _kind(c))
        if rule is None:
            continue
        grouped.setdefault((c.operation_id, rule), []).append(c)
    return [
        pytest.param(
            QueryCase(op, rule, tuple(found)), marks=pytest.mark.rule(rule), id=f"{op}-{rule}"
        )
        for (op, rule), found in grouped.items()
    ]


def _refusal_status(op: spec.Operation, name: str) -> int:
    """The status the list documents for a bad value of ``name`` (400 unless it says 422)."""
    param = next(p for p in op.parameters() if p["name"] == name)
    return int(param.get("x-invalid-status", 400))


@pytest.fixture
def listing(api: Any, factories: Any, request: pytest.FixtureRequest) -> str:
    """The list's path, with a record of the run for each path parameter (made once)."""
    case: QueryCase = request.node.callspec.params["case"]
    op = spec.operation(case.op)
    return Maker(api, factories).path(op.path) if "{" in op.path else op.path


@pytest.mark.parametrize("case", cases())
def test_documented_query_bounds_accepted(api: Any, listing: str, case: QueryCase) -> None:
    lower = {c.field[0]: c.value for c in case.bounds() if c.keyword == "minimum"}
    upper = {c.field[0]: c.value for c in case.bounds() if c.keyword == "maximum"}
    for label, params in (("lower bounds", lower), ("upper bounds", upper)):
        if not params:
            continue
        answer = api.get(listing, params=params)
        assert answer.status_code == 200, f"{label} {params} answered {answer.status_code}"
    defaults = {c.field[0]: c.value for c in case.found if c.keyword == "default"}
    if "start" in defaults:
        page = api.get(listing)
        assert page.status_code == 200, page.text
        body = page.json()
        if isinstance(body, dict) and "startIndex" in body:
            assert body["startIndex"] == defaults["start"], "a page asked without start"


@pytest.mark.parametrize("case", cases())
def test_documented_query_bounds_refused(api: Any, listing: str, case: QueryCase) -> None:
    op = spec.operation(case.op)
    beyond: list[tuple[str, Any]] = []
    for c in case.found:
        name = c.field[0]
        if c.keyword == "minimum":
            beyond.append((name, c.value - 1))
        elif c.keyword == "maximum":
            beyond.append((name, c.value + 1))
    for name, value in beyond:
        answer = api.unchecked.get(listing, params={name: value})
        expected = _refusal_status(op, name)
        assert answer.status_code == expected, (
            f"{name}={value} answered {answer.status_code}, not {expected}"
        )
