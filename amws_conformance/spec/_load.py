"""Loading and indexing of the two contract files."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

SPEC_DIR = Path(__file__).resolve().parent
# libyaml parses the 6000-line document ten times faster when the wheel ships it.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
HTTP_METHODS = ("get", "put", "post", "delete", "patch")


@dataclass(frozen=True)
class Operation:
    """One operation of the OpenAPI document, with the extensions the project relies on."""

    operation_id: str
    method: str
    path: str
    keyed: bool
    permission: str | None
    rate_cost: int | None
    statuses: frozenset[str]
    assumed: bool = False
    rate_cost_assumed: bool = False
    permission_assumed: bool = False
    tags: tuple[str, ...] = ()
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, hash=False)

    @property
    def path_parameters(self) -> tuple[str, ...]:
        return tuple(p["name"] for p in self.parameters() if p.get("in") == "path")

    @property
    def creates(self) -> bool:
        """Whether a success makes a new record: its success answer links to the operations
        that address the record it made (the spec writes such links on creates only)."""
        return any(
            code.startswith("2") and resolve(answer).get("links")
            for code, answer in self.raw.get("responses", {}).items()
        )

    def parameters(self) -> list[dict[str, Any]]:
        """Parameters of the operation with component references resolved."""
        return [resolve(p) for p in self.raw.get("parameters", [])]


@dataclass(frozen=True)
class Dependency:
    """Something a rule's test needs that the documents leave open, and how it is resolved:
    ``documented`` (the test uses only what the documents give instead), ``profile`` (the
    target's profile declares it, at ``profile_field``), or ``undecided`` (without it the rule
    reads undecided, with the reason, never failed)."""

    needs: str
    kind: Literal["name", "figure", "format", "order", "status"]
    resolution: Literal["documented", "profile", "undecided"]
    how: str
    profile_field: str | None = None


@dataclass(frozen=True)
class Rule:
    """One business rule of ``rules.yaml``."""

    id: str
    title: str
    source: str
    level: Literal["normative", "assumed"]
    statement: str
    operations: tuple[str, ...] = ()
    note: str | None = None
    no_fault: str | None = None  # why no fault of a server can break the rule
    # What a test of the rule relies on that the documents do not give (a field name, a
    # figure, a format, an order of checks), and how the suite copes with it.
    depends_on: tuple[Dependency, ...] = ()

    @property
    def normative(self) -> bool:
        return self.level == "normative"


@functools.cache
def openapi() -> dict[str, Any]:
    """The parsed OpenAPI document (cached; treat it as read-only)."""
    with (SPEC_DIR / "openapi.yaml").open(encoding="utf-8") as fh:
        document: dict[str, Any] = yaml.load(fh, Loader=_Loader)  # a safe loader either way
    return document


ASSUMED_SCHEMA = "x-assumed-schema"


@functools.cache
def enforced() -> dict[str, Any]:
    """The document as the reference server enforces it: every schema's ``x-assumed-schema``
    (constraints the documents do not state, our choice) merged into the schema beside it.

    :func:`openapi` keeps them apart, so what a conformance check expects of any target is only
    what the documents state.
    """
    document: dict[str, Any] = _merged(openapi())  # a dict merges into a dict
    return document


def _merged(node: Any) -> Any:
    """A copy of ``node`` with every overlay merged (``node`` itself is left as it is)."""
    if isinstance(node, list):
        return [_merged(v) for v in node]
    if not isinstance(node, dict):
        return node
    merged = {k: _merged(v) for k, v in node.items() if k != ASSUMED_SCHEMA}
    extra = node.get(ASSUMED_SCHEMA)
    return merged if extra is None else _overlaid(merged, _merged(extra))


def _overlaid(schema: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    for key, value in extra.items():
        if key == "required":
            schema["required"] = list(dict.fromkeys([*schema.get("required", []), *value]))
        elif key == "properties":
            properties = schema.setdefault("properties", {})
            for name, part in value.items():
                properties[name] = _overlaid(dict(properties.get(name, {})), part)
        else:
            schema[key] = value
    return schema


def resolve(node: Any, document: dict[str, Any] | None = None) -> Any:
    """Follow a local ``$ref`` (possibly chained) inside the OpenAPI document (or ``document``)."""
    while isinstance(node, dict) and "$ref" in node:
        target: Any = document if document is not None else openapi()
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


@functools.cache
def operations() -> tuple[Operation, ...]:
    """Every operation of the document, in file order."""
    doc = openapi()
    default_security = doc.get("security", [])
    found: list[Operation] = []
    for path, item in doc["paths"].items():
        for method in HTTP_METHODS:
            op = item.get(method)
            if op is None:
                continue
            found.append(
                Operation(
                    operation_id=op["operationId"],
                    method=method.upper(),
                    path=path,
                    keyed=op.get("security", default_security) != [],
                    permission=op.get("x-permission"),
                    rate_cost=op.get("x-rate-cost"),
                    statuses=frozenset(str(code) for code in op["responses"]),
                    assumed=bool(op.get("x-assumed", False)),
                    rate_cost_assumed=bool(op.get("x-rate-cost-assumed", False)),
                    permission_assumed=bool(op.get("x-permission-assumed", False)),
                    tags=tuple(op.get("tags", ())),
                    raw={**op, "parameters": item.get("parameters", []) + op.get("parameters", [])},
                )
            )
    return tuple(found)


def operation(operation_id: str) -> Operation:
    """The operation with this ``operationId``; ``KeyError`` if there is none."""
    for op in operations():
        if op.operation_id == operation_id:
            return op
    raise KeyError(operation_id)


def _dependency(rule: str, entry: dict[Any, Any]) -> Dependency:
    if True in entry:  # YAML 1.1 reads a bare `on` key as the boolean true
        raise ValueError(f"{rule}: a depends_on entry says `on:`; the field is `needs:`")
    return Dependency(**entry)


@functools.cache
def rules() -> tuple[Rule, ...]:
    """Every rule of the catalogue, in file order."""
    with (SPEC_DIR / "rules.yaml").open(encoding="utf-8") as fh:
        entries = yaml.load(fh, Loader=_Loader)  # a safe loader either way
    return tuple(
        Rule(
            id=e["id"],
            title=e["title"],
            source=e["source"],
            level=e["level"],
            statement=e["statement"],
            operations=tuple(e.get("operations") or ()),
            note=e.get("note"),
            no_fault=e.get("no_fault"),
            depends_on=tuple(_dependency(e["id"], d) for d in e.get("depends_on") or ()),
        )
        for e in entries
    )


@dataclass(frozen=True)
class RateLimit:
    """The documented bucket of every API key (root ``x-rate-limit``)."""

    capacity: int
    refill_per_minute: int
    failed_authentication_cost: int


@functools.cache
def rate_limit() -> RateLimit:
    limits = openapi()["x-rate-limit"]
    return RateLimit(
        capacity=limits["capacity"],
        refill_per_minute=limits["refill-per-minute"],
        failed_authentication_cost=limits["failed-authentication-cost"],
    )


@dataclass(frozen=True)
class RequestJson:
    """How a JSON request body is read (root ``x-request-json``; our choice, assumed)."""

    media_type: str
    charset: str
    max_depth: int
    max_number_length: int


@functools.cache
def request_json() -> RequestJson:
    limits = openapi()["x-request-json"]
    return RequestJson(
        media_type=limits["media-type"],
        charset=limits["charset"],
        max_depth=limits["max-depth"],
        max_number_length=limits["max-number-length"],
    )


@dataclass(frozen=True)
class Throttle:
    """Requests admitted within a sliding window (root ``x-throttles``; our choice, assumed)."""

    requests: int
    window_seconds: float


def throttle_names() -> tuple[str, ...]:
    """The throttles root ``x-throttles`` gives figures for."""
    return tuple(k for k, v in openapi()["x-throttles"].items() if isinstance(v, dict))


@functools.cache
def throttle(name: str) -> Throttle:
    """``signed-link-per-address``, ``reader-per-device`` or
    ``reader-auth-failures-per-address``."""
    figures = openapi()["x-throttles"][name]
    return Throttle(requests=figures["requests"], window_seconds=float(figures["window-seconds"]))


def merged(schema: Any) -> Any:
    """A schema taken out of :func:`openapi` with its own ``x-assumed-schema`` overlays merged
    (what :func:`enforced` does for the whole document), for inline schemas such as a query
    parameter's."""
    return _merged(schema)


@functools.cache
def key_header_length() -> tuple[int, int]:
    """Shortest and longest accepted Authorization value (the key scheme's ``x-value-length``)."""
    bounds = openapi()["components"]["securitySchemes"]["ApiKey"]["x-value-length"]
    return bounds["minimum"], bounds["maximum"]


@functools.cache
def uuid_pattern() -> re.Pattern[str]:
    """The spec's UUID (``components/schemas/Uuid``), unanchored: ``fullmatch`` tests a value,
    ``findall`` finds the identifiers in a path."""
    anchored = openapi()["components"]["schemas"]["Uuid"]["pattern"]
    return re.compile(anchored.removeprefix("^").removesuffix("$"))
