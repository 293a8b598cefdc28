"""The code base stays ruff-clean and, in the packages [tool.mypy] names, mypy-clean (style and
types are checked with the tests, not beside them)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is part of the test extra; install the project with '.[test]'")
    result = subprocess.run([ruff, "check", str(ROOT)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout


def test_mypy_finds_nothing() -> None:
    """mypy, configured in pyproject.toml ([tool.mypy]: the packages it checks and how)."""
    mypy = shutil.which("mypy", path=str(Path(sys.executable).parent)) or shutil.which("mypy")
    if mypy is None:
        pytest.fail("mypy is part of the test extra; install the project with '.[test]'")
    result = subprocess.run(
        [mypy, "--config-file", str(ROOT / "pyproject.toml")],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_holds_the_harness_and_the_spec_to_strict() -> None:
    """The level is part of the contract (issue 13): strict on harness and spec, and no
    override loosens it for them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config.get("strict") is True
    assert {"amws_conformance.harness", "amws_conformance.spec"} <= set(config["packages"])
    for override in config.get("overrides", []):
        modules = override["module"]
        named = [modules] if isinstance(modules, str) else modules
        loosened = {m.split(".")[1] for m in named if "." in m} & {"harness", "spec"}
        assert not loosened, f"an override of {sorted(loosened)}: {override}"


def test_mypy_checks_the_reference_server_at_its_default_level_at_least() -> None:
    """reference_server is checked too (issue 13: default level, not strict): no override may
    skip it, silence its errors or stop mypy from following its imports."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert "amws_conformance.reference_server" in config["packages"]
    for override in config.get("overrides", []):
        modules = override["module"]
        named = [modules] if isinstance(modules, str) else modules
        if not any(m.split(".")[1:2] == ["reference_server"] for m in named):
            continue
        assert not override.get("ignore_errors"), override
        assert override.get("follow_imports", "normal") == "normal", override
        assert not override.get("disable_error_code"), override
