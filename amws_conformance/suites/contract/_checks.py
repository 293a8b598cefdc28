"""Business rules that hold for every response, registered as schemathesis checks.

Each check wraps the harness function of the same rule (harness/_checks.py), so the contract
suite and the client's global checks judge responses the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import schemathesis

from amws_conformance import spec
from amws_conformance.harness import _checks

# schemathesis's own checks, each with the rule it enforces. A response the documents do not
# describe for the request sent (a 5xx, an undocumented status, content type, header or body,
# a 2xx to data that breaks a documented constraint, a refusal of valid data) breaks
# CONV-RESPONSE-CONFORMS; a record still readable after its delete breaks CONV-HARD-DELETE; a
# created record that does not read back breaks CONV-WRITE-ACKNOWLEDGEMENT (its uuid names it).
BUILT_IN_RULES = {
    "not_a_server_error": "CONV-RESPONSE-CONFORMS",
    "status_code_conformance": "CONV-RESPONSE-CONFORMS",
    "content_type_conformance": "CONV-RESPONSE-CONFORMS",
    "response_headers_conformance": "CONV-RESPONSE-CONFORMS",
    "response_schema_conformance": "CONV-RESPONSE-CONFORMS",
    "negative_data_rejection": "CONV-RESPONSE-CONFORMS",
    "positive_data_acceptance": "CONV-RESPONSE-CONFORMS",
    "use_after_free": "CONV-HARD-DELETE",
    "ensure_resource_availability": "CONV-WRITE-ACKNOWLEDGEMENT",
}
# Switched off: checks of what no document asks for. A 405 for a method a path does not have,
# and its Allow header, come from RFC 9110, which the documents never cite; the harness sends
# every request with its own key, so authentication checks would only say our key works
# (AUTH-* rules are tested apart). No response-time budget is set: none is documented.
OFF = (
    "unsupported_method",
    "allow_header_conformance",
    "ignored_auth",
    "missing_required_header",
    "object_level_authorization",
)


def _rules_of(failure: BaseException) -> set[str]:
    if isinstance(failure, BaseExceptionGroup):
        return {r for inner in failure.exceptions for r in _rules_of(inner)}
    own = getattr(failure, "exception", None)  # a custom check's own exception
    if isinstance(own, _checks.RuleViolation):
        return set(own.rules)
    checks = getattr(type(failure), "checks", ())
    return {BUILT_IN_RULES.get(name, "CONV-RESPONSE-CONFORMS") for name in checks} or {
        "CONV-RESPONSE-CONFORMS"
    }


@contextmanager
def as_rule_violations() -> Iterator[None]:
    """Let schemathesis's failures out as :class:`harness._checks.RuleViolation`: the report
    then fails the rules the failing checks enforce, not every rule the test names."""
    try:
        yield
    except (AssertionError, BaseExceptionGroup) as error:
        if isinstance(error, _checks.RuleViolation):
            raise
        raise _checks.RuleViolation(str(error), sorted(_rules_of(error))) from error


# The last response converted, and its httpx form: the five checks below read the same answer
# one after the other, and building the httpx objects was a fifth of a case's client time.
_converted: list[tuple[Any, httpx.Response]] = []


def _httpx(response: Any) -> httpx.Response:
    """schemathesis's response as the httpx one the harness checks read (its request too:
    an acknowledgement is checked against the record the request addressed); made once per
    response."""
    if _converted and _converted[0][0] is response:
        return _converted[0][1]
    headers = [(name, value) for name, values in response.headers.items() for value in values]
    sent = response.request
    converted = httpx.Response(
        response.status_code,
        headers=headers,
        content=response.content,
        request=httpx.Request(sent.method, str(sent.url)),
    )
    # Held with the response, so its identity is not reused while it is the key.
    _converted[:] = [(response, converted)]
    return converted


def _raise(violations: list[_checks.Violation]) -> None:
    # Only normative rules fail a contract case: the case decides normative verdicts, and the
    # assumed ones (ERR-BODY-CODE-IS-STATUS ...) are judged by the scenario suites' global checks.
    binding = [v for v in violations if _checks.normative(v.rule)]
    if binding:
        raise _checks.RuleViolation(
            "; ".join(str(v) for v in binding), sorted({v.rule for v in binding})
        )


def _operation(case: Any) -> Any:
    return spec.operation(case.operation.definition.raw["operationId"])


def _body(case: Any) -> Any:
    return case.body if isinstance(case.body, dict) else None


@schemathesis.check
def error_body_shape(ctx: Any, response: Any, case: Any) -> None:
    """ERR-BODY-SHAPE."""
    _raise(_checks.error_body_shape(_operation(case), _httpx(response)))


@schemathesis.check
def rejected_values_not_echoed(ctx: Any, response: Any, case: Any) -> None:
    """ERR-NO-ECHO."""
    _raise(_checks.no_echo(_body(case), _httpx(response)))


@schemathesis.check
def timestamps_in_utc(ctx: Any, response: Any, case: Any) -> None:
    """CONV-TIMESTAMP-UTC-MILLIS."""
    _raise(_checks.utc_timestamps(_httpx(response)))


@schemathesis.check
def writes_acknowledge(ctx: Any, response: Any, case: Any) -> None:
    """CONV-WRITE-ACKNOWLEDGEMENT."""
    _raise(_checks.acknowledgement(_operation(case), _body(case), _httpx(response)))


@schemathesis.check
def paging_envelope_adds_up(ctx: Any, response: Any, case: Any) -> None:
    """PAGE-START-INDEX-ECHO, PAGE-COUNT-RETURNED, PAGE-TOTAL-COUNT."""
    _raise(_checks.paging(_operation(case), dict(case.query or {}), _body(case), _httpx(response)))


_UUID = spec.uuid_pattern()
# Answers that come before the path is looked at: authentication, permission and the bucket.
_BEFORE_THE_PATH = frozenset({401, 403, 429})


def _uuid_parameters(case: Any) -> list[str]:
    """Names of the operation's path parameters that the spec declares as UUIDs."""
    found = []
    for parameter in case.operation.definition.raw.get("parameters", []):
        parameter = spec.resolve(parameter)
        schema = spec.resolve(parameter.get("schema", {}))
        if parameter.get("in") == "path" and schema.get("format") == "uuid":
            found.append(parameter["name"])
    return found


@schemathesis.check
def non_uuid_path_answers_422(ctx: Any, response: Any, case: Any) -> None:
    """CONV-UUID-PATH-422."""
    if response.status_code in _BEFORE_THE_PATH:
        return
    for name in _uuid_parameters(case):
        value = (case.path_parameters or {}).get(name)
        # Values that would change the route itself ("", "/", dot segments) are left out:
        # the router, not this rule, answers for them.
        if not isinstance(value, str) or not value.strip() or any(c in value for c in "/.%?#"):
            continue
        if not _UUID.fullmatch(value) and response.status_code != 422:
            raise AssertionError(
                f"path parameter {name} is not a UUID, yet the answer is "
                f"{response.status_code}, not 422"
            )


RULES = (
    "CONV-RESPONSE-CONFORMS",
    "CONV-UUID-PATH-422",
    "ERR-BODY-SHAPE",
    "ERR-NO-ECHO",
    "CONV-TIMESTAMP-UTC-MILLIS",
    "CONV-WRITE-ACKNOWLEDGEMENT",
    "PAGE-START-INDEX-ECHO",
    "PAGE-COUNT-RETURNED",
    "PAGE-TOTAL-COUNT",
)
