"""The contract suite's schema takes the run's example budget and seed when pytest collects it."""

from __future__ import annotations

import pytest

from amws_conformance.harness import example_budget_of
from amws_conformance.suites.contract._schema import use_budget


def pytest_collectstart(collector: pytest.Collector) -> None:
    # Before each module of this folder is collected: schemathesis reads the schema's
    # configuration as it makes a test per operation, right after.
    if isinstance(collector, pytest.Module):
        use_budget(example_budget_of(collector.config))
