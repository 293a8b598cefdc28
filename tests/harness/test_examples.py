"""The example budget and seed of the property-based suites belong to one run: tests read them
from the ``example_budget`` fixture, collection hooks from the run's config, and two runs in one
process never see each other's (pytester runs them in this interpreter)."""

from __future__ import annotations

import pytest
import yaml

from amws_conformance.harness import ExampleBudget

READER = """
def test_budget(example_budget):
    print("budget", example_budget.examples_or(3), example_budget.seed_or(11))
"""


def test_defaults_stand_unless_the_run_says_otherwise() -> None:
    assert ExampleBudget().examples_or(3) == 3
    assert ExampleBudget().seed_or(11) == 11
    assert ExampleBudget(examples=7, seed=0).examples_or(3) == 7
    assert ExampleBudget(examples=7, seed=0).seed_or(11) == 0  # a seed of 0 is a seed


def test_each_run_reads_its_own_budget(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(READER)
    told = pytester.runpytest("-s", "-p", "no:cacheprovider", "--examples", "7", "--seed", "5")
    told.assert_outcomes(passed=1)
    told.stdout.fnmatch_lines(["*budget 7 5*"])
    # The next run in the same process is told nothing: the suites' defaults again.
    untold = pytester.runpytest("-s", "-p", "no:cacheprovider")
    untold.assert_outcomes(passed=1)
    untold.stdout.fnmatch_lines(["*budget 3 11*"])


def test_the_profile_gives_the_budget_and_the_option_overrides_it(
    pytester: pytest.Pytester,
) -> None:
    profile = pytester.path / "target.yaml"
    data = {"name": "t", "base_url": "http://127.0.0.1:9", "keys": {"full": "k" * 64}}
    profile.write_text(yaml.safe_dump({**data, "examples": 4}), encoding="utf-8")
    pytester.makepyfile(READER)
    # Nothing here asks for the target, so the run never starts on it.
    from_profile = pytester.runpytest("-s", "-p", "no:cacheprovider", "--target", str(profile))
    from_profile.stdout.fnmatch_lines(["*budget 4 11*"])
    overridden = pytester.runpytest(
        "-s", "-p", "no:cacheprovider", "--target", str(profile), "--examples", "9"
    )
    overridden.stdout.fnmatch_lines(["*budget 9 11*"])


def test_a_collection_hook_reads_the_run_config(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
from amws_conformance.harness import example_budget_of

def pytest_collection_modifyitems(config, items):
    print("collected with", example_budget_of(config).examples_or(2))
"""
    )
    pytester.makepyfile("def test_x():\n    pass\n")
    pytester.runpytest("-s", "-p", "no:cacheprovider", "--examples", "6").stdout.fnmatch_lines(
        ["*collected with 6*"]
    )
    pytester.runpytest("-s", "-p", "no:cacheprovider").stdout.fnmatch_lines(["*collected with 2*"])
