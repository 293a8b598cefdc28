"""A reference server served as users start it: ``amws-reference serve`` in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The installed package's folder in this checkout: run there, pytest takes it as its root
# directory (its pytest.ini), so the suites' ids read suites/rules/... as in a report.
PACKAGE = Path(__file__).resolve().parents[1] / "amws_conformance"


def serve(
    folder: Path, db: str = ":memory:", faults: Sequence[str] = (), options: Sequence[str] = ()
) -> tuple[subprocess.Popen[bytes], Path]:
    """Start a server on a port the system picks; return it and the profile it wrote once it
    answers (``db``: ``:memory:`` or a file the test may read; ``faults``: deviations of the
    catalogue to switch on; ``options``: further ``serve`` options, as typed)."""
    profile = folder / "served.yaml"
    command = [
        sys.executable,
        "-m",
        "amws_conformance.reference_server.cli",
        "serve",
        "--port",
        "0",
    ]
    command += ["--db", db, "--profile-out", str(profile)]
    command += [arg for name in faults for arg in ("--fault", name)]
    command += options
    server = subprocess.Popen(
        command, cwd=PACKAGE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while not profile.exists():
        if server.poll() is not None or time.monotonic() > deadline:
            # Reaped before failing: the test never gets the process to stop.
            server.kill()
            server.wait(timeout=10)
            raise AssertionError(f"server did not start (exit {server.returncode})")
        time.sleep(0.05)
    return server, profile


def ordinary_env() -> dict[str, str]:
    """This process's environment without pytest's own variables: a run started from a test
    is an ordinary run, whatever this session is (the harness reads pytest-xdist's worker
    count to share a target's buckets, and PYTEST_ADDOPTS would change its options)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}


def suites_run(tmp_path: Path, *options: str) -> subprocess.Popen[bytes]:
    """``pytest`` on the suites with ``options``, started; its output and report go under
    tmp_path (a file, not a pipe: two runs at once never wait on a full pipe)."""
    report = ["-p", "no:cacheprovider", "--conformance-report", str(tmp_path / "report")]
    with open(tmp_path / "output.txt", "wb") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "pytest", *options, *report],
            cwd=PACKAGE,
            env=ordinary_env(),
            stdout=output,
            stderr=subprocess.STDOUT,
        )


def passed(process: subprocess.Popen[bytes], tmp_path: Path) -> tuple[dict[str, Any], str]:
    """The report and output of a suites run (:func:`suites_run`) that must have passed."""
    process.wait(timeout=900)
    output = (tmp_path / "output.txt").read_text(errors="replace")
    assert process.returncode == 0, output[-5000:]
    return json.loads((tmp_path / "report" / "report.json").read_text()), output
