"""Which operation of the document a method and path address (the spec's paths as a route table)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from spec._load import Operation, operations


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


def match(method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
    """The operation and its path parameters, or ``None`` when nothing matches."""
    for route in _routes():
        found = route.pattern.match(path)
        if found and method.upper() in route.operations:
            return route.operations[method.upper()], found.groupdict()
    return None


def allowed_methods(path: str) -> set[str]:
    """Methods the document defines for a concrete path (empty: no such path)."""
    allowed: set[str] = set()
    for route in _routes():
        if route.pattern.match(path):
            allowed |= set(route.operations)
    return allowed
