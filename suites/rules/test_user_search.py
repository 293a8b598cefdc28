"""User search (USER-SEARCH- rules) and the deprecated query-string list: the required body,
paging ranges, criterion lengths, case-insensitive contains matching, the conjunction of
criteria, the answer's shape, unknown criteria ignored; and that a deleted user is not found.

Every user a test searches for carries a run-tagged token no other record has. Ranges and
lengths are read from the spec.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

import spec
from fixtures._limits import body_schema, field_schema

USERS = "/api/ws/v1/users"
SEARCH = f"{USERS}/search"
CRITERIA = [f for f in body_schema("searchUsers")["properties"] if f not in ("start", "limit")]
# search criterion -> the user field it is matched on
MATCHED_ON = {"mobileNumber": "mobile", "identityNr": "identityNumber"}
# query parameter of the deprecated list -> the user field it filters on
LIST_PARAMS = {
    "first_name": "firstName",
    "last_name": "lastName",
    "mobile": "mobile",
    "email": "email",
    "identity_nr": "identityNumber",
}
ROW_FIELDS = {"uuid", "firstName", "lastName", "email", "mobile"}
ENVELOPE = {"entries", "startIndex", "countReturned", "totalCount"}


# -- helpers -----------------------------------------------------------------------------
def _limit_range(operation_id: str = "searchUsers") -> tuple[int, int]:
    if operation_id == "searchUsers":
        limit = field_schema(operation_id, "limit")
    else:
        params = spec.operation(operation_id).raw["parameters"]
        limit = next(spec.resolve(p) for p in params if spec.resolve(p)["name"] == "limit")
        limit = limit["schema"]
    return int(limit["minimum"]), int(limit["maximum"])


def _token(factories: Any) -> str:
    """A run-unique text that ends in a delimiter, so no other token contains it (a long run
    id is shortened with a digest, so the names built on it stay within their limits)."""
    tag = factories.tag("usr").replace("-", "")
    if len(tag) > 24:
        tag = tag[:12] + hashlib.sha256(tag.encode()).hexdigest()[:10]
    return tag + "Q"


def _digits(factories: Any, count: int) -> str:
    return "".join(str(factories.random.randrange(10)) for _ in range(count))


def _user(api: Any, factories: Any, token: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    """A user whose every searchable field carries ``token`` (mobile: its own digits)."""
    unique = _digits(factories, 8)
    searchable = {
        "firstName": f"Fn{token}Ab",
        "lastName": f"Roosevelt{token}Cd",
        "email": f"em.{token}.{unique}@example.com".lower(),
        "mobile": f"+27{_digits(factories, 9)}",
        "identityNumber": f"Id{token}E{unique}f",
    }
    body = factories.user(**{**searchable, **fields})
    response = api.post(USERS, json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"], body


def _search(api: Any, **body: Any) -> dict[str, Any]:
    response = api.post(SEARCH, json=body)
    assert response.status_code == 200, (body, response.status_code, response.text)
    return response.json()


def _uuids(page: dict[str, Any]) -> list[str]:
    return [row["uuid"] for row in page["entries"]]


# -- body, paging, lengths ---------------------------------------------------------------
@pytest.mark.rule("USER-SEARCH-BODY-REQUIRED")
def test_search_needs_a_json_body(api) -> None:
    assert api.post(SEARCH).status_code == 400, "a search without a body was answered"
    for broken in (b"{", b"not json", b'{"lastName": '):
        response = api.post(SEARCH, content=broken, headers={"Content-Type": "application/json"})
        assert response.status_code == 400, (broken, response.status_code)
    assert api.post(SEARCH, json={}).status_code == 200


@pytest.mark.rule("USER-SEARCH-PAGING")
def test_paging_defaults_and_ranges(api, factories) -> None:
    low, high = _limit_range()
    token = _token(factories)
    mine = sorted(_user(api, factories, token)[0] for _ in range(2))
    page = _search(api, lastName=token)
    assert page["startIndex"] == 0, "start does not default to 0"
    assert sorted(_uuids(page)) == mine
    everyone = _search(api)
    default = int(field_schema("searchUsers", "limit")["default"])
    assert everyone["countReturned"] == min(everyone["totalCount"], default)
    for limit in (low, high):
        assert sorted(_uuids(_search(api, lastName=token, limit=limit))) == mine
    for bad in ({"start": -1}, {"limit": low - 1}, {"limit": high + 1}, {"limit": 0}):
        response = api.post(SEARCH, json={"lastName": token, **bad})
        assert response.status_code == 422, (bad, response.status_code)


@pytest.mark.rule("USER-SEARCH-CRITERIA-LENGTH")
@pytest.mark.parametrize("criterion", CRITERIA)
def test_criteria_are_length_limited(api, criterion: str) -> None:
    high = field_schema("searchUsers", criterion)["maxLength"]
    assert api.post(SEARCH, json={criterion: "9" * high}).status_code == 200
    response = api.post(SEARCH, json={criterion: "9" * (high + 1)})
    assert response.status_code == 422, response.status_code
    assert criterion in response.json()["reason"]


# -- matching ----------------------------------------------------------------------------
@pytest.mark.rule("USER-SEARCH-CONTAINS")
@pytest.mark.parametrize("criterion", CRITERIA)
def test_criterion_is_a_case_insensitive_contains(api, factories, criterion: str) -> None:
    field = MATCHED_ON.get(criterion, criterion)
    wanted, body = _user(api, factories, _token(factories))
    other, _ = _user(api, factories, _token(factories))
    value = body[field]
    # A piece from inside the value, in the opposite letter case.
    piece = value[3:-1].swapcase() if field != "mobile" else value[4:-1]
    page = _search(api, **{criterion: piece})
    found = _uuids(page)
    assert wanted in found, f"{criterion}={piece!r} did not find {value!r}"
    assert other not in found, f"{criterion}={piece!r} also found a user without it"
    if field in ROW_FIELDS:
        for row in page["entries"]:
            assert piece.casefold() in (row[field] or "").casefold(), row


@pytest.mark.rule("USER-SEARCH-ALL-FIELDS")
def test_every_given_criterion_must_match(api, factories) -> None:
    token = _token(factories)
    first, body = _user(api, factories, token)
    second, _ = _user(api, factories, token, firstName=f"Other{token}Gh")
    assert sorted(_uuids(_search(api, lastName=token))) == sorted([first, second])
    both = _search(api, lastName=token, firstName=body["firstName"])
    assert _uuids(both) == [first], "a user matching only one of two criteria was returned"
    assert _search(api, lastName=token, email="no-such-address-" + token)["entries"] == []
    three = _search(api, lastName=token, identityNr=body["identityNumber"], mobileNumber="+27")
    assert _uuids(three) == [first]


# -- the answer --------------------------------------------------------------------------
@pytest.mark.rule("USER-SEARCH-RESPONSE")
def test_answer_shape_and_counts(api, factories) -> None:
    token = _token(factories)
    made = dict(_user(api, factories, token) for _ in range(3))
    page = _search(api, lastName=token)
    assert set(page) == ENVELOPE, set(page)
    assert (page["startIndex"], page["countReturned"], page["totalCount"]) == (0, 3, 3)
    for row in page["entries"]:
        assert set(row) == ROW_FIELDS, set(row)
        sent = made[row["uuid"]]
        assert all(row[f] == sent[f] for f in ROW_FIELDS - {"uuid"}), row
    low, _ = _limit_range()
    for start in (1, 2, 3, 5):
        part = _search(api, lastName=token, start=start, limit=low)
        assert (part["startIndex"], part["totalCount"]) == (start, 3)
        assert part["countReturned"] == len(part["entries"]) == max(0, 3 - start)
        assert _uuids(part) == _uuids(page)[start:], "pages do not follow one order"
    # The identity number stays out of the rows, even when it was the criterion.
    one = next(iter(made.values()))
    for row in _search(api, identityNr=one["identityNumber"])["entries"]:
        assert set(row) == ROW_FIELDS, set(row)
        assert one["identityNumber"] not in {str(v) for v in row.values()}


def _stable(api: Any, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(answer to ``body``, answer to {}) taken while the user population stood still."""
    for _ in range(5):
        before = _search(api)
        answer = _search(api, **body)
        if _search(api) == before:
            return answer, before
    pytest.fail("the user population kept changing during the comparison")


@pytest.mark.rule("USER-SEARCH-UNKNOWN-FIELD")
@pytest.mark.parametrize("name", ["mobile", "identityNumber", "username"])
def test_unknown_criterion_is_ignored(api, factories, name: str) -> None:
    token = _token(factories)
    _, body = _user(api, factories, token)
    _user(api, factories, _token(factories))
    criterion = {name: body[name] if name != "username" else token}
    answer, unfiltered = _stable(api, criterion)
    assert answer["totalCount"] == unfiltered["totalCount"] >= 2, "the criterion filtered"
    assert answer == unfiltered, "the answer differs from the unfiltered first page"


# -- the deprecated list -----------------------------------------------------------------
@pytest.mark.rule("USER-LIST-DEPRECATED")
def test_deprecated_list_filters_and_pages(api, factories) -> None:
    assert spec.operation("listUsersDeprecated").raw.get("deprecated") is True
    token = _token(factories)
    # Two users sharing exactly one last name; every other field differs.
    first, body = _user(api, factories, token)
    second, _ = _user(api, factories, _token(factories), lastName=body["lastName"])
    shared = {"last_name": body["lastName"]}
    response = api.get(USERS, params=shared)
    assert response.status_code == 200, response.text
    page = response.json()
    assert set(page) == ENVELOPE
    assert sorted(_uuids(page)) == sorted([first, second])
    for param, field in LIST_PARAMS.items():
        if param != "last_name":
            found = _uuids(api.get(USERS, params={param: body[field]}).json())
            assert first in found and second not in found, (param, found)
    low, high = _limit_range("listUsersDeprecated")
    for limit in (low, high):
        listed = api.get(USERS, params={**shared, "limit": limit}).json()
        assert sorted(_uuids(listed)) == sorted([first, second]), limit
    rest = api.get(USERS, params={**shared, "start": 1, "limit": low}).json()
    assert (rest["startIndex"], rest["totalCount"], rest["countReturned"]) == (1, 2, 1)
    assert _uuids(rest) == _uuids(page)[1:]


# -- delete ------------------------------------------------------------------------------
@pytest.mark.rule("USER-DELETE-HARD")
def test_deleted_user_is_gone(api, factories) -> None:
    token = _token(factories)
    uuid, body = _user(api, factories, token)
    assert _uuids(_search(api, lastName=token)) == [uuid]
    assert api.delete(f"{USERS}/{uuid}").status_code == 200
    assert api.get(f"{USERS}/{uuid}").status_code == 404
    for criterion in CRITERIA:
        field = MATCHED_ON.get(criterion, criterion)
        assert uuid not in _uuids(_search(api, **{criterion: body[field]})), criterion
    assert uuid not in _uuids(api.get(USERS, params={"email": body["email"]}).json())
