"""JSON Schema validators for any schema of the OpenAPI document, references resolved."""

from __future__ import annotations

import functools
from typing import Any

import jsonschema
from email_validator import SPECIAL_USE_DOMAIN_NAMES, EmailNotValidError, validate_email
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from amws_conformance.spec._load import enforced as enforced_document
from amws_conformance.spec._load import openapi

BASE_URI = "urn:amws:openapi"
FORMATS = jsonschema.FormatChecker(jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers)


# jsonschema's own "email" asks only for an "@"; the documents ask for a valid address, so a
# value with a space or a control character in it is not one (email-validator's reading of RFC
# 5321/6531). A format is syntax only: no deliverability lookup, and a special-use domain
# (.test, .local, .arpa ...) is as well-formed as any other.
@FORMATS.checks("email", raises=EmailNotValidError)
def _email(value: object) -> bool:
    if isinstance(value, str):
        local, at, domain = value.rpartition("@")
        labels = domain.split(".")
        if at and labels[-1].lower() in SPECIAL_USE_DOMAIN_NAMES:
            value = f"{local}@{'.'.join([*labels[:-1], 'test'])}"
        validate_email(
            value, check_deliverability=False, test_environment=True, globally_deliverable=False
        )
    return True


@functools.cache
def _registry(strict: bool) -> Registry[Any]:
    document = enforced_document() if strict else openapi()
    resource = Resource.from_contents(document, default_specification=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource(BASE_URI, resource)
    return registry


def pointer(*parts: str) -> str:
    """A JSON pointer into the document from unescaped path parts."""
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


@functools.cache
def validator_at(location: str, *, enforced: bool = False) -> jsonschema.Draft202012Validator:
    """Validator for the schema at a JSON pointer of the document (``paths/~1api…/schema``);
    ``enforced`` adds our assumed constraints (what the reference server checks)."""
    return jsonschema.Draft202012Validator(
        {"$ref": f"{BASE_URI}#/{location}"}, registry=_registry(enforced), format_checker=FORMATS
    )


def absolute(schema: Any) -> Any:
    """Copy of an inline schema whose local references point into the OpenAPI document."""
    if isinstance(schema, dict):
        return {
            k: (
                f"{BASE_URI}{v}"
                if k == "$ref" and isinstance(v, str) and v.startswith("#")
                else absolute(v)
            )
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [absolute(v) for v in schema]
    return schema


def validator_for(schema: Any, *, enforced: bool = False) -> jsonschema.Draft202012Validator:
    """Validator for a schema taken out of the document (its ``#/…`` references still resolve)."""
    return jsonschema.Draft202012Validator(
        absolute(schema), registry=_registry(enforced), format_checker=FORMATS
    )
