"""Watchlists several modules' tests share (helpers, not tests)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

WATCHLISTS = "/api/ws/v1/watchlists"


def watchlist_pair(api: Any, factories: Any) -> Iterator[tuple[str, str]]:
    """Two watchlists for a module's tests to hold their entries in (a module fixture yields
    from this). Deleted at the end, which takes their entries along: the cleanup sends one
    delete per watchlist, not one per entry. What the delete answers is not asserted here
    (test_watchlists decides the delete rules)."""
    pair = (_made(api, factories), _made(api, factories))
    yield pair
    for watchlist in pair:
        dropped(api, watchlist)


def dropped(api: Any, watchlist: str) -> None:
    """Delete ``watchlist``: its entries go with it, so the cleanup sends one delete, not one
    per entry (not asserted: what a delete answers is test_watchlists' concern)."""
    api.delete(f"{WATCHLISTS}/{watchlist}")


def _made(api: Any, factories: Any) -> str:
    response = api.post(WATCHLISTS, json=factories.watchlist())
    assert response.status_code == 201, (response.status_code, response.text)
    return str(response.json()["uuid"])
