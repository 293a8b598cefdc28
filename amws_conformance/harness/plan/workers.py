"""How many pytest-xdist workers a run gets when the command does not say.

Against the embedded reference server each worker starts a server of its own, so the tests of
one worker never meet another's records or buckets: running them side by side changes no
outcome, and on idle cores the run ends sooner (the deep plan's tests are mostly CPU; on a
machine busy with other work the extra worker only adds its start-up). So a run of the
suites' folders with no ``--target`` gets one worker per CPU core (pytest-xdist's ``-n auto``)
handing out one test at a time (``--dist load --maxschedchunk 1``), the longest first
(:meth:`Schedule.longest_first`): the webhook deliveries' real-time retries, ten seconds
of one test, then overlap the other tests instead of ending the run alone.

The default stays out of the way of anything that asks otherwise, or where it would cost
time: the command sets ``-n``, ``--dist`` or ``--tx`` itself (``-n 0`` is serial), pytest-xdist
is not loaded (``-p no:xdist``), a ``--target`` (a shared target: its buckets pace one run),
one CPU core, ``--collect-only``, ``--pdb`` or ``--trace``; and a small selection: the command
names test files or test ids rather than folders, selects with ``-k``, ``--rules`` or
``--lf``, or asks for the gate plan (forty tests). Starting a worker and its server, and
collecting in each worker, costs seconds that a handful of tests never wins back; the project's
own tests run such selections by the hundred.
"""

from __future__ import annotations

import os
import shlex

import pytest

from amws_conformance.harness._launch import SuitesMissing, suites_folder

DIST = "load"
# What pytest-xdist's options are spelled as on a command line (a --dist of "no" is its
# default, so only the words tell it was asked for).
_XDIST_WORDS = ("-n", "--numprocesses", "--dist", "-d", "--tx", "--maxprocesses", "--maxschedchunk")


def _said(config: pytest.Config) -> bool:
    """Whether the command line or PYTEST_ADDOPTS names an option of pytest-xdist."""
    words = [*config.invocation_params.args, *shlex.split(os.environ.get("PYTEST_ADDOPTS", ""))]
    words += config.getini("addopts")
    return any(
        word == option or word.startswith(f"{option}=") or (option == "-n" and word[:2] == "-n")
        for word in words
        for option in _XDIST_WORDS
    )


def _whole_folders(config: pytest.Config) -> bool:
    """Whether every path the command names is a folder of the suites (or the suites)."""
    try:
        suites = suites_folder().resolve()
    except SuitesMissing:
        return False
    if not config.args:
        return False
    for argument in config.args:
        if "::" in argument:
            return False
        path = (config.invocation_params.dir / argument).resolve()
        if not path.is_dir() or not (path == suites or suites in path.parents):
            return False
    return True


def default_workers(config: pytest.Config) -> int | None:
    """The number of workers to start where the command did not say, or None: run serially."""
    option = config.option
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return None
    if getattr(option, "numprocesses", None) is not None or _said(config):
        return None
    if config.getoption("--target") or option.collectonly or option.usepdb or option.trace:
        return None
    if option.keyword or config.getoption("--rules") or getattr(option, "lf", False):
        return None
    if config.getoption("--plan") == "gate":
        return None
    if not _whole_folders(config):
        return None
    cores = config.hook.pytest_xdist_auto_num_workers(config=config)
    return int(cores) if cores and int(cores) > 1 else None


def apply_default(config: pytest.Config) -> int | None:
    """Set pytest-xdist's options to the default (before pytest-xdist reads them); the number
    of workers set, or None."""
    workers = default_workers(config)
    if workers is None:
        return None
    config.option.numprocesses = workers
    config.option.dist = DIST
    # One test at a time: pytest-xdist would otherwise hand a worker a quarter of its share at
    # once, the longest tests all in one worker's first chunk.
    config.option.maxschedchunk = 1
    return workers


def described(workers: int) -> str:
    """The line the run prints: how many workers, and how to run serially."""
    return (
        f"amws: {workers} pytest-xdist workers, each with an embedded reference server of its "
        f"own, the longest tests first; -n 0 runs serially"
    )
