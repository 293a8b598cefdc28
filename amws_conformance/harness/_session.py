"""What the plugin's hooks and fixtures share: the stash keys of a run, the skip reasons, the
lines a run says on the terminal, and starting the run (profile, preflight, plan line) the
first time a test asks for the target."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import NoReturn

import httpx
import pytest

from amws_conformance.harness._run import Run
from amws_conformance.harness.evidence.report import Collector
from amws_conformance.harness.lifecycle.journal import default_state_dir
from amws_conformance.harness.lifecycle.status import StatusReporter, refill_rates
from amws_conformance.harness.plan.planning import Planning
from amws_conformance.harness.plan.schedule import TIME_LEFT_OUT, Schedule
from amws_conformance.harness.plan.spend import FAILED_AUTH
from amws_conformance.harness.target.preflight import PREFLIGHT, PreflightError
from amws_conformance.harness.target.preflight import run as preflight
from amws_conformance.harness.target.profile import KEY_NAMES, Profile, ProfileError, redact

RUN_KEY = pytest.StashKey[Run]()


COLLECTOR_KEY = pytest.StashKey[Collector]()


SCHEDULE_KEY = pytest.StashKey[Schedule]()


PLANNING_KEY = pytest.StashKey[Planning]()


WORKERS_KEY = pytest.StashKey[int]()  # the workers the run started where the command said none


# A test's name in the cost table, where another plugin made a variant of the test whose
# report key differs (the self-check's plugin does).
PLAN_NAME_KEY = pytest.StashKey[str]()


STATUS_KEY = pytest.StashKey[StatusReporter]()


NOT_CONFIGURED = "not configured"


# The start of a skip reason that leaves a rule undecided because something the rule's test
# needs is missing or ambiguous on this target (a key not behaving as its class, a figure the
# documents do not give): the rule is neither passed nor failed.
UNDECIDED = "undecided"


NOT_ALLOWED = "not allowed"


def say(config: pytest.Config, line: str) -> None:
    """A line of its own on the terminal (not glued to a row of progress dots)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or hasattr(config, "workerinput"):
        return
    # Said while a test's output is being captured: past the capture, to the terminal.
    capture = config.pluginmanager.get_plugin("capturemanager")
    if capture is None:
        reporter.write_line(line)
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(line)


def said(config: pytest.Config) -> Callable[[str], None]:
    return lambda line: say(config, line)


def say_wait(config: pytest.Config, untold: dict[str, float], bucket: str, seconds: float) -> None:
    """A paced run is quiet for minutes: say what it waits for, once per 30 s of waiting on a
    bucket (a request rarely waits long, but thousands of short waits add up)."""
    untold[bucket] = untold.get(bucket, 0.0) + seconds
    if untold[bucket] >= 30:
        say(config, f"amws: paced {untold.pop(bucket):.0f} s on the {bucket} bucket's refill")


def started(run: Run, config: pytest.Config) -> Profile:
    if run.started:
        assert run.profile is not None
        return run.profile
    try:
        profile = run.start()
        if not run.skip_preflight:
            preflight(run)
            assert run.session is not None
            answers = run.session.spend.elapsed.get(PREFLIGHT)
            if answers:  # the median: the first answer also pays for the connection
                run.latency = statistics.median(answers)
        for problem in run.key_problems.values():
            say(config, f"amws: {problem}; the tests that need this key read undecided")
        for problem in run.pool_problems.values():
            say(config, f"amws: {problem}; the run spends from the pool's other keys")
        schedule = config.stash[SCHEDULE_KEY]
        schedule.pools = run.pool_sizes()
        say(config, schedule.line(profile, run.latency))
        if STATUS_KEY in config.stash:  # the live status line (harness/lifecycle/status.py)
            status = config.stash[STATUS_KEY]
            status.status.refill = refill_rates(
                {
                    **{k: profile.bucket(k) for k in KEY_NAMES},
                    FAILED_AUTH: profile.unauthenticated_bucket(),
                }
            )
            status.begin(len(schedule.order), schedule.forecast_seconds)
        if run.ledger_file is not None:
            say(config, f"amws: ledger {run.ledger_file}; if the run dies: {sweep_command(run)}")
        assert run.session is not None
        run.session.before_request = lambda: within_deadline(run, schedule)
    except ProfileError as error:
        stop(config, str(error))
    except PreflightError as error:
        stop(config, f"preflight: {error}")
    except httpx.LocalProtocolError as error:  # a request this client could not even send
        stop(config, f"preflight: a request could not be sent ({error})")
    except httpx.HTTPError as error:
        where = run.profile.base_url if run.profile else "?"
        stop(config, f"preflight: profile field base_url: no answer from {where} ({error})")
    return profile


def within_deadline(run: Run, schedule: Schedule) -> None:
    """End the running test as not run (time) once the cleanup needs all the time left."""
    if schedule.deadline is not None and schedule.cleanup_must_start(run, run.pending_cleanup()):
        pytest.skip(f"{TIME_LEFT_OUT}: --max-minutes was reached while it ran; cleanup started")


def stop(config: pytest.Config, reason: str) -> NoReturn:
    """End the run before any test, for a reason the profile's owner must fix. No secret of
    the profile is ever said (an HTTP library's error may quote a header it refused)."""
    run = config.stash.get(RUN_KEY, None)
    if run is not None and run.profile is not None:
        reason = redact(reason, run.profile.secrets())
    config.stash[COLLECTOR_KEY].stopped = reason
    pytest.exit(reason, returncode=pytest.ExitCode.USAGE_ERROR)


def sweep_command(run: Run) -> str:
    """The command that removes what ``run`` left on its target."""
    command = f"amws-conformance sweep --target {run.target} --run-id {run.run_id}"
    if run.state_dir is not None and run.state_dir != default_state_dir():
        command += f" --state-dir {run.state_dir}"
    return command
