"""The watchlist match check and the visitors on record that a watchlist or one entry catches.

Both read only: they apply the matching rule of ``watchlists`` (see its docstring) to the
request's details or to each visitor on record, and write nothing.

The decisions inside these steps are the methods of ``WatchlistMatchPolicy``; the handlers ask
``server.policy(WatchlistMatchPolicy)`` for the one in force, which is where the match and
visitor-list faults (``faults/_watchlists.py``) plug in. This module holds the correct
behaviour only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, reply
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain.watchlists import (
    _VISITOR_FIELDS,
    _entries_of,
    _fetch_entry,
    _fetch_watchlist,
    _hits,
    _normalised,
    find_matches,
)
from amws_conformance.reference_server.store import Record


class WatchlistMatchPolicy(Policy):
    """The decisions inside the match check and the visitor lists, each as the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    def checked(self, system: str, key_name: str) -> None:
        """A match check was answered; it is a read, so nothing is written."""

    def match_answer(self, matches: list[dict[str, str]]) -> dict[str, Any]:
        """The match check's answer: whether anything matched, and the matches (maybe none)."""
        return {"matched": bool(matches), "matches": matches}

    def watchlist_visitor_entries(self, entries: list[Record]) -> list[Record]:
        """The entries whose visitors a watchlist's visitors list holds: all of its entries."""
        return entries

    def entry_visitor_entries(self, system: str, entry: Record) -> list[Record]:
        """The entries whose visitors an entry's visitors list holds: that entry alone."""
        return [entry]


@handles("matchWatchlists")
async def match_watchlists(call: Call) -> Response:
    policy = call.server.policy(WatchlistMatchPolicy)
    matches = find_matches(call.server, call.system, call.body, enabled_only=True)
    policy.checked(call.system, call.key_name)
    return reply(200, policy.match_answer(matches))


def _visitor_details(visitor: Mapping[str, Any]) -> dict[str, str]:
    return _normalised({f: visitor.get(source) for f, source in _VISITOR_FIELDS.items()})


def _visitors_matching(call: Call, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Visitors on record (in creation order, each once) hit by any of ``entries``."""
    found = []
    for visitor in call.server.store.all("visitor", call.system):
        details = _visitor_details(visitor)
        if details and any(_hits(entry, details) for entry in entries):
            found.append(
                {
                    "uuid": visitor["uuid"],
                    "firstName": visitor.get("firstName"),
                    "lastName": visitor.get("lastName"),
                }
            )
    return found


@handles("listWatchlistVisitors")
async def list_watchlist_visitors(call: Call) -> Response:
    watchlist = _fetch_watchlist(call, call.path["watchlistUuid"])
    entries = _entries_of(call.server, call.system, watchlist["uuid"])
    entries = call.server.policy(WatchlistMatchPolicy).watchlist_visitor_entries(entries)
    visitors = _visitors_matching(call, entries)
    # A plain array (WL-VISITORS note) to which start and limit still apply.
    start, limit = call.query["start"], call.query["limit"]
    return reply(200, visitors[start : start + limit])


@handles("listWatchlistEntryVisitors")
async def list_watchlist_entry_visitors(call: Call) -> Response:
    entry = _fetch_entry(call)
    entries = call.server.policy(WatchlistMatchPolicy).entry_visitor_entries(call.system, entry)
    return reply(200, _visitors_matching(call, entries))
