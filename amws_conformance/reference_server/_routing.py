"""Matching a request to an operation of the spec, with the documented 404 and 405 answers."""

from __future__ import annotations

import functools

from amws_conformance import spec
from amws_conformance.reference_server._errors import ApiError


@functools.cache
def _literal_paths() -> dict[str, dict[str, spec.Operation]]:
    """The operations of each path without a template, by method.

    A path made of literal segments only is the most literal route for itself, so a request
    to it is answered from this table without trying the templates' patterns in turn.
    """
    table: dict[str, dict[str, spec.Operation]] = {}
    for op in spec.operations():
        if "{" not in op.path:
            table.setdefault(op.path, {})[op.method] = op
    return table


def match(method: str, path: str) -> tuple[spec.Operation, dict[str, str]]:
    """The operation for this request and its path parameters; 404 or 405 otherwise."""
    literal = _literal_paths().get(path)
    found = spec.match(method, path) if literal is None else None
    if literal is not None and method.upper() in literal:
        return literal[method.upper()], {}
    if found is not None:
        return found
    allowed = spec.allowed_methods(path)
    if allowed:
        raise ApiError(
            405, "method not allowed on this path", headers={"Allow": ", ".join(sorted(allowed))}
        )
    raise ApiError(404, "no such endpoint")
