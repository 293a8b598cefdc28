"""The policy seam: faults bend domain decisions from outside, compose, and switch at run time.

The HTTP behaviour of each credential fault is in test_faults_credentials.py; these tests pin
the mechanism the converted domain modules rely on.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from amws_conformance.reference_server._encryption import EncryptionPolicy
from amws_conformance.reference_server._http import HttpLayerPolicy
from amws_conformance.reference_server._json_body import JsonBodyPolicy
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server._policy import Policy, domain_policy, overridden_decisions
from amws_conformance.reference_server._shaping import ShapingPolicy
from amws_conformance.reference_server._state import Server
from amws_conformance.reference_server._time import format_instant
from amws_conformance.reference_server._validation import ValidationPolicy
from amws_conformance.reference_server.bucket_policy import BucketPolicy
from amws_conformance.reference_server.domain._common import RecordPolicy
from amws_conformance.reference_server.domain.access_control import AccessControlPolicy
from amws_conformance.reference_server.domain.credentials import CredentialPolicy
from amws_conformance.reference_server.domain.files import FilePolicy
from amws_conformance.reference_server.domain.invite_list import InviteListPolicy
from amws_conformance.reference_server.domain.invites import InvitePolicy
from amws_conformance.reference_server.domain.locations import LocationPolicy
from amws_conformance.reference_server.domain.media_links import MediaLinkPolicy
from amws_conformance.reference_server.domain.persons import PersonPolicy
from amws_conformance.reference_server.domain.photos import PhotoPolicy
from amws_conformance.reference_server.domain.reference_data import ReferenceDataPolicy
from amws_conformance.reference_server.domain.roles import RolePolicy
from amws_conformance.reference_server.domain.users import UserPolicy
from amws_conformance.reference_server.domain.vehicles import VehiclePolicy
from amws_conformance.reference_server.domain.virtual_reader import VirtualReaderPolicy
from amws_conformance.reference_server.domain.visits import VisitPolicy
from amws_conformance.reference_server.domain.watchlist_match import WatchlistMatchPolicy
from amws_conformance.reference_server.domain.watchlists import WatchlistPolicy
from amws_conformance.reference_server.faults import CATALOGUE, Faults
from amws_conformance.reference_server.faults._model import overrides
from amws_conformance.reference_server.hardware.readers import ReaderPolicy
from amws_conformance.reference_server.rate_bucket import DOCUMENTED, RAISED, BucketSize
from amws_conformance.reference_server.store import Store
from amws_conformance.reference_server.webhooks.dispatcher import WebhookPolicy
from amws_conformance.reference_server.webhooks.payload import PayloadPolicy

ROOT = Path(__file__).resolve().parents[2] / "amws_conformance"  # the package's folder
# Domain code converted to the policy seam: it holds the correct behaviour only.
CONVERTED = (
    "reference_server/domain/credentials.py",
    "reference_server/hardware/controllers.py",
    "reference_server/domain/users.py",
    "reference_server/domain/persons.py",
    "reference_server/domain/photos.py",
    "reference_server/domain/_common.py",
    "reference_server/domain/files.py",
    "reference_server/domain/media_links.py",
    "reference_server/domain/invites.py",
    "reference_server/domain/invite_list.py",
    "reference_server/domain/visits.py",
    "reference_server/domain/reference_data.py",
    "reference_server/domain/roles.py",
    "reference_server/domain/locations.py",
    "reference_server/domain/access_control.py",
    "reference_server/domain/vehicles.py",
    "reference_server/domain/virtual_reader.py",
    "reference_server/hardware/readers.py",
    "reference_server/webhooks/dispatcher.py",
    "reference_server/webhooks/payload.py",
    "reference_server/domain/watchlists.py",
    "reference_server/domain/watchlist_match.py",
    "reference_server/app.py",
    "reference_server/_pipeline.py",
    "reference_server/_json_body.py",
    "reference_server/_validation.py",
    "reference_server/_encryption.py",
    "reference_server/_shaping.py",
    "reference_server/_http.py",
    "reference_server/_state.py",
    "reference_server/rate_bucket.py",
)
POLICIES = (
    CredentialPolicy,
    UserPolicy,
    FilePolicy,
    MediaLinkPolicy,
    InvitePolicy,
    InviteListPolicy,
    VisitPolicy,
    ReferenceDataPolicy,
    RolePolicy,
    LocationPolicy,
    AccessControlPolicy,
    VehiclePolicy,
    VirtualReaderPolicy,
    ReaderPolicy,
    WebhookPolicy,
    PayloadPolicy,
    WatchlistPolicy,
    WatchlistMatchPolicy,
    PersonPolicy,
    PhotoPolicy,
    RecordPolicy,
    RequestPolicy,
    JsonBodyPolicy,
    ValidationPolicy,
    EncryptionPolicy,
    ShapingPolicy,
    HttpLayerPolicy,
    BucketPolicy,
)
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
        assert domain_policy(fault.policy) in POLICIES, fault.name
        assert overridden_decisions(fault.policy), fault.name


@pytest.mark.parametrize("policy", POLICIES)
def test_without_faults_the_policy_is_the_domain_class_itself(policy: type[Policy]) -> None:
    assert type(_server().policy(policy)) is policy


def test_faults_of_one_domain_leave_the_other_domain_policy_alone() -> None:
    server = _server("user-delete-keeps-holder", "credential-never-expires")
    assert type(server.policy(UserPolicy)) is not UserPolicy
    assert type(server.policy(CredentialPolicy)) is not CredentialPolicy
    assert (
        _server("user-delete-keeps-holder").policy(CredentialPolicy).__class__ is CredentialPolicy
    )


def test_user_faults_on_one_decision_stack() -> None:
    qr_code, card = {"readerType": "QR_CODE"}, {"readerType": "CARD"}
    correct = _server().policy(UserPolicy)
    assert not correct.keeps_holder_on_delete(qr_code)
    assert not correct.keeps_holder_on_delete(card)
    qr_only = _server("user-delete-keeps-qr-code").policy(UserPolicy)
    assert qr_only.keeps_holder_on_delete(qr_code) and not qr_only.keeps_holder_on_delete(card)
    both = _server("user-delete-keeps-qr-code", "user-delete-keeps-holder").policy(UserPolicy)
    assert both.keeps_holder_on_delete(qr_code) and both.keeps_holder_on_delete(card)
    checked = _server("user-reference-unchecked", "user-role-unchecked", "user-cost-center-checked")
    assert checked.policy(UserPolicy).references_checked() == {"costCenter": "cost_center"}


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


def test_the_bucket_faults_bend_one_decision_each_and_stack() -> None:
    other = BucketSize(capacity=50, refill_per_minute=5)
    assert _server().policy(BucketPolicy).size(DOCUMENTED) == DOCUMENTED
    large = _server("bucket-too-large").policy(BucketPolicy)
    assert large.size(DOCUMENTED) == BucketSize(4000, DOCUMENTED.refill_per_minute)
    assert large.size(RAISED) == RAISED  # only the documented bucket grows
    frozen = _server("bucket-never-refills").policy(BucketPolicy)
    assert frozen.size(other) == BucketSize(other.capacity, 0)
    both = _server("bucket-too-large", "bucket-never-refills").policy(BucketPolicy)
    assert both.size(DOCUMENTED) == BucketSize(4000, 0)


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
