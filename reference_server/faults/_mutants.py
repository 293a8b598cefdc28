"""Spec-derived mutants: one deviation per documented constraint, none written by hand.

Each constraint of :func:`spec.constraints` (a field's bound, enum, pattern or format, a
required field, a paging parameter's default or bound, a documented status) gives one or more
mutants, applied at the seams the hand-written faults use: the validation seam changes the
constraint in the schema the server checks requests with (``Fault.mutation``), the response
seam answers a neighbouring status (``Fault.swap``). A mutant names its constraint and the rule
whose tests must catch it, found from the rule catalogue by the operation and the kind of
constraint (:data:`RULE_SUFFIXES`; :data:`RULE_OF` where one operation's rule says otherwise).

Some constraints give no mutant a correct suite could catch; they are listed, with the reason,
in :data:`EQUIVALENT` and reported by ``amws-reference faults --mutants``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import spec
from reference_server.faults._model import CATALOGUE, REMOVED, Fault, Mutation
from spec._constraints import (
    Constraint,
    body_schema,
    constraints,
    inline,
    parts,
    properties_at,
    rule_for,
    rules_of,
    syntax,
)

# What a documented status is answered with instead: its nearest neighbour a client could
# confuse it with (a success with the other success, a refusal with the nearest refusal).
NEIGHBOUR = {
    200: 201,
    201: 200,
    400: 422,
    401: 403,
    403: 401,
    404: 400,
    409: 422,
    412: 400,
    415: 400,
    422: 400,
    424: 400,
    425: 409,
    429: 503,
    451: 403,
}
# Statuses every keyed operation documents for the same cause: one mutant each, on all of them.
SHARED_STATUSES = (429,)

# Constraints no deviation of which a request can tell apart from the contract, and why.
EQUIVALENT: dict[str, str] = {}


def _lengths(c: Constraint, low: int, high: int | None) -> Iterator[tuple[str, Mutation, str]]:
    where, field, keyword, bound = c.where, c.field, c.keyword, int(c.value)
    if keyword in ("maxLength", "maxItems"):
        yield "above-accepted", Mutation(where, field, keyword, bound + 1), keyword
        if bound - 1 >= low:
            yield "bound-refused", Mutation(where, field, keyword, bound - 1), keyword
    elif bound >= 1:
        yield "below-accepted", Mutation(where, field, keyword, bound - 1), keyword
        if high is None or bound + 1 <= high:
            yield "bound-refused", Mutation(where, field, keyword, bound + 1), keyword


def _range(c: Constraint) -> Iterator[tuple[str, Mutation, str]]:
    bound = c.value
    flipped = {
        "minimum": "exclusiveMinimum",
        "maximum": "exclusiveMaximum",
        "exclusiveMinimum": "minimum",
        "exclusiveMaximum": "maximum",
    }[c.keyword]
    label = "bound-refused" if c.keyword in ("minimum", "maximum") else "bound-accepted"
    yield label, Mutation(c.where, c.field, flipped, bound, also_removed=(c.keyword,)), c.keyword
    if c.keyword in ("minimum", "maximum"):
        step = -1 if c.keyword == "minimum" else 1
        beyond = "below-accepted" if step < 0 else "above-accepted"
        yield beyond, Mutation(c.where, c.field, c.keyword, bound + step), c.keyword


def _mutations(c: Constraint, schema: dict) -> Iterator[tuple[str, Mutation, str]]:
    """Each mutant of one body or query constraint: (label, mutation, kind for its rule)."""
    if c.keyword in ("maxLength", "minLength", "maxItems", "minItems"):
        low = int(schema.get("minLength", schema.get("minItems", 0)))
        high = schema.get("maxLength", schema.get("maxItems"))
        yield from _lengths(c, low, high)
    elif c.keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        yield from _range(c)
    elif c.keyword == "enum":
        values = list(c.value)
        for value in values:
            kept = [v for v in values if v != value]
            yield f"drops-{value}", Mutation(c.where, c.field, "enum", kept), "enum"
        first = values[0]
        if isinstance(first, str) and first.lower() != first:
            added = [*values, first.lower()]
            yield "adds-lower-case", Mutation(c.where, c.field, "enum", added), "enum"
    elif c.keyword in ("pattern", "format"):
        other = "format" if c.keyword == "pattern" else "pattern"
        if c.keyword == "format" and "pattern" in schema:
            return  # the pattern's mutant relaxes both
        kind = syntax(c)
        yield "relaxed", Mutation(c.where, c.field, c.keyword, also_removed=(other,)), kind
    elif c.keyword == "required":
        yield "optional", Mutation(c.where, c.field, "required"), "required"
    elif c.keyword == "default":
        value = c.value
        if isinstance(value, bool):
            changed: object = not value
        elif isinstance(value, int):
            changed = value + 1
        else:
            options = [v for v in schema.get("enum", []) if v != value]
            if not options:
                return
            changed = options[0]
        yield "changed", Mutation(c.where, c.field, "default", changed), "default"


def _field_schema(c: Constraint) -> dict:
    """The merged keywords of the constraint's field (documented schema)."""
    op = spec.operation(c.operation_id)
    if c.where == "query":
        param = next(p for p in op.parameters() if p["name"] == c.field[0])
        nodes = [inline(param.get("schema", {}))]
    else:
        nodes = properties_at(body_schema(op), c.field)
    merged: dict = {}
    for node in nodes:
        for part in parts(node):
            for key, value in part.items():
                merged.setdefault(key, value)
    return merged


def _status_rule(c: Constraint) -> str | None:
    status = c.keyword
    rules = rules_of(c.operation_id)
    numbered = [r.id for r in rules if f"-{status}-" in f"{r.id}-"]
    if numbered:
        return numbered[0]
    by_status = {
        "401": "AUTH-INVALID-KEY-401",
        "403": "AUTH-PERMISSION-READ-WRITE",
        "404": "ERR-404-UNKNOWN-UUID",
        "400": "ERR-400-BODY",
        "429": "RATE-BUCKET-2000",
    }
    return rule_for(c, status) or by_status.get(status)


def derived() -> Iterator[Fault]:
    """Every mutant of the contract, in the order of :func:`spec.constraints`."""
    shared_done: set[int] = set()
    for c in constraints():
        if c.name in EQUIVALENT:
            continue
        if c.where == "status":
            status = int(c.keyword)
            if status not in NEIGHBOUR:
                continue
            rule = _status_rule(c)
            if rule is None:
                continue
            if status in SHARED_STATUSES:
                if status in shared_done:
                    continue
                shared_done.add(status)
                ops = tuple(
                    o.operation_id for o in spec.operations() if str(status) in o.statuses
                )
                name = f"*:status:{status}-answered-{NEIGHBOUR[status]}"
            else:
                ops = (c.operation_id,)
                name = f"{c.operation_id}:status:{status}-answered-{NEIGHBOUR[status]}"
            does = f"{name.split(':')[0]} answers {NEIGHBOUR[status]} where {status} is due"
            yield Fault(
                name, rule, does, operations=ops, swap=(status, NEIGHBOUR[status]),
                constraint=c.name,
            )
            continue
        schema = _field_schema(c)
        for label, mutation, kind in _mutations(c, schema):
            rule = rule_for(c, kind)
            if rule is None:
                continue
            field = ".".join(c.field)
            name = f"{c.operation_id}:{c.where}:{field}:{c.keyword}-{label}"
            shown = "removed" if mutation.value == REMOVED else repr(mutation.value)
            does = f"{c.operation_id} {c.where} {field}: {mutation.keyword} {shown} ({label})"
            yield Fault(
                name, rule, does, operations=(c.operation_id,), mutation=mutation,
                constraint=c.name,
            )


@functools.cache
def register() -> int:
    """Add the mutants to the catalogue (after the hand-written faults); how many."""
    count = 0
    for fault in derived():
        CATALOGUE[fault.name] = fault
        count += 1
    return count


register()
