"""The pytest plugin: the hooks, wired to the harness's parts.

Its options and markers are in :mod:`harness._options`, its fixtures in :mod:`harness._fixtures`,
what hooks and fixtures share (stash keys, skip reasons, starting the run) in
:mod:`harness._session`; reaching the target is :mod:`harness.target`, planning
:mod:`harness.plan`, the run's life :mod:`harness.lifecycle` and the report :mod:`harness.evidence`.
Loaded through the ``pytest11`` entry point and by the repository's root ``conftest.py``.
Nothing starts until a test asks for the target, so the project's own tests never pay for it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from amws_conformance import spec
from amws_conformance.harness._checks import violated_rules
from amws_conformance.harness._examples import EXAMPLES_KEY, ExampleBudget
from amws_conformance.harness._launch import CONFIG as LAUNCH_CONFIG
from amws_conformance.harness._options import MARKERS, add_options
from amws_conformance.harness._run import Run
from amws_conformance.harness._session import (
    COLLECTOR_KEY,
    NOT_ALLOWED,
    NOT_CONFIGURED,
    PLAN_NAME_KEY,
    PLANNING_KEY,
    RUN_KEY,
    SCHEDULE_KEY,
    STATUS_KEY,
    UNDECIDED,
    WORKERS_KEY,
    said,
    say,
    say_wait,
    started,
    sweep_command,
)
from amws_conformance.harness.evidence.expectations import (
    Expectations,
    ExpectationsError,
)
from amws_conformance.harness.evidence.expectations import load as load_expectations
from amws_conformance.harness.evidence.observation import Observation
from amws_conformance.harness.evidence.report import Collector, report_key, worker_output
from amws_conformance.harness.evidence.stability import configure as configure_reruns
from amws_conformance.harness.evidence.verdicts import NOT_RUN_UNREACHABLE, UNANSWERED
from amws_conformance.harness.lifecycle.interrupts import Interrupts
from amws_conformance.harness.lifecycle.journal import default_state_dir
from amws_conformance.harness.lifecycle.status import for_run
from amws_conformance.harness.plan.booking import Booking, setups_of
from amws_conformance.harness.plan.plan import CostTable
from amws_conformance.harness.plan.planning import Planning
from amws_conformance.harness.plan.rulemap import rules_of
from amws_conformance.harness.plan.schedule import (
    TIME_LEFT_OUT,
    Schedule,
    default_plan,
    embedded_shape,
)
from amws_conformance.harness.plan.workers import apply_default as default_workers
from amws_conformance.harness.plan.workers import described as workers_line
from amws_conformance.harness.target.profile import KEY_NAMES, Profile, ProfileError

# The fixtures live in harness/_fixtures.py; pytest loads them with the plugin.
pytest_plugins = ("amws_conformance.harness._fixtures",)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Any:
    """Before pytest-xdist reads its options: the default workers (harness/plan/workers.py)."""
    workers = default_workers(config)
    if workers is not None:
        config.stash[WORKERS_KEY] = workers
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    for marker, text in MARKERS.items():
        config.addinivalue_line("markers", f"{marker}: {text}")
    if config.inipath is not None and config.inipath == LAUNCH_CONFIG:
        # amws-conformance run: test ids read as the report writes them (suites/...), not as
        # a path from the working folder into site-packages, so a FAILED line can be copied.
        config.cwd_relative_nodeid = lambda nodeid: nodeid  # type: ignore[method-assign]
    run = Run(
        target=config.getoption("--target"),
        allow_physical=config.getoption("--allow-physical"),
        skip_preflight=config.getoption("--no-preflight"),
    )
    if config.getoption("--run-id"):
        run.run_id = config.getoption("--run-id")
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker:
        run.run_id = f"{run.run_id}-{worker}"
    try:
        run.load_profile()
    except ProfileError as error:
        raise pytest.UsageError(str(error)) from None
    timeout = config.getoption("--request-timeout") or (
        run.profile.data.get("request_timeout") if run.profile else None
    )
    if timeout:
        run.request_seconds = float(timeout)
    state = config.getoption("--state-dir") or (
        run.profile.data.get("state_dir") if run.profile else None
    )
    run.state_dir = Path(state) if state else default_state_dir()
    run.interrupts = Interrupts(say=lambda line: say(config, line))
    run.interrupts.install()
    run.seed = config.getoption("--seed")
    if run.seed is None:
        run.seed = (
            int(run.run_id[:8], 16) if all(c in "0123456789abcdef" for c in run.run_id[:8]) else 0
        )
    config.stash[RUN_KEY] = run
    examples = config.getoption("--examples") or (
        run.profile.data.get("examples") if run.profile else None
    )
    config.stash[EXAMPLES_KEY] = ExampleBudget(
        examples=int(examples) if examples else None, seed=config.getoption("--seed")
    )
    chosen = config.getoption("--plan") or (run.profile.data.get("plan") if run.profile else None)
    name = chosen or default_plan(run.profile)
    table = config.getoption("--cost-table")
    if table and not Path(table).is_file():
        raise pytest.UsageError(f"--cost-table {table}: no such file")
    # The plan's budget buys what the target's declared buckets pay for: the embedded server
    # starts later, on the first test, with the quotas its demo deployment always declares.
    schedule = Schedule.for_run(
        name, CostTable.load(Path(table)) if table else None, run.profile or embedded_shape()
    )
    minutes = config.getoption("--max-minutes") or (
        run.profile.data.get("max_minutes") if run.profile else None
    )
    if minutes is not None:
        schedule.deadline = time.monotonic() + minutes * 60
        schedule.max_minutes = minutes
    config.stash[SCHEDULE_KEY] = schedule
    untold: dict[str, float] = {}
    status = for_run(config, lambda: run.session.spend.units if run.session else {}, said(config))
    if status is not None:
        config.stash[STATUS_KEY] = status

    def on_wait(bucket: str, seconds: float) -> None:
        say_wait(config, untold, bucket, seconds)
        if status is not None:
            status.waiting(bucket, seconds)

    run.on_wait = on_wait
    collector = Collector(config.getoption("--conformance-report"))
    # Failure texts quote values a test saw; a key among them never reaches the report.
    collector.secrets = run.profile.secrets() if run.profile else []
    reruns = config.getoption("--stability")
    if reruns is None and run.profile is not None:
        reruns = run.profile.data.get("stability")
    collector.stability = configure_reruns(config, reruns)
    collector.expectations = _expectations(config, run)
    config.stash[COLLECTOR_KEY] = collector
    config.pluginmanager.register(collector, "amws-collector")
    config.pluginmanager.register(Booking(run), "amws-booking")
    planning = Planning(run, schedule, collector)
    # A worker's order is its controller's schedule; against the embedded server no bucket
    # paces it, so the longest files start first (their real-time waits overlap the rest).
    planning.longest_first = hasattr(config, "workerinput") and run.target is None
    config.stash[PLANNING_KEY] = planning
    config.pluginmanager.register(planning, "amws-planning")


def _expectations(config: pytest.Config, run: Run) -> Expectations | None:
    """The expectations file of the run, its rule ids checked (its test ids are checked once
    the tests are collected); a relative path in the profile is read from the profile's folder."""
    path = config.getoption("--expectations")
    if path is None and run.profile is not None and run.profile.data.get("expectations"):
        path = Path(run.target or ".").parent / run.profile.data["expectations"]
    if path is None:
        return None
    try:
        found = load_expectations(path)
        found.check({rule.id for rule in spec.rules()})
    except ExpectationsError as error:
        raise pytest.UsageError(str(error)) from None
    return found


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under pytest-xdist the workers run the tests and print nothing: the controller says how
    many run where the default chose them, and how to sweep what they make if the run dies."""
    config = session.config
    run = config.stash[RUN_KEY]
    if WORKERS_KEY in config.stash:
        say(config, workers_line(config.stash[WORKERS_KEY]))
    workers = getattr(config.option, "numprocesses", None)
    if workers and run.target is not None and not hasattr(config, "workerinput"):
        say(
            config,
            f"amws: workers keep ledgers in {run.state_dir}; if the run dies: {sweep_command(run)}",
        )


def pytest_unconfigure(config: pytest.Config) -> None:
    run = config.stash.get(RUN_KEY, None)
    if run is not None and run.interrupts is not None:
        run.interrupts.restore()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = {rule.id for rule in spec.rules()}
    for item in items:
        unknown = [r for r in rules_of(item) if r not in known]
        if unknown:
            raise pytest.UsageError(f"{item.nodeid} names unknown rule(s) {', '.join(unknown)}")
    if not hasattr(config, "workerinput"):  # under xdist the controller checks them
        # Before any deselection: a test of the suite the run does not select is still known.
        _check_expected_tests(config, {report_key(i.nodeid, i.location) for i in items})
    wanted = config.getoption("--rules")
    if wanted:
        chosen = set(wanted.split(","))
        keep = [i for i in items if chosen & set(rules_of(i))]
        dropped = [i for i in items if not chosen & set(rules_of(i))]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep
    config.stash[PLANNING_KEY].select(config, items, _plan_key)


def _check_expected_tests(config: pytest.Config, collected: set[str]) -> None:
    """Stop the run before its first test if the expectations name a test that is neither
    collected nor in the cost table (the suites' every test)."""
    expected = config.stash[COLLECTOR_KEY].expectations
    if expected is None:
        return
    known = collected | set(config.stash[SCHEDULE_KEY].table.tests)
    try:
        expected.check({rule.id for rule in spec.rules()}, known)
    except ExpectationsError as error:
        raise pytest.UsageError(str(error)) from None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """pytest-xdist: the controller collects nothing itself; a worker's collected tests (its
    nodeids: a test's parameters may be only in the report key) are known beside the table."""
    try:
        _check_expected_tests(node.config, set(ids))
    except pytest.UsageError as error:
        pytest.exit(str(error), returncode=pytest.ExitCode.USAGE_ERROR)


def _plan_key(item: pytest.Item) -> str:
    """The test's name in the cost table: its report key, unless a plugin named it."""
    return item.stash.get(PLAN_NAME_KEY, None) or report_key(item.nodeid, item.location)


def pytest_runtest_setup(item: pytest.Item) -> None:
    run = item.config.stash[RUN_KEY]
    if run.interrupts is not None and run.interrupts.interrupted:
        # The interrupt was swallowed where it landed (code with a broad except): no further
        # test starts, and the session ends as after Ctrl-C, cleanup included.
        raise KeyboardInterrupt(run.interrupts.interrupted)
    if run.session is not None:
        run.session.assumed_operations.clear()
    needs = [m.args[0] for m in item.iter_markers("requires") if m.args]
    physical = item.get_closest_marker("physical") is not None
    if not needs and not physical and not _uses_target(item):
        return
    profile = started(run, item.config)
    key = report_key(item.nodeid, item.location)
    if run.session is not None and run.session.health.down:
        pytest.skip(
            f"{NOT_RUN_UNREACHABLE}: the target stopped answering at {run.session.health.since()}"
        )
    schedule = item.config.stash[SCHEDULE_KEY]
    if not schedule.fits(key, run, run.pending_cleanup()):
        pytest.skip(f"{TIME_LEFT_OUT}: the forecast says it would end after --max-minutes")
    for capability in needs:
        if capability in run.key_problems:
            pytest.skip(f"{UNDECIDED}: {run.key_problems[capability]}")
        if not _has(run, profile, capability):
            pytest.skip(f"{NOT_CONFIGURED}: {_where(capability)}")
    if physical and not run.physical_allowed:
        pytest.skip(f"{NOT_ALLOWED}: physical actions are off (allow.physical or --allow-physical)")
    if run.session is not None:
        run.session.current_test = key
        run.session.pinned = needs_one_key(item)
        for setup in setups_of(item):
            run.session.spend.used(key, setup)


def needs_one_key(item: pytest.Item) -> bool:
    """Whether the test must send each class's requests with one key (a drain reads back the
    bucket it emptied): the harness decides it from the marks, so no test picks keys."""
    return any(item.get_closest_marker(m) is not None for m in ("one_key", "rate_limit"))


def _uses_target(item: pytest.Item) -> bool:
    return "amws_run" in getattr(item, "fixturenames", ())


def _where(capability: str) -> str:
    """Why a test needing ``capability`` cannot run on this target."""
    if capability == "embedded":
        return "only the embedded reference server can be run in-process (no --target)"
    if capability in KEY_NAMES:
        return f"the profile has no keys.{capability}"
    if capability == "destructive":
        return "the profile has no permission to change records it did not create (a control plane)"
    return f"the profile has no {capability}"


def _has(run: Run, profile: Profile, capability: str) -> bool:
    if capability == "embedded":
        return run.target is None
    if capability in KEY_NAMES:
        return profile.has_key(capability)
    if capability == "destructive":
        # Only a target whose state is ours to break (the reference server) allows refusal
        # tests that address foreign records such as the administrator role.
        return profile.section("control") is not None
    if capability == "webhooks":
        return "listen" in (profile.section("webhooks") or {})
    return bool(profile.section(capability))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    seen = Observation(rules=rules_of(item))
    run = item.config.stash[RUN_KEY]
    if report.failed and run.session is not None and call.when != "teardown":
        run.drop_shared_of(run.session.current_test)
    if report.failed and call.excinfo is not None:
        seen.violated = violated_rules(call.excinfo.value)
        if _unanswered(call.excinfo.value):
            seen.cause = UNANSWERED  # the target gave no answer: nothing was learnt
    if report.failed and run.session is not None:
        seen.transcript = [vars(e) for e in run.session.transcript[-3:]]
    if run.session is not None:
        run.session.transcript.clear()
        if call.when != "teardown":  # what teardown calls is tidying up, not observation
            # A test that reached an operation of assumed shape, itself or through a shared
            # set-up it uses, never decides a normative rule.
            session = run.session
            relied = set(session.assumed_operations)
            for setup in session.spend.uses.get(session.current_test, ()):
                relied |= session.setup_assumed.get(setup, set())
            seen.assumed_operations = sorted(relied)
    expectations = item.config.stash[COLLECTOR_KEY].expectations
    if report.failed and expectations is not None:
        _as_expected(report, seen, expectations, report_key(item.nodeid, item.location))
    seen.attach(report)
    return report


def _as_expected(
    report: pytest.TestReport, seen: Observation, expectations: Expectations, nodeid: str
) -> None:
    """A failure an expectation covers reads as an expected failure (pytest's xfail: an ``x``
    on the terminal, a skipped xfail in JUnit XML, no traceback), so CI's test view agrees
    with the exit status. The report keeps the failure: report.json counts it as it was."""
    entry = expectations.covering(
        nodeid,
        {"rules": seen.rules, "phase": report.when, "violated": seen.violated, "cause": seen.cause},
    )
    if entry is not None:
        seen.expected = entry.key
        report.outcome = "skipped"
        report.wasxfail = f"expected failure ({entry.key}): {entry.reason}"


def _unanswered(error: BaseException) -> bool:
    # The run's clients raise TargetUnreachable; a control-plane or receiver client of a test,
    # httpx's own transport errors.
    if isinstance(error, httpx.TransportError):
        return True
    if isinstance(error, BaseExceptionGroup):
        return any(_unanswered(inner) for inner in error.exceptions)
    return isinstance(error.__cause__, httpx.TransportError)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    run = session.config.stash.get(RUN_KEY, None)
    if run is None:
        return
    try:
        if run.interrupts is not None:
            with run.interrupts.cleaning():
                run.stop()
        else:
            run.stop()
    finally:
        collector = session.config.stash[COLLECTOR_KEY]
        if hasattr(session.config, "workerinput"):
            # under xdist the controller reports for all workers
            # pytest-xdist sets workeroutput on a worker's Config at run time; pytest's Config
            # does not declare it.
            session.config.workeroutput["amws"] = {  # type: ignore[attr-defined]
                **worker_output(run),
                "not_started": collector.not_started(),
            }
        else:
            problems = collector.cleanup_problems(run)
            if problems:
                writer = session.config.get_terminal_writer()
                writer.line("cleanup left records behind: " + "; ".join(problems), red=True)
                if run.target is not None:
                    writer.line(f"remove them with: {sweep_command(run)}", red=True)
            collector.plan = session.config.stash[SCHEDULE_KEY].describe()
            collector.write(run, session)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: a worker finished; keep what its run saw for the controller's report."""
    output = getattr(node, "workeroutput", {}).get("amws")
    collector = node.config.stash.get(COLLECTOR_KEY, None)
    if output and collector is not None:
        collector.absorb(output)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    collector = config.stash.get(COLLECTOR_KEY, None)
    if collector is not None and collector.summary_line:
        terminalreporter.write_line(collector.summary_line)


def pytest_report_header(config: pytest.Config) -> list[str]:
    run = config.stash.get(RUN_KEY, None)
    if run is None:
        return []
    target = run.target or "embedded reference server"
    return [f"amws: target {target}, run id {run.run_id}, seed {run.seed}"]
