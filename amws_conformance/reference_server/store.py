"""SQLite storage: every record is a JSON document of one kind, owned by one system.

Uniqueness (names, e-mails, credential identifiers …) lives in a separate table with a
primary key, so SQLite itself refuses the second of two concurrent duplicates.

One server process owns its database, so what a request reads on every call can be kept in
memory: the meta values are, and :meth:`Store.version` counts the writes of each kind so a
caller can keep what it derived from records of that kind (the API keys) until one changes.
A rolled-back transaction counts as a write of every kind it touched, so nothing derived from
a write that never committed outlives it.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid as uuidlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    system TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_kind_system ON records(kind, system);
CREATE TABLE IF NOT EXISTS uniques (
    kind TEXT NOT NULL,
    system TEXT NOT NULL,
    field TEXT NOT NULL,
    value TEXT NOT NULL,
    uuid TEXT NOT NULL,
    PRIMARY KEY (kind, system, field, value)
);
CREATE INDEX IF NOT EXISTS uniques_uuid ON uniques(uuid);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

Record = dict[str, Any]

# The records' text is json.dumps's own, a document with nothing around it, so the decoder's
# C scanner reads it directly: json.loads would call the same scanner after Python-level
# checks that cost three times the scan of a small record (and a list reads many).
_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # (typeshed omits it)


def _decoded(text: str) -> Any:
    return _scan(text, 0)[0]


# The values a record may hold for a shallow copy of it to share nothing that can change.
_SCALARS = frozenset({str, int, float, bool, type(None)})
_KEPT_LIST_CHARACTERS = 64 * 1024


class Duplicate(Exception):
    """A unique value is already held by another record of the same kind and system."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


def _unique_rows(unique: Mapping[str, str | None]) -> list[tuple[str, str]]:
    # Uniqueness is case-insensitive: "Finance" and "finance" are one name.
    return [(f, str(v).casefold()) for f, v in unique.items() if v not in (None, "")]


class Store:
    """Thread-safe access to one SQLite database (a file, or ``:memory:``)."""

    def __init__(self, path: str = ":memory:") -> None:
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA foreign_keys = ON")
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode = WAL")
            # In WAL mode NORMAL still keeps the database consistent after a crash; only the
            # last commits before a power loss may be lost (a test server's data, rebuilt at
            # will), and a commit no longer waits for an fsync.
            self._db.execute("PRAGMA synchronous = NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.RLock()
        self._depth = 0
        self._versions: dict[str, int] = {}
        self._touched: set[str] = set()  # kinds written in the open transaction
        self._meta: dict[str, str | None] = {}
        # Lists read since the last write of their kind, by (kind, system): ``_listed``.
        self._lists: dict[tuple[str, str | None], tuple[int, list[tuple[str, Record | None]]]] = {}

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """All writes inside commit together or not at all (nested calls join the outer one)."""
        with self._lock:
            outer = self._depth == 0
            if outer:
                self._db.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                if outer:
                    self._db.execute("ROLLBACK")
                    # What was read back inside the transaction is gone with it.
                    self._meta.clear()
                    for kind in self._touched:
                        self._wrote(kind)
                    self._touched.clear()
                raise
            self._depth -= 1
            if outer:
                self._db.execute("COMMIT")
                self._touched.clear()

    def _wrote(self, kind: str) -> None:
        self._versions[kind] = self._versions.get(kind, 0) + 1
        if self._depth:
            self._touched.add(kind)

    def version(self, kind: str) -> int:
        """A number that changes whenever a record of ``kind`` is written (or a write undone)."""
        return self._versions.get(kind, 0)

    # -- meta ---------------------------------------------------------------------------
    def meta(self, name: str) -> str | None:
        with self._lock:
            if name not in self._meta:
                row = self._db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
                self._meta[name] = row[0] if row else None
            return self._meta[name]

    def set_meta(self, name: str, value: str) -> None:
        with self._lock:
            self._meta.pop(name, None)
            self._db.execute(
                "INSERT INTO meta(name, value) VALUES(?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                (name, value),
            )
            self._meta[name] = value

    # -- records ------------------------------------------------------------------------
    def insert(
        self,
        kind: str,
        system: str,
        data: Record,
        unique: Mapping[str, str | None] | None = None,
        uuid: str | None = None,
    ) -> str:
        """Store a new record and return its UUID; ``Duplicate`` if a unique value is taken."""
        new = uuid or str(uuidlib.uuid4())
        with self.transaction():
            self._wrote(kind)
            self._db.execute(
                "INSERT INTO records(uuid, kind, system, data) VALUES(?, ?, ?, ?)",
                (new, kind, system, json.dumps({**data, "uuid": new})),
            )
            self._claim(kind, system, new, unique or {})
        return new

    def _claim(self, kind: str, system: str, uuid: str, unique: Mapping[str, str | None]) -> None:
        for field, value in _unique_rows(unique):
            try:
                self._db.execute(
                    "INSERT INTO uniques(kind, system, field, value, uuid) VALUES(?, ?, ?, ?, ?)",
                    (kind, system, field, value, uuid),
                )
            except sqlite3.IntegrityError:
                raise Duplicate(field) from None

    def replace(
        self,
        kind: str,
        uuid: str,
        data: Record,
        unique: Mapping[str, str | None] | None = None,
    ) -> None:
        """Overwrite a record; when ``unique`` is given its unique values are replaced too."""
        with self.transaction():
            row = self._db.execute(
                "SELECT system FROM records WHERE uuid = ? AND kind = ?", (uuid, kind)
            ).fetchone()
            if row is None:
                raise KeyError(uuid)
            self._wrote(kind)
            self._db.execute(
                "UPDATE records SET data = ? WHERE uuid = ?",
                (json.dumps({**data, "uuid": uuid}), uuid),
            )
            if unique is not None:
                self._db.execute("DELETE FROM uniques WHERE uuid = ?", (uuid,))
                self._claim(kind, row[0], uuid, unique)

    def delete(self, kind: str, uuid: str) -> None:
        with self.transaction():
            self._wrote(kind)
            self._db.execute("DELETE FROM records WHERE uuid = ? AND kind = ?", (uuid, kind))
            self._db.execute("DELETE FROM uniques WHERE uuid = ?", (uuid,))

    def get(self, kind: str, uuid: str, system: str | None = None) -> Record | None:
        """The record, or ``None`` when it does not exist or belongs to another system."""
        with self._lock:
            row = self._db.execute(
                "SELECT data, system FROM records WHERE uuid = ? AND kind = ?", (uuid, kind)
            ).fetchone()
        if row is None or (system is not None and row[1] != system):
            return None
        return _decoded(row[0])

    def stored(self, kind: str, uuid: str) -> Record:
        """A record that exists (one just inserted in this transaction); KeyError otherwise."""
        record = self.get(kind, uuid)
        if record is None:
            raise KeyError(uuid)
        return record

    def get_any(self, uuid: str) -> Record | None:
        """A record of any kind and system (for the control plane and diagnostics)."""
        with self._lock:
            row = self._db.execute("SELECT data FROM records WHERE uuid = ?", (uuid,)).fetchone()
        return _decoded(row[0]) if row else None

    def system_of(self, uuid: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT system FROM records WHERE uuid = ?", (uuid,)).fetchone()
        return row[0] if row else None

    def all(
        self, kind: str, system: str | None = None, where: Callable[[Record], bool] | None = None
    ) -> list[Record]:
        """Records of a kind in creation order, optionally of one system and filtered.

        Each call gets records of its own to change as it likes: a list read again while no
        record of its kind was written comes from memory (:meth:`_listed`), as copies.
        """
        records = [
            _decoded(text) if flat is None else dict(flat)
            for text, flat in self._listed(kind, system)
        ]
        return [r for r in records if where is None or where(r)]

    def _listed(self, kind: str, system: str | None) -> list[tuple[str, Record | None]]:
        """The stored text of each record of the list, with the record when a shallow copy of
        it is a copy (its values are text, numbers, booleans or null)."""
        with self._lock:
            version = self.version(kind)
            kept = self._lists.get((kind, system))
            if kept is not None and kept[0] == version:
                return kept[1]
            if system is None:
                rows = self._db.execute(
                    "SELECT data FROM records WHERE kind = ? ORDER BY seq", (kind,)
                ).fetchall()
            else:
                rows = self._db.execute(
                    "SELECT data FROM records WHERE kind = ? AND system = ? ORDER BY seq",
                    (kind, system),
                ).fetchall()
            entries = []
            for (text,) in rows:
                record = _decoded(text)
                flat = all(type(value) in _SCALARS for value in record.values())
                entries.append((text, record if flat else None))
            # Only small lists are kept: a kind of large records (photos) is read from the
            # database each time rather than held twice.
            if sum(len(text) for text, _ in entries) <= _KEPT_LIST_CHARACTERS:
                self._lists[(kind, system)] = (version, entries)
            else:
                self._lists.pop((kind, system), None)
            return entries

    def find_unique(self, kind: str, system: str, field: str, value: str) -> str | None:
        with self._lock:
            row = self._db.execute(
                "SELECT uuid FROM uniques"
                " WHERE kind = ? AND system = ? AND field = ? AND value = ?",
                (kind, system, field, value.casefold()),
            ).fetchone()
        return row[0] if row else None

    def count(self, kind: str) -> int:
        with self._lock:
            return self._db.execute(
                "SELECT COUNT(*) FROM records WHERE kind = ?", (kind,)
            ).fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
