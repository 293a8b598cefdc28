"""``serve --key-pool CLASS=N``: several keys of a class, alike but for their value, each on a
bucket of its own, listed in the profile as a pool."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from amws_conformance import spec
from tests.reference_server.conftest import LiveServer

DEPTS = "/api/ws/v1/departments"
LIMITS = spec.rate_limit()
READ_COST = spec.operation("listDepartments").rate_cost or 1


def _get(server: LiveServer, key: str) -> httpx.Response:
    return httpx.get(f"{server.base_url}{DEPTS}", headers={"Authorization": key}, timeout=10)


def test_the_profile_lists_each_pool_and_every_key_works_as_its_class() -> None:
    with LiveServer(pools={"full": 3, "readonly": 2, "other_system": 2}) as live:
        keys = live.profile["keys"]
        assert len(set(keys["full"])) == 3 and len(set(keys["readonly"])) == 2
        assert isinstance(keys["none"], str)  # a class without a pool stays one key
        for key in keys["full"]:
            made = httpx.post(
                f"{live.base_url}{DEPTS}", headers={"Authorization": key}, json={"name": key[:8]}
            )
            assert made.status_code == 201, made.text
        for key in keys["readonly"]:
            assert _get(live, key).status_code == 200
            refused = httpx.post(
                f"{live.base_url}{DEPTS}", headers={"Authorization": key}, json={"name": "x"}
            )
            assert refused.status_code == 403
        mine = _get(live, keys["full"][0]).json()
        theirs = [_get(live, key).json() for key in keys["other_system"]]
        assert theirs[0] == theirs[1] and theirs[0] != mine


def test_each_key_of_a_pool_has_its_own_documented_bucket() -> None:
    with LiveServer(documented_buckets=True, pools={"full": 2}) as live:
        first, second = live.profile["keys"]["full"]
        sent, began = 0, time.monotonic()
        while _get(live, first).status_code != 429:
            sent += 1
            # The bucket refills while the reads go out (800 units a minute): the bound
            # grows with the time they took, so a slow machine never fails the test.
            refilled = (time.monotonic() - began + 1) * LIMITS.refill_per_minute / 60
            assert sent < (LIMITS.capacity + refilled) // READ_COST + 2, "never refused"
        assert sent >= LIMITS.capacity // READ_COST
        # Served at once after the first key's refusal. (No read of the first key again: at
        # its 429 its bucket may hold just under a read's cost and refill one within ms.)
        assert _get(live, second).status_code == 200  # its bucket is still full


def test_a_database_keeps_its_pool_and_grows_it(tmp_path: Path) -> None:
    db = str(tmp_path / "ref.db")
    with LiveServer(db=db, pools={"full": 2}) as live:
        before = live.profile["keys"]["full"]
    with LiveServer(db=db, pools={"full": 3}) as live:
        after = live.profile["keys"]["full"]
    assert after[:2] == before and len(set(after)) == 3


@pytest.mark.parametrize("setting", ["encrypted=2", "full=0", "full=x", "nobody=2"])
def test_a_pool_the_server_cannot_serve_is_refused_naming_it(setting: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "amws_conformance.reference_server.cli",
            "serve",
            "--key-pool",
            setting,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--key-pool" in done.stderr and setting.split("=")[0] in done.stderr
