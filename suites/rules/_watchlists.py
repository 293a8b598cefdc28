"""Watchlists several modules' tests share (helpers, not tests)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from harness import Run
from suites.rules._run_shared import run_shared

WATCHLISTS = "/api/ws/v1/watchlists"
# The run's shared watchlists, dropped when the session ends (see ``dropped_at_the_end``).
_KEPT = pytest.StashKey[list[tuple[str, ...]]]()


def run_watchlists(run: Run, api: Any, factories: Any, kept: list[Any]) -> tuple[str, str]:
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
    are caught by the second; a visitor refused with 451 is never on record). ``kept`` (a
    ``dropped_at_the_end`` fixture) drops them when the session ends, which takes every
    entry along: the cleanup sends one delete per watchlist, not one per entry."""

    def make() -> tuple[str, str]:
        pair = (_made(api, factories), _made(api, factories))
        kept.append(pair)
        return pair

    return run_shared(run, "visits:watchlists", make)


def dropped_at_the_end(request: pytest.FixtureRequest, api: Any) -> Iterator[list[Any]]:
    """What a session-scoped fixture of a module using ``run_watchlists`` yields from: the
    watchlists made for the run, dropped at the end of the session. Each module's fixture
    yields the same record of them; the first to end drops them all (not asserted: what a
    delete answers is test_watchlists' concern)."""
    kept = request.session.stash.setdefault(_KEPT, [])
    yield kept
    while kept:
        for watchlist in kept.pop():
            dropped(api, watchlist)


def dropped(api: Any, watchlist: str) -> None:
    """Delete ``watchlist``: its entries go with it, so the cleanup sends one delete, not one
    per entry (not asserted: what a delete answers is test_watchlists' concern)."""
    api.delete(f"{WATCHLISTS}/{watchlist}")


def _made(api: Any, factories: Any) -> str:
    response = api.post(WATCHLISTS, json=factories.watchlist())
    assert response.status_code == 201, (response.status_code, response.text)
    return str(response.json()["uuid"])
