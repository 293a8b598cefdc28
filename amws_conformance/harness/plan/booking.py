"""A pytest plugin object that books what shared set-ups spend, and what teardowns send.

A module- or session-scoped fixture is made once for all the tests that use it: what it
spends (made and torn down) is booked to the set-up, under a name of its own, not to whichever
test happened to be first or last to use it; each test records the set-ups it uses. What a
test's teardown sends is tidying up, not observation: it never makes a test informative.
"""

from __future__ import annotations

from typing import Any

import pytest

from amws_conformance.harness._run import Run
from amws_conformance.harness.plan.spend import SETUP

_SCOPE_NODES: dict[str, type[pytest.Collector]] = {
    "class": pytest.Class,
    "module": pytest.Module,
    "package": pytest.Package,
    "session": pytest.Session,
}


def setup_name(node_id: str, fixturedef: Any, callspec: Any) -> str:
    """What a shared fixture's set-up is booked under: its scope's node and its name, and
    which parameter it was made for, its own or that of an argument it takes (a module
    fixture over a module-scoped parametrisation is made once per value)."""
    names = [fixturedef.argname, *fixturedef.argnames]
    indices = callspec.indices if callspec is not None else {}
    made_for = [f"{n}={indices[n]}" for n in names if n in indices]
    suffix = f"[{','.join(made_for)}]" if made_for else ""
    return f"{SETUP}{node_id}::{fixturedef.argname}{suffix}"


def setups_of(item: pytest.Item) -> list[str]:
    """The shared fixtures the test uses, by the names their set-up is booked under."""
    info = getattr(item, "_fixtureinfo", None)
    callspec = getattr(item, "callspec", None)
    found = []
    for argname in getattr(item, "fixturenames", ()):
        defs = info.name2fixturedefs.get(argname) if info else None
        if not defs or defs[-1].scope not in _SCOPE_NODES:
            continue
        node = item.getparent(_SCOPE_NODES[defs[-1].scope])
        found.append(setup_name(node.nodeid if node else "", defs[-1], callspec))
    return found


class Booking:
    """Registered by the plugin for one run."""

    def __init__(self, run: Run) -> None:
        self.run = run

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: Any, request: pytest.FixtureRequest) -> Any:
        session = self.run.session
        if session is None or fixturedef.scope not in _SCOPE_NODES:
            return (yield)
        item = getattr(request, "_pyfuncitem", None)
        name = setup_name(request.node.nodeid, fixturedef, getattr(item, "callspec", None))
        spend = session.spend
        # Finalizers run last-registered first: the booking opens before the fixture's own
        # teardown (registered while it is made) and closes after it. A fixture that raised
        # or skipped never registers the opening; the closing then has nothing to close.
        before: list[str] = []

        def open_booking() -> None:
            before.append(spend.current)
            spend.current = name

        def close_booking() -> None:
            if before:
                spend.current = before.pop()

        fixturedef.addfinalizer(close_booking)
        with spend.booked_to(name):
            result = yield
        fixturedef.addfinalizer(open_booking)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Any:
        session = self.run.session
        if session is not None:
            session.observing = False
        try:
            return (yield)
        finally:
            if session is not None:
                session.observing = True
