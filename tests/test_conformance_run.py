"""The product end to end.

Against a separately started reference server the suites must pass (deep), certify it as
conformant and leave it holding exactly the records it held before; the certify plan must pass
in parallel too (each worker with its own embedded server); and every fault of the catalogue
must be killed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

import spec
from harness._plan import CostTable, stale

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


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("served")
    profile = folder / "p.yaml"
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
        str(profile),
    ]
    with open(folder / "server.log", "wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while not profile.exists():
        assert process.poll() is None and time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    yield profile, yaml.safe_load(profile.read_text())
    process.terminate()
    process.wait(timeout=10)


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


def _certify(tmp_path: Path, *options: str) -> dict[str, Any]:
    """Run the suites with ``options``; they must pass. The report they wrote."""
    report = tmp_path / "report"
    command = ["suites", "-q", "-p", "no:cacheprovider", "--conformance-report", str(report)]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *command, *options],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    return json.loads((report / "report.json").read_text())


@pytest.fixture(scope="module")
def served_run(
    served: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The suites against the served server (deep: its profile raises the quotas): the
    report, and what the server held before and after."""
    path, profile = served
    before = _snapshot(profile)
    document = _certify(tmp_path_factory.mktemp("served-run"), "--target", str(path))
    return document, before, _snapshot(profile)


def test_suites_pass_certify_and_leave_nothing_behind(
    served_run: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
) -> None:
    document, before, after = served_run
    assert document["verdict"] == "conformant", document["normative_summary"]
    assert document["plan"]["name"] == "deep"
    assert not document["cleanup_problems"]
    # The ledger forgets what tests and cascades removed: cleanup sends no delete in vain.
    assert document["cleanup_deletes_already_gone"] == 0
    assert document["rate_units"]["unplanned_429"] == 0
    assert after == before


def test_cost_table_is_current(
    served_run: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
) -> None:
    """The committed cost table describes the suites as they are: refresh it with
    ``amws-conformance costs`` when this fails."""
    document = served_run[0]
    assert not stale(CostTable.load(), document["tests"])


def test_suites_pass_in_parallel_on_embedded_servers(tmp_path: Path) -> None:
    # The certify plan on two workers (the deep plan runs whole, serially, above): the
    # controller's report holds what both workers saw, not only their test outcomes.
    document = _certify(tmp_path, "-n", "2", "--plan", "certify")
    assert document["verdict"] == "conformant", document["normative_summary"]
    assert not document["cleanup_problems"]
    unexercised = [
        op
        for op, calls in document["coverage"].items()
        if not calls and not spec.operation(op).assumed
    ]
    assert not unexercised
    assert document["rate_units"]["keys"].get("full", 0) > 0


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
