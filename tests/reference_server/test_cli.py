"""``amws-reference``: the serve command as a real process, its profile, restarts, faults.

One server process (on a database file of its own) serves the whole module; the restart test
stops it and starts a new process over the same file.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import httpx
import pytest
import yaml

from amws_conformance import spec
from amws_conformance.harness.target.embedded import (
    ServerDidNotStart,
    serve_command,
    wait_for_profile,
)
from amws_conformance.reference_server._crypto import decrypt_text
from amws_conformance.reference_server.faults import CATALOGUE

REPO = Path(__file__).resolve().parents[2]
DEPTS = "/api/ws/v1/departments"
VEHICLES = "/api/ws/v1/vehicles"
STARTUP_LIMIT = 5.0


class Served:
    """One ``serve`` process over a database file, restartable on the same file."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.db = folder / "reference.sqlite"
        self.runs = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.profile: dict[str, Any] = {}
        self.startup_seconds = 0.0
        self._log: BinaryIO | None = None

    def start(self) -> None:
        self.runs += 1
        out = self.folder / f"run{self.runs}" / "p.yaml"
        out.parent.mkdir()
        self._log = log = (self.folder / f"run{self.runs}.log").open("wb")
        began = time.monotonic()
        self.process = subprocess.Popen(
            serve_command(out, db=str(self.db)), cwd=REPO, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            wait_for_profile(self.process, out)
        except ServerDidNotStart as error:
            pytest.fail(f"{error}:\n{self.log()}")
        self.startup_seconds = time.monotonic() - began
        self.profile = yaml.safe_load(out.read_text(encoding="utf-8"))

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def log(self) -> str:
        return (self.folder / f"run{self.runs}.log").read_text(errors="replace")

    def client(self, key: str | None) -> httpx.Client:
        headers = {}
        if key is not None:
            value = self.profile["keys"][key]
            headers["Authorization"] = value["key"] if isinstance(value, dict) else value
        return httpx.Client(base_url=self.profile["base_url"], headers=headers, timeout=10)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = Served(tmp_path_factory.mktemp("serve"))
    server.start()
    yield server
    server.stop()


def test_profile_appears_within_five_seconds_and_server_answers_at_once(served: Served) -> None:
    assert served.startup_seconds < STARTUP_LIMIT
    # No retry: the socket listens before the profile is written.
    with served.client("full") as full:
        assert full.get(DEPTS).status_code == 200


def test_answers_are_not_held_back_by_nagles_algorithm(served: Served) -> None:
    # With Nagle on, each answer waited ~40 ms for the client's delayed ACK.
    timings = []
    with served.client("full") as full:
        for _ in range(11):
            began = time.monotonic()
            assert full.get(DEPTS).status_code == 200
            timings.append(time.monotonic() - began)
    assert statistics.median(timings) < 0.03


def test_profile_has_the_architecture_sections(served: Served) -> None:
    profile = served.profile
    assert {"name", "base_url", "keys", "roles", "control", "allow", "rate_limits"} <= set(profile)
    assert profile["name"]
    assert profile["base_url"].startswith("http://127.0.0.1:")
    assert not profile["base_url"].endswith(":0")
    keys = profile["keys"]
    plain = ("full", "readonly", "none", "disabled", "other_system", "rate_limit")
    assert set(plain) | {"encrypted"} <= set(keys)
    assert all(isinstance(keys[name], str) and len(keys[name]) >= 64 for name in plain)
    assert len({keys[name] for name in plain} | {keys["encrypted"]["key"]}) == len(plain) + 1
    assert set(keys["encrypted"]) == {"key", "secret", "iv", "fields"}
    assert isinstance(keys["encrypted"]["fields"], list) and keys["encrypted"]["fields"]
    assert set(profile["roles"]) == {"administrator", "default", "ordinary"}
    assert len(set(profile["roles"].values())) == 3
    assert set(profile["control"]) == {"url", "token"}
    assert profile["control"]["url"] == f"{profile['base_url']}/_reference"
    assert isinstance(profile["allow"], dict)
    assert {"default", "per_key"} <= set(profile["rate_limits"])


def test_full_key_reads_and_writes(served: Served) -> None:
    with served.client("full") as full:
        created = full.post(DEPTS, json={"name": "Full key works"})
        assert created.status_code == 201
        uuid = created.json()["uuid"]
        assert full.get(f"{DEPTS}/{uuid}").json() == {"uuid": uuid, "name": "Full key works"}


def test_readonly_key_reads_but_cannot_write(served: Served) -> None:
    with served.client("readonly") as readonly, served.client("full") as full:
        assert readonly.get(DEPTS).status_code == 200
        assert readonly.get(VEHICLES).status_code == 200
        refused = readonly.post(DEPTS, json={"name": "Readonly wrote"})
        assert refused.status_code == 403
        assert "Readonly wrote" not in {d["name"] for d in full.get(DEPTS).json()}


def test_none_key_is_forbidden_everything(served: Served) -> None:
    with served.client("none") as none:
        assert none.get(DEPTS).status_code == 403
        assert none.post(DEPTS, json={"name": "None wrote"}).status_code == 403


def test_disabled_key_is_not_authenticated(served: Served) -> None:
    with served.client("disabled") as disabled:
        response = disabled.get(DEPTS)
        assert response.status_code == 401
        assert set(response.json()) == {"code", "reason"}


def test_other_system_key_sees_a_different_system(served: Served) -> None:
    with served.client("full") as full, served.client("other_system") as other:
        uuid = full.post(DEPTS, json={"name": "Only in the first system"}).json()["uuid"]
        assert other.get(f"{DEPTS}/{uuid}").status_code == 404
        assert uuid not in {d["uuid"] for d in other.get(DEPTS).json()}
        # The demo deployment gives the two systems registers of different sizes.
        mine = full.get(VEHICLES).json()["totalCount"]
        theirs = other.get(VEHICLES).json()["totalCount"]
        assert (mine, theirs) == (150, 3)


def test_encrypted_key_gets_listed_fields_encrypted(served: Served) -> None:
    settings = served.profile["keys"]["encrypted"]
    assert "name" in settings["fields"]
    with served.client("full") as full, served.client("encrypted") as encrypted:
        uuid = full.post(DEPTS, json={"name": "Sealed department"}).json()["uuid"]
        response = encrypted.get(f"{DEPTS}/{uuid}")
        assert response.status_code == 200
        sealed = response.json()["name"]
    assert sealed != "Sealed department"
    assert decrypt_text(sealed, settings["secret"], settings["iv"]) == "Sealed department"


def test_rate_limit_key_runs_out_after_its_documented_bucket(served: Served) -> None:
    bucket = served.profile["rate_limits"]["default"]
    assert "rate_limit" not in served.profile["rate_limits"]["per_key"]
    cost = spec.operation("listDepartments").rate_cost
    assert cost
    successes, began = 0, time.monotonic()
    with served.client("rate_limit") as limited:
        for _ in range(bucket["capacity"] // cost * 2):
            response = limited.get(DEPTS)
            if response.status_code == 429:
                break
            assert response.status_code == 200
            successes += 1
        else:
            pytest.fail("the rate_limit key was never limited")
    assert int(response.headers["Retry-After"]) >= 1
    refilled = bucket["refill_per_minute"] * (time.monotonic() - began) / 60
    assert bucket["capacity"] // cost <= successes <= (bucket["capacity"] + refilled) // cost + 1
    # Other keys have buckets of their own.
    with served.client("full") as full:
        assert full.get(DEPTS).status_code == 200


def test_control_plane_answers_the_token_and_refuses_api_keys(served: Served) -> None:
    control = served.profile["control"]
    full_key = served.profile["keys"]["full"]
    clock = f"{control['url']}/clock"
    answered = httpx.get(clock, headers={"Authorization": f"Bearer {control['token']}"})
    assert answered.status_code == 200
    assert "now" in answered.json()
    for header in ({"Authorization": full_key}, {"Authorization": f"Bearer {full_key}"}, {}):
        assert httpx.get(clock, headers=header).status_code == 401


def test_restart_on_the_same_database_keeps_records_and_keys(served: Served) -> None:
    with served.client("full") as full:
        uuid = full.post(DEPTS, json={"name": "Survives restarts"}).json()["uuid"]
    before = served.profile
    served.stop()
    served.start()
    after = served.profile
    assert after["keys"] == before["keys"]
    assert after["roles"] == before["roles"]
    assert after["control"]["token"] == before["control"]["token"]
    with served.client("full") as full:
        response = full.get(f"{DEPTS}/{uuid}")
        assert response.status_code == 200
        assert response.json() == {"uuid": uuid, "name": "Survives restarts"}
        # Provisioning ran once: the register was not seeded a second time.
        assert full.get(VEHICLES).json()["totalCount"] == 150


def test_faults_command_lists_the_catalogue() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "amws_conformance.reference_server.cli", "faults"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    *lines, summary = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == len(CATALOGUE)
    mutants = sum(bool(f.constraint) for f in CATALOGUE.values())
    assert f"{len(CATALOGUE) - mutants} hand-written faults, {mutants} spec-derived" in summary
    listed = {line.split()[0]: line for line in lines}
    assert set(listed) == set(CATALOGUE)
    for name, fault in CATALOGUE.items():
        assert fault.rule in listed[name]
        # Each line names where the fault plugs in, e.g. "policy: RolePolicy.deletable".
        assert fault.seam in listed[name] and fault.seam != "none", listed[name]
