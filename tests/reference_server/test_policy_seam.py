"""The policy seam: faults bend domain decisions from outside, compose, and switch at run time.

The HTTP behaviour of each credential fault is in test_faults_credentials.py; these tests pin
the mechanism the converted domain modules rely on.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from reference_server._policy import domain_policy, overridden_decisions
from reference_server._state import Server
from reference_server._time import format_instant
from reference_server.domain.credentials import CredentialPolicy
from reference_server.faults import CATALOGUE, Faults
from reference_server.faults._model import overrides
from reference_server.store import Store

ROOT = Path(__file__).resolve().parents[2]
# Domain code converted to the policy seam: it holds the correct behaviour only.
CONVERTED = ("reference_server/domain/credentials.py", "reference_server/hardware/controllers.py")
NOW = datetime(2030, 1, 1, tzinfo=UTC)


def _server(*faults: str) -> Server:
    return Server(store=Store(), faults=Faults(faults))


def _windowed(start_minutes: int, end_minutes: int) -> dict[str, object]:
    start, end = NOW + timedelta(minutes=start_minutes), NOW + timedelta(minutes=end_minutes)
    return {"uuid": "c1", "activeDate": format_instant(start), "expiryDate": format_instant(end)}


def test_every_policy_fault_overrides_decisions_of_its_domain_policy() -> None:
    policy_faults = [f for f in CATALOGUE.values() if f.policy is not None]
    assert policy_faults
    for fault in policy_faults:
        assert fault.policy is not None
        assert domain_policy(fault.policy) is CredentialPolicy, fault.name
        assert overridden_decisions(fault.policy), fault.name


def test_without_faults_the_policy_is_the_domain_class_itself() -> None:
    assert type(_server().policy(CredentialPolicy)) is CredentialPolicy


def test_faults_on_one_decision_stack() -> None:
    expired, not_yet = _windowed(-60, -1), _windowed(1, 60)
    correct = _server().policy(CredentialPolicy)
    assert correct.status(expired, NOW) == "EXPIRED"
    assert correct.status(not_yet, NOW) == "VALID"
    both = _server("credential-never-expires", "future-start-reads-active")
    policy = both.policy(CredentialPolicy)
    assert policy.status(expired, NOW) == "ACTIVE"
    assert policy.status(not_yet, NOW) == "ACTIVE"


def test_a_switch_changes_the_policy_of_the_next_call() -> None:
    server, expired = _server(), _windowed(-60, -1)
    server.faults.switch(["credential-never-expires"])
    assert server.policy(CredentialPolicy).status(expired, NOW) == "ACTIVE"
    server.faults.switch([])
    assert server.policy(CredentialPolicy).status(expired, NOW) == "EXPIRED"


def test_an_override_naming_no_decision_is_refused_at_registration() -> None:
    with pytest.raises(TypeError):

        @overrides("misspelt-decision", "CRED-BY-USER", "never registered")
        class _Misspelt(CredentialPolicy):
            def statuss(self) -> str:
                return "ACTIVE"

    assert "misspelt-decision" not in CATALOGUE


@pytest.mark.parametrize("path", CONVERTED)
def test_converted_domain_code_never_asks_for_a_fault(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    assert "faults.on" not in text
    # Fault-only data is the fault's own memory, not keys of the domain's records.
    assert "_holderNames" not in text and "_expiredStuck" not in text
