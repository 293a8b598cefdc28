"""Paged envelopes (doc1 § Limits): entries, startIndex, countReturned, totalCount.

Generated over the operations the PAGE rules name (every paged list of the spec). Each gets a
scenario: records the run creates and a filter that singles them out, so the expected total is
known; vehicles cannot be created, so their scenario checks consistency without a known set.
Defaults and limits of start and limit are read from the spec.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.fixtures import Factories

V1 = "/api/ws/v1"
RECORDS = 3


@dataclass
class Scenario:
    op: spec.Operation
    path: str
    filters: dict[str, Any]
    expected: set[str] | None  # the ids the filter matches (None: not known in advance)

    def paging(self, name: str) -> dict[str, Any]:
        """Schema of the start or limit parameter (query, or field of the search body)."""
        for param in self.op.parameters():
            if param.get("in") == "query" and param["name"] == name:
                return spec.resolve(param["schema"])
        body = spec.resolve(self.op.raw["requestBody"])["content"]["application/json"]["schema"]
        return spec.resolve(spec.resolve(body)["properties"][name])

    @property
    def limit(self) -> int:
        """A small allowed limit, so the run's records span several pages where it can."""
        return max(int(self.paging("limit").get("minimum", 1)), 2)

    def ask(self, api: Any, start: int | None = None, limit: int | None = None) -> dict[str, Any]:
        paging = {k: v for k, v in (("start", start), ("limit", limit)) if v is not None}
        if self.op.method == "GET":
            answer = api.get(self.path, params={**self.filters, **paging})
        else:
            answer = api.post(self.path, json={**self.filters, **paging})
        assert answer.status_code == 200, answer.text
        return answer.json()


def ids(page: dict[str, Any]) -> list[str]:
    return [row.get("uuid") or row.get("registrationId") for row in page["entries"]]


def _created(api: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = api.post(V1 + path, json=body)
    assert answer.status_code == 201, f"creating at {path}: {answer.text}"
    return answer.json()


def _invites(api: Any, f: Factories, host: str, **fields: Any) -> list[dict[str, Any]]:
    return [_created(api, "/invites", f.invite(host, **fields)) for _ in range(RECORDS)]


def _vehicles(api: Any, f: Factories) -> Scenario:
    return Scenario(spec.operation("listVehicles"), f"{V1}/vehicles", {}, None)


def _invite_list(api: Any, f: Factories) -> Scenario:
    host = _created(api, "/users", f.user())["uuid"]
    made = _invites(api, f, host, identityNumber=f.tag("visitor"))
    visitor = made[0]["visitorId"]  # the visitor on record is reused for the same identity
    expected = {m["registrationId"] for m in made if m["visitorId"] == visitor}
    return Scenario(
        spec.operation("listInvites"), f"{V1}/invites", {"visitorUUID": visitor}, expected
    )


def _registrations(api: Any, f: Factories) -> Scenario:
    host = _created(api, "/users", f.user())["uuid"]
    expected = {m["registrationId"] for m in _invites(api, f, host)}
    op = spec.operation("listUserRegistrations")
    return Scenario(op, f"{V1}/users/{host}/registrations", {}, expected)


def _entries(api: Any, f: Factories) -> Scenario:
    watchlist = _created(api, "/watchlists", f.watchlist())["uuid"]
    path = f"/watchlists/{watchlist}/entries"
    expected = {_created(api, path, f.watchlist_entry())["uuid"] for _ in range(RECORDS)}
    return Scenario(spec.operation("listWatchlistEntries"), V1 + path, {}, expected)


def _people(op_id: str, collection: str, field: str) -> Callable[[Any, Factories], Scenario]:
    def build(api: Any, f: Factories) -> Scenario:
        surname = f.tag("page")[:50]
        make = f.person if collection == "/persons" else f.user
        expected = {_created(api, collection, make(lastName=surname))["uuid"] for _ in range(3)}
        op = spec.operation(op_id)
        return Scenario(op, op.path, {field: surname}, expected)

    return build


SCENARIOS: dict[str, Callable[[Any, Factories], Scenario]] = {
    "listVehicles": _vehicles,
    "listInvites": _invite_list,
    "listUserRegistrations": _registrations,
    "listWatchlistEntries": _entries,
    "searchPersons": _people("searchPersons", "/persons", "lastName"),
    "searchUsers": _people("searchUsers", "/users", "lastName"),
    "listUsersDeprecated": _people("listUsersDeprecated", "/users", "last_name"),
}


@pytest.fixture(scope="module")
def scenario_of(amws_run, api, factories) -> Callable[[str], Scenario]:
    """One scenario per operation, built on first use (its data is not changed afterwards),
    booked as a shared set-up rather than to the first test that asks for it."""
    built: dict[str, Scenario] = {}

    def get(op_id: str) -> Scenario:
        assert op_id in SCENARIOS, f"the suite has no paging scenario for {op_id}"
        if op_id not in built:
            with amws_run.sharing(f"paging:{op_id}"):
                built[op_id] = SCENARIOS[op_id](api, factories)
        else:
            amws_run.sharing_used(f"paging:{op_id}")
        return built[op_id]

    return get


def _ops(rule_id: str) -> list[Any]:
    rule = next(r for r in spec.rules() if r.id == rule_id)
    return [
        pytest.param(op_id, marks=pytest.mark.rule(rule_id), id=op_id) for op_id in rule.operations
    ]


@pytest.mark.parametrize("op_id", _ops("PAGE-ENVELOPE-FIELDS"))
def test_envelope_fields(api, scenario_of, op_id: str) -> None:
    page = scenario_of(op_id).ask(api)
    assert isinstance(page, dict) and isinstance(page.get("entries"), list)
    for field in ("startIndex", "countReturned", "totalCount"):
        value = page.get(field)
        assert type(value) is int and value >= 0, f"{field}={value!r}"


@pytest.mark.parametrize("op_id", _ops("PAGE-START-INDEX-ECHO"))
def test_start_index_echoes_the_request(api, scenario_of, op_id: str) -> None:
    scenario = scenario_of(op_id)
    assert scenario.ask(api)["startIndex"] == scenario.paging("start").get("default", 0)
    first = scenario.ask(api, 0, scenario.limit)  # gives the total, and is the page at 0
    total = first["totalCount"]
    for start in sorted({0, 1, 2, total, total + 5}):
        page = first if start == 0 else scenario.ask(api, start, scenario.limit)
        assert page["startIndex"] == start


@pytest.mark.parametrize("op_id", _ops("PAGE-COUNT-RETURNED"))
def test_count_returned_matches_entries(api, scenario_of, op_id: str) -> None:
    scenario = scenario_of(op_id)
    default = scenario.ask(api)
    assert default["countReturned"] == len(default["entries"])
    assert default["countReturned"] <= scenario.paging("limit")["default"]
    limit = scenario.limit
    first = scenario.ask(api, 0, limit)  # gives the total, and is the page at 0
    total = first["totalCount"]
    for start in sorted({0, 1, max(total - 1, 0), total, total + 1}):
        page = first if start == 0 else scenario.ask(api, start, limit)
        assert page["countReturned"] == len(page["entries"]) <= limit
        if start < page["totalCount"]:
            assert page["countReturned"] == min(limit, page["totalCount"] - start), start
        else:
            assert page["countReturned"] == 0


@pytest.mark.parametrize("op_id", _ops("PAGE-TOTAL-COUNT"))
def test_total_count_is_independent_of_paging(api, scenario_of, op_id: str) -> None:
    scenario = scenario_of(op_id)
    totals = {scenario.ask(api)["totalCount"]}
    for start in (0, 1, 2, 50):
        for limit in (scenario.limit, scenario.limit + 1):
            totals.add(scenario.ask(api, start, limit)["totalCount"])
    assert len(totals) == 1, f"totalCount changes with start and limit: {sorted(totals)}"
    if scenario.expected is not None:
        assert totals == {len(scenario.expected)}, "totalCount is not the number of matches"


@pytest.mark.parametrize("op_id", _ops("PAGE-ITERATION"))
def test_iteration_collects_every_record_once(api, scenario_of, op_id: str) -> None:
    scenario = scenario_of(op_id)
    collected: list[str] = []
    start, limit = 0, scenario.limit
    for _ in range(200):
        page = scenario.ask(api, start, limit)
        collected += ids(page)
        if page["startIndex"] + page["countReturned"] >= page["totalCount"]:
            break
        assert page["countReturned"] > 0, "an empty page before the end"
        start += limit
    assert len(collected) == len(set(collected)), "a record was returned twice"
    assert len(collected) == page["totalCount"]
    if scenario.expected is not None:
        assert set(collected) == scenario.expected
