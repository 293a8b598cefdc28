"""Whether the target still answers, and how long one request may take.

A run against a target that died would otherwise go on for every remaining test, each one
failing on a refused connection or a time-out, and report the rules of all of them as broken.
After :data:`DOWN_AFTER` consecutive requests that got no answer, the target is taken as
unreachable: the run starts no more tests, tries its cleanup, and says since when.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import httpx

DOWN_AFTER = 5  # consecutive unanswered requests
DEFAULT_REQUEST_SECONDS = 30.0  # a whole request: connect, send, and read the whole answer


class TargetUnreachable(httpx.TransportError):
    """No answer: the connection failed, or the whole request outlasted its deadline."""


@dataclass
class Health:
    """Consecutive unanswered requests of one run (all its clients)."""

    request_seconds: float = DEFAULT_REQUEST_SECONDS
    failures: int = 0
    first_failure: float | None = None  # wall-clock time of the streak's first failure
    down_since: float | None = None
    last_error: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def answered(self) -> None:
        with self._lock:
            self.failures, self.first_failure = 0, None

    def unanswered(self, error: BaseException) -> None:
        with self._lock:
            self.failures += 1
            self.last_error = f"{type(error).__name__}: {error}"[:200]
            if self.first_failure is None:
                self.first_failure = time.time()
            if self.failures >= DOWN_AFTER and self.down_since is None:
                self.down_since = self.first_failure

    def since(self) -> str:
        """When the target stopped answering, as HH:MM:SS local time."""
        assert self.down_since is not None
        return time.strftime("%H:%M:%S", time.localtime(self.down_since))


def send(http: httpx.Client, request: httpx.Request, seconds: float) -> httpx.Response:
    """Send ``request`` and read its whole answer within ``seconds``: a target that trickles an
    answer byte by byte would pass every per-read time-out and never end."""
    deadline = time.monotonic() + seconds
    response = http.send(request, stream=True)
    try:
        chunks = []
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise TargetUnreachable(f"no whole answer within {seconds:g} s", request=request)
        # What httpx's own Response.read() keeps; read here chunk by chunk to watch the clock.
        response._content = b"".join(chunks)
    finally:
        response.close()
    return response
