"""The product end to end, once: the whole suite (deep) against served reference servers.

The suite runs in two halves at once, each serially against a server of its own, as a user
runs it against a shared target: together they must certify the reference server as
conformant (the verdict one run would write, recomputed from both halves' tests), exercise
every documented operation, match the committed cost table, and leave each server holding
exactly the records it held before. Parallel workers are shown on a targeted run (two modules,
two workers, one report), and every fault of the catalogue must be killed (the self-check).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

import spec
from harness._plan import CostTable, stale
from harness._verdicts import certification

ROOT = Path(__file__).resolve().parent.parent
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


class Served:
    """A reference server started as a user starts one (``amws-reference serve``)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "p.yaml"
        command = [
            sys.executable,
            "-m",
            "reference_server.cli",
            "serve",
            "--port",
            "0",
            "--db",
            str(folder / "amws.sqlite"),
            "--profile-out",
            str(self.path),
        ]
        with open(folder / "server.log", "wb") as log:
            self.process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not self.path.exists():
            assert self.process.poll() is None and time.monotonic() < deadline, "no server"
            time.sleep(0.05)
        self.profile: dict[str, Any] = yaml.safe_load(self.path.read_text())

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


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


def _suites(tmp_path: Path, *options: str) -> subprocess.Popen[bytes]:
    """``pytest`` on the suites with ``options``, started; its output and report go under
    tmp_path (a file, not a pipe: two runs at once never wait on a full pipe)."""
    report = ["-p", "no:cacheprovider", "--conformance-report", str(tmp_path / "report")]
    with open(tmp_path / "output.txt", "wb") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "pytest", *options, *report],
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
        )


def _passed(process: subprocess.Popen[bytes], tmp_path: Path) -> tuple[dict[str, Any], str]:
    """The report and output of a suites run that must have passed."""
    process.wait(timeout=900)
    output = (tmp_path / "output.txt").read_text(errors="replace")
    assert process.returncode == 0, output[-5000:]
    return json.loads((tmp_path / "report" / "report.json").read_text()), output


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
    servers = {name: Served(folder) for name, folder in folders.items()}
    try:
        before = {name: _snapshot(server.profile) for name, server in servers.items()}
        started = {
            name: _suites(folders[name], *HALVES[name], "-q", "--target", str(servers[name].path))
            for name in HALVES
        }
        reports = {name: _passed(started[name], folders[name])[0] for name in HALVES}
        after = {name: _snapshot(server.profile) for name, server in servers.items()}
        yield WholeRun(reports, before, after)
    finally:
        for server in servers.values():
            server.stop()


def test_the_halves_are_the_whole_suite() -> None:
    # Every folder of suites/ holding tests is in exactly one half: nothing is left out.
    folders = {
        f"suites/{p.parent.relative_to(ROOT / 'suites').parts[0]}"
        for p in (ROOT / "suites").rglob("test_*.py")
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


def test_workers_report_to_one_report(tmp_path: Path) -> None:
    """Two workers, each with an embedded server, one test module each: the controller's
    report holds what both saw (coverage, units, tests), not only their outcomes."""
    files = ("suites/rules/test_reference_data.py", "suites/rules/test_persons.py")
    started = _suites(tmp_path, *files, "-n", "2", "--dist", "loadfile", "-v")
    document, output = _passed(started, tmp_path)
    # Each worker ran one module (xdist's loadfile gives the two modules to two workers).
    ran = {
        line.split()[0]: line.split()[-1].split("::")[0]
        for line in output.splitlines()
        if line.startswith("[gw") and " PASSED " in line
    }
    assert sorted(ran.values()) == sorted(files) and len(ran) == 2, output[-3000:]
    assert not document["cleanup_problems"]
    assert {n.split("::")[0] for n in document["tests"]} == set(files)
    assert document["coverage"]["listDepartments"] and document["coverage"]["createPerson"]
    spent = [
        sum(t["units"].get("full", 0) for n, t in document["tests"].items() if n.startswith(f))
        for f in files
    ]
    assert all(spent) and document["rate_units"]["keys"]["full"] >= sum(spent), spent


def test_every_fault_of_the_catalogue_is_killed(tmp_path: Path) -> None:
    matrix = tmp_path / "kill-matrix.json"
    # The suites just passed on the correct server (above), so the baseline is not repeated.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "selfcheck",
            "--skip-baseline",
            "--output",
            str(matrix),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    document = json.loads(matrix.read_text())
    survived = [f["name"] for f in document["faults"] if not f["killed"]]
    assert not survived, result.stdout[-3000:]
    assert document["proven_rules"] > 0
