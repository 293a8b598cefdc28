"""Fixtures of the harness's tests that several modules share: the two small served runs."""

from __future__ import annotations

import pytest

from tests.harness._runs import FAULT, Run, run_against


@pytest.fixture(scope="session")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """A few suite tests against a served reference server with no fault."""
    run = run_against(tmp_path_factory.mktemp("clean-run"))
    assert run.status == 0, run.output[-3000:]
    return run


@pytest.fixture(scope="session")
def faulty_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The same tests against a served reference server with one fault on."""
    run = run_against(tmp_path_factory.mktemp("faulty-run"), [FAULT])
    assert run.status == 1, run.output[-3000:]
    return run
