"""Every operation of the spec, driven by schemathesis through the harness client.

Positive and negative data from schemathesis's examples, coverage and fuzzing phases; its
response checks plus our business rules (suites/contract/_checks.py). Requests go through the
harness client, so they are paced, recorded in the cleanup ledger and never aimed at a record
the run did not create. The example budget comes from ``--examples`` or the profile's
``examples`` (small by default, so a CI run stays quick; raise it for a certification run).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.core import NotSet

import spec
from harness.plugin import example_budget, property_seed
from suites.contract import _checks

DEFAULT_EXAMPLES = 3
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

# Schema-valid requests the documents still refuse, so positive data may meet them:
# 404 a referenced holder or record that does not exist (CRED-HOLDER-NOT-FOUND,
# ERR-404-UNKNOWN-UUID),
# 409 duplicates (DEPT-NAME-UNIQUE and kin), 412/424/425/451 documented outcomes
# (LINK-412-EXPIRED, READER-424-NOT-ATTACHED, INV-UPDATE-IDENTICAL-425, INV-WATCHLIST-451),
# 422 references that do not exist and cross-field rules a schema cannot say
# (CONV-REFERENCE-MUST-EXIST, LOC-FIELD-PRECISION, INV-EXPIRY-AFTER-ACTIVATION),
# 400 an empty upload or an image that does not decode (FILE-UPLOAD-400-EMPTY,
# FILE-UPLOAD-400-SAFETY-SCAN), 401 a virtual-reader denial or a link signature
# (READER-401-UNKNOWN-CREDENTIAL, LINK-401-ALTERED).
_POSITIVE_REFUSALS = [
    "2xx",
    "400",
    "401",
    "403",
    "404",
    "409",
    "412",
    "415",
    "422",
    "424",
    "425",
    "429",
    "451",
]


def _config(examples: int, seed: int) -> SchemathesisConfig:
    return SchemathesisConfig.from_dict(
        {
            "seed": seed,
            "generation": {
                "mode": "all",
                "max-examples": examples,
                "deterministic": True,
                # The harness sends each key's Authorization header itself; authentication is
                # the subject of the permission matrix (AUTH-* rules), not of this suite.
                "with-security-parameters": False,
            },
            # The coverage phase is what sends each field's boundaries (one past a length, a
            # range, an enum), so a field left unchecked is found even at the smallest budget;
            # the budget sizes the examples and fuzzing phases.
            "phases": {"coverage": {"enabled": True}},
            "checks": {
                # The harness authenticates every request, so an "ignored auth" finding here
                # would only say that our own key works (AUTH-INVALID-KEY-401 is tested apart).
                "ignored_auth": {"enabled": False},
                "positive_data_acceptance": {"expected-statuses": _POSITIVE_REFUSALS},
            },
        }
    )


schema = schemathesis.openapi.from_dict(
    spec.openapi(), config=_config(example_budget(DEFAULT_EXAMPLES), property_seed(20261122))
)


def _own_path(case: Any, ledger: Any) -> None:
    """Aim writes only at records of this run: a generated UUID becomes one no record has."""
    if case.method.upper() == "GET":
        return
    for name, value in list((case.path_parameters or {}).items()):
        if isinstance(value, str) and _UUID.match(value) and not ledger.owns(value):
            case.path_parameters[name] = ledger.fresh_uuid()


def _no_default_role(case: Any) -> None:
    """A role flagged default takes the flag from the system's own default role
    (ROLE-DEFAULT-FLAG): a change to a record the run did not create, and one its cleanup
    cannot undo (the default role refuses deletion, ROLE-DELETE-DEFAULT). Such bodies go out
    with the flag off; test_roles.py covers the flag and restores it."""
    operation_id = case.operation.definition.raw.get("operationId")
    body = _given(case.body)
    flagged = isinstance(body, dict) and body.get("default") is True
    if flagged and operation_id in ("createRole", "updateRole"):
        body["default"] = False


def _given(value: Any) -> Any:
    return None if isinstance(value, NotSet) else value


# Operations without an API key (signed links, the virtual reader) throttle per address or
# per device, and random data trips those throttles by design: their 429 is an answer the
# spec lists (LINK-429-PER-ADDRESS, READER-AUTH-FAILURE-THROTTLE), not a reason to wait.
_KEYLESS = frozenset(op.operation_id for op in spec.operations() if not op.keyed)


def _send(case: Any, api: Any) -> Any:
    query, body, case_headers = _given(case.query), _given(case.body), _given(case.headers)
    kwargs: dict[str, Any] = {
        "params": dict(query or {}) or None,
        "checks": False,
        "retry_429": case.operation.definition.raw.get("operationId") not in _KEYLESS,
    }
    headers = {k: str(v) for k, v in (case_headers or {}).items()}
    if case.media_type == "multipart/form-data" and isinstance(body, dict):
        kwargs["files"] = {
            k: ("file", v if isinstance(v, bytes) else str(v).encode(), "application/octet-stream")
            for k, v in body.items()
        }
    elif body is not None and not isinstance(body, (bytes, str)):
        kwargs["json"] = body
    elif isinstance(body, (bytes, str)):
        kwargs["content"] = body if isinstance(body, bytes) else body.encode()
        headers.setdefault("content-type", case.media_type or "application/json")
    return api.request(case.method, case.formatted_path, headers=headers or None, **kwargs)


@pytest.mark.rule(*_checks.RULES)
@schema.parametrize()
def test_operation_honours_the_contract(case: Any, api: Any, ledger: Any) -> None:
    _own_path(case, ledger)
    _no_default_role(case)
    response = _send(case, api)
    response.request.read()  # a multipart body is streamed; the checks read it afterwards
    case.validate_response(response)
