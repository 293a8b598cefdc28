"""Listing invitations: the time filter, the visitor filter and the paged envelope.

The filter is read against the server clock: CURRENT = activation <= now <= expiry,
FUTURE = activation > now, PAST = expiry < now, ALL = everything; it is read ignoring case and
any other value means ALL (see the invites module for the other choices).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from starlette.responses import Response

from reference_server._call import Call, reply
from reference_server._time import parse_instant
from reference_server.domain import handles
from reference_server.domain._common import paged
from reference_server.domain.invites import entry_shape
from reference_server.domain.visits import KIND
from reference_server.store import Record


def _at(text: str | None) -> datetime | None:
    return parse_instant(text) if text else None


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
    start, faults = call.query["start"], call.server.faults
    if "start" not in call.request.query_params and faults.on("invite-default-start-one"):
        start = 1
    answer = paged([entry_shape(r) for r in rows], start, call.query["limit"])
    if faults.on("invite-list-start-index-zero") or faults.on("visitor-filter-total-unfiltered"):
        body = json.loads(bytes(answer.body))
        if faults.on("invite-list-start-index-zero"):
            body["startIndex"] = 0
        if faults.on("visitor-filter-total-unfiltered"):
            body["totalCount"] = len(
                call.server.store.all(KIND, call.system, lambda r: keep(r, now))
            )
        answer = reply(200, body)
    return answer
