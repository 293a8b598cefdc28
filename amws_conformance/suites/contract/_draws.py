"""A cache, kept on disk between runs, of the regex searches schemathesis found to have no value.

schemathesis's coverage phase draws one value for each length boundary of a string field with a
``pattern``. For a pattern of several lookaheads (the password of createUser and updateUser) the
random search finds no match at some lengths, and finds that out only after hypothesis's whole
budget: seconds a draw, paid again by every process that collects the contract suite (each
pytest-xdist worker, each run). The draw is seeded (``seed(0)``), so its outcome is the same in
every process; schemathesis already remembers it for the rest of a process
(``GenerationSession.draw_outcomes``). This module makes that memory outlive the process, for
the searches that ended *Unsatisfiable* only: those are what cost; a value found costs
milliseconds and is drawn again as before. A cached outcome is exactly what the search would
answer, so the generated requests do not change.

Only strategies schemathesis built from a pattern are cached. Their key is what
schemathesis built them from, ``(pattern, minLength, maxLength, format)`` (it memoises them
under it, ``GenerationSession.pattern_strategies``), with the versions of schemathesis,
hypothesis and Python: the repr of such a strategy leaves out its filters' closures, so it
cannot be the key. One file per key, written atomically, so concurrent workers never read
half a file. The folder is ``$AMWS_CACHE_DIR``, else ``$XDG_CACHE_HOME/amws-conformance``,
else ``~/.cache/amws-conformance``; a folder that cannot be written only costs the time.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import hypothesis
import schemathesis
from hypothesis.errors import Unsatisfiable
from schemathesis.core.cache import MISSING, BoundedCache
from schemathesis.generation.coverage import DEFAULT_GENERATION_SESSION, GenerationSession

CACHE_ENV = "AMWS_CACHE_DIR"
FOLDER = "unsatisfiable-draws"


def default_cache_dir() -> Path:
    """``$AMWS_CACHE_DIR``, else the XDG cache home's ``amws-conformance``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "amws-conformance"


def _versions() -> list[str]:
    # A search's outcome depends on the code that searches and on the Unicode tables the
    # regex reads; any change of them is a new key.
    return [
        f"schemathesis {schemathesis.__version__}",
        f"hypothesis {hypothesis.__version__}",
        f"python {sys.version_info.major}.{sys.version_info.minor}",
        f"unicode {unicodedata.unidata_version}",
    ]


class _PatternStrategies(BoundedCache):
    """schemathesis's memo of pattern strategies, telling :class:`_DrawOutcomes` what each
    strategy it hands out was built from."""

    __slots__ = ("origins",)

    def __init__(self, maxsize: int) -> None:
        super().__init__(maxsize)
        # id of a strategy -> (the strategy, held so the id is never reused; what it was built from)
        self.origins: dict[int, tuple[Any, tuple[Any, ...]]] = {}

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        if value is not None:
            self.origins[id(value)] = (value, key)

    def clear(self) -> None:
        super().clear()
        self.origins.clear()


class _DrawOutcomes(BoundedCache):
    """schemathesis's memo of draw outcomes ``(value, failure)``, backed by files for the
    pattern searches that failed."""

    __slots__ = ("folder", "patterns")

    def __init__(self, maxsize: int, patterns: _PatternStrategies, folder: Path) -> None:
        super().__init__(maxsize)
        self.patterns = patterns
        self.folder = folder

    def _key(self, strategy: Any) -> str | None:
        origin = self.patterns.origins.get(id(strategy))
        if origin is None or origin[0] is not strategy:
            return None
        return json.dumps(["pattern", list(origin[1]), _versions()])

    def _file(self, key: str) -> Path:
        return self.folder / f"{hashlib.sha256(key.encode()).hexdigest()}.json"

    def get(self, key: Any, default: Any = MISSING) -> Any:
        found = super().get(key, MISSING)
        if found is not MISSING:
            return found
        stored = self._key(key)
        if stored is None:
            return default
        try:
            entry = json.loads(self._file(stored).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return default
        if not isinstance(entry, dict) or entry.get("key") != stored:
            return default
        outcome = (None, Unsatisfiable(str(entry.get("unsatisfiable", ""))))
        super().__setitem__(key, outcome)
        return outcome

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        _, failure = value
        stored = self._key(key)
        if stored is None or not isinstance(failure, Unsatisfiable):
            return
        entry = json.dumps({"key": stored, "unsatisfiable": str(failure)})
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", dir=self.folder, suffix=".tmp", delete=False, encoding="utf-8"
            ) as handle:
                handle.write(entry)
            os.replace(handle.name, self._file(stored))
        except OSError:
            # Unwritable: the next process searches again, as without this cache.
            return


def install(
    session: GenerationSession = DEFAULT_GENERATION_SESSION, folder: Path | None = None
) -> None:
    """Back ``session``'s draw outcomes with the cache in ``folder`` (default:
    :func:`default_cache_dir`). Idempotent: a session already backed keeps its cache."""
    if isinstance(session.draw_outcomes, _DrawOutcomes):
        return
    patterns = _PatternStrategies(session.pattern_strategies._maxsize)
    session.pattern_strategies = patterns
    base = folder if folder is not None else default_cache_dir()
    session.draw_outcomes = _DrawOutcomes(session.draw_outcomes._maxsize, patterns, base / FOLDER)
