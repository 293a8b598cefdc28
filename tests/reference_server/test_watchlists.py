"""Watchlists, entries, the match check and matching visitors (WL- rules), through HTTP."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from amws_conformance.reference_server.domain.watchlists import find_matches
from tests.reference_server.conftest import LiveServer

WL = "/api/ws/v1/watchlists"
MATCH = f"{WL}/match"
ENTRY_FIELDS = {
    "identityNumber",
    "passportNr",
    "firstName",
    "lastName",
    "mobileNumber",
    "vehicleLicensePlate",
    "vehicleVin",
    "reason",
}


def new_watchlist(api: httpx.Client, unique: Callable[[str], str], **extra: Any) -> str:
    response = api.post(WL, json={"name": unique("watch"), **extra})
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def new_entry(api: httpx.Client, watchlist: str, **fields: Any) -> str:
    response = api.post(f"{WL}/{watchlist}/entries", json=fields)
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def match(api: httpx.Client, **fields: Any) -> dict[str, Any]:
    response = api.post(MATCH, json=fields)
    assert response.status_code == 200, response.text
    return response.json()


def hits_in(result: dict[str, Any], *watchlists: str) -> list[dict[str, Any]]:
    """Only the matches of our own watchlists (the server is shared between tests)."""
    return [m for m in result["matches"] if m["watchlistUuid"] in watchlists]


def system_of(live: LiveServer) -> str:
    return live.server.systems()[0]


# -- watchlists ---------------------------------------------------------------------------
def test_watchlist_is_created_enabled_and_read_with_entry_count(api: httpx.Client, unique) -> None:
    name = unique("watch")
    uuid = api.post(WL, json={"name": name}).json()["uuid"]
    new_entry(api, uuid, identityNumber=unique("id"))
    expected = {"uuid": uuid, "name": name, "enabled": True, "entryCount": 1}
    assert api.get(f"{WL}/{uuid}").json() == expected
    listed = api.get(WL).json()
    assert expected in listed


def test_watchlist_name_bounds_and_required(api: httpx.Client, unique) -> None:
    assert api.post(WL, json={"enabled": True}).status_code == 422
    assert api.post(WL, json={"name": "abcd"}).status_code == 422
    assert api.post(WL, json={"name": "x" * 101}).status_code == 422
    assert api.post(WL, json={"name": unique("w")[:5]}).status_code == 201
    assert api.post(WL, json={"name": unique("w").ljust(100, "x")}).status_code == 201


def test_watchlist_name_is_unique_on_create_and_rename(api: httpx.Client, unique) -> None:
    name = unique("watch")
    first = new_watchlist(api, lambda _p: name)
    assert api.post(WL, json={"name": name.upper()}).status_code == 409
    second = new_watchlist(api, unique)
    before = api.get(f"{WL}/{second}").json()
    assert api.put(f"{WL}/{second}", json={"name": name}).status_code == 409
    assert api.get(f"{WL}/{second}").json() == before
    # Renaming to its own name is not a conflict.
    assert api.put(f"{WL}/{first}", json={"name": name}).status_code == 200


def test_unknown_watchlist_answers_404_everywhere(
    api: httpx.Client, live: LiveServer, unique
) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    assert api.get(f"{WL}/{missing}").status_code == 404
    assert api.put(f"{WL}/{missing}", json={"name": unique("watch")}).status_code == 404
    assert api.delete(f"{WL}/{missing}").status_code == 404
    assert api.get(f"{WL}/{missing}/entries").status_code == 404
    assert api.get(f"{WL}/{missing}/entries/visitors").status_code == 404
    assert api.post(f"{WL}/{missing}/entries", json={"firstName": "Ann"}).status_code == 404
    # Another system's watchlist is unknown too, and gets no entry.
    theirs = new_watchlist(api, unique)
    with live.client("other_system") as other:
        assert other.get(f"{WL}/{theirs}").status_code == 404
        created = other.post(f"{WL}/{theirs}/entries", json={"identityNumber": unique("id")})
        assert created.status_code == 404
    assert api.get(f"{WL}/{theirs}").json()["entryCount"] == 0


def test_put_disables_and_re_enables_a_watchlist(api: httpx.Client, unique) -> None:
    name, ident = unique("watch"), unique("id")
    uuid = new_watchlist(api, lambda _p: name)
    entry = new_entry(api, uuid, identityNumber=ident)
    assert api.put(f"{WL}/{uuid}", json={"name": name, "enabled": False}).status_code == 200
    assert api.get(f"{WL}/{uuid}").json()["enabled"] is False
    assert hits_in(match(api, identityNumber=ident), uuid) == []
    # A PUT that leaves enabled out keeps the current state.
    assert api.put(f"{WL}/{uuid}", json={"name": name}).status_code == 200
    assert api.get(f"{WL}/{uuid}").json()["enabled"] is False
    assert api.put(f"{WL}/{uuid}", json={"name": name, "enabled": True}).status_code == 200
    assert api.get(f"{WL}/{uuid}").json()["enabled"] is True
    assert hits_in(match(api, identityNumber=ident), uuid) == [
        {"watchlistUuid": uuid, "entryUuid": entry, "matchType": "IDENTITY"}
    ]


def test_watchlist_delete_removes_it_and_its_entries(api: httpx.Client, unique) -> None:
    ident = unique("id")
    uuid = new_watchlist(api, unique)
    entry = new_entry(api, uuid, identityNumber=ident)
    assert api.delete(f"{WL}/{uuid}").json() == {"code": 200, "message": "success", "uuid": uuid}
    assert api.get(f"{WL}/{uuid}").status_code == 404
    assert api.get(f"{WL}/{uuid}/entries/{entry}").status_code == 404
    assert hits_in(match(api, identityNumber=ident), uuid) == []
    assert match(api, identityNumber=ident) == {"matched": False, "matches": []}


def test_watchlist_delete_withdraws_hardware_flags_first(
    api: httpx.Client, live: LiveServer, unique
) -> None:
    store, system = live.server.store, system_of(live)
    uuid = new_watchlist(api, unique)
    entries = {new_entry(api, uuid, vehicleLicensePlate=unique("P")[:20]) for _ in range(2)}

    def flags() -> set[str]:
        rows = store.all("watchlist_flag", system, lambda f: f["watchlistUuid"] == uuid)
        return {f["entryUuid"] for f in rows}

    assert flags() == entries
    assert api.delete(f"{WL}/{uuid}").status_code == 200
    assert flags() == set()
    log = [
        (row["action"], row["entryUuid"])
        for row in store.all("watchlist_hardware_log", system)
        if row["watchlistUuid"] == uuid
    ]
    withdrawn = [i for i, (action, _e) in enumerate(log) if action == "flag_withdrawn"]
    removed = log.index(("watchlist_removed", ""))
    assert {log[i][1] for i in withdrawn} == entries
    assert max(withdrawn) < removed


# -- entries ------------------------------------------------------------------------------
def test_entry_reads_as_written_with_its_watchlist(api: httpx.Client, unique) -> None:
    uuid = new_watchlist(api, unique)
    written = {"firstName": "Ann", "lastName": unique("Lee"), "reason": "trespass"}
    entry = new_entry(api, uuid, **written)
    body = api.get(f"{WL}/{uuid}/entries/{entry}").json()
    assert set(body) == {"uuid", "watchlistUuid"} | ENTRY_FIELDS
    assert body["uuid"] == entry and body["watchlistUuid"] == uuid
    assert {k: v for k, v in body.items() if v is not None and k in ENTRY_FIELDS} == written


def test_entry_count_and_envelope_follow_the_entries(api: httpx.Client, unique) -> None:
    uuid = new_watchlist(api, unique)
    other = new_watchlist(api, unique)
    new_entry(api, other, identityNumber=unique("id"))
    made = [new_entry(api, uuid, passportNr=unique("pp")) for _ in range(3)]
    assert api.get(f"{WL}/{uuid}").json()["entryCount"] == 3
    page = api.get(f"{WL}/{uuid}/entries").json()
    assert page["startIndex"] == 0 and page["countReturned"] == 3 and page["totalCount"] == 3
    assert [e["uuid"] for e in page["entries"]] == made
    assert api.delete(f"{WL}/{uuid}/entries/{made[0]}").status_code == 200
    assert api.get(f"{WL}/{uuid}").json()["entryCount"] == 2
    assert api.get(f"{WL}/{uuid}/entries").json()["totalCount"] == 2


def test_entries_paging_window_and_bad_values(api: httpx.Client, unique) -> None:
    uuid = new_watchlist(api, unique)
    made = [new_entry(api, uuid, mobileNumber=unique("0")) for _ in range(5)]
    page = api.get(f"{WL}/{uuid}/entries", params={"start": 1, "limit": 2}).json()
    assert [e["uuid"] for e in page["entries"]] == made[1:3]
    assert page["startIndex"] == 1 and page["countReturned"] == 2 and page["totalCount"] == 5
    for params in ({"start": -1}, {"limit": 0}, {"limit": 1001}):
        assert api.get(f"{WL}/{uuid}/entries", params=params).status_code == 422
        assert api.get(f"{WL}/{uuid}/entries/visitors", params=params).status_code == 422
    assert api.get(f"{WL}/{uuid}/entries", params={"limit": 1000}).status_code == 200


def test_entry_needs_an_identifying_field(api: httpx.Client, unique) -> None:
    uuid = new_watchlist(api, unique)
    assert api.post(f"{WL}/{uuid}/entries", json={"reason": "only a reason"}).status_code == 422
    assert api.post(f"{WL}/{uuid}/entries", json={"firstName": "   "}).status_code == 422
    assert api.post(f"{WL}/{uuid}/entries", json={"vehicleVin": "V" * 51}).status_code == 422
    entry = new_entry(api, uuid, vehicleVin=unique("V")[:50])
    assert api.put(f"{WL}/{uuid}/entries/{entry}", json={"reason": "x"}).status_code == 422
    assert api.get(f"{WL}/{uuid}").json()["entryCount"] == 1


def test_duplicate_entry_is_409_within_one_watchlist_only(api: httpx.Client, unique) -> None:
    uuid, other = new_watchlist(api, unique), new_watchlist(api, unique)
    fields = {"firstName": "Ann", "lastName": unique("Lee")}
    new_entry(api, uuid, **fields, reason="first")
    dup = api.post(f"{WL}/{uuid}/entries", json={**fields, "reason": "second"})
    assert dup.status_code == 409
    shouty = {k: v.upper() for k, v in fields.items()}
    assert api.post(f"{WL}/{uuid}/entries", json=shouty).status_code == 409
    new_entry(api, other, **fields)
    second = new_entry(api, uuid, **fields, identityNumber=unique("id"))
    assert api.put(f"{WL}/{uuid}/entries/{second}", json=fields).status_code == 409
    assert api.get(f"{WL}/{uuid}").json()["entryCount"] == 2


def test_entry_put_replaces_every_field(api: httpx.Client, unique) -> None:
    uuid = new_watchlist(api, unique)
    entry = new_entry(api, uuid, identityNumber=unique("id"), reason="old")
    plate = unique("PL")[:20]
    assert api.put(f"{WL}/{uuid}/entries/{entry}", json={"vehicleLicensePlate": plate}).json() == {
        "code": 200,
        "message": "success",
        "uuid": entry,
    }
    body = api.get(f"{WL}/{uuid}/entries/{entry}").json()
    assert body["vehicleLicensePlate"] == plate
    assert body["identityNumber"] is None and body["reason"] is None


def test_entry_is_reachable_only_through_its_own_watchlist(api: httpx.Client, unique) -> None:
    own, other = new_watchlist(api, unique), new_watchlist(api, unique)
    entry = new_entry(api, own, passportNr=unique("pp"))
    before = api.get(f"{WL}/{own}/entries/{entry}").json()
    wrong = f"{WL}/{other}/entries/{entry}"
    assert api.get(wrong).status_code == 404
    assert api.put(wrong, json={"firstName": "Changed"}).status_code == 404
    assert api.delete(wrong).status_code == 404
    assert api.get(f"{wrong}/visitors").status_code == 404
    assert api.get(f"{WL}/{own}/entries/{entry}").json() == before
    assert api.get(f"{WL}/{own}/entries/{entry}/visitors").status_code == 200
    unknown = "00000000-0000-4000-8000-000000000001"
    assert api.get(f"{WL}/{own}/entries/{unknown}").status_code == 404


def test_entry_delete_is_hard(api: httpx.Client, live: LiveServer, unique) -> None:
    ident = unique("id")
    uuid = new_watchlist(api, unique)
    entry = new_entry(api, uuid, identityNumber=ident)
    assert api.delete(f"{WL}/{uuid}/entries/{entry}").status_code == 200
    assert api.get(f"{WL}/{uuid}/entries/{entry}").status_code == 404
    assert api.get(f"{WL}/{uuid}/entries").json()["entries"] == []
    assert hits_in(match(api, identityNumber=ident), uuid) == []
    flags = live.server.store.all("watchlist_flag", system_of(live))
    assert entry not in {f["entryUuid"] for f in flags}


def test_writes_are_audited_by_key_name(api: httpx.Client, control: httpx.Client, unique) -> None:
    name = unique("watch")
    uuid = new_watchlist(api, lambda _p: name)
    entry = new_entry(api, uuid, firstName="Ann")
    api.put(f"{WL}/{uuid}/entries/{entry}", json={"firstName": "Anne"})
    api.delete(f"{WL}/{uuid}/entries/{entry}")
    api.put(f"{WL}/{uuid}", json={"name": name, "enabled": False})
    api.delete(f"{WL}/{uuid}")
    audit = [
        (a["action"], a["key"])
        for a in control.get("/_reference/audit").json()
        if a["target"] in (uuid, entry)
    ]
    assert audit == [
        ("createWatchlist", "full"),
        ("createWatchlistEntry", "full"),
        ("updateWatchlistEntry", "full"),
        ("deleteWatchlistEntry", "full"),
        ("updateWatchlist", "full"),
        ("deleteWatchlist", "full"),
    ]


def test_readonly_key_reads_and_matches_but_cannot_write(
    api: httpx.Client, live: LiveServer, unique
) -> None:
    uuid = new_watchlist(api, unique)
    with live.client("readonly") as readonly:
        assert readonly.get(f"{WL}/{uuid}").status_code == 200
        assert readonly.post(MATCH, json={"firstName": unique("n")}).status_code == 200
        assert readonly.post(WL, json={"name": unique("watch")}).status_code == 403
        assert readonly.post(f"{WL}/{uuid}/entries", json={"firstName": "A"}).status_code == 403


# -- match --------------------------------------------------------------------------------
def test_match_changes_nothing(
    api: httpx.Client, live: LiveServer, control: httpx.Client, unique, monkeypatch
) -> None:
    ident = unique("id")
    uuid = new_watchlist(api, unique)
    new_entry(api, uuid, identityNumber=ident)
    before = (api.get(f"{WL}/{uuid}").json(), api.get(f"{WL}/{uuid}/entries").json())
    audit_before = len(control.get("/_reference/audit").json())
    writes: list[str] = []
    store = live.server.store
    for method in ("insert", "replace", "delete", "set_meta"):
        original = getattr(store, method)
        monkeypatch.setattr(
            store, method, lambda *a, _m=method, _o=original, **k: writes.append(_m) or _o(*a, **k)
        )
    assert match(api, identityNumber=ident)["matched"] is True
    assert writes == []
    monkeypatch.undo()
    assert len(control.get("/_reference/audit").json()) == audit_before
    assert (api.get(f"{WL}/{uuid}").json(), api.get(f"{WL}/{uuid}/entries").json()) == before


def test_match_merges_identity_and_vehicle_hits(api: httpx.Client, unique) -> None:
    uuid = new_watchlist(api, unique)
    ident, plate = unique("id"), unique("CA")[:20]
    person = new_entry(api, uuid, identityNumber=ident)
    car = new_entry(api, uuid, vehicleLicensePlate=plate)
    result = match(api, identityNumber=ident, vehicleLicensePlate=plate)
    assert result["matched"] is True
    assert sorted(hits_in(result, uuid), key=lambda m: m["matchType"]) == [
        {"watchlistUuid": uuid, "entryUuid": person, "matchType": "IDENTITY"},
        {"watchlistUuid": uuid, "entryUuid": car, "matchType": "VEHICLE"},
    ]


def test_match_collapses_hits_on_one_entry(api: httpx.Client, unique) -> None:
    uuid = new_watchlist(api, unique)
    fields = {
        "identityNumber": unique("id"),
        "passportNr": unique("pp"),
        "lastName": unique("Lee"),
        "vehicleVin": unique("vin")[:40],
    }
    entry = new_entry(api, uuid, **fields)
    assert hits_in(match(api, **fields), uuid) == [
        {"watchlistUuid": uuid, "entryUuid": entry, "matchType": "IDENTITY"}
    ]
    # The same entry in two watchlists is two matches.
    other = new_watchlist(api, unique)
    twin = new_entry(api, other, **fields)
    assert {m["entryUuid"] for m in hits_in(match(api, **fields), uuid, other)} == {entry, twin}


def test_match_nothing_found(api: httpx.Client, unique) -> None:
    assert match(api, firstName=unique("nobody"), vehicleVin=unique("V")[:40]) == {
        "matched": False,
        "matches": [],
    }


def test_match_plate_and_vin_ignore_spaces_punctuation_and_case(api: httpx.Client, unique) -> None:
    uuid = new_watchlist(api, unique)
    tag = unique("x")[-8:].upper()
    plate = new_entry(api, uuid, vehicleLicensePlate=f"CA {tag}-7")
    vin = new_entry(api, uuid, vehicleVin=f"1HG-CM82 {tag}")
    assert [m["entryUuid"] for m in hits_in(match(api, vehicleLicensePlate=f"ca{tag}7"), uuid)] == [
        plate
    ]
    found = hits_in(match(api, vehicleVin=f"1hgcm82.{tag.lower()}"), uuid)
    assert found == [{"watchlistUuid": uuid, "entryUuid": vin, "matchType": "VEHICLE"}]


def test_match_names_need_every_name_part_the_entry_holds(api: httpx.Client, unique) -> None:
    uuid = new_watchlist(api, unique)
    last = unique("Lee")
    both = new_entry(api, uuid, firstName="Ann", lastName=last)
    surname = new_entry(api, uuid, lastName=f"{last}-x")
    assert hits_in(match(api, lastName=last), uuid) == []
    assert [
        m["entryUuid"] for m in hits_in(match(api, firstName=" ann ", lastName=last.upper()), uuid)
    ] == [both]
    assert [
        m["entryUuid"] for m in hits_in(match(api, firstName="Bob", lastName=f"{last}-x"), uuid)
    ] == [surname]


def test_match_skips_disabled_watchlists(api: httpx.Client, unique) -> None:
    ident = unique("id")
    uuid = new_watchlist(api, unique, enabled=False)
    new_entry(api, uuid, identityNumber=ident)
    assert match(api, identityNumber=ident) == {"matched": False, "matches": []}


def test_match_needs_a_field_within_limits(api: httpx.Client) -> None:
    assert api.post(MATCH, json={}).status_code == 422
    assert api.post(MATCH, json={"reason": "x"}).status_code == 422
    assert api.post(MATCH, json={"firstName": "x" * 101}).status_code == 422
    assert api.post(MATCH, json={"vehicleLicensePlate": "x" * 51}).status_code == 422


def test_find_matches_can_include_disabled_watchlists(
    api: httpx.Client, live: LiveServer, unique
) -> None:
    mobile = unique("082")
    uuid = new_watchlist(api, unique, enabled=False)
    entry = new_entry(api, uuid, mobileNumber=mobile)
    system = system_of(live)
    assert find_matches(live.server, system, {"mobileNumber": mobile}, enabled_only=True) == []
    assert find_matches(live.server, system, {"mobileNumber": mobile}, enabled_only=False) == [
        {"watchlistUuid": uuid, "entryUuid": entry, "matchType": "IDENTITY"}
    ]


# -- visitors -----------------------------------------------------------------------------
@pytest.fixture
def visitors(live: LiveServer, unique) -> Callable[..., str]:
    """Visitors on record, as the invitations part would have stored them."""

    def add(**fields: Any) -> str:
        record = {
            "firstName": None,
            "lastName": None,
            "email": None,
            "mobile": None,
            "identityNumber": None,
            "alternativeNumber": None,
            "company": None,
            **fields,
        }
        return live.server.store.insert("visitor", system_of(live), record)

    return add


def test_watchlist_and_entry_visitors(api: httpx.Client, visitors, unique) -> None:
    uuid = new_watchlist(api, unique)
    ident, passport, last = unique("id"), unique("pp"), unique("Lee")
    by_id = new_entry(api, uuid, identityNumber=ident)
    by_name = new_entry(api, uuid, firstName="Ann", lastName=last)
    new_entry(api, uuid, vehicleLicensePlate=unique("P")[:20])
    first = visitors(firstName="Zed", lastName="One", identityNumber=ident)
    second = visitors(firstName="ann", lastName=last, alternativeNumber=passport)
    visitors(firstName="Ann", lastName=unique("Other"))
    both = visitors(firstName="Ann", lastName=last, identityNumber=ident)
    listed = api.get(f"{WL}/{uuid}/entries/visitors").json()
    assert listed == [
        {"uuid": first, "firstName": "Zed", "lastName": "One"},
        {"uuid": second, "firstName": "ann", "lastName": last},
        {"uuid": both, "firstName": "Ann", "lastName": last},
    ]
    paged = api.get(f"{WL}/{uuid}/entries/visitors", params={"start": 1, "limit": 1}).json()
    assert paged == listed[1:2]
    assert [v["uuid"] for v in api.get(f"{WL}/{uuid}/entries/{by_id}/visitors").json()] == [
        first,
        both,
    ]
    assert [v["uuid"] for v in api.get(f"{WL}/{uuid}/entries/{by_name}/visitors").json()] == [
        second,
        both,
    ]
    passport_list = new_watchlist(api, unique)
    by_passport = new_entry(api, passport_list, passportNr=passport)
    assert api.get(f"{WL}/{passport_list}/entries/{by_passport}/visitors").json() == [
        {"uuid": second, "firstName": "ann", "lastName": last}
    ]
