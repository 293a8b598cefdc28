"""Every operation of the spec, driven by schemathesis through the harness client.

Positive and negative data from schemathesis's examples, coverage and fuzzing phases; its
response checks plus our business rules (suites/contract/_checks.py). Requests go through the
harness client, so they are paced, recorded in the cleanup ledger and never aimed at a record
the run did not create. The example budget comes from ``--examples`` or the profile's
``examples`` (small by default, so a CI run stays quick; raise it for a certification run).
"""

from __future__ import annotations

from typing import Any

import pytest

from amws_conformance.suites.contract import _calls, _checks
from amws_conformance.suites.contract._schema import schema


@pytest.mark.rule(*_checks.RULES)
@schema.parametrize()
def test_operation_honours_the_contract(case: Any, api: Any, ledger: Any) -> None:
    _calls.no_default_role(case)
    response = _calls.send(case, api, ledger)
    response.request.read()  # a multipart body is streamed; the checks read it afterwards
    with _checks.as_rule_violations():
        case.validate_response(response)
