"""schemathesis's stateful phase: chains of calls that follow the spec's links.

Each create's answer feeds the operations that address what it made (read, replace, delete,
enable, the per-holder lists, a watchlist's entries ...), and each update and delete feeds a
read of the same record, so generated data reaches records that exist instead of meeting 404s,
and schemathesis's stateful checks (a record still readable after its delete, a created record
not readable) apply. Every call goes through the harness client and is judged by the same
checks as the per-operation contract test.
"""

from __future__ import annotations

import contextlib
from typing import Any

import hypothesis
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import Flaky
from schemathesis.core.transport import Response

from amws_conformance.harness import ExampleBudget
from amws_conformance.suites.contract import _calls, _checks
from amws_conformance.suites.contract._schema import SEED, schema

DEFAULT_SCENARIOS = 10  # in CI; --examples or the profile's examples raise it
STEPS = 10
MAX_SUITES = 20  # restarts after a replay met moved records


# The chained calls also meet the stateful checks: a record read after its delete.
@pytest.mark.rule(*_checks.RULES, "CONV-HARD-DELETE")
def test_linked_calls_honour_the_contract(
    api: Any, ledger: Any, example_budget: ExampleBudget
) -> None:
    failures: list[BaseException] = []

    class Workflow(schema.as_state_machine()):  # type: ignore[misc]
        def call(self, case: Any, **kwargs: Any) -> Response:
            _calls.no_default_role(case)
            response = _calls.send(case, api, ledger)
            response.request.read()
            return Response.from_any(response)

        scenarios = 0

        def teardown(self) -> None:
            type(self).scenarios += 1
            super().teardown()

        def validate_response(self, response: Response, case: Any, **kwargs: Any) -> None:
            try:
                super().validate_response(response, case, **kwargs)
            except (Exception, BaseExceptionGroup) as error:
                failures.append(error)
                raise

    # When Hypothesis replays a sequence it meets a server whose records moved on and stops
    # with Flaky, as schemathesis's own runner expects of a live target; like that runner, a
    # fresh suite (next seed) then spends the rest of the budget. Failures seen on the way, not
    # the replay, decide.
    budget, suites = example_budget.examples_or(DEFAULT_SCENARIOS), 0
    while Workflow.scenarios < budget and suites < MAX_SUITES and not failures:
        with contextlib.suppress(Flaky):
            seeded = hypothesis.seed(example_budget.seed_or(SEED) + suites)(Workflow)
            seeded.run(
                settings=settings(
                    max_examples=budget - Workflow.scenarios,
                    stateful_step_count=STEPS,
                    database=None,
                    deadline=None,
                    suppress_health_check=list(HealthCheck),
                    # A replay meets moved records: failures are reported as first seen.
                    phases=[Phase.explicit, Phase.generate],
                )
            )
        suites += 1
    if failures:
        with _checks.as_rule_violations():
            raise failures[0]
