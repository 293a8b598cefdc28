"""The default number of pytest-xdist workers (harness/plan/workers.py): one per core for a run of
the suites' folders against the embedded server, serial wherever the command says otherwise or
names a small selection; and the order the workers take the tests in (longest first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from amws_conformance.harness.plan import workers as _workers
from amws_conformance.harness.plan.plan import CostTable
from amws_conformance.harness.plan.schedule import Schedule
from tests._served import ordinary_env

# The suites run from the package folder: its pytest.ini makes it the root (ids suites/...).
ROOT = Path(__file__).resolve().parents[3] / "amws_conformance"
SUITES = ROOT / "suites"


@pytest.fixture(autouse=True)
def _two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    # pytest-xdist's -n auto reads this before counting the cores: the same answer anywhere.
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "2")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)


def _workers_for(pytester: pytest.Pytester, *args: str) -> int | None:
    config = pytester.parseconfig(*args)
    return _workers.default_workers(config)


@pytest.mark.parametrize(
    "args",
    [
        (str(SUITES),),
        (str(SUITES / "rules"), str(SUITES / "webhooks")),
        (str(SUITES), "--plan", "certify"),
        (str(SUITES), "-x", "--conformance-report", "out"),
    ],
    ids=["suites", "two-folders", "certify", "other-options"],
)
def test_the_suites_folders_get_one_worker_per_core(
    pytester: pytest.Pytester, args: tuple[str, ...]
) -> None:
    assert _workers_for(pytester, *args) == 2


@pytest.mark.parametrize(
    "args",
    [
        (str(SUITES), "-n", "0"),
        (str(SUITES), "-n", "3"),
        (str(SUITES), "-n3"),
        (str(SUITES), "--dist", "no"),
        (str(SUITES), "--dist=loadfile"),
        (str(SUITES), "-p", "no:xdist"),
        (str(SUITES), "--target", "profile.yaml"),
        (str(SUITES), "--collect-only"),
        (str(SUITES), "--pdb"),
        (str(SUITES), "-k", "roles"),
        (str(SUITES), "--rules", "AUTH-HEADER-REQUIRED"),
        (str(SUITES), "--plan", "gate"),
        (str(SUITES / "rules" / "test_roles.py"),),
        (f"{SUITES / 'rules' / 'test_roles.py'}::test_list_holds_the_system_roles",),
        (str(SUITES), str(SUITES / "rules" / "test_roles.py")),
        (str(ROOT.parent / "tests" / "harness"),),
        (),
    ],
    ids=[
        "n0",
        "n3",
        "n3-glued",
        "dist-no",
        "dist-loadfile",
        "no-xdist",
        "target",
        "collect-only",
        "pdb",
        "keyword",
        "rules",
        "gate",
        "file",
        "test-id",
        "folder-and-file",
        "not-the-suites",
        "no-path",
    ],
)
def test_serial_where_the_command_says_otherwise_or_selects_a_few(
    pytester: pytest.Pytester, args: tuple[str, ...]
) -> None:
    assert _workers_for(pytester, *args) is None


def test_serial_on_one_core(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "1")
    assert _workers_for(pytester, str(SUITES)) is None


def test_serial_when_pytest_addopts_names_workers(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "--dist no")
    assert _workers_for(pytester, str(SUITES)) is None


def test_the_default_hands_out_one_test_at_a_time(pytester: pytest.Pytester) -> None:
    config = pytester.parseconfig(str(SUITES))
    assert _workers.apply_default(config) == 2
    assert (config.option.numprocesses, config.option.dist) == (2, "load")
    assert config.option.maxschedchunk == 1


def _table(seconds: dict[str, float]) -> CostTable:
    return CostTable(measured={}, setups={}, tests={n: {"seconds": s} for n, s in seconds.items()})


def test_longest_files_first_and_in_each_file_its_longest_tests() -> None:
    nodeids = ["a.py::t1", "a.py::t2", "b.py::t1", "b.py::t2", "b.py::t3", "c.py::new"]
    table = _table({"a.py::t1": 1, "a.py::t2": 2, "b.py::t1": 0.5, "b.py::t2": 5, "b.py::t3": 0.5})
    schedule = Schedule.for_run("deep", table)
    order = [nodeids[i] for i in schedule.longest_first(nodeids)]
    # b (6 s) before a (3 s) before c (unknown to the table: 0 s); ties keep their order.
    assert order == ["b.py::t2", "b.py::t1", "b.py::t3", "a.py::t2", "a.py::t1", "c.py::new"]


def test_a_run_of_the_suites_folder_says_how_many_workers_it_started(tmp_path: Path) -> None:
    env = ordinary_env()
    env["PYTEST_XDIST_AUTO_NUM_WORKERS"] = "2"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "suites/hardware", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert _workers.described(2) in done.stdout
