"""The project's tests: runs they start against a target keep their ledger files in a folder of
the test session, never in the user's state directory."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _ledger_files_in_the_session(tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ["AMWS_STATE_DIR"] = str(tmp_path_factory.mktemp("amws-state"))
