"""Faults of watchlists, their entries and the match check.

The faults of decisions inside a watchlist step override one decision of ``WatchlistPolicy``
(``domain/watchlists.py``) or ``WatchlistMatchPolicy`` (``domain/watchlist_match.py``) each
(the policy seam, ``reference_server/_policy.py``): the correct answer comes from ``super()``
and the class states only the deviation. Validation and status faults stay declarative
(``unchecked``, ``optional``, ``swap``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from amws_conformance.reference_server._trails import record_audit
from amws_conformance.reference_server.domain.watchlist_match import WatchlistMatchPolicy
from amws_conformance.reference_server.domain.watchlists import WatchlistPolicy, _entries_of
from amws_conformance.reference_server.faults._model import (
    CATALOGUE,
    NOT_FOUND,
    Fault,
    optional,
    overrides,
    swap,
    unchecked,
)
from amws_conformance.reference_server.store import Record


@overrides("match-writes-audit", "WL-MATCH-READ-ONLY", "a match check leaves an audit-trail record")
class _MatchAudited(WatchlistMatchPolicy):
    def checked(self, system: str, key_name: str) -> None:
        super().checked(system, key_name)
        record_audit(self.server, system, key_name, "matchWatchlists", "")


@overrides(
    "disabled-watchlist-consulted",
    "WL-DISABLED-NOT-CONSULTED",
    "disabled watchlists are consulted like enabled ones",
)
class _DisabledConsulted(WatchlistPolicy):
    def consulted(self, watchlists: list[Record], enabled_only: bool) -> list[Record]:
        return super().consulted(watchlists, False)


@overrides(
    "entry-other-watchlist-readable",
    "WL-ENTRY-WRONG-WATCHLIST",
    "an entry is reachable through any watchlist of the system",
)
class _EntryReachableAnywhere(WatchlistPolicy):
    def reachable_through(self, entry: Record, watchlist: Record) -> bool:
        return True


@overrides(
    "watchlist-delete-keeps-entries",
    "WL-DELETE-HARD",
    "deleting a watchlist leaves its entries behind (they still match)",
)
class _DeleteKeepsEntries(WatchlistPolicy):
    def delete_removes_entries(self) -> bool:
        return False


@overrides(
    "watchlist-delete-keeps-flags",
    "WL-DELETE-HARDWARE-FIRST",
    "deleting a watchlist leaves its flags on the hardware",
)
class _DeleteKeepsFlags(WatchlistPolicy):
    def delete_withdraws_flags(self) -> bool:
        return False


@overrides(
    "match-duplicates-not-collapsed",
    "WL-MATCH-DEDUP",
    "a match answers one hit per matching field instead of one per entry",
)
class _DuplicatesKept(WatchlistPolicy):
    def reported(self, matches: list[dict[str, str]]) -> list[dict[str, str]]:
        return matches


@overrides(
    "match-duplicates-every-other",
    "WL-MATCH-DEDUP",
    "every second match that hits one entry through several fields answers one hit per field "
    "(an intermittent fault: the first such match breaks, the next holds, and so on)",
)
class _DuplicatesKeptEveryOther(WatchlistPolicy):
    def reported(self, matches: list[dict[str, str]]) -> list[dict[str, str]]:
        collapsed = super().reported(matches)
        if len(collapsed) == len(matches):
            return collapsed  # nothing to collapse: this match cannot show the fault
        seen = self.memory("match-duplicates-every-other")
        seen["matches"] = seen.get("matches", 0) + 1
        return matches if seen["matches"] % 2 else collapsed


@overrides("entry-count-frozen", "WL-ENTRY-COUNT", "entryCount always reads 0")
class _CountFrozen(WatchlistPolicy):
    def entry_count(self, counted: int) -> int:
        return 0


@overrides(
    "match-type-per-field",
    "WL-MATCH-TYPE-KINDS",
    "matchType names the field that hit instead of its kind",
)
class _TypePerField(WatchlistPolicy):
    def match_type(self, kind: str, cause: str) -> str:
        return cause


@overrides(
    "watchlist-audit-unnamed",
    "WL-AUDIT-KEY-NAME",
    "watchlist writes are audited without the API key's name",
)
class _AuditUnnamed(WatchlistPolicy):
    def audited_key_name(self, key_name: str) -> str:
        return ""


unchecked(
    "watchlist-name-unchecked", "WL-FIELD-LENGTH", "name", "createWatchlist", "updateWatchlist"
)
unchecked(
    "entry-reason-unchecked",
    "WL-ENTRY-FIELD-LENGTH",
    "reason",
    "createWatchlistEntry",
    "updateWatchlistEntry",
)
unchecked("match-identity-unchecked", "WL-MATCH-FIELD-LENGTH", "identityNumber", "matchWatchlists")
swap(
    "watchlist-unknown-400",
    "WL-NOT-FOUND",
    NOT_FOUND,
    "getWatchlist",
    "updateWatchlist",
    "deleteWatchlist",
)
optional("watchlist-put-name-optional", "WL-FIELD-REQUIRED", "name", "updateWatchlist")


@overrides(
    "watchlist-created-disabled", "WL-ENABLED-DEFAULT", "a watchlist created without enabled is off"
)
class _CreatedDisabled(WatchlistPolicy):
    def enabled_on_create(self, body: Mapping[str, Any]) -> bool:
        return super().enabled_on_create(body) if "enabled" in body else False


@overrides(
    "watchlist-list-enabled-only", "WL-READ", "GET /watchlists leaves out disabled watchlists"
)
class _ListEnabledOnly(WatchlistPolicy):
    def listed(self, record: Record) -> bool:
        return bool(record.get("enabled", True)) and super().listed(record)


@overrides(
    "watchlist-put-cannot-disable", "WL-DISABLE-BY-PUT", "a PUT with enabled false changes nothing"
)
class _PutCannotDisable(WatchlistPolicy):
    def enabled_after_put(self, body: Mapping[str, Any], current: bool) -> bool:
        return super().enabled_after_put(body, current) or current


@overrides("watchlist-put-cannot-enable", "WL-ENABLE-BY-PUT", "a disabled watchlist stays disabled")
class _PutCannotEnable(WatchlistPolicy):
    def enabled_after_put(self, body: Mapping[str, Any], current: bool) -> bool:
        return bool(super().enabled_after_put(body, current) and current)


@overrides(
    "only-first-watchlist-consulted",
    "WL-CONSULTED-ON-ARRIVAL",
    "arrival checks (and the match) consult only the oldest enabled watchlist",
)
class _OnlyFirstConsulted(WatchlistPolicy):
    def consulted(self, watchlists: list[Record], enabled_only: bool) -> list[Record]:
        return super().consulted(watchlists, enabled_only)[:1]


@overrides(
    "entry-needs-no-identifier",
    "WL-ENTRY-IDENTIFYING-FIELD",
    "an entry with no identifying field (only a reason) is stored",
)
class _EntryNeedsNoIdentifier(WatchlistPolicy):
    def entry_identifies(self, data: Mapping[str, Any]) -> bool:
        return True


# The identifying-field rule is the schema's body-level anyOf, so the validation seam skips
# body-level rules too; the override above then lets the entry handler store what it was given.
CATALOGUE["entry-needs-no-identifier"] = dataclasses.replace(
    CATALOGUE["entry-needs-no-identifier"],
    operations=("createWatchlistEntry", "updateWatchlistEntry"),
    unchecked="body",
)


@overrides("entry-reason-not-read", "WL-ENTRY-SHAPE", "an entry reads reason null")
class _ReasonNotRead(WatchlistPolicy):
    def entry_read(self, record: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().entry_read(record), "reason": None}


@overrides(
    "entry-stored-in-unknown-watchlist",
    "WL-ENTRY-CREATE-UNKNOWN-WATCHLIST",
    "an entry posted to an unknown watchlist is stored (201)",
)
class _EntryWithoutWatchlist(WatchlistPolicy):
    def entry_needs_watchlist(self) -> bool:
        return False


@overrides(
    "entry-delete-keeps-record", "WL-ENTRY-DELETE-HARD", "an entry DELETE only withdraws its flag"
)
class _EntryDeleteKeepsRecord(WatchlistPolicy):
    def entry_delete_removes_record(self) -> bool:
        return False


@overrides("entries-start-one-based", "WL-ENTRIES-PAGING", "the entries list's start defaults to 1")
class _StartOneBased(WatchlistPolicy):
    def entries_start(self, start: int, sent: bool) -> int:
        return super().entries_start(start, sent) if sent else 1


@overrides(
    "entries-list-every-watchlist",
    "WL-ENTRIES-ENVELOPE",
    "the entries list holds the entries of every watchlist",
)
class _EntriesOfEveryWatchlist(WatchlistPolicy):
    def entries_listed(self, system: str, watchlist_uuid: str) -> list[Record]:
        return self.server.store.all("watchlist_entry", system)


CATALOGUE["match-needs-no-field"] = Fault(
    "match-needs-no-field",
    "WL-MATCH-FIELD-REQUIRED",
    "a match request without identifying fields answers 200",
    operations=("matchWatchlists",),
    unchecked="body",
)


@overrides(
    "vehicle-checked-only-without-identity",
    "WL-MATCH-IDENTITY-AND-VEHICLE",
    "vehicle fields are checked only when no identity field hits",
)
class _VehicleOnlyWithoutIdentity(WatchlistPolicy):
    def checks_vehicle(self, identity_hit: bool) -> bool:
        return not identity_hit and super().checks_vehicle(identity_hit)


@overrides("no-match-null-matches", "WL-MATCH-NONE", "a match without hits answers matches null")
class _NoMatchNull(WatchlistMatchPolicy):
    def match_answer(self, matches: list[dict[str, str]]) -> dict[str, Any]:
        answer = super().match_answer(matches)
        return answer if matches else {**answer, "matches": None}


@overrides(
    "match-watchlist-uuid-reused",
    "WL-MATCH-SHAPE",
    "every match names the watchlist of the first match",
)
class _WatchlistUuidReused(WatchlistMatchPolicy):
    def match_answer(self, matches: list[dict[str, str]]) -> dict[str, Any]:
        if not matches:
            return super().match_answer(matches)
        first = matches[0]["watchlistUuid"]
        return super().match_answer([{**m, "watchlistUuid": first} for m in matches])


@overrides(
    "watchlist-visitors-first-entry-only",
    "WL-VISITORS",
    "the watchlist visitors list consults only the watchlist's first entry",
)
class _VisitorsOfFirstEntry(WatchlistMatchPolicy):
    def watchlist_visitor_entries(self, entries: list[Record]) -> list[Record]:
        return super().watchlist_visitor_entries(entries)[:1]


@overrides(
    "entry-visitors-whole-watchlist",
    "WL-ENTRY-VISITORS",
    "an entry's visitors list holds the visitors of every entry of its watchlist",
)
class _EntryVisitorsOfWatchlist(WatchlistMatchPolicy):
    def entry_visitor_entries(self, system: str, entry: Record) -> list[Record]:
        return _entries_of(self.server, system, entry["watchlistUuid"])
