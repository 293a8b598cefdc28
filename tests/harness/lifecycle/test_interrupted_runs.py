"""A run stopped from outside leaves nothing on the target: SIGTERM and a double SIGINT get the
run's own cleanup; after a SIGKILL, ``amws-conformance sweep`` removes what the run made (from
its ledger file, or by its name tag when the file is gone). Records the run did not make are
never touched, and no credential of the run stays on the simulated door controllers.

Each case runs the rules suites as a user would, in a process of its own, against a served
reference server (``amws-reference serve`` with a file database, so the test can read what is
stored), and signals it once its ledger file shows records being made, credentials among them.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests._served import PACKAGE, serve

BIN = Path(sys.executable).parent
API = "/api/ws/v1"
# What the server itself writes beside the API's records (its logs, the controllers' state, the
# visitor behind an invitation): no API call removes them, and no run is asked to.
SERVER_SIDE = {"audit", "relay_event", "watchlist_hardware_log", "controller", "visitor"}
# A delete the API makes soft (doc2: a credential's delete; doc1: an invitation's cancel).
ENDED = {"credential": "DELETED", "invite": "VISIT_CANCELLED"}
MADE_BEFORE_SIGNAL = 40


class Served:
    """A served reference server, what it stores, and the records a test set aside."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.db = folder / "store.sqlite"
        self.state = folder / "state"
        self.process, self.profile_path = serve(folder, str(self.db))
        self.profile = yaml.safe_load(self.profile_path.read_text(encoding="utf-8"))
        self.api = httpx.Client(
            base_url=self.profile["base_url"],
            headers={"Authorization": self.profile["keys"]["full"]},
            timeout=30,
        )

    def stop(self) -> None:
        self.api.close()
        self.process.terminate()
        self.process.wait(timeout=30)

    def stored(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """Every record the store holds now: uuid -> (kind, data)."""
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT uuid, kind, data FROM records").fetchall()
        return {uuid: (kind, json.loads(data)) for uuid, kind, data in rows}

    def left_since(self, before: dict[str, tuple[str, dict[str, Any]]]) -> list[str]:
        """Records made since ``before`` that the API could still remove."""
        return [
            f"{kind} {uuid} {data.get('name') or data.get('lastName') or ''}"
            for uuid, (kind, data) in self.stored().items()
            if uuid not in before
            and kind not in SERVER_SIDE
            and data.get("status") != ENDED.get(kind)
        ]

    def on_controllers(self) -> Any:
        """The credentials and phonebooks the simulated door controllers hold now."""
        control = self.profile["control"]
        response = httpx.get(
            f"{control['url']}/hardware/credentials",
            headers={"Authorization": f"Bearer {control['token']}"},
        )
        response.raise_for_status()
        return response.json()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = Served(tmp_path_factory.mktemp("interrupted"))
    yield server
    server.stop()


def _start_run(served: Served, run_id: str) -> tuple[subprocess.Popen[bytes], Path]:
    """The rules suites against ``served``, in a session of their own (a signal to the test's
    process group does not reach it), returned once records are being made."""
    ledger = served.state / f"{run_id}.ledger.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "suites/rules",
            "--target",
            str(served.profile_path),
            "--run-id",
            run_id,
            "--state-dir",
            str(served.state),
            "--plan",
            "deep",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=PACKAGE,
        # As a user starts it: not as a worker of the xdist session running this test.
        env={k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "AMWS_"))},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while True:
        text = ledger.read_text(encoding="utf-8") if ledger.exists() else ""
        if text.count('"made"') >= MADE_BEFORE_SIGNAL and "createCredential" in text:
            return process, ledger
        if process.poll() is not None:
            out = process.communicate()[0].decode(errors="replace")
            raise AssertionError(f"the run ended before it was signalled: {out[-3000:]}")
        assert time.monotonic() < deadline, "the run made no records within 120 s"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def canaries(served: Served) -> list[tuple[str, dict[str, Any]]]:
    """Records no run may touch: a person of someone else, and a department named like a
    record of another run."""
    person = {"firstName": "Canary", "lastName": "Keep Me", "personType": "CONTRACTOR"}
    made = []
    for path, body in (
        (f"{API}/persons", person),
        (f"{API}/departments", {"name": f"amws-other{os.getpid()}-dept-1"}),
    ):
        response = served.api.post(path, json=body)
        assert response.status_code == 201, response.text
        made.append(
            (
                f"{path}/{response.json()['uuid']}",
                served.api.get(f"{path}/{response.json()['uuid']}").json(),
            )
        )
    return made


def _sweep(served: Served, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "amws-conformance"), "sweep", "--target", str(served.profile_path), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize(
    ("signals", "after"),
    [
        pytest.param(["SIGTERM"], None, id="sigterm"),
        pytest.param(["SIGINT", "SIGINT"], None, id="sigint-twice"),
        pytest.param(["SIGKILL"], "ledger", id="sigkill-then-sweep"),
        pytest.param(["SIGKILL"], "tag", id="sigkill-then-sweep-without-ledger-file"),
    ],
)
def test_a_stopped_run_leaves_nothing_of_its_own(
    served: Served,
    canaries: list[tuple[str, dict[str, Any]]],
    signals: list[str],
    after: str | None,
) -> None:
    run_id = f"int{len(signals)}{signals[0][3:].lower()}{after or ''}"[:12]
    before, hardware = served.stored(), served.on_controllers()
    process, ledger = _start_run(served, run_id)
    for name in signals:
        os.kill(process.pid, getattr(signal, name))
        time.sleep(0.2)  # the second lands while the run stops: its cleanup must go on
    output = process.communicate(timeout=300)[0].decode(errors="replace")
    if after is None:
        assert process.returncode == pytest.ExitCode.INTERRUPTED, output[-2000:]
        assert not ledger.exists(), "a run that cleaned up keeps no ledger file"
        # The verdict says so: a run cut short is never read as a finished one.
        assert f"— interrupted ({signals[0]} received)" in output, output[-2000:]
    else:
        assert process.returncode == -signal.SIGKILL
        assert served.left_since(before), "the killed run left records for the sweep"
        if after == "tag":
            ledger.unlink()
        swept = _sweep(served, "--run-id", run_id, "--state-dir", str(served.state))
        assert swept.returncode == 0, swept.stdout + swept.stderr
        assert not ledger.exists(), "a sweep that removed everything drops the ledger file"
    assert served.left_since(before) == [], output[-2000:]
    assert served.on_controllers() == hardware, "the run's credentials stay on the doors"
    for path, record in canaries:
        assert served.api.get(path).json() == record, f"{path} was touched"
