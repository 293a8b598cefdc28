"""Matching a request to an operation of the spec, with the documented 404 and 405 answers."""

from __future__ import annotations

import spec
from reference_server._errors import ApiError


def match(method: str, path: str) -> tuple[spec.Operation, dict[str, str]]:
    """The operation for this request and its path parameters; 404 or 405 otherwise."""
    found = spec.match(method, path)
    if found is not None:
        return found
    allowed = spec.allowed_methods(path)
    if allowed:
        raise ApiError(
            405, "method not allowed on this path", headers={"Allow": ", ".join(sorted(allowed))}
        )
    raise ApiError(404, "no such endpoint")
