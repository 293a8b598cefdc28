"""Which operation of the document a method and path address (the spec's paths as a route table)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from amws_conformance.spec._load import Operation, operations


@dataclass(frozen=True)
class _Route:
    pattern: re.Pattern[str]
    literal_segments: int
    operations: dict[str, Operation]


@functools.cache
def _routes() -> tuple[_Route, ...]:
    by_path: dict[str, dict[str, Operation]] = {}
    for op in operations():
        by_path.setdefault(op.path, {})[op.method] = op
    routes = []
    for path, ops in by_path.items():
        regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]*)", re.escape(path))
        literal = sum(1 for seg in path.split("/") if seg and not seg.startswith("{"))
        routes.append(_Route(re.compile(f"^{regex}$"), literal, ops))
    # A literal segment beats a template (…/entries/visitors before …/entries/{entryUuid}).
    return tuple(sorted(routes, key=lambda r: -r.literal_segments))


def _best(path: str) -> tuple[_Route, dict[str, str]] | None:
    """The most literal route whose pattern fits the path, whatever the method."""
    for route in _routes():
        found = route.pattern.match(path)
        if found:
            return route, found.groupdict()
    return None


def match(method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
    """The operation and its path parameters, or ``None`` when the path or method is unknown.

    ``/persons/search`` is the search resource for every method: a PUT there is a method
    the resource lacks, not an update of a person whose UUID is "search".
    """
    best = _best(path)
    if best is None or method.upper() not in best[0].operations:
        return None
    route, params = best
    return route.operations[method.upper()], params


def allowed_methods(path: str) -> set[str]:
    """Methods the document defines for a concrete path (empty: no such path)."""
    best = _best(path)
    return set(best[0].operations) if best else set()
