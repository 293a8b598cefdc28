"""The ledger knows how to delete what a create made, and deletes newest first."""

from __future__ import annotations

import httpx

from amws_conformance import spec
from amws_conformance.harness.lifecycle.ledger import Ledger, delete_path_for

U = "11111111-2222-4333-8444-555555555555"


def test_delete_paths_come_from_the_spec() -> None:
    cases = {
        ("createDepartment", ()): f"/api/ws/v1/departments/{U}",
        ("createWatchlistEntry", (("watchlistUuid", "w"),)): f"/api/ws/v1/watchlists/w/entries/{U}",
        ("uploadFile", ()): f"/api/ws/v1/files/{U}",
        ("createInvite", ()): f"/api/ws/v1/invites/{U}",
    }
    for (operation_id, params), expected in cases.items():
        assert delete_path_for(spec.operation(operation_id), dict(params), U) == expected


def test_cleanup_is_newest_first_and_accepts_404() -> None:
    ledger = Ledger()
    for n in range(3):
        ledger.register(f"{n}", f"/x/{n}", "full", "create")
    seen: list[str] = []

    def send(entry) -> httpx.Response:
        seen.append(entry.uuid)
        return httpx.Response(404 if entry.uuid == "1" else 200)

    assert ledger.cleanup(send) == []
    assert seen == ["2", "1", "0"]
    assert ledger.pending == []


def test_cleanup_reports_what_stayed_behind() -> None:
    ledger = Ledger()
    ledger.register("a", "/x/a", "full", "createDepartment")
    problems = ledger.cleanup(lambda entry: httpx.Response(500))
    assert problems and "createDepartment a" in problems[0]


def test_fresh_uuids_are_owned_and_unique() -> None:
    ledger = Ledger()
    first, second = ledger.fresh_uuid(), ledger.fresh_uuid()
    assert first != second and ledger.owns(first) and not ledger.owns(U)


def test_records_below_a_deleted_parent_go_with_it() -> None:
    ledger = Ledger()
    ledger.register("w", "/watchlists/w", "full", "createWatchlist")
    ledger.register("e1", "/watchlists/w/entries/e1", "full", "createWatchlistEntry")
    ledger.register("d", "/departments/d", "full", "createDepartment")
    ledger.register("e2", "/watchlists/w/entries/e2", "full", "createWatchlistEntry")
    seen: list[str] = []

    def send(entry) -> httpx.Response:
        seen.append(entry.uuid)
        return httpx.Response(200)

    assert ledger.cleanup(send) == []
    assert seen == ["w", "d"]  # the watchlist flags door hardware: it goes first


def test_hardware_records_go_first_credentials_before_all() -> None:
    ledger = Ledger()
    for uuid, label in [
        ("p", "createPerson"),
        ("c", "createCredential"),
        ("d1", "createDepartment"),
        ("w", "createWatchlist"),
        ("d2", "createDepartment"),
    ]:
        ledger.register(uuid, f"/things/{uuid}", "full", label)
    seen: list[str] = []
    ledger.cleanup(lambda entry: seen.append(entry.uuid) or httpx.Response(200))
    assert seen == ["c", "w", "p", "d2", "d1"]


def test_a_cleanup_told_to_stop_after_the_hardware_leaves_the_rest() -> None:
    ledger = Ledger()
    ledger.register("d", "/departments/d", "full", "createDepartment")
    ledger.register("c", "/credentials/c", "full", "createCredential")
    seen: list[str] = []
    problems = ledger.cleanup(
        lambda entry: seen.append(entry.uuid) or httpx.Response(200), hardware_only=lambda: True
    )
    assert seen == ["c"]
    assert problems == ["createDepartment d: left for a sweep"]


def test_records_below_a_parent_that_stayed_are_reported() -> None:
    ledger = Ledger()
    ledger.register("w", "/watchlists/w", "full", "createWatchlist")
    ledger.register("e1", "/watchlists/w/entries/e1", "full", "createWatchlistEntry")
    problems = ledger.cleanup(lambda entry: httpx.Response(500))
    assert len(problems) == 2 and "createWatchlistEntry e1" in problems[1]


def test_a_record_registered_while_the_cleanup_runs_is_deleted_too() -> None:
    ledger = Ledger()
    ledger.register("a", "/persons/a", "full", "createPerson")
    seen: list[str] = []

    def send(entry) -> httpx.Response:
        seen.append(entry.uuid)
        if entry.uuid == "a":  # another thread's create answers meanwhile
            ledger.register("b", "/persons/b", "full", "createPerson")
        return httpx.Response(200)

    assert ledger.cleanup(send) == []
    assert seen == ["a", "b"]
