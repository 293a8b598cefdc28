"""Fixtures several suite modules share (the harness plugin provides the rest)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from amws_conformance.harness import ControlPlane, Run


@pytest.fixture(scope="session")
def control_or_none(request: pytest.FixtureRequest) -> ControlPlane | None:
    """The control plane where the target has one, else None: for tests whose API-only half
    runs on every target (``control`` itself skips the test where there is none)."""
    try:
        return request.getfixturevalue("control")
    except pytest.skip.Exception:
        return None


@pytest.fixture(scope="session")
def wait(amws_run: Run) -> Callable[[float], None]:
    """Lets ``seconds`` pass on the target: its control-plane clock moves where it has one,
    else the test sleeps that long in real time (and the plan's forecast counts it)."""
    return amws_run.pass_time


@pytest.fixture
def restored_clock(control: ControlPlane) -> Iterator[Callable[[float], None]]:
    """Moves the server clock forward for one test (call it with seconds); afterwards it is
    moved back by as much. Moving back by the test's own total, rather than setting the clock,
    leaves alone what others moved meanwhile (tests running in parallel on one server)."""
    moved = [0.0]

    def advance(seconds: float) -> None:
        control.advance(seconds)
        moved[0] += seconds

    yield advance
    if moved[0]:
        control.advance(-moved[0])
