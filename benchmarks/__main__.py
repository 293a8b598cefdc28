"""``python -m benchmarks``: run the benchmarks, print a table, write benchmarks/results.json.

(a) wall time of the conformance suite against the embedded reference server: the default
    options (the deep plan on the default workers), then --plan certify and --plan gate;
(b) server CPU per request of the reference server's authenticated read and create next to a bare
    ASGI app;
(c) rate-limit units the run spent, and the minimum wall time they imply on the documented bucket;
(d) latency of a simple read while a near-cap image is uploaded and claimed, and peak memory;
(ci) with --ci: what CI runs on a clean clone of HEAD, install and tests timed apart.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks import ci, claim, suite, throughput

HERE = Path(__file__).resolve().parent


def machine() -> dict[str, Any]:
    cpu = "unknown"
    memory = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "memory": memory,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def quiet_enough(max_load: float | None, wait_seconds: float) -> list[float]:
    """Wait (bounded) for the 1-minute load average to drop under ``max_load``; return it."""
    deadline = time.monotonic() + wait_seconds
    while max_load is not None and os.getloadavg()[0] >= max_load:
        if time.monotonic() >= deadline:
            print(f"load {load_average()} still ≥ {max_load}; measuring anyway", flush=True)
            break
        time.sleep(15)
    return load_average()


def _git_commit() -> str | None:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=HERE.parent,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def table(rows: list[tuple[str, str]]) -> str:
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def rows_of(results: dict[str, Any]) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    ran = results.get("suite")
    runs = [("", ran)] if ran else []
    runs += [(f" --plan {name}", run) for name, run in results.get("plans", {}).items()]
    for option, run in runs:
        c = run["counts"]
        workers = f"{run['workers']} workers" if run.get("workers") else "serial"
        rows.append(
            (
                f"(a) pytest {run['scope']}{option}",
                f"{run['wall_seconds']:.1f} s wall, {workers} — {c['passed']} passed, "
                f"{c['failed']} failed, {c['skipped']} skipped, {c['error']} errors "
                f"(exit {run['exit_status']}; load {run['load_before']} -> {run['load_after']})",
            )
        )
    on_ci = results.get("ci")
    if on_ci and "counts" in on_ci:
        c, t = on_ci["counts"], on_ci
        rows.append(
            (
                "(ci) .ci/run on a clean clone",
                f"tests {t['test_wall_seconds']:.1f} s wall (pytest: {t['pytest_seconds']} s), "
                f"install {t['install_seconds']:.1f} s — {c['passed']} passed, {c['failed']} "
                f"failed, {c['skipped']} skipped (exit {t['exit_status']}; at {t['commit']}; "
                f"load {t['load_before']} -> {t['load_after']})",
            )
        )
        rows += [("(ci) failed", line) for line in on_ci.get("failed_tests", [])]
    elif on_ci:
        rows.append(("(ci) .ci/run on a clean clone", f"install failed: {on_ci.get('error', '')}"))
    bench = results.get("throughput")
    if bench:
        rows.extend(throughput.rows(bench))
    claimed = results.get("claim")
    if claimed:
        for step in ("upload", "claim"):
            runs = [r[step] for r in claimed["rounds"]]
            rows.append(
                (
                    f"(d) GET {claimed['read']} during {step}",
                    f"max {claimed[f'{step}_read_max_ms']} ms over {len(runs)} rounds "
                    f"({', '.join(str(r['max_ms']) for r in runs)} ms; {step} itself "
                    f"{', '.join(str(r['request_ms']) for r in runs)} ms)",
                )
            )
        rows.append(
            (
                "(d) server peak RSS",
                f"{claimed['peak_rss_mb_at_start']} MiB at start -> "
                f"{claimed['peak_rss_mb_after']} MiB after (image "
                f"{claimed['image']['pixels'][0]} x {claimed['image']['pixels'][1]}, "
                f"{claimed['image']['bytes']} B)",
            )
        )
    budget = results.get("rate_budget")
    if budget:
        for name, row in budget["per_bucket"].items():
            rows.append(
                (
                    f"(c) units {name}",
                    f"{row['units']} units -> >= {row['minimum_minutes']:.2f} min on 2000/800",
                )
            )
        rows.append(
            (
                "(c) minimum run time",
                f"{budget['minimum_minutes']:.2f} min (slowest bucket: {budget['slowest_bucket']}"
                "; buckets pace in parallel)",
            )
        )
    elif ran:
        rows.append(("(c) units", "the report has no rate_units section"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="(a) times suites/rules only")
    parser.add_argument("--skip-suite", action="store_true", help="skip (a) and (c)")
    parser.add_argument("--skip-throughput", action="store_true", help="skip (b)")
    parser.add_argument("--skip-claim", action="store_true", help="skip (d)")
    parser.add_argument("--claim-rounds", type=int, default=3, help="(d) upload-and-claim rounds")
    parser.add_argument("--requests", type=int, default=3000, help="(b) measured requests")
    parser.add_argument("--warmup", type=int, default=300, help="(b) warm-up requests")
    parser.add_argument("--workers", type=int, default=8, help="(b) concurrent threads")
    parser.add_argument(
        "--departments", type=int, default=20, help="(b) departments in the listed body"
    )
    parser.add_argument(
        "--driver",
        action="append",
        choices=throughput.DRIVERS,
        help="(b) load driver(s); default: all",
    )
    parser.add_argument("--repeat", type=int, default=3, help="(b) runs per driver; median")
    parser.add_argument("--max-seconds", type=float, default=120.0, help="(b) cap per side")
    parser.add_argument("--suite-timeout", type=float, default=3600.0, help="(a) cap, seconds")
    parser.add_argument(
        "--plans",
        default="deep,certify,gate",
        help="(a) the runs timed: deep (the default options), certify, gate; comma-separated",
    )
    parser.add_argument(
        "--ci",
        action="store_true",
        help="(ci) also time what CI runs on a clean clone of HEAD: the README's install "
        "command, then its test command (each timed apart)",
    )
    parser.add_argument(
        "--max-load",
        type=float,
        default=None,
        help="before each benchmark wait until the 1-minute load average is below this",
    )
    parser.add_argument("--wait", type=float, default=600.0, help="longest wait for --max-load")
    parser.add_argument("--output", default=str(HERE / "results.json"))
    args = parser.parse_args(argv)

    results: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": _git_commit(),
        "machine": machine(),
    }
    if not args.skip_throughput:
        before = quiet_enough(args.max_load, args.wait)
        bench = throughput.run(
            args.requests,
            args.workers,
            args.warmup,
            args.max_seconds,
            args.departments,
            args.driver or throughput.DRIVERS,
            args.repeat,
        )
        results["throughput"] = {**bench, "load_before": before, "load_after": load_average()}
    if not args.skip_claim:
        before = quiet_enough(args.max_load, args.wait)
        measured = claim.run(args.claim_rounds)
        results["claim"] = {**measured, "load_before": before, "load_after": load_average()}
    plans = [p for p in args.plans.split(",") if p]
    unknown = set(plans) - {"deep", "certify", "gate"}
    if unknown:
        parser.error(f"--plans: unknown plan(s) {', '.join(sorted(unknown))}")
    if not args.skip_suite:
        for plan in plans:
            before = quiet_enough(args.max_load, args.wait)
            # deep is what the default options run against the embedded server.
            ran = suite.run_suite(args.quick, args.suite_timeout, None if plan == "deep" else plan)
            timed = {**ran, "load_before": before, "load_after": load_average()}
            if plan == "deep":
                results["suite"] = timed
                results["rate_budget"] = suite.rate_budget(ran["rate_units"])
            else:
                results.setdefault("plans", {})[plan] = timed
    if args.ci:
        before = quiet_enough(args.max_load, args.wait)
        ran = ci.run_ci(args.suite_timeout)
        results["ci"] = {**ran, "load_before": before, "load_after": load_average()}
    Path(args.output).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    m = results["machine"]
    print(
        f"{results['date']} — {m['nproc']} x {m['cpu']}, {m['memory']}, Python {m['python']}",
    )
    print(table(rows_of(results)))
    print(f"written {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
