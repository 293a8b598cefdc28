"""How a run takes SIGINT and SIGTERM: the first stops it, later ones never cut the cleanup short,
and no interrupt falls between a create's answer and the ledger."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

import pytest

from amws_conformance.harness.lifecycle.interrupts import Interrupts


@pytest.fixture
def interrupts() -> Iterator[Interrupts]:
    said: list[str] = []
    installed = Interrupts(say=said.append)
    installed.install()
    yield installed
    installed.restore()


def _signal(signum: int) -> None:
    os.kill(os.getpid(), signum)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_first_interrupt_stops_the_run_as_ctrl_c_does(
    interrupts: Interrupts, signum: int
) -> None:
    with pytest.raises(KeyboardInterrupt):
        _signal(signum)


def test_an_interrupt_during_a_create_waits_for_its_ledger_entry(interrupts: Interrupts) -> None:
    booked = []
    with pytest.raises(KeyboardInterrupt), interrupts.deferred():
        _signal(signal.SIGTERM)
        booked.append("the create's record")  # still runs: the interrupt is held back
    assert booked == ["the create's record"]


def test_interrupts_during_the_cleanup_are_counted_never_raised(interrupts: Interrupts) -> None:
    with interrupts.cleaning():
        _signal(signal.SIGINT)
        assert not interrupts.hardware_only  # the cleanup goes on
        _signal(signal.SIGTERM)
        assert interrupts.hardware_only  # now only the hardware records, then stop


def test_after_a_first_interrupt_a_second_one_lets_the_cleanup_start(
    interrupts: Interrupts,
) -> None:
    with pytest.raises(KeyboardInterrupt):
        _signal(signal.SIGINT)
    _signal(signal.SIGINT)  # while pytest winds down: counted, not raised
    with interrupts.cleaning():
        assert not interrupts.hardware_only


def test_restore_puts_back_the_handlers_it_replaced() -> None:
    before = signal.getsignal(signal.SIGTERM)
    installed = Interrupts(say=lambda line: None)
    installed.install()
    assert signal.getsignal(signal.SIGTERM) != before
    installed.restore()
    assert signal.getsignal(signal.SIGTERM) == before


def test_an_interrupt_swallowed_where_it_landed_is_remembered(interrupts: Interrupts) -> None:
    with contextlib.suppress(BaseException):  # what a test's broad except does to it
        _signal(signal.SIGINT)
    assert interrupts.interrupted == "SIGINT received"


def test_no_test_starts_after_an_interrupt_a_test_swallowed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import os, signal

        def test_swallows():
            try:
                os.kill(os.getpid(), signal.SIGINT)
            except BaseException:
                pass

        def test_never_starts():
            raise AssertionError("a test started after the run was interrupted")
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--no-preflight")
    assert "a test started after the run was interrupted" not in result.stdout.str()
    assert "SIGINT received" in result.stdout.str()
