"""``amws-conformance run``: pytest over the suites shipped beside the harness, from any folder.

The suites are a package of the same distribution as the harness (``suites``, a sibling of
``harness`` in site-packages, or in a checkout). The command becomes pytest on that folder with
the harness's own configuration file (``suites.ini``) and the folder's parent as root directory:

- a test's id is the same as in a checkout (``suites/rules/test_roles.py::...``), so the shipped
  cost table and plans find their tests and two reports compare test by test;
- no ``pytest.ini``, ``pyproject.toml`` or ``conftest.py`` of the working directory or above the
  installed package is read, and Python is started with ``-P``, so a folder of the working
  directory named like one of ours (``spec``, ``fixtures``) is never imported in its place.

The harness plugin comes in through the package's ``pytest11`` entry point, as for ``pytest
suites``. The harness only locates the suites' folder: it never imports them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parent / "pytest.ini"


class SuitesMissing(Exception):
    """The suites are not installed beside the harness; ``str(error)`` says where they were
    looked for."""


class UnknownTest(Exception):
    """A test id or path given to the run names nothing among the installed suites."""


def suites_folder() -> Path:
    """The ``suites`` package folder of this installation."""
    folder = HERE.parent / "suites"
    if not (folder / "__init__.py").is_file():
        raise SuitesMissing(f"the suites are not installed beside the harness (no {folder})")
    return folder


def _looks_like_a_test(argument: str) -> bool:
    """A positional argument naming a test, a test file or a suites folder (an option's value,
    such as ``-k``'s expression, never does)."""
    if argument.startswith("-"):
        return False
    path = argument.partition("::")[0].replace("\\", "/")
    return "::" in argument or path.endswith(".py") or path == "suites" or "suites/" in path


def test_selection(argument: str, folder: Path) -> str:
    """A test id in any form a person copies one (``suites/rules/test_x.py::test_y`` as the
    report writes it, the same under an installation's site-packages, or relative to the
    suites folder) as the path of that test in this installation's suites."""
    path, separator, rest = argument.partition("::")
    path = path.replace("\\", "/").rstrip("/")
    if path == "suites":
        relative = ""
    elif path.startswith("suites/"):
        relative = path.removeprefix("suites/")
    elif "/suites/" in path:
        relative = path.rsplit("/suites/", 1)[1]
    else:
        relative = path
    found = folder / relative
    if not found.exists():
        raise UnknownTest(
            f"{argument} names no test of the installed suites ({folder}); give an id as a "
            "report or a FAILED line writes it, e.g. suites/rules/test_roles.py::test_name"
        )
    return str(found) + separator + rest


def pytest_arguments(
    target: str | None,
    plan: str | None,
    report: str | None,
    extra: Sequence[str] = (),
    cwd: Path | None = None,
) -> list[str]:
    """pytest's command-line arguments for one run of the installed suites."""
    folder = suites_folder()
    cache = (cwd or Path.cwd()) / ".pytest_cache"
    # Tests named after "--" are the whole selection: the suites folder is added only when
    # none is named, so a copied test id never widens silently into the whole plan.
    chosen = [test_selection(a, folder) for a in extra if _looks_like_a_test(a)]
    extra = [a for a in extra if not _looks_like_a_test(a)]
    arguments = [
        *(chosen or [str(folder)]),
        "-c",
        str(CONFIG),
        "--rootdir",
        str(folder.parent),
        # pytest reads conftest.py files only at or below this folder (by default it would
        # take the configuration file's folder, the harness's, and miss the suites' own).
        "--confcutdir",
        str(folder),
    ]
    # Without the cache plugin (-p no:cacheprovider), pytest knows no cache_dir option.
    if not any(argument.endswith("no:cacheprovider") for argument in extra):
        arguments += ["-o", f"cache_dir={cache}"]
    for option, value in (("--target", target), ("--plan", plan), ("--conformance-report", report)):
        if value is not None:
            arguments += [option, value]
    return [*arguments, *extra]


def command(arguments: Sequence[str]) -> list[str]:
    """The interpreter running pytest: this one, without the working directory on its path."""
    return [sys.executable, "-P", "-m", "pytest", *arguments]


def run(arguments: Sequence[str]) -> int:
    """Become pytest (POSIX): Ctrl-C and SIGTERM then reach the run and its cleanup directly,
    with no parent process between them and the signal. Elsewhere pytest runs as a child."""
    line = command(arguments)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execv(line[0], line)
    return subprocess.call(line)
