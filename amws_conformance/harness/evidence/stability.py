"""Stability reruns (``--stability N``): a failed test is run again, up to N times, and a test
that passes on a rerun is *flaky*, never counted as passed.

pytest-rerunfailures runs the attempts: each right after the failure, in the same session, with
the test's function-scoped fixtures made anew and its wider ones kept, so the harness's ledger
records what every attempt made and the run's cleanup removes it with the rest; under
pytest-xdist the worker that ran the test reruns it. ``--stability N`` sets its ``--reruns``.
Each attempt's reports reach :meth:`harness.evidence.report.Collector.pytest_runtest_logreport`, the
failed ones with the outcome ``rerun`` and every one with its attempt number (``report.rerun``,
0 for the first); this module turns those into the test's entry: the first attempt's outcome
and failure as without reruns, every later attempt under ``reruns``, and ``flaky`` once a rerun
passed.
"""

from __future__ import annotations

from typing import Any

import pytest

from amws_conformance.harness.evidence.verdicts import failure_line

FLAKY = "flaky"  # the outcome of a test that failed, then passed on a rerun
RERUNS_PLUGIN = "rerunfailures"  # pytest-rerunfailures's name in the plugin manager
# The prefix of the reasons a test was not started (the plan, the clock, the target), as the
# report reads them.
NOT_RUN = "not run ("


def configure(config: pytest.Config, stability: int | None) -> int:
    """Ask pytest-rerunfailures for ``stability`` reruns of each failed test; the number of
    reruns in force (its own ``--reruns`` given directly counts too)."""
    if stability:
        if not config.pluginmanager.hasplugin(RERUNS_PLUGIN):
            raise pytest.UsageError(
                "--stability needs the pytest-rerunfailures plugin (installed with "
                "amws-conformance; `-p no:rerunfailures` switched it off)"
            )
        config.option.reruns = stability
    reruns = getattr(config.option, "reruns", None)
    return int(reruns or 0)


def attempt(report: pytest.TestReport) -> int:
    """Which attempt at its test ``report`` belongs to: 0 for the first, 1 for the first rerun."""
    return int(getattr(report, "rerun", 0) or 0)


def failed(report: pytest.TestReport) -> bool:
    """Whether the attempt failed in this phase (a failure to be rerun reads ``rerun``)."""
    # pytest types the outcome as passed, failed or skipped; pytest-rerunfailures adds rerun.
    outcome: str = report.outcome
    return report.failed or outcome == "rerun"


def record_rerun(entry: dict[str, Any], report: pytest.TestReport) -> None:
    """Add one phase of a rerun to the test's entry, and settle the test's outcome: ``flaky``
    when its latest attempt passed, ``failed`` while every attempt failed."""
    reruns: list[dict[str, Any]] = entry.setdefault("reruns", [])
    number = attempt(report)
    while len(reruns) < number:
        reruns.append({"outcome": "not-run", "phase": None, "line": "", "seconds": 0.0})
    this = reruns[number - 1]
    this["seconds"] = round(this["seconds"] + report.duration, 3)
    if this["outcome"] == "failed":
        pass  # a later phase of an attempt that already failed (its teardown)
    elif failed(report):
        this.update(outcome="failed", phase=report.when, line=failure_line(report.longreprtext))
    elif report.skipped and report.when in ("setup", "call"):
        reason = (
            report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        ).removeprefix("Skipped: ")
        this.update(outcome="not-run" if reason.startswith(NOT_RUN) else "skipped", line=reason)
    elif report.when == "call":
        this.update(outcome="passed")
    # Only a test whose first attempt failed is rerun; its last attempt decides.
    entry["outcome"] = FLAKY if reruns[-1]["outcome"] == "passed" else "failed"
