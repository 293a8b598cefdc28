"""Every example of the OpenAPI document is valid, and every JSON body has one.

A mock server generated from the document (Prism and the like) answers with these examples, and
schemathesis sends the request examples in its examples phase, so an example that breaks its own
schema, or one of our assumed constraints that the reference server enforces, is a defect.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.spec._load import ASSUMED_SCHEMA, resolve
from amws_conformance.spec._schemas import pointer, validator_at

JSON = "application/json"
DOCUMENT = spec.openapi()
# Bodies that are not JSON carry bytes no example can show (the multipart image upload).
BINARY_BODIES = {("uploadFile", "request")}


def _examples_of(node: dict[str, Any], at: tuple[str, ...]) -> Iterator[tuple[str, Any, str]]:
    """(where, value, schema pointer) of the examples held directly by ``node``."""
    holds_schema = isinstance(node.get("schema"), dict) and at[-2:-1] != ("properties",)
    if holds_schema:  # a media type, a parameter or a header: examples of its schema
        target = pointer(*at, "schema")
        if "example" in node:
            yield pointer(*at, "example"), node["example"], target
        for name, example in (node.get("examples") or {}).items():
            example = resolve(example)
            if "value" in example:
                yield pointer(*at, "examples", name), example["value"], target
        return
    # a schema: JSON Schema's `examples` list (and the deprecated single `example`)
    if isinstance(node.get("examples"), list):
        for i, value in enumerate(node["examples"]):
            yield pointer(*at, "examples", str(i)), value, pointer(*at)
    if "example" in node:
        yield pointer(*at, "example"), node["example"], pointer(*at)


def _walk(node: Any, at: tuple[str, ...] = ()) -> Iterator[tuple[str, Any, str]]:
    if isinstance(node, dict):
        yield from _examples_of(node, at)
        for key, value in node.items():
            if key in (ASSUMED_SCHEMA, "examples", "example"):
                continue
            yield from _walk(value, (*at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, (*at, str(i)))


EXAMPLES = list(_walk(DOCUMENT))


def _overlay_examples(node: Any, inside: bool = False) -> int:
    if isinstance(node, dict):
        found = int(inside and ("examples" in node or "example" in node))
        return found + sum(
            _overlay_examples(v, inside or k == ASSUMED_SCHEMA) for k, v in node.items()
        )
    if isinstance(node, list):
        return sum(_overlay_examples(v, inside) for v in node)
    return 0


def test_the_walk_finds_the_examples() -> None:
    # A walk that found none would pass every validity test below.
    assert len(EXAMPLES) >= 100, len(EXAMPLES)


def test_overlays_carry_constraints_not_examples() -> None:
    # The walk below skips x-assumed-schema, so an example put there would go unchecked.
    assert _overlay_examples(DOCUMENT) == 0


@pytest.mark.parametrize("enforced", [False, True], ids=["documented", "enforced"])
@pytest.mark.parametrize(("where", "value", "schema"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_example_is_valid(where: str, value: Any, schema: str, enforced: bool) -> None:
    validator = validator_at(schema, enforced=enforced)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(value)]
    assert not errors, f"{where} against {schema}: {errors}"


def _is_json(media_type: str) -> bool:
    return media_type.split(";")[0].strip() == JSON


def _answered_example(media: dict[str, Any]) -> Any:
    """The example a mock server answers for a media type: its own, else its schema's."""
    if "example" in media:
        return media["example"]
    if media.get("examples"):
        return resolve(next(iter(media["examples"].values()))).get("value")
    schema = resolve(media.get("schema", {}))
    if schema.get("examples"):
        return schema["examples"][0]
    return schema.get("example")


def _bodies() -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(operation id, request|status, media type, media type object) of every JSON body."""
    for op in spec.operations():
        yield from _op_bodies(op.operation_id, op.raw)
    for item in DOCUMENT.get("webhooks", {}).values():
        for method in spec._load.HTTP_METHODS:
            if method in item:
                yield from _op_bodies(item[method]["operationId"], item[method])


def _op_bodies(operation_id: str, raw: dict[str, Any]) -> Iterator[tuple[str, str, str, Any]]:
    body = resolve(raw.get("requestBody") or {})
    for media_type, media in body.get("content", {}).items():
        yield operation_id, "request", media_type, media
    for status, answer in raw["responses"].items():
        for media_type, media in (resolve(answer).get("content") or {}).items():
            if _is_json(media_type):
                yield operation_id, str(status), media_type, media


BODIES = list(_bodies())


@pytest.mark.parametrize(
    ("operation_id", "part", "media_type", "media"),
    BODIES,
    ids=[f"{b[0]}-{b[1]}-{b[2]}" for b in BODIES],
)
def test_every_body_has_an_example(
    operation_id: str, part: str, media_type: str, media: dict[str, Any]
) -> None:
    if (operation_id, part) in BINARY_BODIES:
        assert not _is_json(media_type)
        return
    assert _is_json(media_type), f"{operation_id} {part}: {media_type} is not JSON"
    assert _answered_example(media) is not None, (
        f"{operation_id} {part}: no example on the media type, its schema or the $ref'd schema"
    )


RESPONSES = [b for b in BODIES if b[1] != "request"]


@pytest.mark.parametrize(
    ("operation_id", "status", "media"),
    [(b[0], b[1], b[3]) for b in RESPONSES],
    ids=[f"{b[0]}-{b[1]}" for b in RESPONSES],
)
def test_answered_code_is_the_status(operation_id: str, status: str, media: dict[str, Any]) -> None:
    """CONV-ACK-CODE-IS-STATUS and the error bodies: an example body's ``code`` repeats the HTTP
    status it is answered with (a create's acknowledgement says 201, an update's 200)."""
    example = _answered_example(media)
    if isinstance(example, dict) and "code" in example:
        assert str(example["code"]) == status, f"{operation_id} {status} answers {example}"


ACKNOWLEDGED = next(r for r in spec.rules() if r.id == "CONV-WRITE-ACKNOWLEDGEMENT").operations


@pytest.mark.parametrize("operation_id", ACKNOWLEDGED)
def test_acknowledgement_examples_say_success(operation_id: str) -> None:
    """CONV-WRITE-ACKNOWLEDGEMENT: the reference-data and people writes answer "success"."""
    op = spec.operation(operation_id)
    success = next(code for code in op.statuses if code.startswith("2"))
    example = _answered_example(resolve(op.raw["responses"][success])["content"][JSON])
    assert example["message"] == "success"
    assert set(example) == {"code", "message", "uuid"}
