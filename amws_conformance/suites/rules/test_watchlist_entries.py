"""Watchlist entries: field rules, duplicates, the read shape, reaching an entry only through
its own watchlist, deleting, the paged entries list and entryCount."""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

import pytest

from amws_conformance.fixtures._limits import length_range
from amws_conformance.suites.rules._watchlists import dropped, run_watchlists

WATCHLISTS = "/api/ws/v1/watchlists"
IDENTIFYING = (
    "identityNumber",
    "passportNr",
    "firstName",
    "lastName",
    "mobileNumber",
    "vehicleLicensePlate",
    "vehicleVin",
)
ENTRY_FIELDS = (*IDENTIFYING, "reason")


# -- helpers -----------------------------------------------------------------------------
def _created(response: Any) -> str:
    assert response.status_code == 201, (response.status_code, response.text)
    return response.json()["uuid"]


def _watchlist(api: Any, factories: Any) -> str:
    return _created(api.post(WATCHLISTS, json=factories.watchlist()))


def _entry_body(factories: Any, **overrides: Any) -> dict[str, Any]:
    """Run-tagged identifying values only, so no other record can match them."""
    body = {
        "identityNumber": factories.tag("wid"),
        "lastName": factories.tag("ln"),
        "vehicleLicensePlate": f"AM {uuidlib.uuid4().hex[:8].upper()}",
        "reason": "listed by the conformance run",
    }
    return {**body, **overrides}


def _entry(api: Any, watchlist: str, body: dict[str, Any]) -> str:
    return _created(api.post(f"{WATCHLISTS}/{watchlist}/entries", json=body))


def _get_entry(api: Any, watchlist: str, entry: str) -> Any:
    return api.get(f"{WATCHLISTS}/{watchlist}/entries/{entry}")


def _count(api: Any, watchlist: str) -> int:
    response = api.get(f"{WATCHLISTS}/{watchlist}")
    assert response.status_code == 200, response.text
    return response.json()["entryCount"]


def _matched_entries(api: Any, body: dict[str, Any]) -> set[str]:
    response = api.post(f"{WATCHLISTS}/match", json=body)
    assert response.status_code == 200, response.text
    return {m["entryUuid"] for m in response.json()["matches"]}


def _uuids(api: Any, watchlist: str) -> list[str]:
    """The uuids of every entry of ``watchlist``, read as one page."""
    page = _page(api, watchlist, limit=1000)
    assert page["totalCount"] == len(page["entries"]), "the watchlist outgrew one page"
    return [e["uuid"] for e in page["entries"]]


def _page(api: Any, watchlist: str, **params: Any) -> dict[str, Any]:
    response = api.get(f"{WATCHLISTS}/{watchlist}/entries", params=params)
    assert response.status_code == 200, response.text
    return response.json()


# -- shared records ----------------------------------------------------------------------
# Tests that only need *a* watchlist to hold their entries (or a watchlist other than the one
# they check) share the run's two (``_watchlists.run_watchlists``, whose docstring says why
# that is safe). Every entry put in them here carries run-tagged values of its own
# (``_entry_body``, ``factories.tag``, uuid4 plates). A test that counts a shared watchlist's
# entries reads the count before and compares with it: a worker runs one test at a time, so
# nothing else adds to it meanwhile. Tests that check a watchlist's whole contents keep a
# watchlist of their own, or compare its contents with a read of their own just before.
@pytest.fixture
def shared(amws_run: Any, api: Any, factories: Any) -> tuple[str, str]:
    return run_watchlists(amws_run, api, factories)


# -- fields ------------------------------------------------------------------------------
@pytest.mark.rule("WL-ENTRY-FIELD-LENGTH")
@pytest.mark.parametrize("field", ENTRY_FIELDS)
def test_entry_field_lengths(api, factories, shared, field: str) -> None:
    watchlist = shared[0]
    count = _count(api, watchlist)
    high = length_range("createWatchlistEntry", field)[1]
    value = factories.tag("e")[-high:]
    body = {"identityNumber": factories.tag("wid")} if field == "reason" else {}
    response = api.post(
        f"{WATCHLISTS}/{watchlist}/entries", json={**body, field: value.ljust(high + 1, "x")}
    )
    assert response.status_code == 422
    assert field in response.json()["reason"]
    assert _count(api, watchlist) == count
    _entry(api, watchlist, {**body, field: value.ljust(high, "x")})


@pytest.mark.rule("WL-ENTRY-IDENTIFYING-FIELD")
def test_entry_needs_an_identifying_field(api, factories, shared) -> None:
    watchlist = shared[0]
    count = _count(api, watchlist)
    path = f"{WATCHLISTS}/{watchlist}/entries"
    assert api.post(path, json={"reason": "only a reason"}).status_code == 422
    assert api.post(path, json={}).status_code == 422
    assert _count(api, watchlist) == count
    for field in IDENTIFYING:  # any single one of them is enough
        value = factories.tag("one")[-length_range("createWatchlistEntry", field)[1] :]
        entry = _entry(api, watchlist, {field: value})
    # The last of them (one identifying field) may not lose it to an update either.
    stored = _get_entry(api, watchlist, entry).json()
    assert api.put(f"{path}/{entry}", json={"reason": "only a reason"}).status_code == 422
    assert _get_entry(api, watchlist, entry).json() == stored


@pytest.mark.rule("WL-ENTRY-DUPLICATE")
def test_duplicate_entry_in_the_same_watchlist(api, factories, shared) -> None:
    # A watchlist of its own (its count is checked); any other one may take the copy.
    watchlist, other = _watchlist(api, factories), shared[1]
    body = _entry_body(factories)
    _entry(api, watchlist, body)
    assert api.post(f"{WATCHLISTS}/{watchlist}/entries", json=body).status_code == 409
    assert _count(api, watchlist) == 1
    _entry(api, other, body)  # the same entry may sit in another watchlist
    second = _entry(api, watchlist, _entry_body(factories))
    stored = _get_entry(api, watchlist, second).json()
    response = api.put(f"{WATCHLISTS}/{watchlist}/entries/{second}", json=body)
    assert response.status_code == 409
    assert _get_entry(api, watchlist, second).json() == stored
    dropped(api, watchlist)


@pytest.mark.rule("WL-ENTRY-SHAPE")
def test_entry_reads_as_written(api, factories, shared) -> None:
    watchlist = shared[0]
    body = _entry_body(factories, passportNr=factories.tag("pp"), mobileNumber=factories.phone())
    entry = _entry(api, watchlist, body)
    response = _get_entry(api, watchlist, entry)
    assert response.status_code == 200
    read = response.json()
    assert (read["uuid"], read["watchlistUuid"]) == (entry, watchlist)
    assert set(ENTRY_FIELDS) <= set(read)
    for field in ENTRY_FIELDS:
        assert read[field] == body.get(field), field


@pytest.mark.rule("WL-ENTRY-CREATE-UNKNOWN-WATCHLIST")
def test_entry_in_unknown_watchlist_answers_404(api, factories, ledger) -> None:
    body = _entry_body(factories)
    response = api.post(f"{WATCHLISTS}/{ledger.fresh_uuid()}/entries", json=body)
    assert response.status_code == 404
    assert _matched_entries(api, {"identityNumber": body["identityNumber"]}) == set()


@pytest.mark.rule("WL-ENTRY-WRONG-WATCHLIST")
def test_entry_reachable_only_through_its_own_watchlist(api, factories, shared) -> None:
    own, other = shared
    counts = (_count(api, own), _count(api, other))
    body = _entry_body(factories)
    entry = _entry(api, own, body)
    stored = _get_entry(api, own, entry).json()
    wrong = f"{WATCHLISTS}/{other}/entries/{entry}"
    assert api.get(wrong).status_code == 404
    assert api.get(f"{wrong}/visitors").status_code == 404
    assert api.put(wrong, json=_entry_body(factories)).status_code == 404
    assert api.delete(wrong).status_code == 404
    assert _get_entry(api, own, entry).json() == stored
    assert (_count(api, own), _count(api, other)) == (counts[0] + 1, counts[1])
    right = f"{WATCHLISTS}/{own}/entries/{entry}"
    assert api.get(f"{right}/visitors").status_code == 200
    assert api.put(right, json=_entry_body(factories)).status_code == 200
    assert api.delete(right).status_code == 200


@pytest.mark.rule("WL-ENTRY-DELETE-HARD")
def test_deleted_entry_is_gone(api, factories, shared) -> None:
    # A shared watchlist: its whole entries list is read just before the delete and compared
    # with the list after it (a worker runs one test at a time: nothing else changes it).
    watchlist = shared[0]
    body = _entry_body(factories)
    entry, kept = _entry(api, watchlist, body), _entry(api, watchlist, _entry_body(factories))
    assert _matched_entries(api, {"identityNumber": body["identityNumber"]}) == {entry}
    before = _uuids(api, watchlist)
    assert {entry, kept} <= set(before)
    assert api.delete(f"{WATCHLISTS}/{watchlist}/entries/{entry}").status_code == 200
    assert _get_entry(api, watchlist, entry).status_code == 404
    assert sorted(_uuids(api, watchlist)) == sorted(u for u in before if u != entry)
    assert _matched_entries(api, {"identityNumber": body["identityNumber"]}) == set()


# -- the list ----------------------------------------------------------------------------
@pytest.mark.rule("WL-ENTRIES-PAGING")
@pytest.mark.parametrize("tail", ["entries", "entries/visitors"])
def test_paging_ranges(api, shared, tail: str) -> None:
    watchlist = shared[0]
    path = f"{WATCHLISTS}/{watchlist}/{tail}"
    for params in ({"start": -1}, {"limit": 0}, {"limit": 1001}):
        assert api.get(path, params=params).status_code == 422, params
    for params in ({"start": 0}, {"limit": 1}, {"limit": 1000}):
        assert api.get(path, params=params).status_code == 200, params


@pytest.mark.rule("WL-ENTRIES-PAGING", "WL-ENTRIES-ENVELOPE")
def test_entries_paging_defaults_and_windows(api, factories, shared) -> None:
    # A watchlist of its own: the test pages through its whole entries list. An entry in
    # another watchlist makes sure the system holds entries the list must leave out (with none
    # elsewhere, a list of every watchlist's entries would look right).
    _entry(api, shared[1], _entry_body(factories))
    watchlist = _watchlist(api, factories)
    entries = [_entry(api, watchlist, _entry_body(factories)) for _ in range(3)]
    page = _page(api, watchlist)
    assert (page["startIndex"], page["countReturned"], page["totalCount"]) == (0, 3, 3)
    assert sorted(e["uuid"] for e in page["entries"]) == sorted(entries)
    order = [e["uuid"] for e in page["entries"]]
    window = _page(api, watchlist, start=1, limit=1)
    assert (window["startIndex"], window["countReturned"], window["totalCount"]) == (1, 1, 3)
    assert [e["uuid"] for e in window["entries"]] == order[1:2]
    tail = _page(api, watchlist, start=2)
    assert [e["uuid"] for e in tail["entries"]] == order[2:]
    dropped(api, watchlist)


@pytest.mark.rule("WL-ENTRIES-ENVELOPE")
def test_entries_list_holds_only_that_watchlists_entries(api, factories, shared) -> None:
    # A watchlist of its own (its whole list is read); any other one may hold the stranger.
    watchlist, other = _watchlist(api, factories), shared[1]
    mine = {_entry(api, watchlist, _entry_body(factories)) for _ in range(2)}
    _entry(api, other, _entry_body(factories))
    page = _page(api, watchlist)
    assert {e["uuid"] for e in page["entries"]} == mine
    assert all(e["watchlistUuid"] == watchlist for e in page["entries"])
    assert page["totalCount"] == _count(api, watchlist) == 2
    dropped(api, watchlist)


@pytest.mark.rule("WL-ENTRY-COUNT")
def test_entry_count_follows_the_entries(api, factories, shared) -> None:
    watchlist = shared[0]
    count = _count(api, watchlist)  # what the shared watchlist holds already
    first = _entry(api, watchlist, _entry_body(factories))
    assert _count(api, watchlist) == count + 1
    _entry(api, watchlist, _entry_body(factories))
    assert _count(api, watchlist) == count + 2
    listed = {w["uuid"]: w for w in api.get(WATCHLISTS).json()}
    assert listed[watchlist]["entryCount"] == count + 2
    assert api.delete(f"{WATCHLISTS}/{watchlist}/entries/{first}").status_code == 200
    assert _count(api, watchlist) == count + 1
