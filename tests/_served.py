"""A reference server served as users start it: ``amws-reference serve`` in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from amws_conformance.harness.target.embedded import serve_command, wait_for_profile

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
    options = [*(arg for name in faults for arg in ("--fault", name)), *options]
    server = subprocess.Popen(
        serve_command(profile, db=db, args=options),
        cwd=PACKAGE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for_profile(server, profile)  # reaps a server that will not start before raising
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
