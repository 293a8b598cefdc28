"""User search's own rules (USER-SEARCH-UNKNOWN-FIELD) and the deprecated query-string list
(USER-LIST-DEPRECATED): unknown criteria ignored, the list's filters and paging, and a deleted
user gone from it.

What user search shares with person search (body, paging, lengths, matching, the answer, the
hard delete) is tested for both kinds in test_people_search.py. Every user a test searches for
carries a run-tagged token no other record has; ranges are read from the spec.
"""

from __future__ import annotations

from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.suites.rules import _people_records as records
from amws_conformance.suites.rules._people import ENVELOPE, USER, search, uuids

USERS = USER.path
# query parameter of the deprecated list -> the user field it filters on
LIST_PARAMS = {
    "first_name": "firstName",
    "last_name": "lastName",
    "mobile": "mobile",
    "email": "email",
    "identity_nr": "identityNumber",
}


# -- helpers -----------------------------------------------------------------------------
def _list_limit_range() -> tuple[int, int]:
    """The deprecated list's limit range (a query parameter)."""
    params = spec.operation("listUsersDeprecated").raw["parameters"]
    limit = next(spec.resolve(p) for p in params if spec.resolve(p)["name"] == "limit")
    return int(limit["schema"]["minimum"]), int(limit["schema"]["maximum"])


def _search(api: Any, **body: Any) -> dict[str, Any]:
    return search(api, USER, **body)


def _stable(api: Any, body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(answer to ``body``, answer to {}) taken while the user population stood still."""
    for _ in range(5):
        before = _search(api)
        answer = _search(api, **body)
        if _search(api) == before:
            return answer, before
    pytest.fail("the user population kept changing during the comparison")


@pytest.fixture
def found(request, api, factories) -> records.Found:
    """The group's three users sharing exactly one last name, each with a first name, e-mail
    address, mobile and identity number of its own (the search tests' trio, see
    :func:`records.found` for why sharing is safe): the tests here only search and list
    them, each asserting on these three alone."""
    return records.found(request, api, factories, USER)


@pytest.mark.rule("USER-SEARCH-UNKNOWN-FIELD")
@pytest.mark.parametrize("name", ["mobile", "identityNumber", "username"])
def test_unknown_criterion_is_ignored(api, found, name: str) -> None:
    # The value is the first user's: were the criterion applied, fewer users would be found.
    mark, body = found.mark, found.trio[0].body
    criterion = {name: body[name] if name != "username" else mark}
    answer, unfiltered = _stable(api, criterion)
    assert answer["totalCount"] == unfiltered["totalCount"] >= 2, "the criterion filtered"
    assert answer == unfiltered, "the answer differs from the unfiltered first page"


# -- the deprecated list -----------------------------------------------------------------
@pytest.mark.rule("USER-LIST-DEPRECATED")
def test_deprecated_list_filters_and_pages(api, found) -> None:
    assert spec.operation("listUsersDeprecated").raw.get("deprecated") is True
    # Three users sharing exactly one last name; every other field differs.
    first, body = found.trio[0].uuid, found.trio[0].body
    everyone = sorted(record.uuid for record in found.trio)
    others = set(everyone) - {first}
    shared = {"last_name": body["lastName"]}
    assert all(record.body["lastName"] == body["lastName"] for record in found.trio)
    response = api.get(USERS, params=shared)
    assert response.status_code == 200, response.text
    page = response.json()
    assert set(page) == ENVELOPE
    assert sorted(uuids(page)) == everyone
    for param, field in LIST_PARAMS.items():
        if param != "last_name":
            hits = uuids(api.get(USERS, params={param: body[field]}).json())
            assert first in hits and not others & set(hits), (param, hits)
    low, high = _list_limit_range()
    for limit in (low, high):
        listed = api.get(USERS, params={**shared, "limit": limit}).json()
        assert sorted(uuids(listed)) == everyone, limit
    rest = api.get(USERS, params={**shared, "start": 1, "limit": low}).json()
    assert (rest["startIndex"], rest["totalCount"], rest["countReturned"]) == (1, 3, 2)
    assert uuids(rest) == uuids(page)[1:]


# -- delete ------------------------------------------------------------------------------
@pytest.mark.rule("USER-DELETE-HARD", "USER-LIST-DEPRECATED")
def test_deleted_user_is_not_listed(
    request, api, factories, amws_run, profile, control_or_none
) -> None:
    """The hard delete is checked on GET and search in test_people_search.py; the deprecated
    list must not find the user either: the group's deleted user (:func:`records.deleted`),
    whose delete answered 200."""
    gone = records.deleted(request, api, factories, amws_run, profile, control_or_none, USER)
    assert gone.uuid in gone.observed("listed"), "before its delete, the list did not find it"
    assert gone.uuid not in uuids(api.get(USERS, params={"email": gone.body["email"]}).json())
