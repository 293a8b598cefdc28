"""``amws-conformance run``: pytest on the suites beside the harness, from any working folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness import _launch
from tests._served import ordinary_env

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_arguments_name_the_suites_their_configuration_and_their_root() -> None:
    arguments = _launch.pytest_arguments(
        "p.yaml", "certify", "report", ["-x"], cwd=Path("/somewhere")
    )
    folder = _launch.suites_folder()
    assert folder == ROOT / "suites"
    assert arguments[0] == str(folder)
    pairs = dict(zip(arguments[1::2], arguments[2::2], strict=False))
    assert pairs["-c"] == str(_launch.CONFIG)
    # Test ids as in a checkout (suites/...): what the cost table and the plans are keyed by.
    assert pairs["--rootdir"] == str(folder.parent)
    assert pairs["--confcutdir"] == str(folder)
    assert pairs["-o"] == "cache_dir=/somewhere/.pytest_cache"
    assert arguments[-7:] == [
        "--target",
        "p.yaml",
        "--plan",
        "certify",
        "--conformance-report",
        "report",
        "-x",
    ]
    assert _launch.command(arguments)[:4] == [sys.executable, "-P", "-m", "pytest"]


def test_without_the_cache_plugin_no_cache_folder_is_set() -> None:
    """pytest would warn of an unknown option: cache_dir belongs to the plugin."""
    arguments = _launch.pytest_arguments(None, None, None, ["-p", "no:cacheprovider"])
    assert "-o" not in arguments
    assert arguments[-2:] == ["-p", "no:cacheprovider"]


def test_run_reads_nothing_of_the_working_folder(tmp_path: Path) -> None:
    """From a folder whose pytest configuration, conftest.py and a package named like ours
    would each break the run if read, ``run`` still collects the gate plan's tests."""
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --no-such-option\n")
    (tmp_path / "conftest.py").write_text("raise RuntimeError('the working folder was read')\n")
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "__init__.py").write_text("raise RuntimeError('a decoy spec')\n")
    result = subprocess.run(
        [sys.executable, "-P", "-m", "harness.cli", "run", "--plan", "gate", "--", "--co", "-q"],
        cwd=tmp_path,
        # As a user starts it: not as a worker of the xdist session running this test.
        env=ordinary_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    ids = [line for line in result.stdout.splitlines() if "::" in line]
    assert ids and all(line.startswith("suites/") for line in ids), ids[:5]
