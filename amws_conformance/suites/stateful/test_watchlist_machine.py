"""Watchlists and their entries driven as a state machine against a model, with the match
check and the registration-time consultation compared against what the model predicts.

The model holds the watchlists (name, enabled), their entries (which of three run-tagged
identities they copy, and which of its identityNumber, passportNr and vehicleLicensePlate) and
what was deleted. The values are run-tagged, so no record outside the run can match them.

What the model predicts for POST /watchlists/match: every live entry of an ENABLED watchlist
holding one of the sent values is returned (once per kind of hit: identity or vehicle), beside
its own watchlist; deleted entries, and the entries of deleted watchlists, never are. Whether the
match endpoint also consults DISABLED watchlists is left open by the rules
(WL-DISABLED-NOT-CONSULTED's note; the reference server skips them, see
reference_server/domain/watchlists.py), so their entries may appear or not. What disabling
changes is decided at arrival: registering a visitor (an invitation) whose identity number an
entry of an enabled watchlist holds answers 451, one held only by entries of disabled
watchlists is registered (201) (VISIT-WATCHLIST-CONSULTED).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from amws_conformance.fixtures.timestamps import utc_millis
from amws_conformance.suites.stateful._machine import API, Calls, Ref, for_run, machine_settings

SETTINGS = machine_settings(steps=15)
WATCHLISTS = f"{API}/watchlists"
IDENTITY, VEHICLE = "IDENTITY", "VEHICLE"
KIND_OF = {"identityNumber": IDENTITY, "passportNr": IDENTITY, "vehicleLicensePlate": VEHICLE}
FIELDS = tuple(KIND_OF)
IDENTITIES = 3


def _live(kind: str) -> Any:
    return lambda ref: not ref.gone and ref.kind == kind


class WatchlistMachine(RuleBasedStateMachine):
    records = Bundle("records")  # watchlists and entries, live or deleted

    def __init__(self, api: Any, factories: Any, run_id: str, invite: Any) -> None:
        super().__init__()
        self.call = Calls(api, run_id)
        self.f = factories
        self.invite = invite  # identity number -> an invitation body for that visitor
        self.match_types: dict[str, str] = {}  # the target's matchType value -> kind of hit
        self.identities = [
            {
                "identityNumber": factories.tag("wid"),
                "passportNr": factories.tag("pp"),
                "vehicleLicensePlate": factories.tag("pl")[:50],
            }
            for _ in range(IDENTITIES)
        ]
        self.lists: dict[str, dict[str, Any]] = {}  # watchlist uuid -> name, enabled
        self.entries: dict[str, dict[str, Any]] = {}  # entry uuid -> watchlist, values
        self.refs: dict[str, Ref] = {}

    def _any(self, kind: str) -> bool:
        return any(not r.gone and r.kind == kind for r in self.refs.values())

    def _entries_of(self, watchlist: str) -> set[str]:
        return {
            u
            for u, e in self.entries.items()
            if e["watchlist"] == watchlist and not self.refs[u].gone
        }

    # -- reading back ------------------------------------------------------------------------
    def _check_watchlist(self, ref: Ref) -> None:
        path = f"{WATCHLISTS}/{ref.uuid}"
        if ref.gone:
            self.call("GET", path, expect=404)
            return
        model, held = self.lists[ref.uuid], self._entries_of(ref.uuid)
        read = self.call.read(path)
        expected = {"uuid": ref.uuid, "name": model["name"], "enabled": model["enabled"]}
        assert read == expected | {"entryCount": len(held)}, self.call.show(
            f"{ref.label} reads {read}, model: {expected} with {len(held)} entries"
        )
        page = self.call.read(f"{path}/entries")
        listed = {e["uuid"] for e in page["entries"]}
        assert listed == held, self.call.show(f"{ref.label} lists {listed}, model: {held}")

    def _check_list(self) -> None:
        """GET /watchlists holds every live watchlist of the run as it reads alone."""
        ours = {w["uuid"]: w for w in self.call.read(WATCHLISTS) if w["uuid"] in self.lists}
        expected = {
            u: {"uuid": u, **m, "entryCount": len(self._entries_of(u))}
            for u, m in self.lists.items()
            if not self.refs[u].gone
        }
        assert ours == expected, self.call.show(f"the list holds {ours}, model: {expected}")

    def _check_entry(self, ref: Ref) -> None:
        entry = self.entries[ref.uuid]
        path = f"{WATCHLISTS}/{entry['watchlist']}/entries/{ref.uuid}"
        if ref.gone:
            self.call("GET", path, expect=404)
            return
        read = self.call.read(path)
        shown = {f: read.get(f) for f in (*FIELDS, "watchlistUuid")}
        expected = {f: entry["values"].get(f) for f in FIELDS} | {
            "watchlistUuid": entry["watchlist"]
        }
        assert shown == expected, self.call.show(f"{ref.label} reads {shown}, model: {expected}")

    # -- watchlists --------------------------------------------------------------------------
    def _create_watchlist(self, enabled: bool | None) -> Ref:
        body = self.f.watchlist()
        if enabled is None:
            del body["enabled"]  # reads enabled true (WL-ENABLED-DEFAULT)
        else:
            body["enabled"] = enabled
        ref = self.call.created("watchlist", WATCHLISTS, body)
        self.refs[ref.uuid] = ref
        self.lists[ref.uuid] = {"name": body["name"], "enabled": enabled is not False}
        self._check_watchlist(ref)
        self._check_list()
        return ref

    def _add_entry(self, watchlist: Ref, identity: int, fields: set[str]) -> Ref | None:
        values = {f: self.identities[identity][f] for f in sorted(fields)}
        same = any(self.entries[u]["values"] == values for u in self._entries_of(watchlist.uuid))
        expected = 404 if watchlist.gone else 409 if same else 201
        path = f"{WATCHLISTS}/{watchlist.uuid}/entries"
        body = values | {"reason": "listed by the conformance run"}
        response = self.call("POST", path, json=body, expect=expected)
        if expected != 201:
            self._check_watchlist(watchlist)  # nothing was added
            return None
        ref = self.call.ref("entry", response.json()["uuid"])
        self.refs[ref.uuid] = ref
        self.entries[ref.uuid] = {"watchlist": watchlist.uuid, "values": values}
        self._check_entry(ref)
        self._check_watchlist(watchlist)
        return ref

    @initialize(target=records)
    def start_with_an_enabled_and_a_disabled_watchlist(self) -> Any:
        """Identity 0 is listed in an enabled watchlist, identity 1 only in a disabled one:
        a visitor with identity 0 is refused, one with identity 1 registered; a match on all
        the values of each returns its entry (the disabled one: may)."""
        listed, unlisted = self._create_watchlist(True), self._create_watchlist(False)
        made = [self._add_entry(listed, 0, set(FIELDS)), self._add_entry(unlisted, 1, set(FIELDS))]
        for identity in (0, 1):
            self._register(self.identities[identity]["identityNumber"])
            self._match(dict(self.identities[identity]))
        return multiple(listed, unlisted, *[ref for ref in made if ref is not None])

    @rule(target=records, enabled=st.sampled_from([True, False, None]))
    def create_watchlist(self, enabled: bool | None) -> Ref:
        return self._create_watchlist(enabled)

    @precondition(lambda self: self._any("watchlist"))
    @rule(watchlist=records.filter(_live("watchlist")))
    def switch_enabled(self, watchlist: Ref) -> None:
        """PUT with the other enabled value: the watchlist then reads it, and a visitor its
        entries hold is refused or registered accordingly."""
        model = self.lists[watchlist.uuid]
        body = {"name": model["name"], "enabled": not model["enabled"]}
        self.call("PUT", f"{WATCHLISTS}/{watchlist.uuid}", json=body, expect=200)
        model["enabled"] = body["enabled"]
        self._check_watchlist(watchlist)
        numbers = sorted(
            self.entries[u]["values"]["identityNumber"]
            for u in self._entries_of(watchlist.uuid)
            if "identityNumber" in self.entries[u]["values"]
        )
        if numbers:
            self._register(numbers[0])

    @precondition(lambda self: self._any("watchlist"))
    @rule(watchlist=records.filter(_live("watchlist")))
    def delete_watchlist(self, watchlist: Ref) -> None:
        """Its entries go with it: each reads 404 afterwards."""
        held = self._entries_of(watchlist.uuid)
        self.call("DELETE", f"{WATCHLISTS}/{watchlist.uuid}", expect=200)
        watchlist.gone = True
        self._check_watchlist(watchlist)
        self._check_list()
        for uuid in sorted(held):
            self.refs[uuid].gone = True
            self._check_entry(self.refs[uuid])
        self._match_former(held)

    # -- entries -------------------------------------------------------------------------------
    @rule(
        target=records,
        watchlist=records.filter(lambda ref: ref.kind == "watchlist"),
        identity=st.integers(0, IDENTITIES - 1),
        fields=st.sets(st.sampled_from(FIELDS), min_size=1),
    )
    def add_entry(self, watchlist: Ref, identity: int, fields: set[str]) -> Any:
        """201; 409 when the watchlist holds an entry with the same values; 404 when the
        watchlist was deleted."""
        ref = self._add_entry(watchlist, identity, fields)
        return ref if ref is not None else multiple()

    @precondition(lambda self: self._any("entry"))
    @rule(entry=records.filter(_live("entry")))
    def delete_entry(self, entry: Ref) -> None:
        watchlist = self.entries[entry.uuid]["watchlist"]
        self.call("DELETE", f"{WATCHLISTS}/{watchlist}/entries/{entry.uuid}", expect=200)
        entry.gone = True
        self._check_entry(entry)
        self._check_watchlist(self.refs[watchlist])
        self._match_former({entry.uuid})

    # -- what the watchlists catch -----------------------------------------------------------
    def _hits(self, query: dict[str, str]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """(entry -> kinds of hit) in enabled watchlists, and the same in disabled ones."""
        enabled: dict[str, set[str]] = {}
        disabled: dict[str, set[str]] = {}
        for uuid, entry in self.entries.items():
            if self.refs[uuid].gone:
                continue
            kinds = {KIND_OF[f] for f, v in entry["values"].items() if query.get(f) == v}
            if kinds:
                on = self.lists[entry["watchlist"]]["enabled"]
                (enabled if on else disabled)[uuid] = kinds
        return enabled, disabled

    def _kind_of(self, value: str, kinds: set[str]) -> str | None:
        """The kind of hit a matchType value stands for. The values are the target's own
        (WL-MATCH-TYPE-KINDS): each is learnt from a hit of one kind only, and two kinds never
        share a value."""
        if value not in self.match_types and len(kinds) == 1:
            (kind,) = kinds
            assert kind not in self.match_types.values(), (
                f"matchType {value} for a {kind} hit, which earlier read otherwise"
            )
            self.match_types[value] = kind
        return self.match_types.get(value)

    def _match(self, query: dict[str, str]) -> None:
        """POST /watchlists/match compared with the entries the model says it must (and may)
        return: each beside its own watchlist, once per kind of hit, with that matchType."""
        answer = self.call("POST", f"{WATCHLISTS}/match", json=query, expect=200).json()
        must, may = self._hits(query)
        ours = [m for m in answer["matches"] if m["entryUuid"] in self.entries]
        found: dict[str, list[str]] = {}
        for hit in ours:
            uuid = hit["entryUuid"]
            assert uuid in must or uuid in may, self.call.show(
                f"{self.refs[uuid].label} matched; the model expects only {sorted(must)}"
                f" (or {sorted(may)} of disabled watchlists)"
            )
            assert hit["watchlistUuid"] == self.entries[uuid]["watchlist"], "wrong watchlist"
            kinds = must.get(uuid) or may[uuid]
            kind = self._kind_of(hit["matchType"], kinds)
            assert kind is None or kind in kinds, f"matchType {hit['matchType']}, hit by {kinds}"
            found.setdefault(uuid, []).append(hit["matchType"])
        missing = set(must) - set(found)
        assert not missing, self.call.show(f"entries {sorted(missing)} were not matched")
        for uuid, types in found.items():  # one match per kind of hit, never one per field
            assert len(types) == len(set(types)), self.call.show(f"{uuid} matched {types}")
        assert answer["matched"] is bool(answer["matches"])
        if not must and not may:
            assert answer == {"matched": False, "matches": []}, answer

    def _match_former(self, entries: set[str]) -> None:
        """After a delete: a match on the values of the removed entries returns none of them."""
        for values in {tuple(sorted(self.entries[u]["values"].items())) for u in entries}:
            self._match(dict(values))

    @rule(
        identity=st.integers(0, IDENTITIES - 1),
        left_out=st.sets(st.sampled_from(("identityNumber", "passportNr")), max_size=2),
        plate_of=st.integers(0, IDENTITIES - 1) | st.none(),
    )
    def match(self, identity: int, left_out: set[str], plate_of: int | None) -> None:
        """The identity values of one identity (but ``left_out``) and the plate of another
        (or of the same one when no identity value is left)."""
        query = {f: v for f, v in self.identities[identity].items() if f in KIND_OF}
        query = {f: v for f, v in query.items() if KIND_OF[f] == IDENTITY and f not in left_out}
        if plate_of is not None or not query:
            plate = self.identities[identity if plate_of is None else plate_of]
            query["vehicleLicensePlate"] = plate["vehicleLicensePlate"]
        self._match(query)

    @rule(identity=st.integers(0, IDENTITIES - 1))
    def register_visitor(self, identity: int) -> None:
        """An invitation for a visitor with this identity number: 451 when an entry of an
        enabled watchlist holds it, registered otherwise."""
        self._register(self.identities[identity]["identityNumber"])

    def _register(self, number: str) -> None:
        listed, _ = self._hits({"identityNumber": number})
        expected = 451 if listed else 201
        self.call("POST", f"{API}/invites", json=self.invite(number), expect=expected)


@pytest.fixture
def invite(api, factories, amws_run) -> Any:
    """Invitation bodies hosted by a user of the run, with a window open on the target's clock
    and run-tagged names (so no watchlist outside the run can catch the visitor by name)."""
    host = api.post(f"{API}/users", json=factories.user())
    assert host.status_code == 201, host.text
    skew = amws_run.target_clock() - datetime.now(UTC).timestamp()

    def body(identity_number: str) -> dict[str, Any]:
        start = datetime.now(UTC) + timedelta(seconds=skew) - timedelta(hours=1)
        end = start + timedelta(hours=8)
        return factories.invite(
            host.json()["uuid"],
            activation=utc_millis(start.replace(microsecond=0)),
            expiry=utc_millis(end.replace(microsecond=0)),
            firstName=factories.tag("vf")[:50],
            lastName=factories.tag("vl")[:50],
            identityNumber=identity_number,
        )

    return body


@pytest.mark.rule(
    "WL-ENABLED-DEFAULT",
    "WL-READ",
    "WL-ENTRY-COUNT",
    "WL-DISABLE-BY-PUT",
    "WL-ENABLE-BY-PUT",
    "WL-DELETE-HARD",
    "WL-ENTRY-SHAPE",
    "WL-ENTRY-DUPLICATE",
    "WL-ENTRY-CREATE-UNKNOWN-WATCHLIST",
    "WL-ENTRY-DELETE-HARD",
    "WL-ENTRIES-ENVELOPE",
    "WL-MATCH-IDENTITY-AND-VEHICLE",
    "WL-MATCH-DEDUP",
    "WL-MATCH-NONE",
    "WL-MATCH-SHAPE",
    "WL-MATCH-TYPE-KINDS",
    "WL-DISABLED-NOT-CONSULTED",
    "WL-CONSULTED-ON-ARRIVAL",
    "VISIT-WATCHLIST-CONSULTED",
)
def test_watchlists_follow_their_model(
    api, factories, run_id, invite, amws_run, example_budget
) -> None:
    run_state_machine_as_test(
        lambda: WatchlistMachine(api, factories, run_id, invite),
        settings=for_run(SETTINGS, amws_run, example_budget),
    )
