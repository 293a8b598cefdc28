"""Every rule of the catalogue is verified by some suite test; every suite test names its rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from amws_conformance import spec
from amws_conformance.harness.plan.rulemap import collect

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def suite_rules() -> dict[str, list[str]]:
    """Rule ids of every suite test, from a collection-only run (no target is contacted)."""
    found = collect(["suites"], str(ROOT / "amws_conformance"))
    assert found, "the suites collect tests"
    return found


def test_every_suite_test_names_a_rule(suite_rules: dict[str, list[str]]) -> None:
    assert not [nodeid for nodeid, rules in suite_rules.items() if not rules]


@pytest.mark.parametrize("level", ["normative", "assumed"])
def test_every_rule_has_a_test(suite_rules: dict[str, list[str]], level: str) -> None:
    tested = {rule for rules in suite_rules.values() for rule in rules}
    missing = sorted(r.id for r in spec.rules() if r.level == level and r.id not in tested)
    assert not missing, f"{len(missing)} {level} rules without a test: {missing}"
