"""The edges of the contract's documented request-body constraints, and how a batch of them is
judged (helpers of ``test_contract_bounds.py``, not tests).

:func:`cases` groups :func:`spec.constraints` by operation and rule (:func:`spec.rule_for`);
:func:`edges` gives, per field of a case, the values exactly at each bound (accepted) and one
step beyond it (refused); :func:`rounds` lays them out so round k carries every field's k-th
value. :func:`refusals` sends the refused rounds and retries alone every field a batched 422
does not name, so a target that reports only its first finding is never failed for that alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from amws_conformance import spec
from amws_conformance.spec._constraints import (
    Constraint,
    body_schema,
    constraints,
    parts,
    properties_at,
    rule_for,
    syntax,
)

MISSING = object()  # a round's value that leaves the field out of the body
# The values that break each syntax: each one is refused by the documented pattern or format.
# A timestamp field is also sent the date alone of a valid value (see :func:`edges`): a date
# without the time a date-time needs, the one value a lenient ISO parser reads, so it tells a
# pattern check from a parse.
BROKEN = {
    "email": ["not-an-address"],
    "phone": ["0821234567"],
    "date": ["2004-13-01"],
    "timestamp": ["2026-13-01T00:00:00Z", "yesterday"],
    # The password policy's pattern (the only free-text pattern): each misses one class.
    "text": ["password1!", "PASSWORD1!", "Password!!", "Password12"],
}
NEAR = 0.000001  # how far inside an exclusive bound of a number the accepted edge lies


@dataclass(frozen=True)
class Case:
    """The documented body constraints of one operation that one rule's tests must decide."""

    op: str
    rule: str
    found: tuple[Constraint, ...]

    @property
    def fields(self) -> list[str]:
        return list(dict.fromkeys(c.field[0] for c in self.found))


@dataclass
class Item:
    """One field's value in a round; ``named``: a 422 must name the field (False where the
    failure is the body's, as a group of alternatives none of which is given)."""

    field: str
    value: Any
    named: bool = True
    alone: bool = False  # decided only in a body of its own (see :func:`edges`)
    # A documented value in another case: the 422 that lists the allowed values spells it, so
    # the global no-echo check would take the listing for an echo.
    quiet: bool = False


def _kind(c: Constraint) -> str:
    return syntax(c) if c.keyword in ("pattern", "format") else c.keyword


def cases() -> list[Case]:
    """Every (operation, rule) whose body constraints this module decides, in document order.
    Left out: defaults (not bounds), uuid syntax (references, decided by their own rules),
    nested fields, query parameters, constraints no rule binds."""
    grouped: dict[tuple[str, str], list[Constraint]] = {}
    for c in constraints():
        if c.where != "body" or c.keyword == "default" or len(c.field) != 1:
            continue
        kind = _kind(c)
        rule = rule_for(c, kind)
        if rule is None or kind == "uuid":
            continue
        grouped.setdefault((c.operation_id, rule), []).append(c)
    return [Case(op, rule, tuple(found)) for (op, rule), found in grouped.items()]


def merged(op: str, name: str) -> dict[str, Any]:
    """The documented keywords of a top-level field, its composition parts merged."""
    out: dict[str, Any] = {}
    for node in properties_at(body_schema(spec.operation(op)), (name,)):
        for part in parts(node):
            for key, value in part.items():
                out.setdefault(key, value)
    return out


def field_syntax(op: str, name: str) -> str | None:
    """What the field's documented pattern or format describes, if it has one."""
    for c in constraints():
        if c.operation_id == op and c.field == (name,) and c.keyword in ("pattern", "format"):
            return syntax(c)
    return None


def plain_required(op: str) -> set[str]:
    """Fields the body schema requires outright (not only in one of several alternatives)."""
    schema: dict[str, Any] = body_schema(spec.operation(op)) or {}
    found: set[str] = set()
    pending = [schema]
    while pending:
        node = pending.pop()
        found |= set(node.get("required", []))
        pending += [p for p in node.get("allOf", []) if isinstance(p, dict)]
    return found


def in_branch(op: str, name: str, keyword: str) -> bool:
    """Whether ``keyword`` of the field lives only in an anyOf/oneOf alternative: a value
    breaking it makes the body invalid only when no other alternative holds."""
    schema: dict[str, Any] = body_schema(spec.operation(op)) or {}
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key, []):
            for part in parts(branch):
                held = part.get("properties", {}).get(name, {})
                if keyword in held or (keyword == "required" and name in part.get("required", [])):
                    return True
    return False


Text = Callable[[str, int], str]  # (field, length) -> a valid value of that length


Edges = dict[str, tuple[list[Item], list[Item]]]


def edges(case: Case, text: Text, good: Callable[[str, str], Any]) -> Edges:
    """Per field of ``case``: (accepted items, refused items), each an :class:`Item`.

    ``text(field, n)`` makes a valid value of ``n`` characters for the field (its syntax);
    ``good(field, kind)`` a valid value of a syntax. A phone number's maxLength is not probed
    (the pattern bounds it), nor its minLength from below the pattern's reach."""
    out: Edges = {}
    for c in case.found:
        name = c.field[0]
        accepted, refused = out.setdefault(name, ([], []))
        kind, schema = _kind(c), merged(case.op, name)
        branch = in_branch(case.op, name, c.keyword)
        phone = field_syntax(case.op, name) == "phone"
        if c.keyword == "maxLength" and not phone:
            accepted.append(Item(name, text(name, c.value)))
            refused.append(Item(name, text(name, c.value + 1)))
        elif c.keyword == "minLength":
            if c.value > 0 and not phone:
                accepted.append(Item(name, text(name, c.value), alone=branch))
            if c.value > 0:
                short = "+" if phone else (text(name, c.value - 1) if c.value > 1 else "")
                refused.append(Item(name, short, named=not branch, alone=branch))
        elif c.keyword in ("minimum", "maximum"):
            step = -1 if c.keyword == "minimum" else 1
            accepted.append(Item(name, c.value))
            refused.append(Item(name, c.value + step))
        elif c.keyword in ("exclusiveMinimum", "exclusiveMaximum"):
            inward = 1 if c.keyword == "exclusiveMinimum" else -1
            inside = inward if schema.get("type") == "integer" else inward * NEAR
            accepted.append(Item(name, round(c.value + inside, 6)))
            refused.append(Item(name, c.value))
        elif c.keyword == "enum":
            accepted += [Item(name, v) for v in c.value]
            made_up = "NOT_A_VALUE"
            while made_up in c.value:
                made_up += "_X"
            refused.append(Item(name, made_up))
            first = c.value[0]
            if isinstance(first, str) and first.lower() not in c.value:
                refused.append(Item(name, first.lower(), quiet=True))
        elif kind in BROKEN:
            if not any(i.value == good(name, kind) for i in accepted):
                accepted.append(Item(name, good(name, kind)))
            broken = BROKEN[kind] + ([str(good(name, kind))[:10]] if kind == "timestamp" else [])
            refused += [Item(name, v) for v in broken if not _has(refused, v)]
        elif c.keyword == "maxItems":
            accepted.append(Item(name, c.value))  # a count: the test makes the list
            refused.append(Item(name, c.value + 1))
        elif c.keyword == "required":
            refused.append(Item(name, MISSING, named=not branch, alone=branch))
    return out


def _has(items: list[Item], value: Any) -> bool:
    return any(i.value == value for i in items)


def rounds(per_field: dict[str, list[Item]]) -> list[list[Item]]:
    """Round k holds every field's k-th item; an item decided ``alone`` gets a round of its
    own, and the alternatives left out together (``MISSING`` in a branch) one round."""
    batched = {f: [i for i in items if not i.alone] for f, items in per_field.items()}
    out: list[list[Item]] = []
    depth = max((len(v) for v in batched.values()), default=0)
    for k in range(depth):
        out.append([items[k] for items in batched.values() if len(items) > k])
    gone = [i for items in per_field.values() for i in items if i.alone and i.value is MISSING]
    if gone:
        out.append(gone)
    out += [
        [i] for items in per_field.values() for i in items if i.alone and i.value is not MISSING
    ]
    return [r for r in out if r]


def compose(base: dict[str, Any], items: list[Item]) -> dict[str, Any]:
    """``base`` with each item's value in place; an item decided alone (a field that is one of
    several alternatives) goes in a body of its own, so no other alternative holds."""
    only = all(i.alone and i.value is not MISSING for i in items)
    body = {} if only else dict(base)
    for item in items:
        if item.value is MISSING:
            body.pop(item.field, None)
        else:
            body[item.field] = item.value
    return body


def names(answer: Any, name: str) -> bool:
    """Whether a 422 names ``name``: in its reason's ``@field`` list, or its ``errors`` keys."""
    try:
        body = answer.json()
    except ValueError:
        return False
    if not isinstance(body, dict):
        return False
    reason = str(body.get("reason", ""))
    at = f"@{name}"
    for start in _find_all(reason, at):
        after = reason[start + len(at) : start + len(at) + 1]
        if not (after.isalnum() or after == "_"):
            return True
    errors = body.get("errors")
    return isinstance(errors, dict) and name in errors


def _find_all(text: str, sub: str) -> Iterator[int]:
    start = text.find(sub)
    while start >= 0:
        yield start
        start = text.find(sub, start + 1)


def named_in(answer: Any, fields: list[str]) -> list[str]:
    return [f for f in fields if names(answer, f)]


Send = Callable[[dict[str, Any], list[Item]], Any]


def refusals(send: Send, base: Callable[[], dict[str, Any]], plan: list[list[Item]]) -> list[str]:
    """Send each round of refused values; what went wrong, one line per field. A field the
    round's 422 does not name (or every field, when the round is not answered 422) is sent
    again alone and judged on that answer."""
    problems: list[str] = []
    for items in plan:
        answer = send(compose(base(), items), items)
        if all(i.alone for i in items):  # alternatives left out together: the body's failure
            status = answer.status_code
            if status == 422 and all(names(answer, i.field) or not i.named for i in items):
                continue
            verdict = "accepted" if status < 300 else f"answered {status}, not a 422 naming it"
            problems.append(f"[{describe(items)}] {verdict}")
            continue
        for item in items:
            shown = "left out" if item.value is MISSING else _short(item.value)
            if answer.status_code == 422 and names(answer, item.field):
                continue
            if answer.status_code == 422 and len(items) == 1 and not item.named:
                continue  # a failure of the body as a whole: no field to name
            alone = answer if len(items) == 1 else send(compose(base(), [item]), [item])
            status = alone.status_code
            if status == 422 and (names(alone, item.field) or not item.named):
                continue
            if status < 300:
                problems.append(f"{item.field}={shown} accepted ({status})")
            elif status == 422:
                problems.append(
                    f"{item.field}={shown} refused by a 422 that does not name it: "
                    f"{alone.text[:200]}"
                )
            else:
                problems.append(f"{item.field}={shown} answered {status}, not 422")
    return problems


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}…({len(str(value))} chars)"


def describe(items: list[Item]) -> str:
    return ", ".join(
        f"{i.field}={'left out' if i.value is MISSING else _short(i.value)}" for i in items
    )
