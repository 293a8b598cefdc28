"""harness/lifecycle/status.py: the live status line, and none of its control characters off a
terminal."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from amws_conformance.harness.lifecycle.status import PLAIN_EVERY_SECONDS, Status, TerminalLine
from tests._served import PACKAGE, ordinary_env, serve


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_says_tests_wait_time_left_and_units() -> None:
    clock = _Clock()
    status = Status(clock=clock, spent=lambda: {"full": 1200, "readonly": 300, "none": 0})
    status.refill = {"full": 800}
    status.begin(40, 228.0)
    status.done = 12
    status.waiting("full", 37.0)
    clock.now += 10
    assert status.text() == (
        "amws 12/40 tests · waiting 27 s of 37 s: full bucket refilling at 800 units/min"
        " · 3.6 min left of 3.8 min forecast · units full 1,200, readonly 300"
    )
    status.test_done()
    clock.now += 300
    assert "waiting" not in status.text() and "82 s over the 3.8 min forecast" in status.text()


def test_after_the_last_test_the_line_says_the_run_is_cleaning_up() -> None:
    clock = _Clock()
    status = Status(clock=clock, spent=lambda: {"full[0]": 90})
    status.refill = {"full": 800}
    status.begin(2, 60.0)
    status.test_done()
    assert "cleaning up" not in status.text()
    status.test_done()
    status.waiting("full[1]", 5.0)  # the cleanup's deletes paced on a pool's second key
    assert status.text().startswith(
        "amws 2/2 tests, cleaning up · waiting 5 s of 5 s: full[1] bucket refilling at 800"
    )


def test_plain_lines_come_once_a_minute_at_most() -> None:
    clock = _Clock()
    status = Status(clock=clock)
    assert status.plain() is None  # not begun
    status.begin(3, None)
    first = status.plain()
    assert first == "amws 0/3 tests; units 0"
    clock.now += PLAIN_EVERY_SECONDS - 1
    assert status.plain() is None
    clock.now += 1
    assert status.plain() is not None


def test_on_a_terminal_the_bottom_line_is_redrawn_during_a_wait() -> None:
    read, write = os.pipe()
    status = Status(spent=dict)
    status.begin(2, None)
    status.waiting("full", 3.0)
    line = TerminalLine(status, write)
    line.start()
    time.sleep(2.3)
    line.stop()
    os.close(write)
    out = os.read(read, 100_000).decode()
    os.close(read)
    assert "\x1b[1;23r" in out and out.endswith("\x1b[1;24r\x1b[24;1H\x1b[2K\x1b8")
    drawn = [part for part in out.split("\x1b[24;1H\x1b[2K")[1:] if "waiting" in part]
    assert "waiting 2 s of 3 s" in drawn[0] and "waiting 1 s of 3 s" in drawn[1]


def test_a_run_written_to_a_file_has_no_control_characters(tmp_path: Path) -> None:
    server, profile = serve(tmp_path)
    test = "suites/rules/test_errors.py::test_unknown_uuid_answers_404[deleteCostCenter]"
    try:
        with open(tmp_path / "out.txt", "wb") as out:
            run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "amws_conformance.harness.cli",
                    "run",
                    "--target",
                    str(profile),
                    "--",
                    test,
                    "-p",
                    "no:cacheprovider",
                ],
                cwd=PACKAGE,
                env=ordinary_env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=300,
            )
        text = (tmp_path / "out.txt").read_text()
        assert run.returncode in (0, 6), text[-3000:]
        assert "amws 0/1 tests; " in text  # the plain status line, once
        assert not [c for c in text if ord(c) < 32 and c not in "\n\t"]
    finally:
        server.terminate()
        server.wait(timeout=10)
