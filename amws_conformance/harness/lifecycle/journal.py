"""The ledger, written through to disk: what a run made survives the run's own death.

A run against a target of its own (not the embedded server, which dies with the run) appends
one JSON line per ledger event to ``<state dir>/<run id>.ledger.jsonl`` and flushes it at once:
a SIGKILL loses at most the create whose answer was being read. The first line names the
target, so a sweep never sends one target's deletes to another. A run whose cleanup removed
everything deletes its file; a file that stays is what ``amws-conformance sweep`` reads.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

SUFFIX = ".ledger.jsonl"
STATE_ENV = "AMWS_STATE_DIR"


def default_state_dir() -> Path:
    """Where ledger files live unless told: ``$AMWS_STATE_DIR``, else the XDG state home."""
    if os.environ.get(STATE_ENV):
        return Path(os.environ[STATE_ENV])
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "amws-conformance"


@dataclass(frozen=True)
class Entry:
    """A record the run made: the ledger's entry, and (less ``test``) a line of its file."""

    uuid: str
    delete_path: str | None
    key: str
    label: str
    test: str = ""  # the test that created it: its cleanup is part of that test's cost


class Journal:
    """Appends ledger events to one file; thread-safe, flushed per line."""

    def __init__(self, path: Path, target: dict[str, Any] | None) -> None:
        """Open ``path`` for appending; a new file starts with the ``target`` line (``None``:
        a sweep appending to a run's file)."""
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._file: IO[str] | None = path.open("a", encoding="utf-8")
        if target is not None:
            self._write({"event": "run", **target})

    def _write(self, line: dict[str, Any]) -> None:
        with self._lock:
            if self._file is None:
                return
            self._file.write(json.dumps(line, separators=(",", ":")) + "\n")
            self._file.flush()

    def made(self, entry: Entry) -> None:
        # The booking test is the run's own business: a sweep has no test to book to.
        line = {k: v for k, v in asdict(entry).items() if k != "test"}
        self._write({"event": "made", **line})

    def gone(self, uuid: str) -> None:
        """The record is deleted, or was never the run's to delete (a claimed staged file)."""
        self._write({"event": "gone", "uuid": uuid})

    def gone_below(self, path: str) -> None:
        """The record at ``path`` is deleted, and with it every record addressed below it."""
        self._write({"event": "gone-below", "path": path})

    def close(self, *, empty: bool) -> None:
        """Stop writing; an empty ledger leaves no file (there is nothing to sweep)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
        if empty:
            self.path.unlink(missing_ok=True)


def _lines(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for text in fh:
            try:
                yield json.loads(text)
            except ValueError:
                return  # the last line of a killed run may be cut short: what precedes holds


def read(path: Path) -> tuple[dict[str, Any], list[Entry]]:
    """The target a ledger file belongs to, and the records it says are still there (oldest
    first)."""
    target: dict[str, Any] = {}
    left: dict[str, Entry] = {}
    for line in _lines(path):
        event = line.pop("event", None)
        if event == "run" and not target:
            target = line
        elif event == "made":
            fields: dict[str, Any] = {
                k: line.get(k) for k in ("uuid", "delete_path", "key", "label")
            }
            record = Entry(**fields)
            left[record.uuid.lower()] = record
        elif event == "gone":
            left.pop(str(line.get("uuid", "")).lower(), None)
        elif event == "gone-below":
            below = str(line.get("path", "")).rstrip("/")
            for uuid, record in list(left.items()):
                own = (record.delete_path or "").rstrip("/")
                if own == below or own.startswith(below + "/"):
                    del left[uuid]
    return target, list(left.values())


def files_of(state_dir: Path, run_id: str | None = None) -> list[Path]:
    """Ledger files left in ``state_dir``: of one run (its xdist workers' included), or all."""
    if not state_dir.is_dir():
        return []
    pattern = f"{run_id}{SUFFIX}" if run_id else f"*{SUFFIX}"
    found = set(state_dir.glob(pattern))
    if run_id:
        found |= set(state_dir.glob(f"{run_id}-gw*{SUFFIX}"))
    return sorted(found)
