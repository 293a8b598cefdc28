"""The plugin's fixtures: the run, its profile, clients, factories, ledger, webhook receiver
and control plane. Users may override any of them in their own ``conftest.py``."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from amws_conformance.fixtures import Factories
from amws_conformance.harness._examples import EXAMPLES_KEY, ExampleBudget
from amws_conformance.harness._run import Run
from amws_conformance.harness._session import (
    NOT_CONFIGURED,
    RUN_KEY,
    UNDECIDED,
    started,
)
from amws_conformance.harness.target.client import TargetClient
from amws_conformance.harness.target.control import ControlPlane
from amws_conformance.harness.target.profile import Profile
from amws_conformance.harness.target.receiver import Receiver


# -- fixtures (users may override any of them in their own conftest.py) -----------------
@pytest.fixture(scope="session")
def amws_run(request: pytest.FixtureRequest) -> Run:
    """The run: profile, clients and ledger; starts the embedded server on first use."""
    run = request.config.stash[RUN_KEY]
    started(run, request.config)
    return run


@pytest.fixture(scope="session")
def profile(amws_run: Run) -> Profile:
    assert amws_run.profile is not None
    return amws_run.profile


@pytest.fixture(scope="session")
def run_id(amws_run: Run) -> str:
    return amws_run.run_id


@pytest.fixture(scope="session")
def client(amws_run: Run) -> Callable[[str], TargetClient]:
    """``client("readonly")``: the client of a key (or ``missing``/``short``/``long`` header)."""

    def get(name: str) -> TargetClient:
        if name in amws_run.key_problems:
            pytest.skip(f"{UNDECIDED}: {amws_run.key_problems[name]}")
        found = amws_run.client(name)
        if found is None:
            pytest.skip(f"{NOT_CONFIGURED}: the profile has no keys.{name}")
        return found

    return get


@pytest.fixture(scope="session")
def api(amws_run: Run) -> TargetClient:
    """The ``full`` key's client, its reads sent with the ``readonly`` key where there is one
    (see :meth:`Run.writer`); ``client("full")`` is the full key for everything."""
    return amws_run.writer()


@pytest.fixture(scope="session")
def factories(amws_run: Run) -> Factories:
    """Payload factories seeded from the run (replay with ``--seed``)."""
    return Factories(amws_run.seed, amws_run.run_id)


@pytest.fixture
def example_budget(request: pytest.FixtureRequest) -> ExampleBudget:
    """The property-based suites' example budget and seed (``--examples``, the profile's
    ``examples``, ``--seed``); each suite applies its own defaults. Function-scoped: it makes
    nothing, so it is no shared set-up a plan would book."""
    return request.config.stash[EXAMPLES_KEY]


@pytest.fixture(scope="session")
def ledger(amws_run: Run) -> Any:
    assert amws_run.session is not None
    return amws_run.session.ledger


@pytest.fixture(scope="session")
def webhooks(amws_run: Run, profile: Profile) -> Iterator[Receiver]:
    """The webhook receiver, listening where the profile's ``webhooks.listen`` says."""
    settings = profile.section("webhooks") or {}
    if "listen" not in settings:
        pytest.skip(f"{NOT_CONFIGURED}: the profile has no webhooks.listen")
    receiver = Receiver(settings, now=amws_run.target_clock).start()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="session")
def control(amws_run: Run) -> Iterator[ControlPlane]:
    """The reference server's control plane (typed calls, and an httpx client based at the
    server root); tests that need it skip elsewhere."""
    found = amws_run.control()
    if found is None:
        pytest.skip(f"{NOT_CONFIGURED}: the profile has no control plane")
    with found:
        yield found
