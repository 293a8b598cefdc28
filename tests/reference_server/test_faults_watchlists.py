"""Each watchlist fault breaks its rule (the same checks hold on the normal server)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.reference_server.conftest import LiveServer

WL = "/api/ws/v1/watchlists"
MATCH = f"{WL}/match"


@pytest.fixture
def setup(unique) -> Iterator[Callable[..., tuple[httpx.Client, str, str]]]:
    """Give a full-key client, one watchlist and one entry of ``fields`` in it."""
    clients: list[httpx.Client] = []

    def make(
        started: LiveServer, enabled: bool = True, **fields: Any
    ) -> tuple[httpx.Client, str, str]:
        api = started.client("full")
        clients.append(api)
        uuid = api.post(WL, json={"name": unique("watch"), "enabled": enabled}).json()["uuid"]
        entry = api.post(f"{WL}/{uuid}/entries", json=fields).json()["uuid"]
        return api, uuid, entry

    yield make
    for client in clients:
        client.close()


@pytest.fixture(scope="module")
def audit_of() -> Callable[[LiveServer], list[dict[str, Any]]]:
    def read(started: LiveServer) -> list[dict[str, Any]]:
        with started.control() as control:
            return control.get("/_reference/audit").json()

    return read


def test_match_writes_audit_breaks_read_only(faulty, setup, unique, audit_of) -> None:
    started = faulty("match-writes-audit")
    ident = unique("id")
    api, _uuid, _entry = setup(started, identityNumber=ident)
    before = len(audit_of(started))
    assert api.post(MATCH, json={"identityNumber": ident}).json()["matched"] is True
    assert len(audit_of(started)) == before + 1  # WL-MATCH-READ-ONLY broken


def test_disabled_watchlist_consulted(faulty, setup, unique) -> None:
    started = faulty("disabled-watchlist-consulted")
    ident = unique("id")
    api, uuid, entry = setup(started, enabled=False, identityNumber=ident)
    result = api.post(MATCH, json={"identityNumber": ident}).json()
    assert result["matches"] == [
        {"watchlistUuid": uuid, "entryUuid": entry, "matchType": "IDENTITY"}
    ]


def test_entry_readable_through_another_watchlist(faulty, setup, unique) -> None:
    started = faulty("entry-other-watchlist-readable")
    api, _uuid, entry = setup(started, passportNr=unique("pp"))
    other = api.post(WL, json={"name": unique("watch")}).json()["uuid"]
    assert api.get(f"{WL}/{other}/entries/{entry}").status_code == 200


def test_watchlist_delete_keeps_entries(faulty, setup, unique) -> None:
    started = faulty("watchlist-delete-keeps-entries")
    ident = unique("id")
    api, uuid, entry = setup(started, identityNumber=ident)
    assert api.delete(f"{WL}/{uuid}").status_code == 200
    found = api.post(MATCH, json={"identityNumber": ident}).json()["matches"]
    assert [m["entryUuid"] for m in found] == [entry]  # WL-DELETE-HARD broken


def test_watchlist_delete_keeps_flags(faulty, setup, unique) -> None:
    started = faulty("watchlist-delete-keeps-flags")
    api, uuid, entry = setup(started, vehicleVin=unique("vin"))
    assert api.delete(f"{WL}/{uuid}").status_code == 200
    flags = started.server.store.all("watchlist_flag", started.server.systems()[0])
    assert entry in {f["entryUuid"] for f in flags}


def test_match_duplicates_not_collapsed(faulty, setup, unique) -> None:
    started = faulty("match-duplicates-not-collapsed")
    fields = {"identityNumber": unique("id"), "lastName": unique("Lee")}
    api, _uuid, entry = setup(started, **fields)
    found = api.post(MATCH, json=fields).json()["matches"]
    assert [m["entryUuid"] for m in found] == [entry, entry]


def test_match_duplicates_every_other_breaks_every_second_match(faulty, setup, unique) -> None:
    started = faulty("match-duplicates-every-other")
    fields = {"identityNumber": unique("id"), "passportNr": unique("pp")}
    api, _uuid, entry = setup(started, **fields)
    # A match with one hit per entry has nothing to collapse and does not count.
    assert len(api.post(MATCH, json={"passportNr": fields["passportNr"]}).json()["matches"]) == 1
    answers = [
        [m["entryUuid"] for m in api.post(MATCH, json=fields).json()["matches"]] for _ in range(4)
    ]
    assert answers == [[entry, entry], [entry], [entry, entry], [entry]]  # broken, held, ...


def test_entry_count_frozen(faulty, setup, unique) -> None:
    started = faulty("entry-count-frozen")
    api, uuid, _entry = setup(started, firstName="Ann")
    assert api.get(f"{WL}/{uuid}").json()["entryCount"] == 0


def test_watchlist_audit_unnamed(faulty, setup, unique, audit_of) -> None:
    started = faulty("watchlist-audit-unnamed")
    _api, uuid, _entry = setup(started, firstName="Ann")
    keys = [a["key"] for a in audit_of(started) if a["target"] == uuid]
    assert keys == [""]
