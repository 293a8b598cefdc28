"""Imports run one way (ARCHITECTURE.md): suites -> harness -> spec; reference_server -> spec;
the self-check -> both. The harness and the suites, which vendors run, never import the
reference server: a bug shared by the sender and the verifier would pass its own test.

The static check reads every module with :mod:`ast` (imports inside functions count too, and
nothing is executed); the two runtime checks import the harness and collect the suites in a
fresh interpreter and look at what was loaded.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOP = "amws_conformance"  # the one installed package; the parts below are its subpackages
PACKAGE = ROOT / TOP
PACKAGES = ("spec", "harness", "suites", "fixtures", "reference_server", "selfcheck")
# What each part of the project may import of the others (itself always).
ALLOWED = {
    "spec": set(),
    "fixtures": {"spec"},
    "harness": {"spec", "fixtures"},
    "suites": {"spec", "fixtures", "harness"},
    "reference_server": {"spec"},
    "selfcheck": {"spec", "fixtures", "harness", "reference_server"},
}
SERVER_SIDE = "reference_server"
USER_SIDE = {"harness", "suites", "fixtures"}


def _modules(package: str) -> list[Path]:
    return sorted((PACKAGE / package).rglob("*.py"))


def _imported(path: Path) -> set[str]:
    """Project parts (``amws_conformance``'s subpackages) a module names in an import (any depth
    of the tree), or in ``importlib.import_module("…")`` / ``__import__("…")`` with a literal
    name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            if node.module == TOP:  # from amws_conformance import spec
                names.update(f"{TOP}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if called in {"import_module", "__import__"} and isinstance(first, ast.Constant):
                names.add(str(first.value))
    parts = {name.split(".")[1] for name in names if name.startswith(TOP + ".")}
    return parts & set(PACKAGES)


def test_every_project_package_is_known() -> None:
    for package in PACKAGES:
        assert (PACKAGE / package / "__init__.py").is_file(), package


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_run_one_way(package: str) -> None:
    wrong = {
        str(path.relative_to(PACKAGE)): sorted(found - ALLOWED[package] - {package})
        for path in _modules(package)
        if (found := _imported(path)) - ALLOWED[package] - {package}
    }
    assert not wrong, f"{package} may import only {sorted(ALLOWED[package])}: {wrong}"


def test_only_the_self_check_imports_both_sides() -> None:
    both = set()
    for package in PACKAGES:
        found = set().union(*(_imported(path) for path in _modules(package)))
        if SERVER_SIDE in found | {package} and USER_SIDE & (found | {package}):
            both.add(package)
    assert both == {"selfcheck"}, both


def test_the_static_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import importlib\n"
        "def f():\n"
        "    from amws_conformance.reference_server.faults import CATALOGUE\n"
        "    importlib.import_module('amws_conformance.selfcheck.cli')\n",
        encoding="utf-8",
    )
    assert _imported(module) == {"reference_server", "selfcheck"}


def _loaded_after(code: str) -> list[str]:
    """The project's server-side modules loaded once ``code`` ran in a fresh interpreter."""
    probe = (
        f"{code}\nimport json, sys\n"
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[1:2] in (['reference_server'], ['selfcheck']))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_every_harness_suite_and_fixture_module_loads_no_server() -> None:
    modules = []
    for package in sorted(USER_SIDE):
        for path in _modules(package):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)  # amws_conformance.…
            modules.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    code = "import importlib\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    assert _loaded_after(code) == []


def test_collecting_the_suites_loads_no_server() -> None:
    # The plugin comes through the pytest11 entry point and the root conftest, as for users.
    options = "'--collect-only', '-q', '-p', 'no:cacheprovider'"
    code = (
        "import pytest\n"
        f"status = pytest.main([{options}, 'amws_conformance/suites'])\n"
        "assert status == 0, status\n"
    )
    assert _loaded_after(code) == []
