"""A target that dies mid-run: the suite stops within a minute and says the target is gone.

A reference server is served as a process of its own; the rule suites run against it, and the
server is killed once the tests are under way. The run must end soon after (not test every
remaining rule against a dead socket), report no rule as failed for want of an answer, and name
the target as unreachable in its verdict.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from amws_conformance.harness.lifecycle.journal import Entry, read
from tests._served import PACKAGE, ordinary_env, serve


def _long_held(ledger: Path, later: int = 20) -> list[Entry]:
    """Records the run's ledger says it still holds, made at least ``later`` ledger events
    ago: records that outlived other tests' records belong to a module's or the session's
    set-up, and stay until it ends, not only to the end of the test that made them."""
    try:
        lines = ledger.read_text(encoding="utf-8").split("\n")[:-1]  # whole lines only
        held = read(ledger)[1]
    except FileNotFoundError:  # not written yet
        return []
    made = {
        entry["uuid"].lower(): place
        for place, entry in enumerate(map(json.loads, lines))
        if entry["event"] == "made"
    }
    old = len(lines) - later
    return [e for e in held if made.get(e.uuid.lower(), old + 1) <= old]


def test_a_killed_target_ends_the_run_within_a_minute(tmp_path: Path) -> None:
    server, profile = serve(tmp_path)
    report, state = tmp_path / "report", tmp_path / "state"
    env = ordinary_env()
    options = ["--target", str(profile), "--plan", "deep", "--conformance-report", str(report)]
    options += ["--state-dir", str(state), "--run-id", "deadbeef"]
    suite = subprocess.Popen(
        [sys.executable, "-m", "pytest", "suites/rules", "-p", "no:cacheprovider", "-q", *options],
        cwd=PACKAGE,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert suite.stdout is not None
        # The plan's line comes right before the first test: from then on tests are running.
        for line in suite.stdout:
            if line.startswith("amws plan"):
                break
        # Killed while the run holds records it keeps for a while, so its cleanup meets the
        # dead target (a fixed wait raced a loaded machine, where the first records came later;
        # a record held for one test only may be deleted between the look and the kill).
        waited = time.monotonic() + 120
        while not _long_held(state / "deadbeef.ledger.jsonl"):
            assert suite.poll() is None and time.monotonic() < waited, "the run made no record"
            time.sleep(0.02)
        server.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        output, _ = suite.communicate(timeout=120)
        ended = time.monotonic() - killed
    finally:
        # Both reaped and the pipe closed here: a Popen freed before its process is waited
        # for warns that it is still running (a ResourceWarning, as an unclosed pipe does).
        for process in (server, suite):
            process.kill()
            process.wait(timeout=30)
        if suite.stdout is not None:
            suite.stdout.close()
    assert ended < 60, f"the run went on for {ended:.0f} s after the target died"
    document = json.loads((report / "report.json").read_text())
    assert "target unreachable since" in document["verdict"], document["verdict"]
    assert "target unreachable since" in output
    tests = document["tests"].values()
    assert sum(t["outcome"] == "not-run" for t in tests) > 100, "the run tested on a dead target"
    # No rule failed for want of an answer: the tests that met the dead socket are blocked.
    unanswered = [c for c in document["root_causes"] if c["cause"] == "no answer"]
    assert unanswered and not unanswered[0]["failed_rules"]
    assert any("unreachable" in p for p in document["cleanup_problems"])
