"""Matching a request to an operation of the spec (the spec's paths are the route table)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import spec
from reference_server._errors import ApiError


@dataclass(frozen=True)
class _Route:
    pattern: re.Pattern[str]
    literal_segments: int
    operations: dict[str, spec.Operation]


@functools.cache
def _routes() -> tuple[_Route, ...]:
    by_path: dict[str, dict[str, spec.Operation]] = {}
    for op in spec.operations():
        by_path.setdefault(op.path, {})[op.method] = op
    routes = []
    for path, ops in by_path.items():
        regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]*)", re.escape(path))
        literal = sum(1 for seg in path.split("/") if seg and not seg.startswith("{"))
        routes.append(_Route(re.compile(f"^{regex}$"), literal, ops))
    # A literal segment beats a template (…/entries/visitors before …/entries/{entryUuid}).
    return tuple(sorted(routes, key=lambda r: -r.literal_segments))


def match(method: str, path: str) -> tuple[spec.Operation, dict[str, str]]:
    """The operation for this request and its path parameters; 404 or 405 otherwise."""
    allowed: set[str] = set()
    for route in _routes():
        found = route.pattern.match(path)
        if not found:
            continue
        op = route.operations.get(method)
        if op is None:
            allowed |= set(route.operations)
            continue
        return op, found.groupdict()
    if allowed:
        raise ApiError(
            405, "method not allowed on this path", headers={"Allow": ", ".join(sorted(allowed))}
        )
    raise ApiError(404, "no such endpoint")
