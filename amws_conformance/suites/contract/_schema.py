"""The schemathesis schema both contract modules drive: the spec, our configuration, the seed
and the example budget of the run.

Deterministic: a fixed seed (``--seed`` replaces it) and derandomised generation, so two runs
send the same requests. The budget comes from ``--examples`` or the profile's ``examples``.
schemathesis makes one test per operation from the schema's configuration when pytest collects
them, so the run's budget and seed are put on it then (:func:`use_budget`, called by this
folder's conftest.py), not when the module is imported.
"""

from __future__ import annotations

import schemathesis
from schemathesis.config import SchemathesisConfig

from amws_conformance import spec
from amws_conformance.harness import ExampleBudget
from amws_conformance.suites.contract import _draws
from amws_conformance.suites.contract._checks import OFF

DEFAULT_EXAMPLES = 3
SEED = 20261122

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
            "phases": {
                "coverage": {"enabled": True},
                # The links written in the spec chain the calls; inferring more from the
                # acknowledgements would pair every create with every update.
                "stateful": {"inference": {"algorithms": []}},
            },
            "checks": {
                # What no document asks for is not checked (see suites/contract/_checks.py).
                **{name: {"enabled": False} for name in OFF},
                "positive_data_acceptance": {"expected-statuses": _POSITIVE_REFUSALS},
            },
        }
    )


# The coverage phase's failed pattern searches are remembered across runs (_draws.py).
_draws.install()
schema = schemathesis.openapi.from_dict(spec.openapi(), config=_config(DEFAULT_EXAMPLES, SEED))


def use_budget(budget: ExampleBudget) -> None:
    """Give the schema the run's example budget and seed (each run's own, whatever ran in this
    process before), before schemathesis makes the tests from it."""
    schema.config.generation.update(max_examples=budget.examples_or(DEFAULT_EXAMPLES))
    schema.config.seed = budget.seed_or(SEED)
