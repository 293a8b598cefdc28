"""What all clients of one run share: the :class:`Session` (ledger, secrets, transcript,
coverage, spend, health, the current test), and the :class:`Exchange` its transcript keeps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from amws_conformance.harness._checks import Violation
from amws_conformance.harness.lifecycle.ledger import Ledger
from amws_conformance.harness.plan.spend import Spend
from amws_conformance.harness.target.health import Health
from amws_conformance.harness.target.profile import redact


@dataclass
class Exchange:
    """One request and its answer, kept for failure evidence."""

    method: str
    url: str
    request_headers: dict[str, str]
    request_body: Any
    status: int
    response_headers: dict[str, str]
    response_body: str
    curl: str = ""  # the request as a curl command, secrets as variables (harness/evidence/curl.py)


@dataclass
class Session:
    """What all clients of one run share."""

    base_url: str
    ledger: Ledger
    secrets: list[str] = field(repr=False)  # never in a failure's printed arguments
    # Each secret and the shell variable a curl command writes in its place.
    variables: dict[str, str] = field(default_factory=dict, repr=False)
    violations: list[tuple[str, Violation]] = field(default_factory=list)
    transcript: list[Exchange] = field(default_factory=list)
    current_test: str = ""
    coverage: Counter[str] = field(default_factory=Counter)
    # The operations of the current test whose shape the documents leave open (x-assumed).
    assumed_operations: set[str] = field(default_factory=set)
    # The same, per shared set-up: a test that uses the set-up relies on them as well.
    setup_assumed: dict[str, set[str]] = field(default_factory=dict)
    # False while tests and fixtures are torn down, or the run cleans up: tidying, not observing.
    observing: bool = True
    # True while the current test needs one key's identity per class (its marks say so): each
    # pool then sends everything with its first key (harness/target/pool.py).
    pinned: bool = False
    spend: Spend = field(default_factory=Spend)
    health: Health = field(default_factory=Health)
    # Called before each request of a test (not of the cleanup): raises to end the test when
    # the run's deadline leaves no more time than the cleanup needs.
    before_request: Callable[[], None] | None = None
    # Holds an interrupt back from a create's send until its record is in the ledger.
    shield: Callable[[], AbstractContextManager[None]] = nullcontext

    @property
    def booking(self) -> str:
        """Whom what is spent now is booked to: a shared set-up, the preflight, or the test."""
        return self.spend.current or self.current_test

    def redact(self, text: str) -> str:
        return redact(text, self.secrets)
