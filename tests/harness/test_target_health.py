"""A target that dies mid-run: the suite stops within a minute and says the target is gone.

A reference server is served as a process of its own; the rule suites run against it, and the
server is killed once the tests are under way. The run must end soon after (not test every
remaining rule against a dead socket), report no rule as failed for want of an answer, and name
the target as unreachable in its verdict.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests._served import ROOT, serve


def test_a_killed_target_ends_the_run_within_a_minute(tmp_path: Path) -> None:
    server, profile = serve(tmp_path)
    report = tmp_path / "report"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    options = ["--target", str(profile), "--plan", "deep", "--conformance-report", str(report)]
    suite = subprocess.Popen(
        [sys.executable, "-m", "pytest", "suites/rules", "-p", "no:cacheprovider", "-q", *options],
        cwd=ROOT,
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
        time.sleep(3)
        server.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        output, _ = suite.communicate(timeout=120)
        ended = time.monotonic() - killed
    finally:
        server.kill()
        suite.kill()
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
