"""The live status line of a run against a target: tests done of planned, units spent per
bucket, the wait the client is in and why, and the time left against the forecast.

A paced run spends most of its time waiting for a bucket to refill, and pytest's progress dots
say nothing while it does. On a terminal the status is the bottom line of the screen, redrawn
every second by a thread of its own: the lines above it scroll in a region that leaves it out
(the DECSTBM scroll region, as apt's progress line does), so it never overwrites pytest's
output nor is overwritten by it. Where standard output is not a terminal (a CI log, a file) no
control character is written: :meth:`Status.plain` gives one ordinary line at most once a
minute, which the plugin prints between pytest's lines.

No library is used: rich's live display and tqdm both draw on the cursor's line, where pytest
writes its progress, and both redraw through sys.stdout, which pytest's capture replaces while a
test runs; the status writes to its own copy of the terminal's file descriptor instead.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pytest

from amws_conformance.harness.target.pool import key_class

PLAIN_EVERY_SECONDS = 60.0
REDRAW_SECONDS = 1.0


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 90 else f"{seconds:.0f} s"


@dataclass
class Status:
    """What the line says; :meth:`text` renders it at a moment."""

    clock: Callable[[], float] = time.monotonic
    planned: int = 0
    done: int = 0
    forecast_seconds: float | None = None
    began: float | None = None  # when the first test's target was reached (begin())
    # Units spent per bucket so far (the run's spend); read, never written, by the line.
    spent: Callable[[], Mapping[str, int]] = dict
    # The wait now: (bucket, when it ends on ``clock``, its length); None when not waiting.
    wait: tuple[str, float, float] | None = None
    refill: dict[str, int] = field(default_factory=dict)  # units a minute per bucket
    _last_plain: float | None = None

    def begin(self, planned: int, forecast_seconds: float | None) -> None:
        self.planned, self.forecast_seconds = planned, forecast_seconds
        self.began = self.clock()

    def waiting(self, bucket: str, seconds: float) -> None:
        """The client pauses ``seconds`` for ``bucket``'s refill (the pacer says so first)."""
        self.wait = (bucket, self.clock() + seconds, seconds)

    def test_done(self) -> None:
        self.done += 1
        self.wait = None

    def text(self) -> str:
        now = self.clock()
        parts = [f"amws {self.done}/{self.planned} tests"]
        if self.planned and self.done >= self.planned:
            # Every test ran: what the run waits on now is removing what it made.
            parts[0] += ", cleaning up"
        # The wait and the time left first: a narrow terminal cuts the units' end, not them.
        if self.wait is not None and self.wait[1] > now:
            bucket, ends, length = self.wait
            rate = self.refill.get(bucket, self.refill.get(key_class(bucket)))
            why = f"{bucket} bucket refilling" + (f" at {rate:,} units/min" if rate else "")
            parts.append(f"waiting {ends - now:.0f} s of {length:.0f} s: {why}")
        if self.forecast_seconds is not None and self.began is not None:
            left = self.forecast_seconds - (now - self.began)
            forecast = _minutes(self.forecast_seconds)
            if left >= 0:
                parts.append(f"{_minutes(left)} left of {forecast} forecast")
            else:
                parts.append(f"{_minutes(-left)} over the {forecast} forecast")
        try:
            spent = dict(self.spent())
        except RuntimeError:  # the run changed it while it was read: next second's line
            spent = {}
        shown = ", ".join(f"{b} {u:,}" for b, u in sorted(spent.items(), key=lambda i: -i[1]) if u)
        parts.append(f"units {shown or '0'}")
        return " · ".join(parts)

    def plain(self) -> str | None:
        """The line for a log: at most once per :data:`PLAIN_EVERY_SECONDS`, else None."""
        now = self.clock()
        if self.began is None:
            return None
        if self._last_plain is not None and now - self._last_plain < PLAIN_EVERY_SECONDS:
            return None
        self._last_plain = now
        return self.text().replace(" · ", "; ")


class TerminalLine:
    """Draws a :class:`Status` on the bottom line of a terminal, every second, until stopped."""

    def __init__(self, status: Status, fd: int) -> None:
        self.status = status
        self.fd = os.dup(fd)  # pytest's capture replaces fd 1 while a test runs; this stays
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._rows, self._columns = 24, 80

    def _write(self, text: str) -> None:
        try:
            os.write(self.fd, text.encode("utf-8", "replace"))
        except OSError:
            self._stop.set()

    def start(self) -> None:
        try:
            size = os.get_terminal_size(self.fd)
            if size.lines >= 3 and size.columns >= 20:
                self._rows, self._columns = size.lines, size.columns
        except OSError:
            pass
        # A line for the status, then the lines above it scroll apart from it.
        self._write(f"\n\x1b7\x1b[1;{self._rows - 1}r\x1b8\x1b[1A")
        self._thread = threading.Thread(target=self._loop, name="amws-status", daemon=True)
        self._thread.start()

    def draw(self) -> None:
        line = self.status.text()[: self._columns - 1]
        self._write(f"\x1b7\x1b[{self._rows};1H\x1b[2K{line}\x1b8")

    def _loop(self) -> None:
        while not self._stop.wait(REDRAW_SECONDS):
            self.draw()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join(timeout=5)
        self._thread = None
        # The whole screen scrolls again, and the status line is cleared.
        self._write(f"\x1b7\x1b[1;{self._rows}r\x1b[{self._rows};1H\x1b[2K\x1b8")
        os.close(self.fd)


class StatusReporter:
    """The pytest plugin object that feeds a :class:`Status` and shows it: on a terminal
    (``fd`` one) through a :class:`TerminalLine`, else through ``say`` once a minute at most."""

    def __init__(self, status: Status, say: Callable[[str], None], fd: int | None) -> None:
        self.status = status
        self.say = say
        self.line = TerminalLine(status, fd) if fd is not None else None

    def begin(self, planned: int, forecast_seconds: float | None) -> None:
        """The first test is about to reach the target (after the preflight and the plan line)."""
        self.status.begin(planned, forecast_seconds)
        if self.line is not None:
            self.line.start()
        else:
            self._plain()

    def waiting(self, bucket: str, seconds: float) -> None:
        self.status.waiting(bucket, seconds)
        if self.line is None:
            self._plain()

    def _plain(self) -> None:
        text = self.status.plain()
        if text is not None:
            self.say(text)

    def pytest_runtest_logfinish(self) -> None:
        self.status.test_done()
        if self.line is None:
            self._plain()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self) -> None:
        self.stop()

    def stop(self) -> None:
        if self.line is not None:
            self.line.stop()
            self.line = None


def for_run(
    config: pytest.Config, spent: Callable[[], Mapping[str, int]], say: Callable[[str], None]
) -> StatusReporter | None:
    """The status of a run with ``--target`` run by this process itself (not an xdist worker
    nor a controller of workers), registered as a plugin; None for any other run."""
    if config.getoption("--target") is None or hasattr(config, "workerinput"):
        return None
    if getattr(config.option, "numprocesses", None):
        return None
    fd = 1 if os.isatty(1) and os.environ.get("TERM") != "dumb" else None
    reporter = StatusReporter(Status(spent=spent), say, fd)
    config.pluginmanager.register(reporter, "amws-status")
    return reporter


def refill_rates(buckets: Mapping[str, Mapping[str, int]]) -> dict[str, int]:
    """Units a minute per bucket, for the line's "why" of a wait."""
    return {name: int(size.get("refill_per_minute", 0)) for name, size in buckets.items()}
