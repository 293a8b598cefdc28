"""Person search (PERS-SEARCH- rules): the required body, paging ranges, criterion lengths,
case-insensitive contains matching on every criterion, the conjunction of criteria, the hidden
identity number and the answer's shape; and that a deleted person is no longer found.

Every person a test searches for carries a run-tagged token no other record has, so the tests
hold on a system full of other people. Ranges and lengths are read from the spec.
"""

from __future__ import annotations

from typing import Any

import pytest

from fixtures._limits import body_schema, field_schema

PERSONS = "/api/ws/v1/persons"
SEARCH = f"{PERSONS}/search"
SCHEMA = body_schema("searchPersons")
CRITERIA = [f for f in SCHEMA["properties"] if f not in ("start", "limit")]
# search criterion -> the person field it is matched on
MATCHED_ON = {"mobileNumber": "mobile", "identityNr": "identityNumber"}
ROW_FIELDS = {"uuid", "firstName", "lastName", "email", "mobile"}
ENVELOPE = {"entries", "startIndex", "countReturned", "totalCount"}


# -- helpers -----------------------------------------------------------------------------
def _limit_range() -> tuple[int, int]:
    limit = field_schema("searchPersons", "limit")
    return int(limit["minimum"]), int(limit["maximum"])


def _token(factories: Any) -> str:
    """A run-unique text that ends in a delimiter, so no other token contains it."""
    return factories.tag("srch").replace("-", "") + "Q"


def _digits(factories: Any, count: int) -> str:
    return "".join(str(factories.random.randrange(10)) for _ in range(count))


def _person(api: Any, factories: Any, token: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    """A person whose every searchable field carries ``token`` (mobile: its own digits)."""
    searchable = {
        "firstName": f"Fn{token}Ab",
        "lastName": f"Roosevelt{token}Cd",
        "email": f"em.{token}.x@example.com".lower(),
        "mobile": f"+27{_digits(factories, 9)}",
        "identityNumber": f"Id{token}E{_digits(factories, 8)}f",
    }
    body = factories.person(**{**searchable, **fields})
    response = api.post(PERSONS, json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"], body


def _search(api: Any, **body: Any) -> dict[str, Any]:
    response = api.post(SEARCH, json=body)
    assert response.status_code == 200, (body, response.status_code, response.text)
    return response.json()


def _uuids(page: dict[str, Any]) -> list[str]:
    return [row["uuid"] for row in page["entries"]]


# -- body and paging ---------------------------------------------------------------------
@pytest.mark.rule("PERS-SEARCH-BODY-REQUIRED")
def test_search_needs_a_json_body(api) -> None:
    assert api.post(SEARCH).status_code == 400, "a search without a body was answered"
    for broken in (b"{", b"not json", b'{"lastName": '):
        response = api.post(SEARCH, content=broken, headers={"Content-Type": "application/json"})
        assert response.status_code == 400, (broken, response.status_code)
    assert api.post(SEARCH, json={}).status_code == 200


@pytest.mark.rule("PERS-SEARCH-PAGING")
def test_paging_defaults_and_ranges(api, factories) -> None:
    low, high = _limit_range()
    token = _token(factories)
    mine = [_person(api, factories, token)[0] for _ in range(2)]
    page = _search(api, lastName=token)
    assert page["startIndex"] == 0, "start does not default to 0"
    assert sorted(_uuids(page)) == sorted(mine)
    everyone = _search(api)
    default = int(field_schema("searchPersons", "limit")["default"])
    assert everyone["countReturned"] == min(everyone["totalCount"], default)

    for limit in (low, high):
        assert sorted(_uuids(_search(api, lastName=token, limit=limit))) == sorted(mine)
    for bad in ({"start": -1}, {"limit": low - 1}, {"limit": high + 1}, {"limit": 0}):
        response = api.post(SEARCH, json={"lastName": token, **bad})
        assert response.status_code == 422, (bad, response.status_code)


@pytest.mark.rule("PERS-SEARCH-CRITERIA-LENGTH")
@pytest.mark.parametrize("criterion", CRITERIA)
def test_criteria_are_length_limited(api, criterion: str) -> None:
    high = field_schema("searchPersons", criterion)["maxLength"]
    assert api.post(SEARCH, json={criterion: "9" * high}).status_code == 200
    response = api.post(SEARCH, json={criterion: "9" * (high + 1)})
    assert response.status_code == 422, response.status_code
    assert criterion in response.json()["reason"]


# -- matching ----------------------------------------------------------------------------
@pytest.mark.rule("PERS-SEARCH-CONTAINS")
@pytest.mark.parametrize("criterion", CRITERIA)
def test_criterion_is_a_case_insensitive_contains(api, factories, criterion: str) -> None:
    field = MATCHED_ON.get(criterion, criterion)
    token = _token(factories)
    wanted, body = _person(api, factories, token)
    other, _ = _person(api, factories, _token(factories))
    value = body[field]
    # A piece from inside the value, in the opposite letter case.
    piece = value[3:-1].swapcase() if field != "mobile" else value[4:-1]
    page = _search(api, **{criterion: piece})
    found = _uuids(page)
    assert wanted in found, f"{criterion}={piece!r} did not find {value!r}"
    assert other not in found, f"{criterion}={piece!r} also found a person without it"
    if field in ROW_FIELDS:
        for row in page["entries"]:
            assert piece.casefold() in (row[field] or "").casefold(), row
    if field == "lastName":  # the documented example: "OOS" finds "Roosevelt"
        assert wanted in _uuids(_search(api, lastName="OOS", email=body["email"]))


@pytest.mark.rule("PERS-SEARCH-ALL-FIELDS")
def test_every_given_criterion_must_match(api, factories) -> None:
    token = _token(factories)
    first, body = _person(api, factories, token)
    second, _ = _person(api, factories, token, firstName=f"Other{token}Gh")
    assert sorted(_uuids(_search(api, lastName=token))) == sorted([first, second])
    both = _search(api, lastName=token, firstName=body["firstName"])
    assert _uuids(both) == [first], "a person matching only one of two criteria was returned"
    assert _search(api, lastName=token, email="no-such-address-" + token)["entries"] == []
    three = _search(api, lastName=token, identityNr=body["identityNumber"], mobileNumber="+27")
    assert _uuids(three) == [first]


@pytest.mark.rule("PERS-SEARCH-IDENTITY-NOT-RETURNED")
def test_identity_number_is_searchable_but_not_shown(api, factories) -> None:
    token = _token(factories)
    uuid, body = _person(api, factories, token)
    page = _search(api, identityNr=body["identityNumber"])
    assert _uuids(page) == [uuid], "the identity number did not find its person"
    for row in [*page["entries"], *_search(api, lastName=token)["entries"]]:
        assert not {"identityNumber", "identityNr"} & set(row), row
        assert body["identityNumber"] not in {str(v) for v in row.values()}, row


# -- the answer --------------------------------------------------------------------------
@pytest.mark.rule("PERS-SEARCH-RESPONSE")
def test_answer_shape_and_counts(api, factories) -> None:
    token = _token(factories)
    made = dict(_person(api, factories, token) for _ in range(3))
    page = _search(api, lastName=token)
    assert set(page) == ENVELOPE, set(page)
    assert (page["startIndex"], page["countReturned"], page["totalCount"]) == (0, 3, 3)
    for row in page["entries"]:
        assert set(row) == ROW_FIELDS, set(row)
        sent = made[row["uuid"]]
        assert {f: row[f] for f in ROW_FIELDS - {"uuid"}} == {
            f: sent[f] for f in ROW_FIELDS - {"uuid"}
        }
    low, _ = _limit_range()
    seen = []
    for start in (0, 1, 2, 3, 5):
        part = _search(api, lastName=token, start=start, limit=low)
        assert part["startIndex"] == start
        assert part["totalCount"] == 3
        assert part["countReturned"] == len(part["entries"]) == max(0, 3 - start)
        if start in (0,):
            seen = _uuids(part)
        else:
            assert _uuids(part) == seen[start:], "pages do not follow one order"


@pytest.mark.rule("PERS-SEARCH-RESPONSE")
@pytest.mark.slow
def test_stepping_start_by_limit_visits_every_match_once(api, factories) -> None:
    low, _ = _limit_range()
    token = _token(factories)
    made = {_person(api, factories, token)[0] for _ in range(low + 1)}
    visited: list[str] = []
    start = 0
    while True:
        page = _search(api, lastName=token, start=start, limit=low)
        assert page["totalCount"] == low + 1
        assert page["countReturned"] == len(page["entries"]) <= low
        visited += _uuids(page)
        if not page["entries"]:
            break
        start += low
    assert len(visited) == len(set(visited)), "a match was returned twice"
    assert set(visited) == made


# -- delete ------------------------------------------------------------------------------
@pytest.mark.rule("PERS-DELETE-HARD")
def test_deleted_person_is_gone(api, factories) -> None:
    token = _token(factories)
    uuid, body = _person(api, factories, token)
    assert _uuids(_search(api, lastName=token)) == [uuid]
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    assert api.get(f"{PERSONS}/{uuid}").status_code == 404
    for criterion in CRITERIA:
        field = MATCHED_ON.get(criterion, criterion)
        assert uuid not in _uuids(_search(api, **{criterion: body[field]})), criterion
