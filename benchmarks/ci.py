"""Benchmark (ci): what CI measures, on a clean clone of the checkout's HEAD.

CI runs ``.ci/run`` on a fresh clone: the README's set-up command for the project's tests, a
virtual environment and an editable install, then the test command. This benchmark does the
same in a temporary folder and times the two parts apart: the install (which depends on the
package registry and pip's cache, not on the project) and the tests, both as wall time and as
the time pytest itself reports. The commands are read from the README, so the benchmark times
exactly what the README promises.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.suite import parse_summary

ROOT = Path(__file__).resolve().parent.parent
_SECONDS = re.compile(r"\bin ([\d.]+)s\b")


def readme_commands(readme: Path = ROOT / "README.md") -> tuple[str, str]:
    """The install part and the test part of the README's set-up command for ``tests``."""
    for line in readme.read_text(encoding="utf-8").splitlines():
        parts = [p.strip() for p in line.split("&&")]
        if (
            len(parts) == 3
            and parts[2].startswith(".venv/bin/pytest")
            and parts[2].endswith(" tests")
        ):
            return f"{parts[0]} && {parts[1]}", parts[2]
    raise ValueError(f"{readme}: no set-up command ending in '.venv/bin/pytest ... tests'")


def _timed(
    command: str, folder: Path, timeout: float
) -> tuple[float, subprocess.CompletedProcess[str]]:
    began = time.perf_counter()
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return round(time.perf_counter() - began, 1), done


def run_ci(timeout: float = 1800.0) -> dict[str, Any]:
    """Clone HEAD, install as the README says, run its test command; time each part."""
    install, tests = readme_commands()
    with tempfile.TemporaryDirectory(prefix="amws-bench-ci-") as temporary:
        clone = Path(temporary) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=clone,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        install_seconds, installed = _timed(install, clone, timeout)
        if installed.returncode != 0:
            return {
                "commit": commit,
                "install": install,
                "install_seconds": install_seconds,
                "exit_status": installed.returncode,
                "error": installed.stderr[-2000:],
            }
        test_seconds, ran = _timed(tests, clone, timeout)
    reported = _SECONDS.findall(ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else "")
    return {
        "commit": commit,
        "install": install,
        "install_seconds": install_seconds,
        "tests": tests,
        "test_wall_seconds": test_seconds,
        "pytest_seconds": float(reported[-1]) if reported else None,
        "exit_status": ran.returncode,
        "counts": parse_summary(ran.stdout),
        # pytest's short summary (-ra in the project's settings): which tests failed, if any.
        "failed_tests": [
            line for line in ran.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))
        ],
    }
