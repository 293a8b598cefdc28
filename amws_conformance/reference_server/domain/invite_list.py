"""Listing invitations: the time filter, the visitor filter and the paged envelope.

The filter is read against the server clock: CURRENT = activation <= now <= expiry,
FUTURE = activation > now, PAST = expiry < now, ALL = everything; it is read ignoring case and
any other value means ALL (see the invites module for the other choices).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, reply
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._time import parse_instant
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain.invites import entry_shape
from amws_conformance.reference_server.domain.visits import KIND
from amws_conformance.reference_server.store import Record


class InviteListPolicy(Policy):
    """The decisions inside listing invitations, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    def start_when_omitted(self, default: int) -> int:
        """The first row of a list asked for without start: the documented default."""
        return default

    def start_index(self, start: int) -> int:
        """The startIndex the envelope reports: the start that was used."""
        return start

    def total_count(
        self, system: str, rows: list[Record], in_window: Callable[[Record], bool]
    ) -> int:
        """The totalCount the envelope reports: the rows that pass every filter.

        ``in_window`` is the time filter alone, without the visitor filter.
        """
        return len(rows)


def _at(text: str) -> datetime:
    # Every invitation has both ends of its window (createInvite requires them).
    return parse_instant(text)


_FILTERS: dict[str, Callable[[Mapping[str, Any], datetime], bool]] = {
    "ALL": lambda r, now: True,
    "CURRENT": lambda r, now: _at(r["activation"]) <= now <= _at(r["expiry"]),
    "FUTURE": lambda r, now: _at(r["activation"]) > now,
    "PAST": lambda r, now: _at(r["expiry"]) < now,
}


# -- handlers -----------------------------------------------------------------------------
@handles("listInvites")
async def list_invites(call: Call) -> Response:
    now = call.server.clock.now()
    keep = _FILTERS.get(str(call.query.get("filter") or "ALL").upper(), _FILTERS["ALL"])
    visitor = call.query.get("visitorUUID")

    def wanted(record: Record) -> bool:
        return keep(record, now) and (visitor is None or record.get("visitorId") == visitor)

    rows = call.server.store.all(KIND, call.system, wanted)
    policy, start = call.server.policy(InviteListPolicy), call.query["start"]
    if "start" not in call.request.query_params:
        start = policy.start_when_omitted(start)
    limit = call.query["limit"]
    window = [entry_shape(r) for r in rows[start : start + limit]]
    return reply(
        200,
        {
            "entries": window,
            "startIndex": policy.start_index(start),
            "countReturned": len(window),
            "totalCount": policy.total_count(call.system, rows, lambda r: keep(r, now)),
        },
    )
