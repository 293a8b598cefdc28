"""The watchlist match check and the visitors on record that a watchlist or one entry catches.

Both read only: they apply the matching rule of ``watchlists`` (see its docstring) to the
request's details or to each visitor on record, and write nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from reference_server._call import Call, reply
from reference_server._state import record_audit
from reference_server.domain import handles
from reference_server.domain.watchlists import (
    _VISITOR_FIELDS,
    _entries_of,
    _fetch_entry,
    _fetch_watchlist,
    _hits,
    _normalised,
    find_matches,
)


@handles("matchWatchlists")
async def match_watchlists(call: Call) -> Response:
    matches = find_matches(call.server, call.system, call.body, enabled_only=True)
    if call.server.faults.on("match-writes-audit"):
        record_audit(call.server, call.system, call.key_name, "matchWatchlists", "")
    if call.server.faults.on("match-watchlist-uuid-reused") and matches:
        matches = [{**m, "watchlistUuid": matches[0]["watchlistUuid"]} for m in matches]
    if call.server.faults.on("no-match-null-matches") and not matches:
        return reply(200, {"matched": False, "matches": None})
    return reply(200, {"matched": bool(matches), "matches": matches})


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
    if call.server.faults.on("watchlist-visitors-first-entry-only"):
        entries = entries[:1]
    visitors = _visitors_matching(call, entries)
    # A plain array (WL-VISITORS note) to which start and limit still apply.
    start, limit = call.query["start"], call.query["limit"]
    return reply(200, visitors[start : start + limit])


@handles("listWatchlistEntryVisitors")
async def list_watchlist_entry_visitors(call: Call) -> Response:
    entry = _fetch_entry(call)
    entries = [entry]
    if call.server.faults.on("entry-visitors-whole-watchlist"):
        entries = _entries_of(call.server, call.system, entry["watchlistUuid"])
    return reply(200, _visitors_matching(call, entries))
