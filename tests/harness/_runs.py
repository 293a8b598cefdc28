"""Small runs of the rules suites against served reference servers, one clean and one with a
fault, as a user starts them: what the tests of ``diff``, ``bundle`` and ``verify`` compare."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests._served import PACKAGE, serve

BIN = Path(sys.executable).parent
# One fault, and a few tests: the fault's own, and three of other rules it leaves alone.
FAULT = "location-put-replaces"
FAULT_RULE = "LOC-UPDATE-PARTIAL"
TESTS = (
    "suites/rules/test_locations.py::test_put_changes_only_the_fields_it_is_given",
    "suites/rules/test_locations.py::test_read_lists_every_field_even_when_never_set",
    "suites/rules/test_roles.py::test_list_holds_the_system_roles",
    "suites/rules/test_errors.py::test_error_body_carries_code_and_reason",
)


@dataclass(frozen=True)
class Run:
    """A finished run: its report folder, the profile it ran with, its exit status and output."""

    report: Path
    profile: dict[str, object]
    status: int
    output: str


def run_against(folder: Path, faults: Sequence[str] = ()) -> Run:
    """Serve a reference server with ``faults``, run :data:`TESTS` against it with a report (and
    JUnit XML) in ``folder / "report"``, and stop the server."""
    server, profile = serve(folder, faults=faults)
    try:
        report = folder / "report"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                *TESTS,
                "--target",
                str(profile),
                "--plan",
                "deep",
                "--conformance-report",
                str(report),
                "--junitxml",
                str(report / "junit.xml"),
                "--state-dir",
                str(folder / "state"),
                "-q",
                "-p",
                "no:cacheprovider",
            ],
            cwd=PACKAGE,
            # As a user starts it: not as a worker of the xdist session running this test.
            env={k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "AMWS_"))},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        data = yaml.safe_load(profile.read_text(encoding="utf-8"))
    finally:
        server.terminate()
        server.wait(timeout=30)
    return Run(report, data, done.returncode, done.stdout + done.stderr)


def amws(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``amws-conformance`` with ``args``, as a user types it."""
    return subprocess.run(
        [str(BIN / "amws-conformance"), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
