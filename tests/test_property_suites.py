"""The property suites (suites/contract, suites/stateful) kill faults, and agree run to run.

For each chosen fault of the reference server's catalogue, the smallest part of the property
suites that should catch it (a ``-k`` selection of contract operations, or one stateful machine)
is run in a subprocess against the embedded reference server twice: as it is, where it must pass
(exit status 0), and with ``--reference-fault NAME`` (an option of the self-check's plugin,
``-p selfcheck.plugin``, with ``--strict-informative``), where it must fail (exit status 1: a
test failed; not 4, a preflight refusal, nor 2, a collection error). The faults cover the four
categories the suites are meant to catch: field validation, status codes, cascades and
lifecycles, at least two each.

Determinism: two ordinary runs of a small contract selection (the contract suite is seeded by a
fixed seed unless ``--seed`` is given) write the same calls per operation and the same rate
units to their report. Those two runs are also the contract selection's fault-free baseline.

Cost: a contract run spends ~30 s of CPU collecting (schemathesis builds the coverage cases of
every operation, whatever ``-k`` selects), a stateful machine ~5 s; the runs go out on a pool of
as many workers as the machine has cores, the dearest first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from starlette.requests import Request
from starlette.responses import Response

from tests._proxy import Proxy, passed_on
from tests._served import ordinary_env
from tests.reference_server.conftest import LiveServer

# The suites run from the package folder: its pytest.ini makes it the root (ids suites/...).
ROOT = Path(__file__).resolve().parent.parent / "amws_conformance"
TIMEOUT = 600  # seconds, per subprocess: a hung run fails its test instead of the CI job


@dataclass(frozen=True)
class Selection:
    """A part of the property suites: the pytest arguments that pick it, and a label."""

    label: str
    args: tuple[str, ...]
    contract: bool = False  # a contract run pays the collection of every operation


def _machine(name: str) -> Selection:
    return Selection(f"stateful {name}", (f"suites/stateful/test_{name}_machine.py",))


# The five department operations (list, create, read, update, delete).
DEPARTMENTS = Selection(
    "contract departments",
    ("suites/contract/test_contract.py", "-k", "departments"),
    contract=True,
)
REFERENCE_DATA = _machine("reference_data")
PEOPLE = _machine("people")
CREDENTIAL_WINDOWS = _machine("credential_window")


@dataclass(frozen=True)
class Kill:
    """A fault of the catalogue and the selection that must catch it."""

    category: str
    fault: str
    selection: Selection

    @property
    def id(self) -> str:
        return f"{self.category}:{self.fault}"


KILLS = [
    # Field validation: a length bound left unchecked (the contract suite's coverage phase sends
    # one character too many), and a reference field left unchecked (the machine points a new
    # person at a deleted department and expects 422).
    Kill("field-validation", "department-name-unchecked", DEPARTMENTS),
    Kill("field-validation", "person-reference-unchecked", REFERENCE_DATA),
    # Status codes: 400 where 404 is due (a deleted group read again), 422 where 409 is due (a
    # credential issued with a taken identifier).
    Kill("status-codes", "group-unknown-400", REFERENCE_DATA),
    Kill("status-codes", "identifier-duplicate-422", PEOPLE),
    # Cascades: deleting a record leaves the people pointing at it; deleting a user leaves its
    # credentials naming it as holder.
    Kill("cascades", "delete-keeps-references", REFERENCE_DATA),
    Kill("cascades", "user-delete-keeps-holder", PEOPLE),
    # Lifecycles: a credential whose window has not opened reads ACTIVE; one whose window has
    # closed stays ACTIVE. (The visit machine kills check-out-before-check-in too; it is left
    # out to keep the module inside its time budget.)
    Kill("lifecycles", "future-start-reads-active", CREDENTIAL_WINDOWS),
    Kill("lifecycles", "credential-never-expires", CREDENTIAL_WINDOWS),
]


@dataclass(frozen=True)
class Outcome:
    returncode: int
    output: str
    report: Path

    def tail(self, lines: int = 60) -> str:
        return "\n".join(self.output.splitlines()[-lines:])


class Runs:
    """Subprocess runs of the suites, each made once and shared by the tests that need it."""

    def __init__(self, folder: Path, workers: int) -> None:
        self.folder = folder
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.futures: dict[tuple[Selection, str | None, int], Future[Outcome]] = {}

    def submit(self, selection: Selection, fault: str | None = None, repeat: int = 1) -> None:
        key = (selection, fault, repeat)
        if key not in self.futures:
            report = self.folder / f"run-{len(self.futures)}"
            self.futures[key] = self.pool.submit(self._run, selection, fault, report)

    def get(self, selection: Selection, fault: str | None = None, repeat: int = 1) -> Outcome:
        self.submit(selection, fault, repeat)
        return self.futures[(selection, fault, repeat)].result()

    def against(self, selection: Selection, target: Path) -> Outcome:
        """``selection`` run once against the target ``target`` describes."""
        key = (selection, str(target), 1)
        if key not in self.futures:
            report = self.folder / f"run-{len(self.futures)}"
            self.futures[key] = self.pool.submit(self._run, selection, None, report, target)
        return self.futures[key].result()

    @staticmethod
    def _run(
        selection: Selection, fault: str | None, report: Path, target: Path | None = None
    ) -> Outcome:
        command = [sys.executable, "-m", "pytest", *selection.args, "-p", "no:cacheprovider"]
        command += ["-q", "--conformance-report", str(report)]
        if fault is not None:
            # Every failure counts: a stateful machine also checks assumed rules, and the
            # question here is whether a test failed, not the certifying verdict.
            command += [
                "-p",
                "amws_conformance.selfcheck.plugin",
                "--reference-fault",
                fault,
                "--strict-informative",
            ]
        if target is not None:
            command += ["--target", str(target), "--plan", "deep"]
        # The child is an ordinary run: none of this session's PYTEST_* settings (xdist worker
        # count, which paces the client, or PYTEST_ADDOPTS) leak into it.
        env = ordinary_env()
        try:
            result = subprocess.run(
                command,
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired as expired:
            output = expired.stdout if isinstance(expired.stdout, str) else ""
            return Outcome(-1, f"timed out after {TIMEOUT} s\n{output}", report)
        return Outcome(result.returncode, result.stdout + result.stderr, report)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _planned() -> list[tuple[Selection, str | None, int]]:
    """Every run the module makes, the dearest (contract) first, so the pool finishes early."""
    runs: list[tuple[Selection, str | None, int]] = [(DEPARTMENTS, None, 1), (DEPARTMENTS, None, 2)]
    runs += [(k.selection, k.fault, 1) for k in KILLS]
    runs += [(k.selection, None, 1) for k in KILLS]
    return sorted(dict.fromkeys(runs), key=lambda run: not run[0].contract)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    # Every run starts at once on a pool as wide as the machine, the dearest first. Under
    # pytest-xdist too: the project's tests run with --dist loadfile, so this module is on one
    # worker whole, and its runs would otherwise follow one another.
    made = Runs(tmp_path_factory.mktemp("property-suites"), os.cpu_count() or 1)
    for run in _planned():
        made.submit(*run)
    yield made
    made.close()


@pytest.mark.parametrize("kill", KILLS, ids=[k.id for k in KILLS])
def test_fault_is_killed_by_the_smallest_selection(kill: Kill, runs: Runs) -> None:
    baseline = runs.get(kill.selection)
    assert baseline.returncode == 0, (
        f"{kill.selection.label} fails without a fault (exit {baseline.returncode}):\n"
        + baseline.tail()
    )
    faulty = runs.get(kill.selection, kill.fault)
    assert faulty.returncode == 1, (
        f"{kill.selection.label} with --reference-fault {kill.fault} exits "
        f"{faulty.returncode}, not 1 (a test failed):\n" + faulty.tail()
    )


def _report(outcome: Outcome) -> dict[str, Any]:
    assert outcome.returncode == 0, outcome.tail()
    document: dict[str, Any] = json.loads((outcome.report / "report.json").read_text())
    return document


def test_two_ordinary_contract_runs_agree(runs: Runs) -> None:
    first = _report(runs.get(DEPARTMENTS, repeat=1))
    second = _report(runs.get(DEPARTMENTS, repeat=2))
    assert any(first["coverage"].values()), "the selection made no call"
    assert first["coverage"] == second["coverage"]
    assert first["rate_units"] == second["rate_units"]


def test_a_405_without_an_allow_header_passes_the_contract(runs: Runs, tmp_path: Path) -> None:
    """No document asks for a 405 to an undeclared method, nor for its Allow header (both are
    RFC 9110's, which the documents never cite): a target that leaves the header out passes
    the contract selection that meets such answers."""
    stripped: list[int] = []

    def rewrite(request: Request, answer: httpx.Response) -> Response:
        headers = {k: v for k, v in answer.headers.items() if k.lower() != "allow"}
        if len(headers) < len(answer.headers):
            stripped.append(answer.status_code)
        return passed_on(answer, headers=headers)

    with LiveServer() as server, Proxy(server.base_url, rewrite) as proxy:
        profile = tmp_path / "proxied.yaml"
        profile.write_text(yaml.safe_dump({**server.profile, "base_url": proxy.base_url}))
        outcome = runs.against(DEPARTMENTS, profile)
    assert 405 in stripped, "the selection met no answer carrying an Allow header"
    document = _report(outcome)
    assert [r for r, v in document["rules"].items() if v["verdict"] == "failed"] == []
