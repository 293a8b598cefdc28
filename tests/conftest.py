"""The project's tests: runs they start against a target keep their ledger files in a folder of
the test session, never in the user's state directory; under pytest-xdist (the README's
command) the modules that wait longest start first, and an in-process run sees no worker."""

from __future__ import annotations

import os
import sys

import pytest

# Bytecode caches are written as in Python's default set-up, whatever PYTHONDONTWRITEBYTECODE
# says (CI sets it): the tests start a hundred Python processes on the same modules, and
# without the caches each compiles the project and pytest rewrites the suites' modules again
# (4.5 s against 11 s to collect the suites). The caches are __pycache__ folders, ignored by git.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Modules whose tests wait on runs, served servers or real time (longest first, as measured).
# Under ``--dist loadfile --no-loadscope-reorder`` (the README's command) each module runs whole
# on one worker, its module fixtures made once, and the workers take the modules in collection
# order: these start at once, and the many short modules fill the other workers around them
# instead of one long module ending the run alone. Serially the order changes nothing.
STARTED_FIRST = (
    "tests/test_conformance_run.py",
    "tests/test_property_suites.py",
    "tests/test_fault_catalogue.py",
    "tests/harness/plan/test_run_deadline.py",
    "tests/test_imports.py",
    "tests/harness/target/test_target_health.py",
    "tests/harness/lifecycle/test_interrupted_runs.py",
    "tests/harness/target/test_deviating_targets.py",
    "tests/harness/plan/test_workers.py",
    "tests/test_worker_reports.py",
    "tests/harness/evidence/test_expectations.py",
    "tests/harness/evidence/test_stability.py",
    "tests/harness/evidence/test_bundle.py",
    "tests/harness/evidence/test_diff.py",
    "tests/test_rule_coverage.py",
    "tests/suites/test_draws.py",
    "tests/harness/test_launch.py",
    "tests/harness/lifecycle/test_interrupts.py",
    "tests/harness/plan/test_plans_plugin.py",
)
# What pytest-xdist sets in a worker: the harness reads the worker count to share a target's
# buckets among workers, so a run a test starts in-process (pytester) must not see it.
XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


def pytest_configure(config: pytest.Config) -> None:
    # Python keeps ResourceWarning silent (an unclosed file, socket or transport, a process
    # never waited for). Shown, each one is listed in the warnings summary under the test it
    # was given in: the leaking test itself when the object is freed at once, a later one when
    # only the garbage collector frees it (with tracemalloc's hint to find where it was made).
    # Shown only, never an error: an error would fail whichever test the collector ran in.
    config.addinivalue_line("filterwarnings", "always::ResourceWarning")


# Last: the harness plugin (loaded for these tests too) orders items by its plan first.
@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {module: place for place, module in enumerate(STARTED_FIRST)}
    last = len(STARTED_FIRST)
    # sorted() is stable: within a module, and among the rest, collection order stays.
    items[:] = sorted(items, key=lambda item: rank.get(item.nodeid.split("::")[0], last))


@pytest.fixture(autouse=True, scope="session")
def _ledger_files_in_the_session(tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ["AMWS_STATE_DIR"] = str(tmp_path_factory.mktemp("amws-state"))


@pytest.fixture(autouse=True)
def _in_process_runs_see_no_worker(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pytester run in this process is an ordinary run, as in a serial session."""
    if "pytester" in request.fixturenames:
        for name in XDIST_VARIABLES:
            monkeypatch.delenv(name, raising=False)
