"""The contract's constraints, one by one: every bound, enum, pattern, format, required field and
default a request schema of ``openapi.yaml`` states, and every status an operation documents.

This is the population a plan's sensitivity is measured against: the reference server derives
one or more mutants from each constraint (``reference_server/faults/_mutants.py``) and the
suite decides them (``suites/rules/test_contract_bounds.py``). Only what the documents state
counts: the constraints are read from :func:`spec.openapi`, never from our assumed overlays.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from amws_conformance.spec._load import Operation, Rule, openapi, operations, resolve, rules

# The keywords of a field's schema that constrain what a request may carry.
FIELD_KEYWORDS = (
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "enum",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "default",
)
# A path step into an array's items.
ITEMS = "[]"


@dataclass(frozen=True)
class Constraint:
    """One documented constraint: on ``field`` (a path of property names, ``[]`` for an array's
    items) of the operation's JSON body or query, or on the operation's answer (``status``)."""

    operation_id: str
    where: str  # "body", "query" or "status"
    field: tuple[str, ...]
    keyword: str  # a JSON Schema keyword, "required", or the status code for "status"
    value: Any

    @property
    def name(self) -> str:
        """``operation:where:field:keyword``; unique in the contract."""
        return f"{self.operation_id}:{self.where}:{'.'.join(self.field) or '-'}:{self.keyword}"


def inline(node: Any, document: dict[str, Any] | None = None) -> Any:
    """A copy of ``node`` with every local reference replaced by what it points at (request
    schemas hold no cycles). Keywords beside a reference stay, as a second ``allOf`` part."""
    document = document if document is not None else openapi()
    if isinstance(node, list):
        return [inline(v, document) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = inline(resolve({"$ref": node["$ref"]}, document), document)
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return {"allOf": [target, inline(rest, document)]} if rest else target
    return {k: inline(v, document) for k, v in node.items()}


def parts(schema: Any) -> Iterator[dict[str, Any]]:
    """The schema and every ``allOf``/``anyOf``/``oneOf`` part inside it (not its properties)."""
    if not isinstance(schema, dict):
        return
    yield schema
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in schema.get(key, []):
            yield from parts(sub)


def properties_at(schema: Any, field: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every schema node that describes ``field`` inside ``schema`` (a field may be described in
    several parts of a composition). The nodes are those of ``schema`` itself: change them and
    the schema changes."""
    found = [schema] if isinstance(schema, dict) else []
    for step in field:
        following: list[dict[str, Any]] = []
        for node in found:
            for part in parts(node):
                if step == ITEMS:
                    if isinstance(part.get("items"), dict):
                        following.append(part["items"])
                elif isinstance(part.get("properties", {}).get(step), dict):
                    following.append(part["properties"][step])
        found = following
    return found


def body_schema(op: Operation, document: dict[str, Any] | None = None) -> Any | None:
    """The operation's JSON body schema, inlined, from ``document`` (the documented one by
    default); None when the operation takes no JSON body."""
    document = document if document is not None else openapi()
    raw = document["paths"][op.path][op.method.lower()].get("requestBody")
    if raw is None:
        return None
    content = resolve(raw, document).get("content", {})
    if "application/json" not in content:
        return None
    return inline(content["application/json"]["schema"], document)


def _field_constraints(op: str, schema: Any, field: tuple[str, ...]) -> Iterator[Constraint]:
    seen: set[str] = set()
    for part in parts(schema):
        for keyword in FIELD_KEYWORDS:
            if keyword in part and keyword not in seen:
                seen.add(keyword)
                yield Constraint(op, "body", field, keyword, part[keyword])
    for part in parts(schema):
        for name in part.get("required", []):
            if f"required:{name}" not in seen:
                seen.add(f"required:{name}")
                yield Constraint(op, "body", (*field, name), "required", True)
    walked: set[str] = set()
    for part in parts(schema):
        for name in part.get("properties", {}):
            if name not in walked:
                walked.add(name)
                # A field described in several parts is walked once, through all of them.
                merged = {
                    "allOf": [
                        p["properties"][name]
                        for p in parts(schema)
                        if name in p.get("properties", {})
                    ]
                }
                yield from _field_constraints(op, merged, (*field, name))
        if isinstance(part.get("items"), dict) and ITEMS not in walked:
            walked.add(ITEMS)
            yield from _field_constraints(op, part["items"], (*field, ITEMS))


def _query_constraints(op: Operation) -> Iterator[Constraint]:
    for param in op.parameters():
        if param.get("in") != "query":
            continue
        schema = inline(param.get("schema", {}))
        for part in parts(schema):
            for keyword in FIELD_KEYWORDS:
                if keyword in part:
                    yield Constraint(
                        op.operation_id, "query", (param["name"],), keyword, part[keyword]
                    )


@functools.cache
def constraints() -> tuple[Constraint, ...]:
    """Every constraint the documents state on requests and answers, in document order."""
    found: list[Constraint] = []
    for op in operations():
        schema = body_schema(op)
        if schema is not None:
            found += _field_constraints(op.operation_id, schema, ())
        found += _query_constraints(op)
        for status in op.raw.get("responses", {}):
            found.append(Constraint(op.operation_id, "status", (), str(status), int(status)))
    names = [c.name for c in found]
    duplicated = {n for n in names if names.count(n) > 1}
    if duplicated:  # two constraints of one keyword on one field: the name would not tell them
        raise ValueError(f"constraints named twice: {sorted(duplicated)[:5]}")
    return tuple(found)


# Per kind of constraint, the endings of the rule ids that state it, in order of preference; the
# rule must list the operation. A status is found by its number in the rule id first.
RULE_SUFFIXES: dict[str, tuple[str, ...]] = {
    "maxLength": ("FIELD-LENGTH", "CRITERIA-LENGTH", "KEY-LENGTH", "CODE-LENGTH"),
    "minLength": ("FIELD-LENGTH", "CRITERIA-LENGTH", "KEY-LENGTH", "CODE-LENGTH"),
    "maxItems": ("ACL-COUNT", "FIELD-LENGTH"),
    "minItems": ("ACL-COUNT", "FIELD-LENGTH"),
    "minimum": ("FIELD-RANGE", "LIMIT-RANGE", "PAGING"),
    "maximum": ("FIELD-RANGE", "LIMIT-RANGE", "PAGING"),
    "exclusiveMinimum": ("FIELD-RANGE",),
    "exclusiveMaximum": ("FIELD-RANGE",),
    "enum": ("FIELD-ENUM", "FILTER-VALUES", "REGISTRATIONS-STATUS"),
    "required": ("FIELD-REQUIRED", "MISSING-FIELD"),
    "default": ("DEFAULTS", "PAGING", "ENABLED-DEFAULT"),
    "404": ("NOT-FOUND",),
    "email": ("FIELD-EMAIL",),
    "phone": ("FIELD-PHONE",),
    "date": ("FIELD-DATE",),
    "409": (
        "NAME-UNIQUE",
        "NAME-DUPLICATE",
        "DUPLICATE",
        "IDENTIFIER-UNIQUE",
        "CONFLICT",
        "DUPLICATE-ON-REPLACE",
    ),
    "422": ("FIELD-REQUIRED", "MISSING-FIELD", "FIELD-LENGTH", "CRITERIA-LENGTH", "PAGING"),
    "201": ("CREATE-201", "WRITE-ACK"),
    "200": (
        "WRITE-ACK",
        "UPDATE-200",
        "DELETE-200",
        "UPLOAD-200-ACK",
        "GET-FULL-RECORD",
        "LIST-SHAPE",
        "READ",
        "SHAPE",
        "ENVELOPE",
        "RESPONSE",
    ),
}
# Rules that bind every operation they apply to, whatever the operations they list.
GENERAL_RULES = {"timestamp": "CONV-TIMESTAMP-UNPARSABLE-422"}
# Constraints whose rule the suffixes do not find, by "operation:field:keyword" ("*" for any
# operation or field).
RULE_OF: dict[str, str] = {
    "changeInviteStatus:status:required": "INV-STATUS-CHANGE-422",
    "changeInviteStatus:status:enum": "INV-STATUS-CHANGE-422",
    "createUser:password:pattern": "USER-PASSWORD-POLICY",
    "updateUser:password:pattern": "USER-PASSWORD-POLICY",
    "listInvites:visitorUUID:pattern": "INV-LIST-VISITOR-FILTER",
    "listUsersDeprecated:start:*": "USER-LIST-DEPRECATED",
    "listUsersDeprecated:limit:*": "USER-LIST-DEPRECATED",
    "listUsersDeprecated::400": "USER-LIST-DEPRECATED",
    # A plain array: a start left to its default shows as the first visitor being there.
    "listWatchlistVisitors:start:default": "WL-VISITORS",
    "listUserRegistrations:status:default": "USER-REGISTRATIONS-STATUS",
    # A permitted trigger fires a real relay: the matrix's full-key case runs only where one may.
    "triggerAccessControlPoint::200": "ACP-TRIGGER-ONCE",
    "createWatchlistEntry:*:required": "WL-ENTRY-IDENTIFYING-FIELD",
    "updateWatchlistEntry:*:required": "WL-ENTRY-IDENTIFYING-FIELD",
}


def rules_of(operation_id: str, *, assumed: bool = False) -> list[Rule]:
    """The rules that list the operation: the normative ones, then (``assumed``) ours."""
    listing = [r for r in rules() if operation_id in r.operations]
    return [r for r in listing if r.normative] + (
        [r for r in listing if not r.normative] if assumed else []
    )


def syntax(constraint: Constraint) -> str:
    """What a pattern or format describes: email, phone, date, timestamp, uuid or text."""
    value = str(constraint.value)
    if constraint.keyword == "format":
        return value if value in ("email", "date", "uuid") else "text"
    if value.startswith("^[0-9a-fA-F]{8}"):
        return "uuid"
    if value.startswith("^\\+"):
        return "phone"
    if "@" in value:
        return "email"
    if value == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$":
        return "date"
    if value.startswith("^(?!0000)"):
        return "timestamp"
    return "text"


def rule_for(constraint: Constraint, kind: str) -> str | None:
    """The rule whose tests must catch a mutant of ``constraint`` (``kind``: the keyword, or a
    pattern's syntax), or None when the catalogue has none."""
    op, path = constraint.operation_id, ".".join(constraint.field)
    keyword = constraint.keyword
    for key in (f"{op}:{path}:{keyword}", f"{op}:{path}:*", f"{op}:*:{keyword}", f"{op}:*:*"):
        if key in RULE_OF:
            return RULE_OF[key]
    rules = rules_of(op, assumed=constraint.where == "status")
    for suffix in RULE_SUFFIXES.get(kind, ()):
        for rule in rules:
            if rule.id.endswith(suffix):
                return rule.id
    return GENERAL_RULES.get(kind)
