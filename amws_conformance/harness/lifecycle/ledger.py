"""The cleanup ledger: every record a run creates, deleted again at the end, newest first.

What is pushed to door hardware goes first (doc2 § Credentials: an ACTIVE credential sits on the
controllers; a person is in their phonebooks; a watchlist flags them), so a cleanup cut short
leaves no card that opens a door. With a :class:`~harness.lifecycle.journal.Journal`, every event is
also written to the run's ledger file as it happens.
"""

from __future__ import annotations

import threading
import uuid as uuidlib
from collections.abc import Callable
from typing import Any

import httpx

from amws_conformance import spec
from amws_conformance.harness.lifecycle.journal import Entry, Journal


def delete_path_for(
    create: spec.Operation, path_params: dict[str, str], new_uuid: str
) -> str | None:
    """The concrete path that deletes what ``create`` made, from the spec's own paths."""
    parent = create.path
    candidates = [parent, parent.rsplit("/", 1)[0]]  # POST /files/upload -> DELETE /files/{uuid}
    for op in spec.operations():
        if op.method != "DELETE":
            continue
        base, _, last = op.path.rpartition("/")
        if base in candidates and last.startswith("{"):
            concrete = base
            for name, value in path_params.items():
                concrete = concrete.replace("{" + name + "}", value)
            return f"{concrete}/{new_uuid}"
    return None


# Updates that leave a record as its delete would (doc2 § Credential status: a PUT with status
# DELETED removes the credential from the hardware exactly as DELETE does): cleanup owes it
# nothing more, so it sends no delete.
_ENDING_UPDATES = {"updateCredential": ("status", "DELETED")}


def ends_record(operation_id: str, body: Any) -> bool:
    """Whether a successful ``operation_id`` with ``body`` left its record deleted."""
    field_value = _ENDING_UPDATES.get(operation_id)
    return (
        field_value is not None
        and isinstance(body, dict)
        and body.get(field_value[0]) == field_value[1]
    )


# What the creates of these operations make is pushed to door hardware: deleted first.
HARDWARE_FIRST = {"createCredential": 0, "createPerson": 1, "createWatchlist": 1}


def hardware_rank(entry: Entry) -> int:
    """0 and 1 for records on the hardware (credentials before the rest), 2 otherwise."""
    return HARDWARE_FIRST.get(entry.label, 2)


class Ledger:
    """Remembers what the run created; only those records may be changed or deleted."""

    def __init__(self, journal: Journal | None = None) -> None:
        self._entries: list[Entry] = []
        self._mine: set[str] = set()
        self._lock = threading.Lock()
        self.gone = 0  # cleanup deletes answered 404: requests the ledger could have saved
        self.journal = journal

    def register(
        self, uuid: str, delete_path: str | None, key: str, label: str, test: str = ""
    ) -> None:
        entry = Entry(uuid, delete_path, key, label, test)
        with self._lock:
            self._entries.append(entry)
            self._mine.add(uuid.lower())
        if self.journal is not None:
            self.journal.made(entry)

    def fresh_uuid(self) -> str:
        """A UUID no record has: safe to address in not-found tests."""
        value = str(uuidlib.uuid4())
        with self._lock:
            self._mine.add(value)
        return value

    def owns(self, uuid: str) -> bool:
        return uuid.lower() in self._mine

    def forget(self, uuid: str) -> None:
        """The record is gone already (a test deleted it)."""
        with self._lock:
            self._entries = [e for e in self._entries if e.uuid.lower() != uuid.lower()]
        if self.journal is not None:
            self.journal.gone(uuid)

    def deleted(self, path: str) -> None:
        """A delete of ``path`` succeeded: that record, and every record addressed below it (a
        watchlist's entries), is gone, so cleanup must not spend a request on it."""
        path = path.rstrip("/")
        with self._lock:
            self._entries = [
                e
                for e in self._entries
                if not e.delete_path
                or (e.delete_path != path and not e.delete_path.startswith(path + "/"))
            ]
        if self.journal is not None:
            self.journal.gone_below(path)

    @property
    def pending(self) -> list[Entry]:
        return list(self._entries)

    def cleanup(
        self,
        send: Callable[[Entry], httpx.Response],
        unreachable: Callable[[], bool] = lambda: False,
        hardware_only: Callable[[], bool] = lambda: False,
    ) -> list[str]:
        """Delete what is on door hardware first, then the rest newest first (children before
        parents); return what could not be removed.

        A record addressed below another the cleanup deletes (a watchlist's entries) is not
        sent a delete of its own: the parent's delete is hard and takes it along (doc2 §
        Watchlists). Once a delete gets no answer and ``unreachable`` says the target is gone,
        the rest are reported as left behind rather than each waiting for its own time-out.
        Once ``hardware_only`` says so (the user interrupted the cleanup again), the records on
        no hardware are left for a sweep."""
        with self._lock:
            entries, self._entries = list(reversed(self._entries)), []
        below: dict[str, list[Entry]] = {}  # a parent's delete path -> the records it carries
        for entry in entries:
            parent = next(
                (
                    e.delete_path
                    for e in entries
                    if e.delete_path and (entry.delete_path or "").startswith(e.delete_path + "/")
                ),
                None,
            )
            if parent is not None:
                below.setdefault(parent, []).append(entry)
        carried = {id(e) for children in below.values() for e in children}
        problems: list[str] = []
        stayed: set[str] = set()
        # sorted() is stable: newest first still holds within each rank.
        queue = sorted((e for e in entries if id(e) not in carried), key=hardware_rank)
        for done, entry in enumerate(queue):
            if hardware_rank(entry) == 2 and hardware_only():
                problems += [f"{e.label} {e.uuid}: left for a sweep" for e in queue[done:]]
                stayed.update(e.delete_path for e in queue[done:] if e.delete_path)
                break
            if entry.delete_path is None:
                problems.append(f"{entry.label} {entry.uuid}: the API offers no delete")
                continue
            try:
                response = send(entry)
            except httpx.HTTPError as exc:
                problems.append(f"{entry.label} {entry.uuid}: {exc}")
                stayed.add(entry.delete_path)
                if unreachable():
                    problems += [
                        f"{e.label} {e.uuid}: not deleted, the target is unreachable"
                        for e in queue[done + 1 :]
                    ]
                    stayed.update(e.delete_path for e in queue[done + 1 :] if e.delete_path)
                    break
                continue
            # 404: removed already (a cascade, or the test deleted it); 409: ended already.
            self.gone += response.status_code == 404
            if response.status_code not in (200, 204, 404, 409):
                problems.append(
                    f"{entry.label} {entry.uuid}: delete answered {response.status_code}"
                )
                stayed.add(entry.delete_path)
            elif self.journal is not None:
                self.journal.gone_below(entry.delete_path)
        problems += [
            f"{child.label} {child.uuid}: not deleted, the record it belongs to stayed"
            for parent in sorted(stayed)
            for child in below.get(parent, [])
        ]
        with self._lock:
            # A create of another thread (a concurrency test) answered while this ran.
            late = bool(self._entries) and not hardware_only() and not unreachable()
        if late:
            problems += self.cleanup(send, unreachable, hardware_only)
        return problems
