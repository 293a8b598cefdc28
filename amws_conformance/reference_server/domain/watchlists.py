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

The decisions inside these steps are the methods of ``WatchlistPolicy``; the handlers ask
``server.policy(WatchlistPolicy)`` for the one in force, which is where the watchlist faults
(``faults/_watchlists.py``) plug in. This module holds the correct behaviour only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack, reply
from amws_conformance.reference_server._errors import invalid_fields, not_found
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._time import format_instant
from amws_conformance.reference_server._trails import record_audit
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain._common import fetch, paged, public, unique_or_409
from amws_conformance.reference_server.store import Record

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

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
    server: ServerView, system: str, fields: Mapping[str, Any], enabled_only: bool
) -> list[dict[str, str]]:
    """Entries of the system's watchlists hit by ``fields`` (entry field names), one per entry.

    ``enabled_only`` skips disabled watchlists (arrival checks and the match endpoint pass True).
    Reads only: nothing is written and no alert is raised here.
    """
    details = _normalised(fields)
    if not details:
        return []
    policy, store = server.policy(WatchlistPolicy), server.store
    watchlists = store.all("watchlist", system)
    consulted = {w["uuid"] for w in policy.consulted(watchlists, enabled_only)}
    # The left-out watchlists' entries are skipped: one without a watchlist on record is not.
    skipped = {w["uuid"] for w in watchlists} - consulted
    entries = store.all("watchlist_entry", system, lambda e: e["watchlistUuid"] not in skipped)
    hits = [(entry, _hits(entry, details)) for entry in entries]

    def found(kind: str) -> list[dict[str, str]]:
        return [
            {
                "watchlistUuid": entry["watchlistUuid"],
                "entryUuid": entry["uuid"],
                "matchType": policy.match_type(kind, cause),
            }
            for entry, causes in hits
            for match_type, cause in causes
            if match_type == kind
        ]

    # Identity hits and vehicle hits are found separately, then merged.
    identity = found(IDENTITY)
    vehicle = found(VEHICLE) if policy.checks_vehicle(bool(identity)) else []
    return policy.reported(identity + vehicle)


# -- records and shapes -------------------------------------------------------------------
def _entries_of(server: ServerView, system: str, watchlist_uuid: str) -> list[dict[str, Any]]:
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
    return call.server.policy(WatchlistPolicy).entry_read(record)


def _counts(call: Call) -> Callable[[str], int]:
    policy = call.server.policy(WatchlistPolicy)
    totals: dict[str, int] = {}
    for entry in call.server.store.all("watchlist_entry", call.system):
        totals[entry["watchlistUuid"]] = totals.get(entry["watchlistUuid"], 0) + 1
    return lambda uuid: policy.entry_count(totals.get(uuid, 0))


def _audit(call: Call, target: str) -> None:
    name = call.server.policy(WatchlistPolicy).audited_key_name(call.key_name)
    record_audit(call.server, call.system, name, call.op.operation_id, target)


def _fetch_watchlist(call: Call, uuid: str) -> dict[str, Any]:
    return fetch(call, "watchlist", uuid, "watchlist")


def _fetch_entry(call: Call) -> dict[str, Any]:
    """The entry of the path, reachable only through its own watchlist (else 404)."""
    watchlist = _fetch_watchlist(call, call.path["watchlistUuid"])
    entry = call.server.store.get("watchlist_entry", call.path["entryUuid"], call.system)
    if entry is None:
        raise not_found("watchlist entry")
    if not call.server.policy(WatchlistPolicy).reachable_through(entry, watchlist):
        raise not_found("watchlist entry")
    return entry


# -- the decisions inside the steps -----------------------------------------------------------
class WatchlistPolicy(Policy):
    """The decisions inside the watchlist steps, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Matching.
    def consulted(self, watchlists: list[Record], enabled_only: bool) -> list[Record]:
        """The watchlists a match consults: every one, or the enabled ones when asked."""
        return [w for w in watchlists if not enabled_only or w.get("enabled")]

    def match_type(self, kind: str, cause: str) -> str:
        """The matchType of a hit, given its kind and the field (or "name") that hit: the kind."""
        return kind

    def checks_vehicle(self, identity_hit: bool) -> bool:
        """Whether the vehicle fields are checked, given whether an identity field hit: always."""
        return True

    def reported(self, matches: list[dict[str, str]]) -> list[dict[str, str]]:
        """The matches reported from every hit (identity first): one per entry."""
        return _collapse(matches)

    # Watchlists.
    def listed(self, record: Record) -> bool:
        """Whether GET /watchlists lists a watchlist: every one, enabled or not."""
        return True

    def entry_count(self, counted: int) -> int:
        """The entryCount a watchlist reads, given the entries it holds: that number."""
        return counted

    def enabled_on_create(self, body: Mapping[str, Any]) -> bool:
        """enabled of a created watchlist: as sent, true when left out."""
        return bool(body.get("enabled", True))

    def enabled_after_put(self, body: Mapping[str, Any], current: bool) -> bool:
        """enabled after a PUT: as sent; left out, unchanged (a rename must not switch it on)."""
        return bool(body.get("enabled", current))

    def delete_withdraws_flags(self) -> bool:
        """Whether deleting a watchlist withdraws its entries' flags from the devices."""
        return True

    def delete_removes_entries(self) -> bool:
        """Whether deleting a watchlist removes its entries."""
        return True

    def audited_key_name(self, key_name: str) -> str:
        """The key name a watchlist write is audited under: the calling API key's."""
        return key_name

    # Entries.
    def entry_read(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """The fields an entry read shows: every entry field as stored."""
        return {
            "uuid": record["uuid"],
            "watchlistUuid": record["watchlistUuid"],
            **{f: record.get(f) for f in ENTRY_FIELDS},
        }

    def reachable_through(self, entry: Record, watchlist: Record) -> bool:
        """Whether an entry is reachable through the watchlist of the path: its own only."""
        return bool(entry["watchlistUuid"] == watchlist["uuid"])

    def entry_identifies(self, data: Mapping[str, Any]) -> bool:
        """Whether an entry as written may be stored: it holds a non-blank identifying value."""
        return bool(_normalised(data))

    def entry_needs_watchlist(self) -> bool:
        """Whether an entry is posted only to a watchlist that exists (else 404): it is."""
        return True

    def entry_delete_removes_record(self) -> bool:
        """Whether deleting an entry removes its record (beside withdrawing its flag)."""
        return True

    def entries_listed(self, system: str, watchlist_uuid: str) -> list[Record]:
        """The entries a watchlist's entries list holds: that watchlist's own."""
        return _entries_of(self.server, system, watchlist_uuid)

    def entries_start(self, start: int, sent: bool) -> int:
        """The entries list's start, given the query's (defaulted unless ``sent``): as read."""
        return start


# -- hardware flags -----------------------------------------------------------------------
def _log(
    server: ServerView, system: str, action: str, watchlist_uuid: str, entry_uuid: str
) -> None:
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


def _place_flag(server: ServerView, system: str, entry: Mapping[str, Any]) -> None:
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


def _withdraw_flags(
    server: ServerView, system: str, where: Callable[[dict[str, Any]], bool]
) -> None:
    for flag in server.store.all(FLAG, system, where):
        server.store.delete(FLAG, flag["uuid"])
        _log(server, system, "flag_withdrawn", flag["watchlistUuid"], flag["entryUuid"])


# -- watchlists ---------------------------------------------------------------------------
@handles("listWatchlists")
async def list_watchlists(call: Call) -> Response:
    count = _counts(call)
    listed = call.server.policy(WatchlistPolicy).listed
    records = [r for r in call.server.store.all("watchlist", call.system) if listed(r)]
    return reply(200, [_watchlist_shape(r, count(r["uuid"])) for r in records])


@handles("getWatchlist")
async def get_watchlist(call: Call) -> Response:
    record = _fetch_watchlist(call, call.path["uuid"])
    return reply(200, _watchlist_shape(record, _counts(call)(record["uuid"])))


@handles("createWatchlist")
async def create_watchlist(call: Call) -> Response:
    enabled = call.server.policy(WatchlistPolicy).enabled_on_create(call.body)
    data = {"name": call.body["name"], "enabled": enabled}
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
        current = record.get("enabled", True)
        merged = {
            **record,
            "name": call.body.get("name", record["name"]),
            "enabled": call.server.policy(WatchlistPolicy).enabled_after_put(call.body, current),
        }
        store.replace("watchlist", record["uuid"], merged, unique={"name": merged["name"]})
        _audit(call, record["uuid"])
    return ack(record["uuid"])


@handles("deleteWatchlist")
async def delete_watchlist(call: Call) -> Response:
    server, store = call.server, call.server.store
    policy = server.policy(WatchlistPolicy)
    with store.transaction():
        record = _fetch_watchlist(call, call.path["uuid"])
        uuid = record["uuid"]
        # Devices first: once the rows are gone nothing would say which flags were this list's.
        if policy.delete_withdraws_flags():
            _withdraw_flags(server, call.system, lambda f: f["watchlistUuid"] == uuid)
        if policy.delete_removes_entries():
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
    if not call.server.policy(WatchlistPolicy).entry_identifies(data):
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
    policy = call.server.policy(WatchlistPolicy)
    records = policy.entries_listed(call.system, watchlist["uuid"])
    start = policy.entries_start(call.query["start"], "start" in call.request.query_params)
    return paged([_entry_shape(call, e) for e in records], start, call.query["limit"])


@handles("getWatchlistEntry")
async def get_watchlist_entry(call: Call) -> Response:
    return reply(200, _entry_shape(call, _fetch_entry(call)))


@handles("createWatchlistEntry")
async def create_watchlist_entry(call: Call) -> Response:
    server, store = call.server, call.server.store
    with store.transaction(), unique_or_409("watchlist entry"):
        watchlist_uuid = call.path["watchlistUuid"]
        if server.policy(WatchlistPolicy).entry_needs_watchlist():
            watchlist_uuid = _fetch_watchlist(call, watchlist_uuid)["uuid"]
        data = _entry_data(call, watchlist_uuid)
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
        if server.policy(WatchlistPolicy).entry_delete_removes_record():
            store.delete("watchlist_entry", entry["uuid"])
        _audit(call, entry["uuid"])
    return ack(entry["uuid"])
