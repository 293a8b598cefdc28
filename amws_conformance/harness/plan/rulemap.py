"""A pytest plugin that writes each collected test's rule ids to $AMWS_RULES_OUT (as JSON).

Load it with ``-p harness.plan.rulemap`` in a ``--collect-only`` run: the rule coverage test and
the self-check both learn which tests verify which rule this way, without contacting a target.
"""

from __future__ import annotations

import json
import os

import pytest


def rules_of(node: pytest.Item) -> list[str]:
    """The rule ids a test's ``rule`` marks name, in order (the one reader of those marks; a
    test function's definition, as pytest_generate_tests sees it, is an item too)."""
    return [r for marker in node.iter_markers("rule") for r in marker.args]


def pytest_collection_finish(session: pytest.Session) -> None:
    found = {item.nodeid: sorted(set(rules_of(item))) for item in session.items}
    with open(os.environ["AMWS_RULES_OUT"], "w", encoding="utf-8") as fh:
        json.dump(found, fh)


def collect(paths: list[str], cwd: str) -> dict[str, list[str]]:
    """Rule ids per test node id of a collection-only run over ``paths``."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = f"{folder}/rules.json"
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "--collect-only",
                "-q",
                "-p",
                "amws_conformance.harness.plan.rulemap",
                "-p",
                "no:cacheprovider",
                "--assert=plain",
                *paths,
            ],
            cwd=cwd,
            env={**os.environ, "AMWS_RULES_OUT": out},
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(result.stdout[-2000:] + result.stderr[-2000:])
        with open(out, encoding="utf-8") as fh:
            rule_map: dict[str, list[str]] = json.load(fh)
        return rule_map
