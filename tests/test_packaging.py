"""The wheel holds what a vendor runs without a checkout: the suites, the contract, the run
plans and cost table, the profile schema and the example profiles.

The wheel is built with this environment's own build backend (``pip wheel --no-deps
--no-build-isolation --no-index``: no package registry, a few seconds) from a copy of the
sources, so the checkout gets no ``build/`` folder. Installing it in a fresh environment needs
the registry and minutes; that check is done by hand (README, "Running the suite").
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOP = "amws_conformance"  # the one package the wheel puts in site-packages
DATA = [
    f"{TOP}/spec/openapi.yaml",
    f"{TOP}/spec/rules.yaml",
    f"{TOP}/harness/plans.yaml",
    f"{TOP}/harness/costs.json",
    f"{TOP}/harness/profile.schema.json",
    f"{TOP}/pytest.ini",
    f"{TOP}/fixtures/profiles/sample-staging.yaml",
    f"{TOP}/fixtures/profiles/embedded.yaml",
]


def _packaged_folders() -> list[str]:
    """The top-level folders pyproject.toml's package finder takes."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["packages"]["find"]["include"]
    return sorted({pattern.split(".")[0].rstrip("*") for pattern in patterns})


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for folder in _packaged_folders():
        shutil.copytree(
            ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    out = tmp_path_factory.mktemp("wheels")
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
    result = subprocess.run(
        [*pip, "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (built,) = out.glob("amws_conformance-*.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_holds_every_suite_module(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    modules = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / TOP / "suites").rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert modules and modules <= names, sorted(modules - names)


def test_the_wheel_holds_the_contract_plans_costs_and_profile_schema(
    wheel: zipfile.ZipFile,
) -> None:
    names = set(wheel.namelist())
    assert not [name for name in DATA if name not in names]
    for name in DATA:
        assert wheel.read(name) == (ROOT / name).read_bytes(), name


def test_the_wheel_holds_no_project_tests_and_names_its_commands(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/"))]
    (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    text = wheel.read(entry_points).decode()
    assert "amws-conformance = amws_conformance.harness.cli:main" in text
    plugin = "amws_conformance.harness.plugin = amws_conformance.harness.plugin"
    assert "[pytest11]" in text and plugin in text


def test_the_wheel_puts_one_package_in_site_packages(wheel: zipfile.ZipFile) -> None:
    """No spec, harness, fixtures or suites of ours beside other distributions' packages:
    everything but the wheel's own metadata sits under amws_conformance/."""
    top = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in top if not t.endswith(".dist-info")} == {TOP}
    (metadata,) = [n for n in wheel.namelist() if n.endswith(".dist-info/top_level.txt")] or [""]
    if metadata:
        assert wheel.read(metadata).decode().split() == [TOP]
