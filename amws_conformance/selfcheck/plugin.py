"""The self-check's pytest plugin: the fault matrix, and an embedded server started with faults.

Loaded only with ``-p selfcheck.plugin`` (the self-check's runs pass it, and so do project
tests that start a faulty server); the harness's own plugin, which users load, knows nothing of
faults. It stands on the harness's seams: :attr:`Run.server_args` (the embedded server's
command), :attr:`Run.variant` (shared values are made per fault), ``PLAN_NAME_KEY`` (a test's
name in the cost table) and :attr:`Planning.keep_order`.

- ``--fault-matrix NAME=RULE,...``: each test tagged with a listed fault's rule runs once per
  such fault; the reference server is switched to the fault through its control plane before
  the test. The tests of a fault run together, and after one of them fails the rest of that
  fault's are skipped (``--fault-matrix-every-test`` runs them all: the whole kill matrix, for
  the cost table). ``--fault-matrix-out FILE`` writes, per fault, how many tests ran under it
  and which failed.
- ``--reference-fault NAME``: start the embedded reference server with this fault on.

The pairs come from whoever starts the matrix (the self-check reads them from the reference
server's catalogue); this module needs nothing of the server itself.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.harness import Run
from amws_conformance.harness._checks import violated_rules
from amws_conformance.harness._session import (
    COLLECTOR_KEY,
    PLAN_NAME_KEY,
    PLANNING_KEY,
    RUN_KEY,
    SCHEDULE_KEY,
)
from amws_conformance.harness.evidence.report import report_key
from amws_conformance.harness.plan.plan import without_fault
from amws_conformance.harness.plan.rulemap import rules_of

FAULT_PARAM = "amws_fault"


@dataclass
class Matrix:
    """One run's fault matrix: each fault and the rule it breaks, in the given order."""

    rule_of: dict[str, str]
    every_test: bool = False
    # Faults a global check also names wherever their operation is called (``NAME=RULE+ALSO``):
    # a mutant answering a status the spec does not list for the operation breaks ALSO
    # (CONV-RESPONSE-CONFORMS) in every test that calls it, whatever that test's own rules.
    also: dict[str, str] = field(default_factory=dict)
    killed: set[str] = field(default_factory=set)
    current: str | None = None  # the fault the server runs with now
    fault_of_test: dict[str, str] = field(default_factory=dict)  # report key -> its fault
    killers: set[str] = field(default_factory=set)  # report keys of the tests that killed
    # The operations each test calls, as the cost table measured them (its plan names).
    operations: dict[str, frozenset[str]] = field(default_factory=dict)


MATRIX_KEY = pytest.StashKey[Matrix]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("amws-selfcheck", "AMWS self-check (selfcheck.plugin)")
    group.addoption(
        "--fault-matrix",
        metavar="FAULTS",
        default=None,
        help="run each test once per listed fault of its rules, switching the reference "
        "server's fault between groups (comma-separated NAME=RULE pairs: each catalogue fault "
        "and the rule it breaks)",
    )
    group.addoption("--fault-matrix-out", metavar="FILE", default=None, help=argparse.SUPPRESS)
    group.addoption(
        "--fault-matrix-every-test", action="store_true", default=False, help=argparse.SUPPRESS
    )
    group.addoption(
        "--reference-fault",
        action="append",
        default=[],
        metavar="NAME",
        help="start the embedded reference server with this fault",
    )


def fault_rules(option: str | None) -> dict[str, str]:
    """``--fault-matrix NAME=RULE[+ALSO],...``: each fault and the rule it breaks, in the given
    order (:func:`also_rules` reads the ``+ALSO`` parts)."""
    pairs: dict[str, str] = {}
    for item in filter(None, (option or "").split(",")):
        name, sep, rule = item.partition("=")
        rule = rule.partition("+")[0]
        if not (sep and name.strip() and rule.strip()):
            raise pytest.UsageError(f"--fault-matrix: {item!r} is not NAME=RULE")
        pairs[name.strip()] = rule.strip()
    return pairs


def also_rules(option: str | None) -> dict[str, str]:
    """The faults of ``--fault-matrix`` a global check also names (``NAME=RULE+ALSO``)."""
    found: dict[str, str] = {}
    for item in filter(None, (option or "").split(",")):
        name, _, rule = item.partition("=")
        also = rule.partition("+")[2].strip()
        if also:
            found[name.strip()] = also
    return found


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    # Before the harness's pytest_configure, which chooses the plan: a fault matrix draws on
    # every test of a fault's rule unless told to keep to a plan.
    option = config.getoption("--fault-matrix")
    rules = fault_rules(option)
    if rules:
        config.stash[MATRIX_KEY] = Matrix(
            rules, config.getoption("--fault-matrix-every-test"), also=also_rules(option)
        )
        if config.getoption("--plan") is None:
            config.option.plan = "deep"


def _matrix(config: pytest.Config) -> Matrix | None:
    return config.stash.get(MATRIX_KEY, None)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Before any test: the run the harness made in pytest_configure learns of the faults."""
    config = session.config
    matrix = _matrix(config)
    if matrix is not None and matrix.also:
        table = config.stash[SCHEDULE_KEY].table
        matrix.operations = {
            name: frozenset(entry.get("operations", ())) for name, entry in table.tests.items()
        }
    run = config.stash[RUN_KEY]
    faults = tuple(config.getoption("--reference-fault"))
    run.server_args += tuple(arg for name in faults for arg in ("--fault", name))
    run.variant = faults
    if _matrix(config) is not None:
        config.stash[PLANNING_KEY].keep_order = True  # the tests of a fault run together


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """In a fault matrix, each test runs once per fault of the rules it names."""
    matrix = _matrix(metafunc.config)
    if matrix is None:
        return
    rules = set(rules_of(metafunc.definition))
    # Rules may also ride on single parameters (pytest.param(..., marks=rule(...))).
    for marker in metafunc.definition.iter_markers("parametrize"):
        values = marker.args[1] if len(marker.args) > 1 else marker.kwargs.get("argvalues", ())
        for value in values:
            for mark in getattr(value, "marks", ()):
                if mark.name == "rule":
                    rules.update(mark.args)
    faults: list[str | None] = [n for n, rule in matrix.rule_of.items() if rule in rules]
    # Beside them, the faults a global check names in any test calling their operation, for
    # a function one of whose cases calls it (each case keeps its own: collection_modifyitems).
    called = _called_by_function(matrix, metafunc.definition.nodeid)
    faults += [
        n
        for n in matrix.also
        if n not in faults and matrix.rule_of[n] not in rules and _mutated_operation(n) in called
    ]
    faults = faults or [None]
    metafunc.fixturenames.append(FAULT_PARAM)
    metafunc.parametrize(FAULT_PARAM, faults, ids=[f"fault={f}" for f in faults])


def _called_by_function(matrix: Matrix, nodeid: str) -> set[str]:
    """The operations any case of the test function ``nodeid`` calls (by the cost table)."""
    return {
        op
        for name, ops in matrix.operations.items()
        if name == nodeid or name.startswith(f"{nodeid}[")
        for op in ops
    }


def _credited(matrix: Matrix, item: pytest.Item, fault: str) -> bool:
    """Whether ``item`` runs under ``fault`` for the global check alone: not a test of the
    fault's rule, but one that calls the operation the fault changes."""
    if matrix.rule_of[fault] in rules_of(item) or fault not in matrix.also:
        return False
    name = without_fault(report_key(item.nodeid, item.location), fault)
    return _mutated_operation(fault) in matrix.operations.get(name, frozenset())


def fault_of(item: pytest.Item) -> str | None:
    """The fault a test of the matrix runs under (None outside the matrix)."""
    callspec = getattr(item, "callspec", None)
    fault = callspec.params.get(FAULT_PARAM) if callspec else None
    return str(fault) if fault is not None else None


@functools.cache
def _operation_ids() -> frozenset[str]:
    return frozenset(op.operation_id for op in spec.operations())


def _mutated_operation(fault: str) -> str | None:
    """The one operation a spec-derived mutant changes (its name starts with it), else None."""
    head = fault.split(":", 1)[0]
    return head if ":" in fault and head in _operation_ids() else None


def _operations_named(item: pytest.Item) -> set[str]:
    """The operations a generated test is parametrized with (none for a hand-written one)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return set()
    named = set()
    for value in callspec.params.values():
        if isinstance(value, spec.Operation):
            named.add(value.operation_id)
        elif isinstance(value, str) and value in _operation_ids():
            named.add(value)
    named |= set(callspec.id.replace("[", "-").split("-")) & _operation_ids()
    return named


def _aimed_at(item: pytest.Item, fault: str | None) -> bool:
    """Whether a test is generated for the one operation the mutant ``fault`` changes."""
    changed = _mutated_operation(fault) if fault else None
    return changed is not None and changed in _operations_named(item)


def _beside_the_point(item: pytest.Item, fault: str) -> bool:
    """A test generated for other operations than the one a mutant changes: it cannot see the
    mutant (it never calls that operation's changed check), so it is not run under it."""
    changed = _mutated_operation(fault)
    named = _operations_named(item)
    return changed is not None and bool(named) and changed not in named


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep each test only under the faults of its own rules, the tests of a fault together,
    and give each its plain name for the run's plan (before the harness applies the plan)."""
    matrix = _matrix(config)
    if matrix is None:
        return
    idle = [
        i
        for i in items
        if (f := fault_of(i)) is None
        or (matrix.rule_of[f] not in rules_of(i) and not _credited(matrix, i, f))
        or (matrix.rule_of[f] in rules_of(i) and _beside_the_point(i, f))
    ]
    if idle:
        config.hook.pytest_deselected(items=idle)
    # One switch per fault: the tests of a fault run together.
    kept = [i for i in items if i not in idle]
    # Within a mutant's tests, those generated for the operation it changes go first: one of
    # them kills it, and the rest (which may pace on a drained bucket) are then skipped.
    # The tests credited through the global check alone come last.
    items[:] = sorted(
        kept,
        key=lambda i: (
            str(fault_of(i)),
            not _aimed_at(i, fault_of(i)),
            matrix.rule_of[str(fault_of(i))] not in rules_of(i),
        ),
    )
    for item in items:
        fault = fault_of(item)
        if fault is not None:
            key = report_key(item.nodeid, item.location)
            item.stash[PLAN_NAME_KEY] = without_fault(key, fault)


@pytest.fixture(autouse=True)
def _switch_reference_fault(request: pytest.FixtureRequest) -> None:
    """In a fault matrix, switch the reference server to the fault this test runs under."""
    matrix = _matrix(request.config)
    fault = fault_of(request.node) if isinstance(request.node, pytest.Item) else None
    if matrix is None or fault is None:
        return
    run: Run = request.getfixturevalue("amws_run")
    if fault in matrix.killed and not matrix.every_test:
        # One failing test of the fault's rule proves the point; the rest would only repeat it
        # (unless the whole kill matrix is wanted: the cost table's cheapest killers).
        pytest.skip(f"fault {fault} already killed")
    _switch(run, matrix, fault)


def _switch(run: Run, matrix: Matrix, name: str) -> None:
    """Make ``name`` the reference server's only active fault."""
    if name == matrix.current:
        return
    control = run.control()
    if control is None:
        raise RuntimeError("a fault matrix needs the reference server's control plane")
    with control:
        control.put("/_reference/faults", json={"active": [name]}).raise_for_status()
    matrix.current = name
    run.variant = (name,)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    matrix = _matrix(item.config)
    fault = fault_of(item)
    if matrix is not None and fault is not None:
        report.user_properties.append(("fault", fault))
        key = report_key(item.nodeid, item.location)
        matrix.fault_of_test[key] = fault
        # A test of the fault's rule kills it by failing; a test credited through the global
        # check only by a failure that names that check's rule.
        own = matrix.rule_of[fault] in rules_of(item)
        named = call.excinfo is not None and matrix.also.get(fault) in violated_rules(
            call.excinfo.value
        )
        if report.failed and (own or named):
            matrix.killed.add(fault)
            matrix.killers.add(key)
    return report


def by_fault(matrix: Matrix, tests: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per fault: how many tests ran under it, which (``ran``) and those that failed (from the
    run's report entries, in their order)."""
    found: dict[str, dict[str, Any]] = {}
    for key, entry in tests.items():
        fault = matrix.fault_of_test.get(key)
        if not fault or entry["outcome"] in ("not-run", "skipped"):
            continue
        slot = found.setdefault(fault, {"tests": 0, "failed": [], "ran": []})
        slot["tests"] += 1
        slot["ran"].append(key)
        if entry["outcome"] == "failed" and key in matrix.killers:
            slot["failed"].append(key)
    return found


@pytest.hookimpl(wrapper=True)
def pytest_sessionfinish(session: pytest.Session) -> Generator[None, None, None]:
    """After the harness's cleanup and report, whether or not they went well: the matrix,
    for the self-check that started this run."""
    try:
        yield
    finally:
        out = session.config.getoption("--fault-matrix-out")
        matrix = _matrix(session.config)
        if out:
            tests = session.config.stash[COLLECTOR_KEY].tests
            with open(out, "w", encoding="utf-8") as fh:
                json.dump(by_fault(matrix, tests) if matrix else {}, fh)
