"""A reference server served as users start it: ``amws-reference serve`` in a process of its own."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def serve(
    folder: Path, db: str = ":memory:", faults: Sequence[str] = ()
) -> tuple[subprocess.Popen[bytes], Path]:
    """Start a server on a port the system picks; return it and the profile it wrote once it
    answers (``db``: ``:memory:`` or a file the test may read; ``faults``: deviations of the
    catalogue to switch on)."""
    profile = folder / "served.yaml"
    command = [sys.executable, "-m", "reference_server.cli", "serve", "--port", "0"]
    command += ["--db", db, "--profile-out", str(profile)]
    command += [arg for name in faults for arg in ("--fault", name)]
    server = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while not profile.exists():
        assert server.poll() is None and time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    return server, profile
