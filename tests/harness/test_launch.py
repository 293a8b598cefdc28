"""``amws-conformance run``: pytest on the suites beside the harness, from any working folder."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from amws_conformance.harness import _launch, plugin
from amws_conformance.harness.cli import main
from tests._served import ordinary_env

PACKAGE = Path(__file__).resolve().parents[2] / "amws_conformance"


def test_the_arguments_name_the_suites_their_configuration_and_their_root() -> None:
    arguments = _launch.pytest_arguments(
        "p.yaml", "certify", "report", ["-x"], cwd=Path("/somewhere")
    )
    folder = _launch.suites_folder()
    assert folder == PACKAGE / "suites"
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
        [
            sys.executable,
            "-P",
            "-m",
            "amws_conformance.harness.cli",
            "run",
            "--plan",
            "gate",
            "--",
            "--co",
            "-q",
        ],
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


ONE = "suites/rules/test_roles.py::test_name_is_required"


def test_a_test_id_in_any_form_runs_exactly_that_test(tmp_path: Path) -> None:
    """An id as a report or a FAILED line writes it, the same under an installation's
    site-packages, or relative to the suites folder, is the whole selection."""
    forms = [ONE, f"../venv/lib/python3.11/site-packages/{ONE}", ONE.removeprefix("suites/")]
    chosen = [_launch.test_selection(form, _launch.suites_folder()) for form in forms]
    assert set(chosen) == {str(PACKAGE / ONE.split("::")[0]) + "::test_name_is_required"}
    arguments = _launch.pytest_arguments(None, None, None, [forms[1], "-q"])
    # The test alone is the selection: the suites folder beside it would widen the run.
    assert arguments[0] == chosen[0] and arguments[1] == "-c"
    result = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "amws_conformance.harness.cli",
            "run",
            "--",
            forms[1],
            "-rA",
            "-p",
            "no:xdist",
        ],
        cwd=tmp_path,
        env=ordinary_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "1 passed" in result.stdout and "deselected" not in result.stdout
    # Printed as the report writes it, whatever the working folder.
    assert f"PASSED {ONE}" in result.stdout


def test_an_id_naming_no_test_stops_the_run_naming_it(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-P",
            "-m",
            "amws_conformance.harness.cli",
            "run",
            "--",
            "suites/rules/test_no.py::t",
        ],
        cwd=tmp_path,
        env=ordinary_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 4
    assert "suites/rules/test_no.py::t names no test of the installed suites" in result.stderr
    assert "passed" not in result.stdout


def test_version_names_the_installed_distribution(capsys: Any) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert (
        capsys.readouterr().out.strip()
        == f"amws-conformance {metadata.version('amws-conformance')}"
    )


def test_plan_with_a_target_forecasts_minutes_on_its_buckets(tmp_path: Path, capsys: Any) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "name: t\nbase_url: https://example.test\nkeys: {full: " + "k" * 64 + "}\n"
        "rate_limits: {default: {capacity: 2000, refill_per_minute: 800}}\n",
        encoding="utf-8",
    )
    assert main(["plan", "gate", "--target", str(profile)]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("amws plan gate: ") and " min on this profile's buckets" in line
    # A raised bucket forecasts less time for the same plan.
    raised = tmp_path / "raised.yaml"
    raised.write_text(
        profile.read_text("utf-8").replace(
            "capacity: 2000, refill_per_minute: 800",
            "capacity: 10000000, refill_per_minute: 10000000",
        ),
        encoding="utf-8",
    )
    assert main(["plan", "gate", "--target", str(raised)]) == 0
    faster = capsys.readouterr().out.splitlines()[-1]

    def minutes(text: str) -> float:
        return float(text.split("forecast ")[1].split(" min")[0])

    assert minutes(faster) < minutes(line)


@pytest.mark.parametrize("command", ["run", "diff", "bundle", "plan", "sweep", None])
def test_help_lists_every_plugin_option_in_plain_text(command: str | None, capsys: Any) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"] if command else ["--help"])
    said = capsys.readouterr().out
    assert "``" not in said and ":func:" not in said  # no reStructuredText markup
    if command == "run":
        parser = pytest.Parser(_ispytest=True)
        plugin.pytest_addoption(parser)
        for option in parser.getgroup("amws").options:
            for name in option.names():
                assert f"  {name}" in said, name
