"""What the credential suites share (rules/test_credentials.py, test_credential_lifecycle.py,
test_access_control.py, test_virtual_reader.py and hardware/test_controller_credentials.py):
issuing, writing and reading credentials, windows placed on the target's clock, what the
controllers hold (control plane), and the records the suites share across the run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

import pytest

from amws_conformance.fixtures._limits import length_range
from amws_conformance.fixtures.timestamps import parsed as instant  # noqa: F401 (the modules of its group read it here)
from amws_conformance.fixtures.timestamps import utc_millis as text
from amws_conformance.harness import ControlPlane

CREDENTIALS = "/api/ws/v1/credentials"
DAY = 86400  # seconds
PIN_RANGE = (1000, 999999)  # pin's limits, both accepted (CRED-FIELD-RANGE)
MAX_LISTS = 50  # maxItems of accessControlListUuids (CRED-FIELD-ACL-COUNT)


def window(now: datetime, start: float, end: float) -> dict[str, str]:
    """activeDate and expiryDate ``start`` and ``end`` seconds from ``now``."""
    return {
        "activeDate": text(now + timedelta(seconds=start)),
        "expiryDate": text(now + timedelta(seconds=end)),
    }


def holder(api: Any, factories: Any) -> str:
    """A new person to hold credentials: its uuid."""
    person = api.post("/api/ws/v1/persons", json=factories.person())
    assert person.status_code == 201, person.text
    return person.json()["uuid"]


def issue(api: Any, factories: Any, person: str | None = None, **overrides: Any) -> str:
    """A credential of ``person`` (a fresh person where None); an override given as None is
    left out of the body."""
    body = factories.credential(personUuid=person or holder(api, factories), **overrides)
    response = api.post(CREDENTIALS, json={k: v for k, v in body.items() if v is not None})
    assert response.status_code == 201, (response.status_code, response.text)
    return response.json()["uuid"]


def read(api: Any, uuid: str) -> dict[str, Any]:
    response = api.get(f"{CREDENTIALS}/{uuid}")
    assert response.status_code == 200, response.text
    return response.json()


def status(api: Any, uuid: str) -> str:
    return read(api, uuid)["status"]


def put(api: Any, uuid: str, body: dict[str, Any]) -> None:
    response = api.put(f"{CREDENTIALS}/{uuid}", json=body)
    assert response.status_code == 200, (response.status_code, response.text)


def lists(api: Any, needed: int) -> list[str]:
    """The target's access control lists; the test skips where it has fewer than ``needed``."""
    found = [a["uuid"] for a in api.get("/api/ws/v1/access-control-lists").json()]
    if len(found) < needed:
        pytest.skip(f"not configured: the target has fewer than {needed} access control lists")
    return found


def held(control: ControlPlane) -> dict[str, dict[str, Any]]:
    """Every credential any controller holds now, by uuid."""
    controllers = control.controller_credentials()
    return {c["uuid"]: c for controller in controllers for c in controller["credentials"]}


# -- records the credential suites share across the run ----------------------------------------
# A credential costs the full key a create and a cleanup delete (75 units each), a person or
# user a create and a delete too. Where a test needs only *a* holder or a credential of a given
# kind, it takes one of the run's records below instead of making its own. Each docstring says
# which tests take the record, what they do to it, and why that cannot break another of them.
T = TypeVar("T")
PREFIX = "cred:"  # the set-ups the records are booked to: "cred:holder", "cred:pair", ...


def shared(request: pytest.FixtureRequest, name: str, build: Callable[[], T]) -> T:
    """The run's record ``name`` (:meth:`harness.Run.shared`, booked as ``cred:<name>``),
    built by the first test or module fixture asking for it: per fault of a fault matrix, and
    afresh after a test that used it failed."""
    made: T = request.getfixturevalue("amws_run").shared(PREFIX + name, build)
    return made


def holder_used(request: pytest.FixtureRequest) -> None:
    """Record that the current test uses the run's holder, where a module fixture of its
    module (made once, for the first test) took the holder on its behalf."""
    request.getfixturevalue("amws_run").sharing_used(PREFIX + "holder")


@dataclass
class Issued:
    """A shared credential: its uuid, its holder and the create body that was sent."""

    uuid: str
    holder: str
    body: dict[str, Any]


def _post(api: Any, body: dict[str, Any]) -> Any:
    return api.post(CREDENTIALS, json={k: v for k, v in body.items() if v is not None})


def _issued_or_refused(api: Any, body: dict[str, Any], holder: str) -> Issued | None:
    """The credential, or None where the target refuses the body (4xx). A record that packs
    several values a create must accept is refused as a whole when one value is: its tests then
    issue their own value alone, so each refusal is reported by the test of that value."""
    response = _post(api, body)
    if response.status_code == 201:
        return Issued(response.json()["uuid"], holder, body)
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    return None


def run_holder(request: pytest.FixtureRequest, api: Any, factories: Any) -> str:
    """A person holding credentials of tests in every credential suite that need *a* holder.
    Tests only issue credentials to it and never read its names, change or delete it, nor
    assert the whole set it holds (only that their own credentials are among it)."""
    return shared(request, "holder", lambda: holder(api, factories))


@dataclass
class Pair:
    """A person holding exactly two credentials, ``plain`` and ``limited`` (see :func:`pair`)."""

    person: str
    person_body: dict[str, Any]  # with the person's current names
    plain: Issued
    limited: Issued
    use_limit: int  # ``limited``'s useLimit now


def pair(request: pytest.FixtureRequest, api: Any, factories: Any) -> Pair:
    """A person holding exactly two credentials, both made without status, open now:

    - ``plain``: CONTACTLESS_CARD, enabled true, no useLimit, no access control list. Its tests
      read it (by-person list, read shape, status, the controllers' copy), ask for its
      identifier (refused 409), send it refused PUTs (unknown list) and a PUT of readerType,
      which a correct target ignores. Nothing changes its window, lists, useLimit or status.
    - ``limited``: useLimit 5 and a comment. Its tests change its comment and window (each
      checks what its own PUT did, against a read taken in the test) and its useLimit
      (tracked in ``use_limit``); none changes its status, and it stays open now.

    Only test_by_person_lists_only_that_persons_credentials reads what the person holds, and no
    test issues anything to it; only test_read_shape_and_current_holder_names renames it (and
    keeps ``person_body`` current)."""

    def build() -> Pair:
        body = factories.person()
        person = api.post("/api/ws/v1/persons", json=body)
        assert person.status_code == 201, person.text
        uuid = person.json()["uuid"]
        made = []
        for extra in (
            {"enabled": True, "accessControlListUuids": []},
            {"useLimit": 5, "comments": "first"},
        ):
            sent = factories.credential(personUuid=uuid, **extra)
            response = _post(api, sent)
            assert response.status_code == 201, (response.status_code, response.text)
            made.append(Issued(response.json()["uuid"], uuid, sent))
        return Pair(uuid, body, made[0], made[1], 5)

    return shared(request, "pair", build)


def at_limits(request: pytest.FixtureRequest, api: Any, factories: Any) -> Issued | None:
    """A PIN credential of the run's holder made at every create limit at once: pin at its
    lowest, uniqueIdentifier, comments and data at their longest, and as many access control
    lists as a credential takes (the target's first 50). Its window opens in 30 days, so it
    opens nothing while the run lasts. None where the target refuses it.

    Its tests only need the create to have been accepted (the length, pin and list-count tests,
    and the by-person test as another person's credential); test_listed_lists_are_accepted_on_
    credentials also PUTs every list onto it, a batch at a time, which none of the others reads.
    """
    person = run_holder(request, api, factories)

    def build() -> Issued | None:
        found = api.get("/api/ws/v1/access-control-lists")
        assert found.status_code == 200, found.text
        base = factories.tag("len")
        longest = {
            f: base.ljust(length_range("createCredential", f)[1], "x")
            for f in ("uniqueIdentifier", "comments", "data")
        }
        body = factories.credential(
            personUuid=person,
            readerType="PIN",
            pin=PIN_RANGE[0],
            accessControlListUuids=[a["uuid"] for a in found.json()][:MAX_LISTS],
            activeDate=factories.instant(days=30),
            expiryDate=factories.instant(days=31),
            **longest,
        )
        return _issued_or_refused(api, body, person)

    return shared(request, "limits", build)


def pin_top(request: pytest.FixtureRequest, api: Any, factories: Any) -> Issued | None:
    """A PIN credential of the run's holder with pin at its highest, the holder type USER in the
    body (ignored: the holder is a person) and no activeDate (so ACTIVE now; no list, so it
    opens nothing). None where the target refuses it. Its tests only read it."""
    person = run_holder(request, api, factories)

    def build() -> Issued | None:
        body = factories.credential(
            personUuid=person, readerType="PIN", pin=PIN_RANGE[1], type="USER", activeDate=None
        )
        return _issued_or_refused(api, body, person)

    return shared(request, "pin_top", build)


def on_record_or_own(
    api: Any,
    factories: Any,
    record: Issued | None,
    holder: dict[str, str],
    values: dict[str, Any],
    **alone: Any,
) -> Issued:
    """``record``, a shared credential made with ``values`` (among other values), or where the
    target refused that record (None) a credential of ``holder`` ({"personUuid": ...} or
    {"userUuid": ...}) issued here with ``values`` (and ``alone``) only: each value is tried
    either way, and a refusal is reported by the test of the refused value."""
    if record is not None:
        assert {k: record.body.get(k) for k in values} == values, (values, record.body)
        return record
    body = factories.credential(**holder, **values, **alone)
    response = _post(api, body)
    assert response.status_code == 201, (response.status_code, response.text)
    return Issued(response.json()["uuid"], next(iter(holder.values())), body)


@dataclass
class UserHeld:
    """A user and its credential (None where the target refused it), see :func:`user_held`."""

    user: str
    credential: Issued | None


def user_held(request: pytest.FixtureRequest, api: Any, factories: Any) -> UserHeld:
    """A user with one credential: reader type IDENTITY, the holder type PERSONNEL in the body
    (ignored: the holder is a user), a window opening in 20 days (VALID). Its tests read the
    credential (type, status, the by-user list of another user) and PUT a type onto it, which a
    correct target ignores. test_exactly_one_holder also issues the user a credential; no test
    asserts the whole set the user holds."""

    def build() -> UserHeld:
        user = api.post("/api/ws/v1/users", json=factories.user())
        assert user.status_code == 201, user.text
        uuid = user.json()["uuid"]
        body = factories.credential(
            userUuid=uuid,
            readerType="IDENTITY",
            type="PERSONNEL",
            activeDate=factories.instant(days=20),
            expiryDate=factories.instant(days=40),
        )
        return UserHeld(uuid, _issued_or_refused(api, body, uuid))

    return shared(request, "user_held", build)
