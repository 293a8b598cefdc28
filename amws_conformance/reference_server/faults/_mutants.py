"""Spec-derived mutants: one deviation per documented constraint, none written by hand.

Each constraint of :func:`spec.constraints` (a field's bound, enum, pattern or format, a
required field, a paging parameter's default or bound, a documented status) gives one or more
mutants, applied at the seams the hand-written faults use: the validation seam changes the
constraint in the schema the server checks requests with (``Fault.mutation``), the response
seam answers a neighbouring status (``Fault.swap``). A mutant names its constraint and the rule
whose tests must catch it, found from the rule catalogue by the operation and the kind of
constraint (:data:`RULE_SUFFIXES`; :data:`RULE_OF` where one operation's rule says otherwise).

A constraint without a mutant of its own is accounted for in :func:`census`: covered by another
constraint's mutant (a format beside its pattern, a status every operation shares), or
equivalent (no request can tell its mutant from the contract), with the reason; a constraint no
rule states is a gap, and a project test fails on it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from amws_conformance import spec
from amws_conformance.reference_server._mutation import REMOVED, Mutation
from amws_conformance.reference_server.faults._model import CATALOGUE, Fault
from amws_conformance.spec._constraints import (
    RULE_OF,
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
# The virtual reader's paths, where the documents contradict each other on 400 and 422.
READER_PATHS = "/api/ws/v1/virtual/"
# Statuses every keyed operation documents for one cause the conventions state once (a missing,
# unknown or disabled key; a drained bucket): one mutant each, on all keyed operations at once.
# An implementation answers them from one place; a mutant per operation would price each
# operation's 401 at a failed authentication's 400 units for what one request decides.
SHARED_STATUSES = (401, 429)


def _share_group(c: Constraint) -> str | None:
    """The operations a status mutant changes at once, by name, or None (its own operation):
    ``keyed`` for the conventions' statuses of keyed operations, ``reader`` and ``links`` for
    the throttle each group of keyless operations shares (per device, per address)."""
    if c.where != "status":
        return None
    op = spec.operation(c.operation_id)
    shared = int(c.keyword) in SHARED_STATUSES if op.keyed else c.keyword == "429"
    return _group_of(op) if shared else None


def _group_of(op: spec.Operation) -> str:
    """Which group of operations shares a status's cause with ``op``."""
    if op.keyed:
        return "keyed"
    return "reader" if op.path.startswith(READER_PATHS) else "links"


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
            # A text default: another listed value (or, where the parameter is deliberately
            # open, another of its documented examples).
            listed = schema.get("enum") or schema.get("examples") or []
            options = [v for v in listed if v != value]
            if not options:
                return
            changed = options[-1]
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


def _takes_json(op: spec.Operation) -> bool:
    return body_schema(op) is not None


def _has_uuid_path(op: spec.Operation) -> bool:
    return any(
        p.get("in") == "path" and inline(p.get("schema", {})).get("format") == "uuid"
        for p in op.parameters()
    )


def _queried_400(op: spec.Operation) -> bool:
    """Whether a query parameter of the operation is refused with 400 (its x-invalid-status)."""
    return any(
        p.get("in") == "query" and int(p.get("x-invalid-status", 400)) == 400
        for p in op.parameters()
        if "minimum" in inline(p.get("schema", {})) or "pattern" in inline(p.get("schema", {}))
    )


def _status_rule(c: Constraint) -> tuple[str | None, str]:
    """The rule whose tests provoke this status on this operation (or None, and why no request
    can): the conventions' generated tests where they cover it (keys, permissions, malformed
    bodies, path parameters, unknown UUIDs), else a rule naming the status in its id, else one
    of the kind :data:`RULE_SUFFIXES` gives."""
    status, op = c.keyword, spec.operation(c.operation_id)
    explicit = RULE_OF.get(f"{c.operation_id}::{status}")
    if explicit:
        return explicit, ""
    if op.keyed and status == "401":
        return "AUTH-INVALID-KEY-401", ""
    if op.keyed and status == "403":
        return "AUTH-PERMISSION-READ-WRITE", ""
    if op.keyed and status in ("200", "201"):
        # The permission matrix calls every keyed operation with the full key, and every call
        # is checked against the statuses the spec documents for it.
        return "AUTH-PERMISSION-READ-WRITE", ""
    # The conventions' generated tests call every keyed operation with a UUID path parameter.
    if status == "422" and _has_uuid_path(op) and op.keyed:
        return "CONV-UUID-PATH-422", ""
    if status == "404" and _has_uuid_path(op) and op.keyed:
        return "ERR-404-UNKNOWN-UUID", ""
    if status == "429" and op.keyed:
        return "RATE-BUCKET-2000", ""
    if status == "429":  # a keyless operation's own throttle (per device, per address)
        throttled = "READER-429-PER-DEVICE" if op.path.startswith(READER_PATHS) else None
        numbered_429 = [r.id for r in rules_of(c.operation_id) if "-429-" in f"{r.id}-"]
        return (numbered_429[0] if numbered_429 else throttled), "no throttle rule lists it"
    numbered = [r.id for r in rules_of(c.operation_id, assumed=True) if f"-{status}-" in f"{r.id}-"]
    if numbered:
        return numbered[0], ""
    if status == "400" and op.keyed:
        if _takes_json(op):
            return "ERR-400-BODY", ""
        if _has_uuid_path(op):
            return "ERR-400-MISSING-PATH-PARAMETER", ""
        if _queried_400(op):
            return rule_for(c, "minimum"), ""
        return None, (
            "the documents list 400 for a malformed request, and this operation takes no body, "
            "path parameter or checked query parameter a request could get wrong"
        )
    found = rule_for(c, status)
    if found is None and status in ("200", "201"):
        listing = rules_of(c.operation_id, assumed=True)
        found = listing[0].id if listing else None
    return found, "no rule lists the operation for this status"


def _pattern_widths(c: Constraint) -> tuple[int, int] | None:
    """The shortest and longest value the pattern the server enforces on the field admits
    (documented or ours), or None without a pattern."""
    op = spec.operation(c.operation_id)
    nodes = properties_at(body_schema(op, spec.enforced()), c.field) if c.where == "body" else []
    patterns = [p["pattern"] for node in nodes for p in parts(node) if "pattern" in p]
    if not patterns or not patterns[0].startswith("^"):
        return None
    low, high = re._parser.parse(patterns[0]).getwidth()  # type: ignore[attr-defined]
    return int(low), int(high)


# Fields whose emptiness our assumed reading of "holds a value" refuses (x-assumed-schema on
# WatchlistEntryBody, enforced by the server): a mutant letting them be left out or empty
# changes nothing the server answers.
HOLDS_A_VALUE = ("createWatchlistEntry", "updateWatchlistEntry")


def _shadowed(c: Constraint, label: str, mutation: Mutation) -> str | None:
    """Why one mutant of ``c`` answers every request as the correct server does, if it does:
    another constraint the server enforces on the field refuses what the mutant lets through,
    or accepts nothing the mutant refuses."""
    if c.operation_id in HOLDS_A_VALUE and label in ("optional", "below-accepted"):
        return (
            "our assumed reading of 'holds a value' on a watchlist entry (x-assumed-schema) "
            "still refuses an entry whose identifying fields are all missing or empty"
        )
    widths = _pattern_widths(c) if c.keyword in ("minLength", "maxLength") else None
    if widths is None:
        return None
    low, high = widths
    moved = int(mutation.value)
    if c.keyword == "maxLength" and high <= min(moved, int(c.value)):
        return f"the field's pattern admits no value longer than {high} characters"
    if c.keyword == "minLength" and low >= max(moved, int(c.value)):
        return f"the field's pattern admits no value shorter than {low} characters"
    return None


# Statuses an operation documents without a cause any request could bring about.
NO_CAUSE = {
    "updateCredential:status:-:409": "the PUT row lists 409 but names no condition, and its "
    "body carries no identifier to collide",
    "changeInviteStatus:status:-:451": "a status change carries no visitor details to match a "
    "watchlist; the documents give 451 only for invitation requests",
}


def _not_mutated(c: Constraint) -> tuple[str, str] | None:
    """Why a constraint gives no mutant of its own: ("covered", by what) or ("equivalent",
    why no request can tell its mutant from the contract); None when it gives mutants."""
    if c.name in NO_CAUSE:
        return "equivalent", NO_CAUSE[c.name]
    if c.where == "status":
        op = spec.operation(c.operation_id)
        if c.keyword == "400" and op.path.startswith(READER_PATHS):
            return "equivalent", (
                "doc1 files an unreadable body under 400 and doc3's reader table under 422; "
                "both readings are accepted on the reader's paths, so 422 for 400 is no deviation"
            )
        group = _share_group(c)
        if group is not None:
            return "covered", f"{group}:status:{c.keyword}-answered-{NEIGHBOUR[int(c.keyword)]}"
        return None
    schema = _field_schema(c)
    if c.keyword in ("pattern", "format") and syntax(c) == "uuid" and c.where == "query":
        return "undecidable", (
            "the documents say the parameter names a record by UUID, not that a malformed one "
            "is refused; no normative test may require the refusal"
        )
    if c.keyword in ("pattern", "format") and syntax(c) == "uuid" and c.where == "body":
        return "equivalent", (
            "a reference by UUID: a value that is no UUID names no record, and the "
            "reference check refuses it as the pattern would"
        )
    if c.keyword == "format" and "pattern" in schema:
        return "covered", "the pattern's relaxed mutant (it relaxes both)"
    if c.keyword == "default" and c.field[-1] == "limit":
        return "undecidable", (
            f"a page's size left to its default ({c.value}) shows only where the list holds "
            f"more records than that; the suite does not make {c.value} records to see it"
        )
    if (
        c.where == "body"
        and c.keyword == "default"
        and spec.operation(c.operation_id).method != "POST"
    ):
        return "equivalent", (
            "a replace that leaves the field out keeps what the record holds (our reading), so "
            "the default never applies"
        )
    return None


@dataclass
class Census:
    """What became of each constraint of the contract: its mutants, or why it has none."""

    faults: list[Fault] = field(default_factory=list)
    mutants_of: dict[str, list[str]] = field(default_factory=dict)
    covered: dict[str, str] = field(default_factory=dict)
    equivalent: dict[str, str] = field(default_factory=dict)
    # Constraints the spec encodes but the documents state no observable answer for.
    undecidable: dict[str, str] = field(default_factory=dict)
    unassigned: dict[str, str] = field(default_factory=dict)  # no rule states it: a gap


def _status_fault(c: Constraint, rule: str) -> Fault:
    status = int(c.keyword)
    instead = NEIGHBOUR[status]
    group = _share_group(c)
    if group is not None:
        ops = tuple(
            o.operation_id
            for o in spec.operations()
            if c.keyword in o.statuses and _group_of(o) == group
        )
        name = f"{group}:status:{status}-answered-{instead}"
    else:
        ops = (c.operation_id,)
        name = f"{c.operation_id}:status:{status}-answered-{instead}"
    does = f"{name.split(':')[0]} answers {instead} where {status} is due"
    return Fault(name, rule, does, operations=ops, swap=(status, instead), constraint=c.name)


@functools.cache
def census() -> Census:
    """Every mutant of the contract, in the order of :func:`spec.constraints`, and what became
    of the constraints that give none."""
    found = Census()
    for c in constraints():
        why = _not_mutated(c)
        group = _share_group(c)
        first_shared = group is not None and not any(
            f.name == f"{group}:status:{c.keyword}-answered-{NEIGHBOUR[int(c.keyword)]}"
            for f in found.faults
        )
        if why is not None and not first_shared:
            kinds = {"covered": found.covered, "undecidable": found.undecidable}
            kinds.get(why[0], found.equivalent)[c.name] = why[1]
            continue
        if c.where == "status":
            if int(c.keyword) not in NEIGHBOUR:
                found.unassigned[c.name] = "no neighbouring status is defined for it"
                continue
            rule, why_none = _status_rule(c)
            if rule is None:
                if why_none.startswith("the documents"):
                    found.equivalent[c.name] = why_none
                else:
                    found.unassigned[c.name] = why_none
                continue
            fault = _status_fault(c, rule)
            found.faults.append(fault)
            found.mutants_of[c.name] = [fault.name]
            continue
        names = []
        for label, mutation, kind in _mutations(c, _field_schema(c)):
            path = ".".join(c.field)
            name = f"{c.operation_id}:{c.where}:{path}:{c.keyword}-{label}"
            why_same = _shadowed(c, label, mutation)
            if why_same is not None:
                found.equivalent[name] = why_same
                continue
            rule = rule_for(c, kind)
            if rule is None:
                found.unassigned[c.name] = f"no rule of the operation states its {kind}"
                continue
            shown = "removed" if mutation.value == REMOVED else repr(mutation.value)
            does = f"{c.operation_id} {c.where} {path}: {mutation.keyword} {shown} ({label})"
            found.faults.append(
                Fault(
                    name,
                    rule,
                    does,
                    operations=(c.operation_id,),
                    mutation=mutation,
                    constraint=c.name,
                )
            )
            names.append(name)
        if names:
            found.mutants_of[c.name] = names
        elif any(n.startswith(f"{c.name}-") for n in found.equivalent):
            found.equivalent[c.name] = "each of its mutants is equivalent (listed by name)"
        elif c.name not in found.unassigned:
            found.unassigned[c.name] = "no deviation of it is defined"
    return found


@functools.cache
def register() -> int:
    """Add the mutants to the catalogue (after the hand-written faults); how many."""
    faults = census().faults
    for fault in faults:
        CATALOGUE[fault.name] = fault
    return len(faults)


register()
