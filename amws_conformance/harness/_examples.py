"""The example budget and seed of the property-based suites, for one run.

The plugin makes one :class:`ExampleBudget` per pytest run in ``pytest_configure`` and keeps it
in the config's stash: tests read it through the ``example_budget`` fixture, and hooks that
build tests at collection (the contract suite's schema) through :func:`example_budget_of`.
Nothing is kept at module level, so two runs in one process (pytester) never see each other's.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class ExampleBudget:
    """What the run was told; each suite brings its own defaults."""

    examples: int | None = None  # --examples, else the profile's examples
    seed: int | None = None  # --seed

    def examples_or(self, default: int) -> int:
        """Examples per operation (or machine runs): the run's budget, else ``default``."""
        return self.examples or default

    def seed_or(self, default: int) -> int:
        """The seed of a property-based suite: ``--seed`` when given, else ``default``. Unlike
        the payload factories' seed it never follows the run id, so two runs send the same
        requests."""
        return default if self.seed is None else self.seed


EXAMPLES_KEY = pytest.StashKey[ExampleBudget]()


def example_budget_of(config: pytest.Config) -> ExampleBudget:
    """The run's budget, for hooks that build tests at collection (set in pytest_configure)."""
    return config.stash.get(EXAMPLES_KEY, ExampleBudget())
