"""Request validation with the spec's own schemas (the one seam where field rules live).

Bodies and query parameters are checked with ``jsonschema`` against the schemas of
``spec/openapi.yaml``; nothing here restates a limit. Failures become the documented 422
(or 400 where the operation documents 400 for a parameter), and messages describe the rule
broken, never the rejected value.

The decisions inside validation are the methods of ``ValidationPolicy``; the pipeline hands
the one in force (``server.policy(ValidationPolicy)``) to :func:`validate_body` and
:func:`validate_query`, and the validation faults plug in there. The declarative ones
(``unchecked``, ``optional``) are applied here from the catalogue.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from amws_conformance import spec
from amws_conformance.reference_server._errors import ApiError, invalid_fields
from amws_conformance.reference_server._json_body import nul_fields
from amws_conformance.reference_server._mutation import REMOVED, Mutation
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._time import normalise
from amws_conformance.spec._constraints import body_schema, inline, parts, properties_at
from amws_conformance.spec._schemas import pointer as spec_pointer

_TIMESTAMP_REF = "#/components/schemas/TimestampIn"


def _field_name(error: ValidationError) -> str:
    name = ""
    for part in error.absolute_path:
        name += f"[{part}]" if isinstance(part, int) else (f".{part}" if name else str(part))
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else ""
        name = f"{name}.{missing}" if name else missing
    return name or "body"


def _branch_fields(branches: Iterable[Any]) -> list[str]:
    fields: list[str] = []
    for branch in branches:
        for field in spec._load.resolve(branch).get("required", []):
            if field not in fields:
                fields.append(field)
    return fields


def _message(error: ValidationError) -> str:
    """Describe the rule an error broke, from the schema only (never from the instance)."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    keyword = error.validator
    value: Any = error.validator_value  # jsonschema's Unset only on an error built by hand
    if keyword == "required":
        return "is required"
    if keyword in ("minLength", "maxLength"):
        low, high = schema.get("minLength"), schema.get("maxLength")
        if low is not None and high is not None:
            return f"length must be between {low} and {high} characters"
        return (
            f"length must be at least {low} characters"
            if high is None
            else (f"length must be at most {high} characters")
        )
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bounds = []
        for key, text in (
            ("exclusiveMinimum", "greater than"),
            ("minimum", "at least"),
            ("exclusiveMaximum", "less than"),
            ("maximum", "at most"),
        ):
            if key in schema:
                bounds.append(f"{text} {schema[key]}")
        return "must be " + " and ".join(bounds)
    if keyword in ("enum", "const"):
        allowed = value if keyword == "enum" else [value]
        return "must be one of " + ", ".join(str(v) for v in allowed)
    if keyword == "type":
        kinds = value if isinstance(value, list) else [value]
        return "must be of type " + " or ".join(str(k) for k in kinds if k != "null")
    if keyword == "pattern":
        return "has an invalid format"
    if keyword == "format":
        return f"is not a valid {value}"
    if keyword == "maxItems":
        return f"may hold at most {value} items"
    if keyword == "minItems":
        return f"must hold at least {value} items"
    if keyword == "uniqueItems":
        return "must not repeat an item"
    if keyword == "oneOf":
        fields = _branch_fields(value)
        if fields:
            return "exactly one of " + ", ".join(fields) + " must be given"
    if keyword == "anyOf":
        fields = _branch_fields(value)
        if fields:
            return "at least one of " + ", ".join(fields) + " is required"
    return "is not valid"


def _errors_of(validator: jsonschema.Draft202012Validator, instance: Any) -> dict[str, str]:
    errors: dict[str, str] = {}
    for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)):
        # An allOf/anyOf wrapper of a single field reports through its best leaf error.
        if error.validator == "allOf" and error.context:
            error = jsonschema.exceptions.best_match(error.context)
        errors.setdefault(_field_name(error), _message(error))
    return errors


def _timestamp_fields(schema: Any, depth: int = 0) -> set[str]:
    """Names of the top-level properties whose schema is the shared request timestamp."""
    schema = spec._load.resolve(schema) if depth == 0 else schema
    found: set[str] = set()
    if not isinstance(schema, dict):
        return found
    for sub in schema.get("allOf", []) + schema.get("anyOf", []) + schema.get("oneOf", []):
        found |= _timestamp_fields(spec._load.resolve(sub), depth + 1)
    for name, prop in schema.get("properties", {}).items():
        refs = [prop, *prop.get("allOf", []), *prop.get("anyOf", [])]
        if any(isinstance(r, dict) and r.get("$ref") == _TIMESTAMP_REF for r in refs):
            found.add(name)
    return found


def _known_fields(schema: Any) -> set[str]:
    schema = spec._load.resolve(schema)
    names = set(schema.get("properties", {}))
    for sub in schema.get("allOf", []) + schema.get("anyOf", []) + schema.get("oneOf", []):
        names |= _known_fields(sub)
    return names


class ValidationPolicy(Policy):
    """The decisions inside request validation, each answering what the documents require."""

    def text_as_stored(self, body: Any) -> Any:
        """The body whose text is checked and stored: as sent."""
        return body

    def nul_refusals(self, body: Any, known: set[str]) -> dict[str, str]:
        """The refusals of known fields whose text holds U+0000: each such field."""
        return nul_fields(body, known)

    def unknown_field_refusals(self, body: Any, known: set[str]) -> dict[str, str]:
        """The refusals of fields the operation does not know: none, they are ignored."""
        return {}

    def start_out_of_range(self) -> None:
        """What a paging start past its bound does besides its refusal: nothing."""

    def reported(self, errors: dict[str, str]) -> dict[str, str]:
        """The refusals a 422 names: every one found."""
        return errors

    def reasons(self, errors: dict[str, str], body: Any) -> dict[str, str]:
        """The reasons a 422 gives: the rule each field broke, never the value sent."""
        return errors

    def timestamp(self, text: str) -> str | None:
        """The stored form of a timestamp sent as ``text``: UTC (ValueError: no real instant)."""
        return normalise(text)


def _unenforced(
    op: spec.Operation, errors: dict[str, str], policy: ValidationPolicy
) -> dict[str, str]:
    """The validation seam of the declarative faults (``unchecked``, ``optional``)."""
    faults = policy.server.faults
    optional = faults.optional_fields(op.operation_id)
    for field in faults.unchecked_fields(op.operation_id):
        # The field's limits go unenforced; a missing required field is still refused
        # unless the fault makes the field optional as well.
        errors = {
            k: v
            for k, v in errors.items()
            if (v == "is required" and k not in optional)
            or (k != field and not k.startswith(f"{field}["))
        }
    return errors


def _integers(schema: Any, body: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema counts 5.0 as an integer; hand the domain a real ``int``."""
    props = spec.resolve(schema).get("properties", {})
    for name, value in body.items():
        if isinstance(value, float) and value.is_integer():
            prop = spec.resolve(props.get(name, {}))
            kinds = prop.get("type")
            if kinds == "integer" or (isinstance(kinds, list) and "integer" in kinds):
                body[name] = int(value)
    return body


def _mutated(schema: Any, mutation: Mutation) -> Any:
    """A copy of an inlined ``schema`` with one documented constraint changed (the validation
    seam of the spec-derived mutants, ``reference_server/faults/_mutants.py``)."""
    schema = copy.deepcopy(schema)
    if mutation.keyword == "required":
        for parent in properties_at(schema, mutation.field[:-1]):
            for part in parts(parent):
                if mutation.field[-1] in part.get("required", []):
                    part["required"] = [f for f in part["required"] if f != mutation.field[-1]]
        return schema
    for node in properties_at(schema, mutation.field):
        for part in parts(node):
            for keyword in mutation.also_removed:
                part.pop(keyword, None)
            if mutation.keyword in part or mutation.value == REMOVED:
                part.pop(mutation.keyword, None)
                if mutation.value != REMOVED:
                    part[mutation.keyword] = mutation.value
        if mutation.value != REMOVED and not any(mutation.keyword in p for p in parts(node)):
            node[mutation.keyword] = mutation.value  # a keyword moved to its sibling
    return schema


def _defaults(schema: Any) -> dict[str, Any]:
    """The defaults the schema gives its top-level fields."""
    found: dict[str, Any] = {}
    for part in parts(schema):
        for name, prop in part.get("properties", {}).items():
            for sub in parts(prop):
                if "default" in sub:
                    found.setdefault(name, sub["default"])
    return found


@dataclass(frozen=True)
class _BodyChecks:
    """What checking one operation's JSON body needs, read out of the spec once."""

    validator: jsonschema.Draft202012Validator
    schema: Any  # the body's schema as the document has it (references unresolved)
    known: frozenset[str]
    timestamps: frozenset[str]
    defaults: Mapping[str, Any]


@functools.cache
def _body_checks(op: spec.Operation, mutations: tuple[Mutation, ...] = ()) -> _BodyChecks:
    if mutations:
        # A mutant's checks: the operation's inlined schema with the constraint changed.
        changed = body_schema(op, spec.enforced())
        for mutation in mutations:
            changed = _mutated(changed, mutation)
        plain = _body_checks(op)
        return _BodyChecks(
            validator=spec.validator_for(changed, enforced=True),
            schema=plain.schema,
            known=plain.known,
            timestamps=plain.timestamps,
            defaults=_defaults(changed),
        )
    content = spec._load.resolve(op.raw["requestBody"])["content"]["application/json"]
    pointer = spec_pointer("paths", op.path, op.method.lower(), "requestBody")
    if "$ref" in op.raw["requestBody"]:
        pointer = op.raw["requestBody"]["$ref"].removeprefix("#/")
    # The server enforces our assumed constraints too (x-assumed-schema): it is the reference.
    # The schema is looked up once here, references at its top followed, so a request does
    # not resolve the same pointers again (a validator of a bare $ref would, every time).
    # Only a reference standing alone is followed: beside other keywords (an overlay merged
    # in) it is one constraint among them, left to the validator.
    enforced = spec.enforced()
    schema: Any = {"$ref": f"#/{pointer}/content/application~1json/schema"}
    while isinstance(schema, dict) and list(schema) == ["$ref"]:
        schema = spec.resolve(schema, enforced)
    return _BodyChecks(
        validator=spec.validator_for(schema, enforced=True),
        schema=content["schema"],
        known=frozenset(_known_fields(content["schema"])),
        timestamps=frozenset(_timestamp_fields(content["schema"])),
        defaults=_defaults(inline(schema, spec.enforced())),
    )


def validate_body(op: spec.Operation, body: Any, policy: ValidationPolicy) -> Any:
    """Check a JSON body against the operation's schema; timestamps come back normalised."""
    checks = _body_checks(op, policy.server.faults.mutations(op.operation_id))
    body = policy.text_as_stored(body)
    found = _errors_of(checks.validator, body)
    known = set(checks.known)
    # Text that holds U+0000 is refused in every field the operation knows (CONV-TEXT-NUL).
    for name, message in policy.nul_refusals(body, known).items():
        found.setdefault(name, message)
    errors = {**_unenforced(op, found, policy), **policy.unknown_field_refusals(body, known)}
    if "at most" in errors.get("start", ""):
        policy.start_out_of_range()
    errors = policy.reasons(policy.reported(errors), body)
    if errors:
        raise invalid_fields(errors)
    if isinstance(body, dict):
        body = _integers(checks.schema, dict(body))
        if op.method == "POST" and not op.creates:
            # A field a search leaves out takes the spec's default (the domain restates none).
            # A create's or a replace's missing field is the domain's to read, through its
            # policy (a watchlist created without enabled; a replace may keep what it holds).
            body = {**checks.defaults, **body}
        else:
            # Only a mutant's changed default reaches the domain as if it had been sent.
            changed = {
                m.field[0]: m.value
                for m in policy.server.faults.mutations(op.operation_id)
                if m.where == "body" and m.keyword == "default" and len(m.field) == 1
            }
            body = {**changed, **body}
        for name in checks.timestamps:
            if isinstance(body.get(name), str):
                try:
                    body[name] = policy.timestamp(body[name])
                except ValueError:
                    errors[name] = "is not a valid timestamp"
    if errors:
        raise invalid_fields(errors)
    return body


def _coerce(raw: str, schema: Mapping[str, Any]) -> Any:
    kind = schema.get("type")
    if kind == "integer":
        try:
            return int(raw)
        except ValueError:
            return raw
    return raw


@dataclass(frozen=True)
class _QueryParameter:
    """One documented query parameter of an operation, read out of the spec once."""

    name: str
    schema: Mapping[str, Any]  # references resolved
    validator: jsonschema.Draft202012Validator
    invalid_status: int


@functools.cache
def _query_parameters(
    op: spec.Operation, mutations: tuple[Mutation, ...] = ()
) -> tuple[_QueryParameter, ...]:
    if mutations:
        # A mutant's parameters: each one's inlined schema with its constraint changed.
        changed = []
        for param in _query_parameters(op):
            schema = {"properties": {param.name: inline(param.validator.schema)}}
            for mutation in mutations:
                if mutation.where == "query" and mutation.field == (param.name,):
                    schema = _mutated(schema, mutation)
            plain = {k: v for k, v in param.schema.items() if k != "default"}
            default = _defaults(schema)
            changed.append(
                _QueryParameter(
                    name=param.name,
                    schema={**plain, "default": default[param.name]} if default else plain,
                    validator=spec.validator_for(schema["properties"][param.name], enforced=True),
                    invalid_status=param.invalid_status,
                )
            )
        return tuple(changed)
    found = []
    for param in op.raw.get("parameters", []):
        param = spec._load.resolve(param)
        if param.get("in") != "query":
            continue
        found.append(
            _QueryParameter(
                name=param["name"],
                schema=spec._load.resolve(param.get("schema", {})),
                # An inline schema's own overlay (a bound we chose) is enforced too.
                validator=spec.validator_for(
                    inline(spec.merged(param.get("schema", {})), spec.enforced()), enforced=True
                ),
                invalid_status=int(param.get("x-invalid-status", 400)),
            )
        )
    return tuple(found)


def takes_query(op: spec.Operation) -> bool:
    """Whether the operation documents any query parameter."""
    return bool(_query_parameters(op))


def validate_query(
    op: spec.Operation, query: Mapping[str, str], policy: ValidationPolicy
) -> dict[str, Any]:
    """Query parameters of the operation, typed and defaulted; unknown ones are ignored.

    A value outside its documented range answers the status the parameter declares in
    ``x-invalid-status`` (the documents use 422 for some lists and 400 for others).
    """
    values: dict[str, Any] = {}
    for param in _query_parameters(op, policy.server.faults.mutations(op.operation_id)):
        name, schema = param.name, param.schema
        if name not in query:
            if "default" in schema:
                values[name] = schema["default"]
            continue
        value = _coerce(query[name], schema)
        broken = next(iter(param.validator.iter_errors(value)), None)
        if broken is not None:
            errors = {name: _message(broken)}
            if name == "start" and broken.validator == "maximum":
                policy.start_out_of_range()
            status = param.invalid_status
            if status == 422:
                raise invalid_fields(errors)
            raise ApiError(status, f"query parameter {name} {errors[name]}")
        values[name] = value
    return values


def is_uuid(value: str) -> bool:
    return bool(_UUID.fullmatch(value))


_UUID = re.compile(spec.openapi()["components"]["schemas"]["Uuid"]["pattern"].strip("^$"))
