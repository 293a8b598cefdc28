"""Benchmarks (a) and (c): the suite's wall time, and the rate-limit units the run spent.

(a) times ``python -m pytest suites -q -p no:cacheprovider`` in ``amws_conformance/`` (``--quick``:
``suites/rules``)
against the embedded reference server in a subprocess, with ``--conformance-report``: with the
default options (the deep plan, on the default pytest-xdist workers), then with ``--plan
certify`` and ``--plan gate``. (ci), when asked for, times the project's own tests.
(c) reads the report's ``rate_units`` and works out the minimum wall time the same run needs
on a target that enforces the documented bucket (2000 units, refilled at 800 a minute).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from amws_conformance import spec

ROOT = Path(__file__).resolve().parent.parent
# The documented bucket, as the spec encodes it.
CAPACITY = spec.rate_limit().capacity
REFILL_PER_MINUTE = spec.rate_limit().refill_per_minute
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|errors?|deselected)\b")


def parse_summary(output: str) -> dict[str, int]:
    """The counts of pytest's last summary line (``12 passed, 3 skipped in 4.5s``)."""
    lines = [line for line in output.splitlines() if re.search(r"\bin [\d.]+s\b", line)]
    counts = {"passed": 0, "failed": 0, "skipped": 0, "xfailed": 0, "xpassed": 0, "error": 0}
    for number, word in _COUNT.findall(lines[-1] if lines else ""):
        counts[word.removesuffix("s") if word.startswith("error") else word] = int(number)
    return counts


_WORKERS = re.compile(r"amws: (\d+) pytest-xdist workers")


def run_suite(
    quick: bool = False,
    timeout: float = 3600.0,
    plan: str | None = None,
    extra: tuple[str, ...] = (),
) -> dict[str, Any]:
    """One run of the suites (``quick``: ``suites/rules``) with the default options, or
    ``--plan plan``: wall time, counts, workers (the default's, or 0 for serial), report."""
    target = "suites/rules" if quick else "suites"
    with tempfile.TemporaryDirectory(prefix="amws-bench-report-") as folder:
        options = ["-q", "-p", "no:cacheprovider"]
        options += ["--plan", plan] if plan else []
        options += list(extra)
        command = [sys.executable, "-m", "pytest", target, *options, "--conformance-report", folder]
        began = time.perf_counter()
        done = subprocess.run(
            # From the package folder, the suites' root directory: ids read suites/... there.
            command,
            cwd=ROOT / "amws_conformance",
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        wall = time.perf_counter() - began
        report_path = Path(folder) / "report.json"
        report = json.loads(report_path.read_text(encoding="utf-8")) if report_path.exists() else {}
    workers = _WORKERS.search(done.stdout)
    return {
        "command": " ".join(["python", *command[1:-2]]),
        "scope": target,
        "plan": plan or "default",
        "workers": int(workers.group(1)) if workers else 0,
        "wall_seconds": round(wall, 1),
        "exit_status": done.returncode,
        "counts": parse_summary(done.stdout),
        "tail": done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else [],
        "failed_tests": sorted(report.get("failures", {}))[:20],
        "rate_units": report.get("rate_units"),
    }


def minimum_minutes(units: int) -> float:
    """Minutes a bucket that starts full needs to hand out ``units``: max(0, (u - 2000) / 800)."""
    return max(0.0, (units - CAPACITY) / REFILL_PER_MINUTE)


def rate_budget(rate_units: dict[str, Any] | None) -> dict[str, Any] | None:
    """Per paced bucket: units and minimum minutes on the documented bucket; the slowest bounds.

    Each key has a bucket of its own (failed authentications pay from the caller's), and the
    client paces every bucket independently, so the buckets drain in parallel and the run
    cannot finish before its slowest bucket has refilled enough.
    """
    if not rate_units:
        return None
    buckets = dict(rate_units.get("keys", {}))
    buckets["(failed auth)"] = rate_units.get("failed_auth", 0)
    rows = {
        name: {"units": units, "minimum_minutes": round(minimum_minutes(units), 2)}
        for name, units in sorted(buckets.items(), key=lambda item: -item[1])
    }
    slowest = max(rows, key=lambda name: rows[name]["units"]) if rows else None
    return {
        "bucket": {"capacity": CAPACITY, "refill_per_minute": REFILL_PER_MINUTE},
        "per_bucket": rows,
        "total_units": sum(buckets.values()),
        "slowest_bucket": slowest,
        "minimum_minutes": rows[slowest]["minimum_minutes"] if slowest else 0.0,
    }
