"""Benchmark (d): a simple read while a near-cap image is uploaded and claimed as a photo.

``amws-reference serve --port 0`` runs in its own process. A PNG of 7000 x 7000 pixels (just
under the server's 50-megapixel safety cap, about 160 KB on the wire) is uploaded, then claimed
by a person create (``photoUuid``), which decodes it, writes its JPEG rendition and thumbnail.
During each of the two requests a prober thread sends ``GET /api/ws/v1/departments`` one after
another on a keep-alive connection and records each answer's latency. The figures: the heavy
request's own duration, the probes' count, median and maximum latency while it ran, and the
server's peak resident memory (``VmHWM`` from /proc) before and after.

Nothing here asserts a time; the figures are printed and written to the results file.
"""

from __future__ import annotations

import io
import statistics
import tempfile
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import yaml
from PIL import Image

from benchmarks.throughput import _process, _reference_command, _wait_for

READ = "/api/ws/v1/departments"
SIZE = (7000, 7000)


def near_cap_png(size: tuple[int, int] = SIZE) -> bytes:
    """One flat colour: tiny on the wire, every pixel still has to be decoded."""
    out = io.BytesIO()
    Image.new("RGB", size, (200, 120, 40)).save(out, "PNG", optimize=True)
    return out.getvalue()


def _peak_rss_mb(pid: int) -> float:
    """The process's high-water resident set (Linux /proc), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


class _Prober:
    """Sends the simple read back to back until stopped; keeps each latency in ms."""

    def __init__(self, base: str, headers: dict[str, str]) -> None:
        self._client = httpx.Client(base_url=base, headers=headers, timeout=60)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.latencies: list[float] = []
        self.failures = 0

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            answer = self._client.get(READ)
            self.latencies.append((time.perf_counter() - started) * 1000)
            if answer.status_code != 200:
                self.failures += 1

    def __enter__(self) -> _Prober:
        self._client.get(READ).raise_for_status()  # the connection is open before timing
        self._thread.start()
        time.sleep(0.05)  # a few probes before the heavy request starts
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=120)
        self._client.close()

    def figures(self) -> dict[str, Any]:
        found = self.latencies
        return {
            "probes": len(found),
            "non_200": self.failures,
            "p50_ms": round(statistics.median(found), 1) if found else None,
            "max_ms": round(max(found), 1) if found else None,
        }


def _timed(base: str, headers: dict[str, str], send: Any) -> tuple[httpx.Response, dict[str, Any]]:
    with _Prober(base, headers) as prober:
        started = time.perf_counter()
        answer = send()
        took = (time.perf_counter() - started) * 1000
    return answer, {"request_ms": round(took, 1), "status": answer.status_code, **prober.figures()}


def run(repeat: int = 3) -> dict[str, Any]:
    """``repeat`` upload-and-claim rounds on one server; each round's figures are kept."""
    result: dict[str, Any] = {
        "image": {"pixels": list(SIZE), "bytes": len(near_cap_png())},
        "read": READ,
    }
    rounds = []
    with tempfile.TemporaryDirectory(prefix="amws-bench-claim-") as folder:
        tmp = Path(folder)
        profile_path = tmp / "profile.yaml"
        with _process(_reference_command(profile_path), tmp / "reference.log") as reference:
            _wait_for(profile_path, reference, "amws-reference serve", 60)
            profile = yaml.safe_load(profile_path.read_text(encoding="utf-8"))
            base = profile["base_url"]
            headers = {"Authorization": profile["keys"]["full"]}
            result["peak_rss_mb_at_start"] = _peak_rss_mb(reference.pid)
            with httpx.Client(base_url=base, headers=headers, timeout=120) as api:
                for number in range(repeat):
                    # A different colour each round: an identical staged file is refused.
                    out = io.BytesIO()
                    Image.new("RGB", SIZE, (200, 120, number)).save(out, "PNG", optimize=True)
                    files = {"file": ("near-cap.png", out.getvalue(), "image/png")}
                    upload, upload_figures = _timed(
                        base, headers, partial(api.post, "/api/ws/v1/files/upload", files=files)
                    )
                    upload.raise_for_status()
                    person = {"firstName": f"Bench {number}", "photoUuid": upload.json()["uuid"]}
                    claim, claim_figures = _timed(
                        base, headers, partial(api.post, "/api/ws/v1/persons", json=person)
                    )
                    claim.raise_for_status()
                    rounds.append({"upload": upload_figures, "claim": claim_figures})
            result["peak_rss_mb_after"] = _peak_rss_mb(reference.pid)
    result["rounds"] = rounds
    for step in ("upload", "claim"):
        worst = [r[step]["max_ms"] for r in rounds if r[step]["max_ms"] is not None]
        result[f"{step}_read_max_ms"] = max(worst) if worst else None
    return result


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
