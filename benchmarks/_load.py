"""A bounded load driver, run in its own process: ``python -m benchmarks._load URL ...``.

Two drivers, the same bounded load (a warm-up, then a fixed number of requests shared by N
concurrent workers, each on one keep-alive connection, cut off at ``--max-seconds``):

- ``httpx``: N threads, each with its own ``httpx.Client``. Realistic, but on a small machine
  the driver's own CPU (and the GIL) can be the limit rather than the server.
- ``raw``: N asyncio connections sending pre-encoded HTTP/1.1 requests and reading each
  answer by its Content-Length. Cheap enough per request that the server is the limit.

A read sends the same GET each time. A write (``--method POST --body-template T``) sends a
body of its own each time: ``T`` with ``{n}`` replaced by the request's number, so a create
that must be unique (a department's name) is each time; the ``raw`` driver encodes all of them
before the clock starts. ``--expect`` is the status every answer should have (200, or 201 for a
create); any other is counted.

Prints one JSON object: requests, answers of another status, seconds, requests per second,
latency percentiles and the driver's CPU seconds per wall second.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx


@dataclass(frozen=True)
class Ask:
    """What every request of a run asks: method, URL, headers, body and the status due."""

    method: str
    url: str
    headers: dict[str, str]
    body_template: str | None = None
    expect: int = 200

    def body(self, number: int) -> bytes | None:
        """The body of request ``number`` (counting from 0 over warm-up and measured ones)."""
        if self.body_template is None:
            return None
        return self.body_template.replace("{n}", f"{number:07}").encode("utf-8")


Summary = dict[str, object]


class Tally:
    """What the workers share: the requests left, latencies, failures, start and end times."""

    def __init__(self, requests: int, deadline: float) -> None:
        self.remaining = requests
        self.deadline = deadline
        self.latencies: list[float] = []
        self.unexpected = 0
        self.errors: list[str] = []
        self.spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.remaining <= 0 or time.monotonic() >= self.deadline:
                return False
            self.remaining -= 1
            return True

    def failed(self, error: str | None = None) -> None:
        with self._lock:
            self.unexpected += 1
            if error:
                self.errors.append(error)

    def summary(self, requested: int, warmup: int, cpu: float, expect: int) -> Summary:
        done = sorted(self.latencies)
        count = len(done)
        # From the first worker's start to the last worker's end, as the workers saw it.
        seconds = (
            max(e for _, e in self.spans) - min(b for b, _ in self.spans) if self.spans else 0.0
        )

        def pct(p: float) -> float:
            return round(done[min(count - 1, int(p * count))] * 1000, 2) if count else 0.0

        return {
            "requests": count,
            "expected_status": expect,
            "unexpected_status": self.unexpected,
            "errors": self.errors[:3],
            "seconds": round(seconds, 3),
            "rps": round(count / seconds, 1) if seconds else 0.0,
            "latency_ms": {
                "mean": round(statistics.fmean(done) * 1000, 2) if count else 0.0,
                "p50": pct(0.50),
                "p99": pct(0.99),
            },
            "cut_short": count < requested,
            "warmup_requests": warmup,
            # Near 1 (one core, or the GIL) the driver rather than the server is the limit.
            "client_cpu_per_wall_second": round(cpu / seconds, 2) if seconds else None,
        }


def drive_httpx(ask: Ask, requests: int, workers: int, warmup: int, deadline: float) -> Summary:
    tally = Tally(requests, deadline)
    barrier = threading.Barrier(workers + 1)
    each = max(1, warmup // workers)
    # Request numbers shared by the threads (a write's bodies differ by them).
    numbers = itertools.count()
    numbers_lock = threading.Lock()

    # A body is sent as JSON, as the raw driver declares it (httpx declares no type for bytes).
    typed = {"Content-Type": "application/json"} if ask.body_template is not None else {}

    def send(client: httpx.Client) -> httpx.Response:
        with numbers_lock:
            number = next(numbers)
        return client.request(ask.method, ask.url, content=ask.body(number), headers=typed)

    def worker() -> None:
        with httpx.Client(headers=ask.headers, timeout=10.0) as client:
            try:
                for _ in range(each):
                    send(client)
            finally:
                barrier.wait()
            mine: list[float] = []
            first = time.perf_counter()
            while tally.take():
                began = time.perf_counter()
                try:
                    response = send(client)
                except httpx.HTTPError as error:
                    tally.failed(repr(error))
                    continue
                mine.append(time.perf_counter() - began)
                if response.status_code != ask.expect:
                    tally.failed()
            tally.spans.append((first, time.perf_counter()))
            tally.latencies.extend(mine)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for thread in threads:
        thread.start()
    barrier.wait()
    cpu = time.process_time()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()) + 15)
    return tally.summary(requests, each * workers, time.process_time() - cpu, ask.expect)


def encoded(ask: Ask, count: int) -> list[bytes]:
    """``count`` HTTP/1.1 requests as bytes: one message for a read, one per number for a write."""
    parts = urlsplit(ask.url)
    lines = [f"{ask.method} {parts.path or '/'} HTTP/1.1", f"Host: {parts.netloc}"]
    lines += [f"{name}: {value}" for name, value in ask.headers.items()]
    if ask.body_template is None:
        return [("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")] * count
    head = "\r\n".join([*lines, "Content-Type: application/json"])
    messages = []
    for number in range(count):
        body = ask.body(number) or b""
        length = f"\r\nContent-Length: {len(body)}\r\n\r\n"
        messages.append((head + length).encode("latin-1") + body)
    return messages


async def _raw(ask: Ask, requests: int, workers: int, warmup: int, deadline: float) -> Summary:
    parts = urlsplit(ask.url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    tally = Tally(requests, deadline)
    each = max(1, warmup // workers)
    # Every request is encoded before the clock starts; a write's each carries its own body.
    messages = iter(encoded(ask, each * workers + requests))

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> int:
        writer.write(next(messages))
        head = await reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        await reader.readexactly(length)
        return status

    connections = [await asyncio.open_connection(host, port) for _ in range(workers)]
    for reader, writer in connections:
        for _ in range(each):
            await one(reader, writer)

    async def worker(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = time.perf_counter()
        while tally.take():
            began = time.perf_counter()
            try:
                status = await one(reader, writer)
            except (OSError, ValueError, asyncio.IncompleteReadError) as error:
                tally.failed(repr(error))
                break
            tally.latencies.append(time.perf_counter() - began)
            if status != ask.expect:
                tally.failed()
        tally.spans.append((first, time.perf_counter()))

    cpu = time.process_time()
    await asyncio.gather(*(worker(r, w) for r, w in connections))
    cpu = time.process_time() - cpu
    for _, writer in connections:
        writer.close()
    return tally.summary(requests, each * workers, cpu, ask.expect)


def drive_raw(ask: Ask, requests: int, workers: int, warmup: int, deadline: float) -> Summary:
    return asyncio.run(_raw(ask, requests, workers, warmup, deadline))


DRIVERS: dict[str, Callable[[Ask, int, int, int, float], Summary]] = {
    "httpx": drive_httpx,
    "raw": drive_raw,
}


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchmarks._load", description=__doc__)
    parser.add_argument("url")
    parser.add_argument("--driver", choices=sorted(DRIVERS), default="httpx")
    parser.add_argument("--method", default="GET")
    parser.add_argument("--header", action="append", default=[], metavar="NAME:VALUE")
    parser.add_argument("--body-template", help="a JSON body; {n} becomes the request's number")
    parser.add_argument("--expect", type=int, default=200, help="the status every answer is due")
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--max-seconds", type=float, default=120.0)
    args = parser.parse_args()
    pairs = (h.split(":", 1) for h in args.header)
    headers = {name.strip(): value.strip() for name, value in pairs}
    ask = Ask(args.method.upper(), args.url, headers, args.body_template, args.expect)
    # Hand the GIL over sooner than every 5 ms, so a thread whose answer has arrived is not
    # kept waiting behind one that is busy (the convoy effect that would cap the driver).
    sys.setswitchinterval(0.0005)
    deadline = time.monotonic() + args.max_seconds
    drive = DRIVERS[args.driver]
    result = drive(ask, args.requests, args.workers, args.warmup, deadline)
    json.dump({"driver": args.driver, "method": ask.method, **result}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
