"""The server's clock: real time plus an offset the control plane can move.

Everything that depends on time (validity windows, token buckets, link expiry, staged
files) reads this clock, so tests move time instead of sleeping.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta


class Clock:
    def __init__(self) -> None:
        self._offset = 0.0
        self._lock = threading.Lock()

    def timestamp(self) -> float:
        """Seconds since the epoch on the server's clock."""
        with self._lock:
            return time.time() + self._offset

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.timestamp(), tz=UTC)

    def set(self, when: datetime) -> None:
        with self._lock:
            self._offset = when.timestamp() - time.time()

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._offset += seconds

    def after(self, **delta: float) -> datetime:
        return self.now() + timedelta(**delta)
