"""The README's test command runs these tests on pytest-xdist workers, the longest-waiting
modules first (tests/conftest.py): each module it names exists, so none is moved in vain and
a renamed one does not silently lose its place."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import STARTED_FIRST

ROOT = Path(__file__).resolve().parent.parent


def test_every_module_started_first_exists() -> None:
    assert not [module for module in STARTED_FIRST if not (ROOT / module).is_file()]
    assert len(set(STARTED_FIRST)) == len(STARTED_FIRST)
