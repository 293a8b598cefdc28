"""Benchmark (b): the reference server's authenticated read and create next to a bare ASGI app.

Both run under uvicorn on loopback with the same socket and uvicorn settings; the reference
server through ``amws-reference serve --port 0 --profile-out``, the bare app answering the
reference server's own response bytes, status and content type (the list for the read, the
201 acknowledgement for the create). A separate process (``benchmarks._load``) drives each
with the same bounded load, once per driver: the read sends one GET over and over, the create
a POST with a department name of its own each time.

Requests per second on a small machine can be bounded by the driver, which shares the cores
with the server; so each measurement also records the server process's CPU time per request
(from /proc), which the driver does not limit.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import yaml

from amws_conformance.harness.target.embedded import serve_command, wait_for_profile

PATH = "/api/ws/v1/departments"
ROOT = Path(__file__).resolve().parent.parent
DRIVERS = ("httpx", "raw")


def _wait_for(path: Path, process: subprocess.Popen[bytes], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists() or not path.read_text(encoding="utf-8").strip():
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode} before listening")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start within {timeout:.0f} s")
        time.sleep(0.05)
    time.sleep(0.2)  # the file is written just before uvicorn starts accepting


@contextmanager
def _process(command: list[str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with open(log, "wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _cpu_seconds(pid: int) -> tuple[float, float]:
    """User and system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


@dataclass(frozen=True)
class Operation:
    """One measured request: its method, the status due, and for a write its body's template."""

    name: str
    method: str
    expect: int
    body_template: str | None = None

    def template(self, run: str) -> str | None:
        """The body template of one run: its names differ from every other run's."""
        return None if self.body_template is None else self.body_template.replace("{run}", run)


READ = Operation("read", "GET", 200)
# {run} tells the runs apart, {n} (benchmarks._load) the requests of a run: every name is new.
CREATE = Operation("create", "POST", 201, '{"name": "Load {run} {n}"}')
OPERATIONS = (READ, CREATE)


def _load(
    driver: str,
    url: str,
    headers: dict[str, str],
    settings: dict[str, Any],
    operation: Operation,
    run: str,
) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks._load", url, f"--driver={driver}"]
    command += [f"--method={operation.method}", f"--expect={operation.expect}"]
    template = operation.template(run)
    if template is not None:
        command.append(f"--body-template={template}")
    command += [f"--header={name}: {value}" for name, value in headers.items()]
    command += [f"--{name.replace('_', '-')}={value}" for name, value in settings.items()]
    done = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=settings["max_seconds"] + 60,
        check=True,
    )
    return json.loads(done.stdout)


def _per_request(seconds: float, served: int) -> float | None:
    return round(seconds * 1000 / served, 3) if served else None


def _measure(
    pid: int,
    url: str,
    headers: dict[str, str],
    settings: dict[str, Any],
    drivers: Sequence[str],
    repeat: int,
    operation: Operation,
    refill: Callable[[], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per driver, ``repeat`` times: the driver's figures plus the server's CPU milliseconds
    per request; the median run by requests per second stands for the driver. ``refill``, if
    given, runs before each run, outside the CPU measured."""
    results = {}
    for driver in drivers:
        runs = []
        for number in range(repeat):
            if refill is not None:
                refill()
            user, system = _cpu_seconds(pid)
            result = _load(driver, url, headers, settings, operation, f"{driver} {number}")
            served = result["requests"] + result["warmup_requests"]
            after = _cpu_seconds(pid)
            user, system = after[0] - user, after[1] - system
            result["server_cpu_ms_per_request"] = _per_request(user + system, served)
            # The kernel's side of loopback TCP is charged to the sender as system time.
            result["server_user_system_ms_per_request"] = [
                _per_request(user, served),
                _per_request(system, served),
            ]
            runs.append(result)
        # The run with the median requests per second stands for the driver; all are kept.
        runs.sort(key=lambda r: r["rps"])
        results[driver] = {
            **runs[len(runs) // 2],
            "repeats_rps": [r["rps"] for r in runs],
            "repeats_server_cpu_ms_per_request": [r["server_cpu_ms_per_request"] for r in runs],
        }
    return results


def _refill(base: str, token: str) -> None:
    """Move the reference server's clock on a minute, so the full key's bucket is full again.

    A run spends up to 3300 x 50 units (a create's cost) at thousands of requests a second,
    faster than even the raised bucket refills: without this, a later run meets 429s."""
    moved = httpx.put(
        base + "/_reference/clock",
        headers={"Authorization": f"Bearer {token}"},
        json={"advance_seconds": 60},
        timeout=10,
    )
    moved.raise_for_status()


def _ratio(a: float | None, b: float | None, digits: int) -> float | None:
    return round(a / b, digits) if a and b else None


def _compared(reference: dict[str, Any], bare: dict[str, Any]) -> dict[str, Any]:
    """The two sides of one driver and their ratios; none when either answered a status other
    than the one due (a refusal costs the server something else than the operation)."""
    answered = not reference["unexpected_status"] and not bare["unexpected_status"]
    return {
        "reference": reference,
        "bare": bare,
        "rps_ratio_reference_to_bare": _ratio(reference["rps"], bare["rps"], 3)
        if answered
        else None,
        "cpu_ratio_reference_to_bare": _ratio(
            reference["server_cpu_ms_per_request"], bare["server_cpu_ms_per_request"], 2
        )
        if answered
        else None,
    }


def _sample(base: str, headers: dict[str, str], operation: Operation) -> httpx.Response:
    """One request of ``operation`` on the reference server: the answer the bare app repeats."""
    body = operation.template("sample")
    content = None if body is None else body.replace("{n}", "0").encode("utf-8")
    sent = {**headers, "Content-Type": "application/json"} if content else headers
    answer = httpx.request(operation.method, base + PATH, headers=sent, content=content, timeout=10)
    if answer.status_code != operation.expect:
        raise RuntimeError(f"{operation.method} {PATH} answered {answer.status_code}")
    return answer


def _same_answer(
    url: str, headers: dict[str, str], operation: Operation, sample: httpx.Response
) -> None:
    check = _sample(url.removesuffix(PATH), headers, operation)
    same = check.content == sample.content and check.status_code == sample.status_code
    if not same or check.headers["content-type"] != sample.headers["content-type"]:
        raise RuntimeError(f"the bare app does not answer the reference server's {operation.name}")


def run(
    requests: int = 3000,
    workers: int = 8,
    warmup: int = 300,
    max_seconds: float = 120.0,
    departments: int = 20,
    drivers: Sequence[str] = DRIVERS,
    repeat: int = 3,
) -> dict[str, Any]:
    """Server CPU per request and requests per second of the reference server and of the bare
    app, and their ratios, for the read and for the create.

    The demo deployment has no departments; ``departments`` are created first so the read
    answers a realistic list rather than ``[]``. The reads are measured before the creates,
    which add departments of their own.
    """
    settings = {
        "requests": requests,
        "workers": workers,
        "warmup": warmup,
        "max_seconds": max_seconds,
    }
    result: dict[str, Any] = {
        "path": PATH,
        "departments": departments,
        "load": {**settings, "repeat": repeat},
        "wrk": bool(shutil.which("wrk")),
    }
    samples: dict[str, httpx.Response] = {}
    measured: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="amws-bench-") as folder:
        tmp = Path(folder)
        profile_path = tmp / "profile.yaml"
        with _process(serve_command(profile_path), tmp / "reference.log") as reference:
            wait_for_profile(reference, profile_path, 60, log=tmp / "reference.log")
            profile = yaml.safe_load(profile_path.read_text(encoding="utf-8"))
            base, key = profile["base_url"], profile["keys"]["full"]
            headers = {"Authorization": key}
            for number in range(departments):
                made = httpx.post(
                    base + PATH, headers=headers, json={"name": f"Bench {number:03}"}, timeout=10
                )
                made.raise_for_status()
            refill = partial(_refill, base, profile["control"]["token"])
            for operation in OPERATIONS:
                samples[operation.name] = _sample(base, headers, operation)
                measured[operation.name] = {
                    "reference": _measure(
                        reference.pid,
                        base + PATH,
                        headers,
                        settings,
                        drivers,
                        repeat,
                        operation,
                        refill,
                    )
                }
        content_types = {s.headers["content-type"] for s in samples.values()}
        if len(content_types) != 1:
            raise RuntimeError(f"the read and the create answer {sorted(content_types)}")
        url_file = tmp / "bare.url"
        bare_command = [sys.executable, "-m", "benchmarks._bare", "--url-out", str(url_file)]
        bare_command += ["--content-type", content_types.pop()]
        for operation in OPERATIONS:
            answer = samples[operation.name]
            (tmp / operation.name).write_bytes(answer.content)
            bare_command += ["--answer", operation.method, str(answer.status_code)]
            bare_command.append(str(tmp / operation.name))
        with _process(bare_command, tmp / "bare.log") as bare:
            _wait_for(url_file, bare, "the bare ASGI app", 30)
            url = url_file.read_text(encoding="utf-8").strip() + PATH
            for operation in OPERATIONS:
                _same_answer(url, headers, operation, samples[operation.name])
                measured[operation.name]["bare"] = _measure(
                    bare.pid, url, headers, settings, drivers, repeat, operation
                )
    for operation in OPERATIONS:
        on_reference, on_bare = (
            measured[operation.name]["reference"],
            measured[operation.name]["bare"],
        )
        sample = samples[operation.name]
        result[operation.name] = {
            "method": operation.method,
            "status": sample.status_code,
            "body_bytes": len(sample.content),
            "content_type": sample.headers["content-type"],
            "drivers": {
                driver: _compared(on_reference[driver], on_bare[driver]) for driver in drivers
            },
        }
    return result


def rows(bench: dict[str, Any]) -> list[tuple[str, str]]:
    """The table rows of one run (``python -m benchmarks`` prints them)."""
    found: list[tuple[str, str]] = []
    for operation in OPERATIONS:
        measured = bench[operation.name]
        what = f"{operation.method:4} {bench['path']}"
        for driver, figures in measured["drivers"].items():
            for side in ("reference", "bare"):
                r = figures[side]
                split = "/".join(map(str, r["server_user_system_ms_per_request"]))
                found.append(
                    (
                        f"(b) {driver:5} {side:9} {what}",
                        f"{r['rps']:.0f} req/s ({r['requests']} req, {r['unexpected_status']} "
                        f"not {measured['status']}, p50 {r['latency_ms']['p50']} ms, "
                        f"p99 {r['latency_ms']['p99']} ms); "
                        f"server {r['server_cpu_ms_per_request']} CPU ms/req "
                        f"(user/system {split}); "
                        f"driver {r['client_cpu_per_wall_second']} CPU s/s",
                    )
                )
            found.append(
                (
                    f"(b) {driver:5} reference / bare {operation.name}",
                    f"req/s {figures['rps_ratio_reference_to_bare']}; "
                    f"server CPU per request {figures['cpu_ratio_reference_to_bare']} x",
                )
            )
    load = bench["load"]
    found.append(
        (
            "(b) load",
            f"{load['workers']} workers, {load['requests']} requests after {load['warmup']} "
            f"warm-up, median of {load['repeat']} runs; read body {bench['read']['body_bytes']} B "
            f"({bench['departments']} departments), create answer "
            f"{bench['create']['body_bytes']} B; load average {bench.get('load_before')} -> "
            f"{bench.get('load_after')}",
        )
    )
    return found
