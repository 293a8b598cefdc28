"""Watchlists several modules' tests share (helpers, not tests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from amws_conformance.fixtures._limits import length_range
from amws_conformance.harness import Run

WATCHLISTS = "/api/ws/v1/watchlists"


def run_watchlists(run: Run, api: Any, factories: Any) -> tuple[str, str]:
    """Two enabled watchlists, made once per run, for the tests of several modules that only
    need *a* watchlist (or one other than it) to hold their entries.

    Every entry put in them carries values of its own test that are run-tagged
    (``factories.tag``, uuid4 plates) or belong to a visitor of that test alone, so no test's
    entry catches another test's visitor or answers another test's match request; a test
    that counts one's entries compares with a count it read itself (module after module, one
    worker runs one test at a time). Nobody switches, renames or deletes them. Two tests read
    the whole visitors list of one: the entries module's visitors paging (statuses only) and
    the match module's visitors test, whose visitors are the only visitors on record that
    the first watchlist catches (registered visitors caught by the lifecycle tests' entries
    are caught by the second; a visitor refused with 451 is never on record). The run's
    cleanup deletes them, which takes every entry along: one delete per watchlist, not one
    per entry."""
    pair: tuple[str, str] = run.shared(
        "visits:watchlists", lambda: (_made(api, factories), _made(api, factories))
    )
    return pair


def run_disabled_watchlist(run: Run, api: Any, factories: Any) -> str:
    """A disabled watchlist, made once per run, for the tests of several modules that need a
    watchlist nobody consults to hold their entries: the lifecycle tests list visitors in it
    who must be let through, the encryption tests store sample entries in it and read only
    those back. Disabled, no entry of it refuses anyone; nobody switches, renames or deletes
    it, or reads its whole contents. The run's cleanup deletes it, entries and all."""

    def make() -> str:
        created = api.post(WATCHLISTS, json=factories.watchlist(enabled=False))
        assert created.status_code == 201, created.text
        return str(created.json()["uuid"])

    made: str = run.shared("visits:disabled-watchlist", make)
    return made


@dataclass(frozen=True)
class Made:
    """What a watchlist create sent and answered (``uuid`` None when it was refused)."""

    body: dict[str, Any]
    status: int
    uuid: str | None


def made_from(api: Any, body: dict[str, Any]) -> Made:
    """Create a watchlist from ``body``; what it answered is the caller's to assert."""
    response = api.post(WATCHLISTS, json=body)
    uuid = response.json().get("uuid") if response.status_code == 201 else None
    return Made(body, response.status_code, uuid)


def run_spare(run: Run, api: Any, factories: Any) -> Made:
    """A watchlist made once per run from a name as short as a name may be, and nothing else
    (so it takes the default ``enabled``), for the tests of several modules that need a
    watchlist without entries: tests whose updates of it must be refused (they compare its
    read before and after within themselves), one that switches it off and on again (leaving
    it on, as it was), the name-length test (its create is the shortest name accepted) and a
    visitors list that must be empty. Nobody adds an entry to it, renames or deletes it.
    Short names cannot carry the run tag: it is one no watchlist of the target has."""
    shortest = length_range("createWatchlist", "name")[0]

    def make() -> Made:
        taken = [w["name"] for w in api.get("/api/ws/v1/watchlists").json()]
        return made_from(api, {"name": factories.short_name(shortest, taken)})

    return run.shared("visits:spare-watchlist", make)


def dropped(api: Any, watchlist: str) -> None:
    """Delete ``watchlist``: its entries go with it, so the cleanup sends one delete, not one
    per entry (not asserted: what a delete answers is test_watchlists' concern)."""
    api.delete(f"{WATCHLISTS}/{watchlist}")


def _made(api: Any, factories: Any) -> str:
    response = api.post(WATCHLISTS, json=factories.watchlist())
    assert response.status_code == 201, (response.status_code, response.text)
    return str(response.json()["uuid"])
