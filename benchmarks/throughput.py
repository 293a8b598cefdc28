"""Benchmark (b): the reference server's authenticated read next to a bare ASGI app.

Both run under uvicorn on loopback with the same socket and uvicorn settings; the reference
server through ``amws-reference serve --port 0 --profile-out``, the bare app answering the
reference server's own response bytes and content type. A separate process
(``benchmarks._load``) drives each with the same bounded load, once per driver.

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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

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


def _reference_command(profile: Path) -> list[str]:
    script = Path(sys.executable).parent / "amws-reference"
    head = [str(script)] if script.exists() else [sys.executable, "-m", "reference_server.cli"]
    return [*head, "serve", "--port", "0", "--db", ":memory:", "--profile-out", str(profile)]


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _load(
    driver: str, url: str, headers: dict[str, str], settings: dict[str, Any]
) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks._load", url, f"--driver={driver}"]
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


def _measure(
    pid: int,
    url: str,
    headers: dict[str, str],
    settings: dict[str, Any],
    drivers: Sequence[str],
    repeat: int,
) -> dict[str, dict[str, Any]]:
    """Per driver, ``repeat`` times: the driver's figures plus the server's CPU milliseconds
    per request; the median run by requests per second stands for the driver."""
    results = {}
    for driver in drivers:
        runs = []
        for _ in range(repeat):
            before = _cpu_seconds(pid)
            result = _load(driver, url, headers, settings)
            served = result["requests"] + result["warmup_requests"]
            cpu = _cpu_seconds(pid) - before
            result["server_cpu_ms_per_request"] = round(cpu * 1000 / served, 3) if served else None
            runs.append(result)
        # The run with the median requests per second stands for the driver; all are kept.
        runs.sort(key=lambda r: r["rps"])
        results[driver] = {
            **runs[len(runs) // 2],
            "repeats_rps": [r["rps"] for r in runs],
            "repeats_server_cpu_ms_per_request": [r["server_cpu_ms_per_request"] for r in runs],
        }
    return results


def _ratio(a: float | None, b: float | None, digits: int) -> float | None:
    return round(a / b, digits) if a and b else None


def run(
    requests: int = 3000,
    workers: int = 8,
    warmup: int = 300,
    max_seconds: float = 120.0,
    departments: int = 20,
    drivers: Sequence[str] = DRIVERS,
    repeat: int = 3,
) -> dict[str, Any]:
    """Requests per second of the reference server and of the bare app, and their ratio.

    The demo deployment has no departments; ``departments`` are created first so the read
    answers a realistic list rather than ``[]``.
    """
    settings = {
        "requests": requests,
        "workers": workers,
        "warmup": warmup,
        "max_seconds": max_seconds,
    }
    result: dict[str, Any] = {
        "path": PATH,
        "load": {**settings, "repeat": repeat},
        "wrk": bool(shutil.which("wrk")),
    }
    with tempfile.TemporaryDirectory(prefix="amws-bench-") as folder:
        tmp = Path(folder)
        profile_path = tmp / "profile.yaml"
        with _process(_reference_command(profile_path), tmp / "reference.log") as reference:
            _wait_for(profile_path, reference, "amws-reference serve", 60)
            profile = yaml.safe_load(profile_path.read_text(encoding="utf-8"))
            base, key = profile["base_url"], profile["keys"]["full"]
            headers = {"Authorization": key}
            for number in range(departments):
                made = httpx.post(
                    base + PATH, headers=headers, json={"name": f"Bench {number:03}"}, timeout=10
                )
                made.raise_for_status()
            sample = httpx.get(base + PATH, headers=headers, timeout=10)
            sample.raise_for_status()
            content_type = sample.headers["content-type"]
            (tmp / "body").write_bytes(sample.content)
            result["departments"] = departments
            result["body_bytes"] = len(sample.content)
            result["content_type"] = content_type
            on_reference = _measure(reference.pid, base + PATH, headers, settings, drivers, repeat)
        url_file = tmp / "bare.url"
        bare_command = [
            sys.executable,
            "-m",
            "benchmarks._bare",
            "--body",
            str(tmp / "body"),
            "--content-type",
            content_type,
            "--url-out",
            str(url_file),
        ]
        with _process(bare_command, tmp / "bare.log") as bare:
            _wait_for(url_file, bare, "the bare ASGI app", 30)
            url = url_file.read_text(encoding="utf-8").strip() + PATH
            check = httpx.get(url, headers=headers, timeout=10)
            if check.content != sample.content or check.headers["content-type"] != content_type:
                raise RuntimeError("the bare app does not answer the reference server's bytes")
            on_bare = _measure(bare.pid, url, headers, settings, drivers, repeat)
    result["drivers"] = {
        driver: {
            "reference": on_reference[driver],
            "bare": on_bare[driver],
            "rps_ratio_reference_to_bare": _ratio(
                on_reference[driver]["rps"], on_bare[driver]["rps"], 3
            ),
            "cpu_ratio_reference_to_bare": _ratio(
                on_reference[driver]["server_cpu_ms_per_request"],
                on_bare[driver]["server_cpu_ms_per_request"],
                2,
            ),
        }
        for driver in drivers
    }
    return result
