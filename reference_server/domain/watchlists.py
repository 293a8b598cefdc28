"""Watchlists, their entries and the matching rule (its endpoints: watchlist_match.py).

How an entry matches a set of details (the one rule used by the match endpoint, by
invitations at registration and check-in, and by the virtual reader):

* IDENTITY — identityNumber, passportNr and mobileNumber each hit on their own when the entry
  holds a value and the details carry the same one, compared without spaces or punctuation and
  ignoring case. Names hit as one unit: an entry holding firstName and/or lastName hits when the
  details carry every name part the entry holds, equal ignoring case and repeated spaces; a name
  part the entry leaves empty is not compared (an entry of lastName only catches that surname).
* VEHICLE — vehicleLicensePlate and vehicleVin each hit on their own, compared without spaces
  or punctuation and ignoring case (plates are written in many ways).
* The two kinds are checked separately and merged. Several hits on one entry collapse into one
  match; when an entry is hit by both kinds it is reported once, as IDENTITY (the spec's
  WatchlistMatch says each entry appears at most once).
* Blank values are treated as absent, on both sides.
* Disabled watchlists are never consulted: not on arrival (WL-DISABLED-NOT-CONSULTED) and, by our
  reading of the field section's unqualified "not consulted", not by POST /watchlists/match either.

Simulated hardware: every entry places a flag (store kind ``watchlist_flag``) that the
connected devices would carry; every placement and withdrawal is appended to the per-system
log ``watchlist_hardware_log``, so the order "withdraw flags, then remove the records" of a
watchlist delete can be observed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server._errors import invalid_fields, not_found
from reference_server._state import Server, record_audit
from reference_server._time import format_instant
from reference_server.domain import handles
from reference_server.domain._common import fetch, paged, public, unique_or_409

IDENTIFIERS = ("identityNumber", "passportNr", "mobileNumber")
NAMES = ("firstName", "lastName")
VEHICLE_FIELDS = ("vehicleLicensePlate", "vehicleVin")
IDENTITY_FIELDS = ("identityNumber", "passportNr", "firstName", "lastName", "mobileNumber")
IDENTIFYING = IDENTITY_FIELDS + VEHICLE_FIELDS
ENTRY_FIELDS = (*IDENTIFYING, "reason")

IDENTITY, VEHICLE = "IDENTITY", "VEHICLE"
FLAG, HARDWARE_LOG = "watchlist_flag", "watchlist_hardware_log"

# How a visitor on record is read as match details (alternativeNumber is the visitor's other
# identity document, which we compare with an entry's passport number).
_VISITOR_FIELDS = {
    "identityNumber": "identityNumber",
    "passportNr": "alternativeNumber",
    "firstName": "firstName",
    "lastName": "lastName",
    "mobileNumber": "mobile",
}


# -- comparing values ---------------------------------------------------------------------
def _compact(value: Any) -> str:
    """Identifier form: without white space and ASCII punctuation, case folded ("CA 123-45" ==
    "ca12345"); the spec's entry overlay spells out the same classes."""
    return re.sub(r"[\s!-/:-@\[-`{-~]", "", str(value)).casefold() if value else ""


def _name(value: Any) -> str:
    return " ".join(str(value).split()).casefold() if value else ""


def _normal(field: str, value: Any) -> str:
    return _name(value) if field in NAMES else _compact(value)


def _normalised(fields: Mapping[str, Any]) -> dict[str, str]:
    """The identifying fields that carry something, in comparable form."""
    values = {f: _normal(f, fields.get(f)) for f in IDENTIFYING}
    return {f: v for f, v in values.items() if v}


def _hits(entry: Mapping[str, Any], details: Mapping[str, str]) -> list[tuple[str, str]]:
    """(matchType, cause) for every way the entry is hit by already normalised details."""
    held = _normalised(entry)
    found = [(IDENTITY, f) for f in IDENTIFIERS if f in held and details.get(f) == held[f]]
    names = [f for f in NAMES if f in held]
    if names and all(details.get(f) == held[f] for f in names):
        found.append((IDENTITY, "name"))
    found += [(VEHICLE, f) for f in VEHICLE_FIELDS if f in held and details.get(f) == held[f]]
    return found


def _collapse(matches: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """One match per entry; the first kind seen (identity before vehicle) wins."""
    seen: dict[str, dict[str, str]] = {}
    for match in matches:
        seen.setdefault(match["entryUuid"], match)
    return list(seen.values())


def find_matches(
    server: Server, system: str, fields: Mapping[str, Any], enabled_only: bool
) -> list[dict[str, str]]:
    """Entries of the system's watchlists hit by ``fields`` (entry field names), one per entry.

    ``enabled_only`` skips disabled watchlists (arrival checks and the match endpoint pass True).
    Reads only: nothing is written and no alert is raised here.
    """
    if server.faults.on("disabled-watchlist-consulted"):
        enabled_only = False
    details = _normalised(fields)
    if not details:
        return []
    store = server.store
    skipped = {
        w["uuid"] for w in store.all("watchlist", system) if enabled_only and not w.get("enabled")
    }
    if server.faults.on("only-first-watchlist-consulted"):
        enabled = [w["uuid"] for w in store.all("watchlist", system) if w["uuid"] not in skipped]
        skipped |= set(enabled[1:])
    entries = store.all("watchlist_entry", system, lambda e: e["watchlistUuid"] not in skipped)
    hits = [(entry, _hits(entry, details)) for entry in entries]
    per_field = server.faults.on("match-type-per-field")
    raw = [  # identity hits and vehicle hits found separately, then merged
        {
            "watchlistUuid": entry["watchlistUuid"],
            "entryUuid": entry["uuid"],
            "matchType": cause if per_field else kind,
        }
        for kind in (IDENTITY, VEHICLE)
        for entry, found in hits
        for match_type, cause in found
        if match_type == kind
    ]
    if server.faults.on("vehicle-checked-only-without-identity") and any(
        m["matchType"] == IDENTITY for m in raw
    ):
        raw = [m for m in raw if m["matchType"] == IDENTITY]
    if server.faults.on("match-duplicates-not-collapsed"):
        return raw
    return _collapse(raw)


# -- records and shapes -------------------------------------------------------------------
def _entries_of(server: Server, system: str, watchlist_uuid: str) -> list[dict[str, Any]]:
    return server.store.all(
        "watchlist_entry", system, lambda e: e["watchlistUuid"] == watchlist_uuid
    )


def _watchlist_shape(record: Mapping[str, Any], count: int) -> dict[str, Any]:
    return {
        "uuid": record["uuid"],
        "name": record["name"],
        "enabled": bool(record.get("enabled", True)),
        "entryCount": count,
    }


def _entry_shape(call: Call, record: Mapping[str, Any]) -> dict[str, Any]:
    shaped = {
        "uuid": record["uuid"],
        "watchlistUuid": record["watchlistUuid"],
        **{f: record.get(f) for f in ENTRY_FIELDS},
    }
    if call.server.faults.on("entry-reason-not-read"):
        shaped["reason"] = None
    return shaped


def _counts(call: Call) -> Callable[[str], int]:
    if call.server.faults.on("entry-count-frozen"):
        return lambda _uuid: 0
    totals: dict[str, int] = {}
    for entry in call.server.store.all("watchlist_entry", call.system):
        totals[entry["watchlistUuid"]] = totals.get(entry["watchlistUuid"], 0) + 1
    return lambda uuid: totals.get(uuid, 0)


def _audit(call: Call, target: str) -> None:
    name = "" if call.server.faults.on("watchlist-audit-unnamed") else call.key_name
    record_audit(call.server, call.system, name, call.op.operation_id, target)


def _fetch_watchlist(call: Call, uuid: str) -> dict[str, Any]:
    return fetch(call, "watchlist", uuid, "watchlist")


def _fetch_entry(call: Call) -> dict[str, Any]:
    """The entry of the path, reachable only through its own watchlist (else 404)."""
    watchlist = _fetch_watchlist(call, call.path["watchlistUuid"])
    entry = call.server.store.get("watchlist_entry", call.path["entryUuid"], call.system)
    if entry is None:
        raise not_found("watchlist entry")
    if entry["watchlistUuid"] != watchlist["uuid"] and not call.server.faults.on(
        "entry-other-watchlist-readable"
    ):
        raise not_found("watchlist entry")
    return entry


# -- hardware flags -----------------------------------------------------------------------
def _log(server: Server, system: str, action: str, watchlist_uuid: str, entry_uuid: str) -> None:
    server.store.insert(
        HARDWARE_LOG,
        system,
        {
            "at": format_instant(server.clock.now()),
            "action": action,
            "watchlistUuid": watchlist_uuid,
            "entryUuid": entry_uuid,
        },
    )


def _place_flag(server: Server, system: str, entry: Mapping[str, Any]) -> None:
    server.store.insert(
        FLAG,
        system,
        {
            "watchlistUuid": entry["watchlistUuid"],
            "entryUuid": entry["uuid"],
            "values": _normalised(entry),
        },
    )
    _log(server, system, "flag_placed", entry["watchlistUuid"], entry["uuid"])


def _withdraw_flags(server: Server, system: str, where: Callable[[dict[str, Any]], bool]) -> None:
    for flag in server.store.all(FLAG, system, where):
        server.store.delete(FLAG, flag["uuid"])
        _log(server, system, "flag_withdrawn", flag["watchlistUuid"], flag["entryUuid"])


# -- watchlists ---------------------------------------------------------------------------
@handles("listWatchlists")
async def list_watchlists(call: Call) -> Response:
    count = _counts(call)
    records = call.server.store.all("watchlist", call.system)
    if call.server.faults.on("watchlist-list-enabled-only"):
        records = [r for r in records if r.get("enabled", True)]
    return reply(200, [_watchlist_shape(r, count(r["uuid"])) for r in records])


@handles("getWatchlist")
async def get_watchlist(call: Call) -> Response:
    record = _fetch_watchlist(call, call.path["uuid"])
    return reply(200, _watchlist_shape(record, _counts(call)(record["uuid"])))


@handles("createWatchlist")
async def create_watchlist(call: Call) -> Response:
    default = not call.server.faults.on("watchlist-created-disabled")
    data = {"name": call.body["name"], "enabled": call.body.get("enabled", default)}
    store = call.server.store
    with store.transaction(), unique_or_409("watchlist"):
        uuid = store.insert("watchlist", call.system, data, unique={"name": data["name"]})
        _audit(call, uuid)
    return ack(uuid, 201)


@handles("updateWatchlist")
async def update_watchlist(call: Call) -> Response:
    store = call.server.store
    with store.transaction(), unique_or_409("watchlist"):
        record = public(_fetch_watchlist(call, call.path["uuid"]))
        # enabled left out keeps the current state: a rename must not silently switch a
        # disabled list back on.
        current = record.get("enabled", True)
        merged = {
            **record,
            "name": call.body.get("name", record["name"]),
            "enabled": _enabled_after_put(call, current),
        }
        store.replace("watchlist", record["uuid"], merged, unique={"name": merged["name"]})
        _audit(call, record["uuid"])
    return ack(record["uuid"])


def _enabled_after_put(call: Call, current: bool) -> bool:
    """enabled after a PUT: as sent, else unchanged (the faults lose one direction)."""
    wanted = call.body.get("enabled", current)
    if call.server.faults.on("watchlist-put-cannot-disable"):
        return call.body.get("enabled") or current
    if call.server.faults.on("watchlist-put-cannot-enable"):
        return bool(wanted and current)
    return wanted


@handles("deleteWatchlist")
async def delete_watchlist(call: Call) -> Response:
    server, store = call.server, call.server.store
    with store.transaction():
        record = _fetch_watchlist(call, call.path["uuid"])
        uuid = record["uuid"]
        # Devices first: once the rows are gone nothing would say which flags were this list's.
        if not server.faults.on("watchlist-delete-keeps-flags"):
            _withdraw_flags(server, call.system, lambda f: f["watchlistUuid"] == uuid)
        if not server.faults.on("watchlist-delete-keeps-entries"):
            for entry in _entries_of(server, call.system, uuid):
                store.delete("watchlist_entry", entry["uuid"])
        store.delete("watchlist", uuid)
        _log(server, call.system, "watchlist_removed", uuid, "")
        _audit(call, uuid)
    return ack(uuid)


# -- entries ------------------------------------------------------------------------------
def _entry_data(call: Call, watchlist_uuid: str) -> dict[str, Any]:
    """The entry as written (a PUT replaces every field); blank-only bodies identify nothing."""
    data = {"watchlistUuid": watchlist_uuid, **{f: call.body.get(f) for f in ENTRY_FIELDS}}
    if not _normalised(data) and not call.server.faults.on("entry-needs-no-identifier"):
        raise invalid_fields(
            {"body": "at least one of " + ", ".join(IDENTIFYING) + " must hold a value"}
        )
    return data


def _identity_key(data: Mapping[str, Any]) -> str:
    """Unique per watchlist: entries with the same identifying fields are duplicates."""
    values = [_normal(f, data.get(f)) for f in IDENTIFYING]
    return json.dumps([data["watchlistUuid"], *values])


@handles("listWatchlistEntries")
async def list_watchlist_entries(call: Call) -> Response:
    watchlist = _fetch_watchlist(call, call.path["watchlistUuid"])
    if call.server.faults.on("entries-list-every-watchlist"):
        records = call.server.store.all("watchlist_entry", call.system)
    else:
        records = _entries_of(call.server, call.system, watchlist["uuid"])
    start = call.query["start"]
    if (
        call.server.faults.on("entries-start-one-based")
        and "start" not in call.request.query_params
    ):
        start = 1
    return paged([_entry_shape(call, e) for e in records], start, call.query["limit"])


@handles("getWatchlistEntry")
async def get_watchlist_entry(call: Call) -> Response:
    return reply(200, _entry_shape(call, _fetch_entry(call)))


@handles("createWatchlistEntry")
async def create_watchlist_entry(call: Call) -> Response:
    server, store = call.server, call.server.store
    with store.transaction(), unique_or_409("watchlist entry"):
        if call.server.faults.on("entry-stored-in-unknown-watchlist"):
            watchlist = {"uuid": call.path["watchlistUuid"]}
        else:
            watchlist = _fetch_watchlist(call, call.path["watchlistUuid"])
        data = _entry_data(call, watchlist["uuid"])
        uuid = store.insert(
            "watchlist_entry", call.system, data, unique={"identity": _identity_key(data)}
        )
        _place_flag(server, call.system, {**data, "uuid": uuid})
        _audit(call, uuid)
    return ack(uuid, 201)


@handles("updateWatchlistEntry")
async def update_watchlist_entry(call: Call) -> Response:
    server, store = call.server, call.server.store
    with store.transaction(), unique_or_409("watchlist entry"):
        entry = _fetch_entry(call)
        data = _entry_data(call, entry["watchlistUuid"])
        store.replace(
            "watchlist_entry", entry["uuid"], data, unique={"identity": _identity_key(data)}
        )
        # The device flag carries the identifying values, so it is replaced with them.
        _withdraw_flags(server, call.system, lambda f: f["entryUuid"] == entry["uuid"])
        _place_flag(server, call.system, {**data, "uuid": entry["uuid"]})
        _audit(call, entry["uuid"])
    return ack(entry["uuid"])


@handles("deleteWatchlistEntry")
async def delete_watchlist_entry(call: Call) -> Response:
    server, store = call.server, call.server.store
    with store.transaction():
        entry = _fetch_entry(call)
        _withdraw_flags(server, call.system, lambda f: f["entryUuid"] == entry["uuid"])
        if not server.faults.on("entry-delete-keeps-record"):
            store.delete("watchlist_entry", entry["uuid"])
        _audit(call, entry["uuid"])
    return ack(entry["uuid"])
