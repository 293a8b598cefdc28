"""The product end to end, once: the whole suite (deep) against served reference servers.

The suite runs in two halves at once, each serially against a server of its own, as a user
runs it against a shared target: together they must certify the reference server as
conformant (the verdict one run would write, recomputed from both halves' tests), exercise
every documented operation, match the committed cost table, and leave each server holding
exactly the records it held before. A run on parallel workers is shown on a targeted run
(tests/test_worker_reports.py), and the faults of the catalogue are killed by the self-check
(tests/test_fault_catalogue.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from amws_conformance import spec
from amws_conformance.harness.evidence.verdicts import certification
from amws_conformance.harness.plan.plan import CostTable, stale
from tests._served import passed, serve, suites_run

PACKAGE = Path(__file__).resolve().parent.parent / "amws_conformance"
NAMED = (
    "departments",
    "organisations",
    "cost-centers",
    "visit-reason",
    "groups",
    "locations",
    "roles",
    "watchlists",
    "access-control-lists",
    "access-control-points",
)


# The whole suite, split in two halves that run at once, each serially against a reference
# server of its own (the way a shared target is run); together they are one full deep run.
HALVES = {
    "scenarios": ("suites/rules", "suites/hardware"),
    "properties": ("suites/contract", "suites/stateful", "suites/webhooks"),
}


def _pages(client: httpx.Client, path: str, limit: int) -> list[Any]:
    entries, start = [], 0
    while True:
        page = client.get(path, params={"start": start, "limit": limit}).json()
        entries += page["entries"]
        start += page["countReturned"]
        if not page["countReturned"] or start >= page["totalCount"]:
            return entries


def _records(base: str, key: str) -> dict[str, Any]:
    with httpx.Client(base_url=f"{base}/api/ws/v1", headers={"Authorization": key}) as api:
        seen: dict[str, Any] = {name: api.get(f"/{name}").json() for name in NAMED}
        seen["entries"] = {
            w["uuid"]: _pages(api, f"/watchlists/{w['uuid']}/entries", 1000)
            for w in seen["watchlists"]
        }
        seen["vehicles"] = _pages(api, "/vehicles", 1000)
        seen["invites"] = _pages(api, "/invites", 1000)
        seen["persons"] = api.post("/persons/search", json={"limit": 1000}).json()["entries"]
        seen["users"] = api.post("/users/search", json={"limit": 1000}).json()["entries"]
    return seen


def _snapshot(profile: dict[str, Any]) -> dict[str, Any]:
    base = profile["base_url"]
    control = profile["control"]
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {control['token']}"}) as c:
        hardware = {
            "controllers": c.get("/_reference/hardware/credentials").json(),
            "flags": c.get("/_reference/hardware/watchlist-flags").json()["flags"],
            "settings": c.get("/_reference/settings").json(),
        }
    return {
        "system": _records(base, profile["keys"]["full"]),
        "other_system": _records(base, profile["keys"]["other_system"]),
        "hardware": hardware,
    }


@dataclass
class WholeRun:
    """The two halves' reports, and what each half's server held before and after."""

    reports: dict[str, dict[str, Any]]
    before: dict[str, dict[str, Any]]
    after: dict[str, dict[str, Any]]

    def tests(self) -> dict[str, Any]:
        return {n: t for r in self.reports.values() for n, t in r["tests"].items()}


@pytest.fixture(scope="module")
def whole_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WholeRun]:
    """The deep plan over every suite, against served reference servers (their profiles raise
    the quotas), in two halves at once; each half on a server of its own."""
    folders = {name: tmp_path_factory.mktemp(name) for name in HALVES}
    servers = {name: serve(f, db=str(f / "amws.sqlite")) for name, f in folders.items()}
    try:
        profiles = {n: yaml.safe_load(p.read_text()) for n, (_, p) in servers.items()}
        before = {name: _snapshot(profile) for name, profile in profiles.items()}
        started = {
            name: suites_run(folders[name], *HALVES[name], "-q", "--target", str(path))
            for name, (_, path) in servers.items()
        }
        reports = {name: passed(started[name], folders[name])[0] for name in HALVES}
        after = {name: _snapshot(profile) for name, profile in profiles.items()}
        yield WholeRun(reports, before, after)
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(timeout=10)


def test_the_halves_are_the_whole_suite() -> None:
    # Every folder of suites/ holding tests is in exactly one half: nothing is left out.
    folders = {
        f"suites/{p.parent.relative_to(PACKAGE / 'suites').parts[0]}"
        for p in (PACKAGE / "suites").rglob("test_*.py")
    }
    halves = [folder for paths in HALVES.values() for folder in paths]
    assert sorted(halves) == sorted(folders)


def test_suites_certify_the_reference_server_and_leave_nothing_behind(whole_run: WholeRun) -> None:
    for name, document in whole_run.reports.items():
        assert document["plan"]["name"] == "deep", name
        assert not document["cleanup_problems"], name
        # The ledger forgets what tests and cascades removed: cleanup sends no delete in vain.
        assert document["cleanup_deletes_already_gone"] == 0, name
        assert document["rate_units"]["unplanned_429"] == 0, name
        assert whole_run.after[name] == whole_run.before[name], name
    # The verdict one run of both halves would have written (the report's own rule).
    violations = [v for r in whole_run.reports.values() for v in r["global_check_violations"]]
    judged = certification(whole_run.tests(), spec.rules(), violations)
    assert judged["verdict"] == "conformant", judged["normative_summary"]


def test_every_documented_operation_is_exercised(whole_run: WholeRun) -> None:
    calls: dict[str, int] = {}
    for document in whole_run.reports.values():
        for op, count in document["coverage"].items():
            calls[op] = calls.get(op, 0) + count
    unexercised = [op for op, n in calls.items() if not n and not spec.operation(op).assumed]
    assert not unexercised
    assert set(calls) == {op.operation_id for op in spec.operations()}


def test_cost_table_is_current(whole_run: WholeRun) -> None:
    """The committed cost table describes the suites as they are: refresh it with
    ``amws-conformance costs`` when this fails."""
    assert not stale(CostTable.load(), whole_run.tests())
