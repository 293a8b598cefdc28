"""Credentials: create validation, holders, identifiers, the read shape, the PUT field table,
per-holder lists and what deleting a holder does to its credentials.

Status derivation and the hardware push are in test_credential_lifecycle.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from amws_conformance.fixtures._limits import enum_values, length_range
from amws_conformance.fixtures.timestamps import parsed as _instant
from amws_conformance.suites import _credentials as cred
from amws_conformance.suites.rules._people import unassigned

CREDENTIALS = "/api/ws/v1/credentials"
PERSONS = "/api/ws/v1/persons"
USERS = "/api/ws/v1/users"
READ_FIELDS = (
    "uuid",
    "readerType",
    "status",
    "type",
    "uniqueIdentifier",
    "holderFirstName",
    "holderLastName",
    "holderUuid",
    "activeDate",
    "expiryDate",
)


# -- helpers -----------------------------------------------------------------------------
def _created(response: Any) -> str:
    assert response.status_code == 201, (response.status_code, response.text)
    return response.json()["uuid"]


def _person(api: Any, factories: Any) -> str:
    return _created(api.post(PERSONS, json=factories.person()))


def _user(api: Any, factories: Any) -> str:
    return _created(api.post(USERS, json=factories.user()))


def _issue(api: Any, factories: Any, holder: dict[str, str], **overrides: Any) -> str:
    return _created(api.post(CREDENTIALS, json=factories.credential(**holder, **overrides)))


def _read(api: Any, uuid: str) -> dict[str, Any]:
    response = api.get(f"{CREDENTIALS}/{uuid}")
    assert response.status_code == 200, response.text
    return response.json()


def _held_by_person(api: Any, person: str) -> list[dict[str, Any]]:
    response = api.get(f"{CREDENTIALS}/by-person/{person}")
    assert response.status_code == 200, response.text
    return response.json()


def _lists(lists: list[str], needed: int) -> list[str]:
    if len(lists) < needed:
        pytest.skip(f"not configured: the target has fewer than {needed} access control lists")
    return lists


def _assigned(api: Any, uuid: str) -> set[str]:
    read = _read(api, uuid)
    if read.get("accessControlListUuids") is None:
        # An optional extension (CRED-READ-EXTENSIONS); the hardware suite checks the same
        # assignment on the controllers.
        pytest.skip("not configured: credential reads carry no accessControlListUuids")
    return set(read["accessControlListUuids"])


# -- shared records ----------------------------------------------------------------------
# Most tests need *a* holder, or a credential of some kind, not one of their own: they take the
# run's records (suites/_credentials.py says what each test does to each, and why sharing is
# safe), instead of a create and a cleanup delete per test. Tests about the holder itself
# (by-user, holder deletion) and tests that consume a credential keep their own.
@pytest.fixture
def holder(request: pytest.FixtureRequest, api: Any, factories: Any) -> str:
    """The run's holder (:func:`cred.run_holder`): tests only issue credentials to it."""
    return cred.run_holder(request, api, factories)


@pytest.fixture
def pair(request: pytest.FixtureRequest, api: Any, factories: Any) -> cred.Pair:
    """A person holding exactly a plain and a use-limited credential (:func:`cred.pair`)."""
    return cred.pair(request, api, factories)


@pytest.fixture
def limits(request: pytest.FixtureRequest, api: Any, factories: Any) -> cred.Issued | None:
    """A credential made at every create limit at once (:func:`cred.at_limits`)."""
    return cred.at_limits(request, api, factories)


@pytest.fixture
def pin_top(request: pytest.FixtureRequest, api: Any, factories: Any) -> cred.Issued | None:
    """A credential with pin at its highest, sent with type USER (:func:`cred.pin_top`)."""
    return cred.pin_top(request, api, factories)


@pytest.fixture
def user_held(request: pytest.FixtureRequest, api: Any, factories: Any) -> cred.UserHeld:
    """A user and its IDENTITY credential, sent with type PERSONNEL (:func:`cred.user_held`)."""
    return cred.user_held(request, api, factories)


@pytest.fixture(scope="module")
def bystander(api: Any, factories: Any) -> str:
    """A person named only in creates that must be refused: on a correct target it holds
    nothing in any test order, so the tests checking that a refused create left nothing
    behind can all list it."""
    return _person(api, factories)


@pytest.fixture(scope="module")
def acl_lists(api: Any) -> list[str]:
    """The target's access control lists, read once: the API cannot change them."""
    response = api.get("/api/ws/v1/access-control-lists")
    assert response.status_code == 200, response.text
    return [a["uuid"] for a in response.json()]


# -- create validation -------------------------------------------------------------------
@pytest.mark.rule("CRED-FIELD-REQUIRED")
def test_create_without_reader_type_is_refused(api, factories, bystander) -> None:
    person = bystander
    body = factories.credential(personUuid=person)
    del body["readerType"]
    response = api.post(CREDENTIALS, json=body)
    assert response.status_code == 422
    assert "readerType" in response.json()["reason"]
    assert _held_by_person(api, person) == []


@pytest.mark.rule("CRED-FIELD-ENUM")
def test_reader_type_and_status_take_only_listed_values(
    api, factories, bystander, holder, user_held
) -> None:
    for field in ("readerType", "status"):
        wrong = factories.wrong_enum("createCredential", field)
        response = api.post(
            CREDENTIALS, json=factories.credential(personUuid=bystander, **{field: wrong})
        )
        assert response.status_code == 422, field
        assert field in response.json()["reason"]
    assert _held_by_person(api, bystander) == []
    types = enum_values("createCredential", "readerType")
    # A current value, a legacy combined value and the legacy licence card are all accepted,
    # and so is a listed status other than the default (sent along with one of them). The
    # current value is that of the run's user credential, made with it.
    assert {"IDENTITY", "MVL_ID", "DRIVER_LICENCE_CARD"} <= set(types)
    user = {"userUuid": user_held.user}
    identity = cred.on_record_or_own(
        api, factories, user_held.credential, user, {"readerType": "IDENTITY"}
    )
    issued = {identity.uuid: f"by-user/{user_held.user}"}
    for reader_type, status in (("MVL_ID", "LOST"), ("DRIVER_LICENCE_CARD", None)):
        extra = {"status": status} if status else {}
        uuid = _issue(api, factories, {"personUuid": holder}, readerType=reader_type, **extra)
        issued[uuid] = f"by-person/{holder}"
    for uuid, listing in issued.items():  # stored, and held by the holder it was issued to
        listed = api.get(f"{CREDENTIALS}/{listing}")
        assert listed.status_code == 200, listed.text
        assert uuid in {c["uuid"] for c in listed.json()}


@pytest.mark.rule("CRED-FIELD-RANGE")
def test_pin_range(api, factories, holder, limits, pin_top) -> None:
    person = holder
    for pin in (999, 1000000):
        body = factories.credential(personUuid=person, readerType="PIN", pin=pin)
        response = api.post(CREDENTIALS, json=body)
        assert response.status_code == 422, pin
        assert "pin" in response.json()["reason"]
    # Both limits are accepted: the run's PIN credentials were made with them.
    assert cred.PIN_RANGE == (1000, 999999)
    for record, pin in zip((limits, pin_top), cred.PIN_RANGE, strict=True):
        values = {"readerType": "PIN", "pin": pin}
        cred.on_record_or_own(api, factories, record, {"personUuid": person}, values)


@pytest.mark.rule("CRED-FIELD-LENGTH")
@pytest.mark.parametrize("field", ["uniqueIdentifier", "comments", "data"])
def test_text_field_lengths(api, factories, holder, limits, field: str) -> None:
    person = holder
    high = length_range("createCredential", field)[1]
    base = factories.tag("len")
    response = api.post(
        CREDENTIALS,
        json=factories.credential(personUuid=person, **{field: base.ljust(high + 1, "x")}),
    )
    assert response.status_code == 422
    assert field in response.json()["reason"]
    # The longest value is accepted: the run's credential at every limit was made with it
    # (where the target refused that one, the value is tried alone here).
    if limits is not None:
        assert len(limits.body[field]) == high
    else:
        _issue(api, factories, {"personUuid": person}, **{field: base.ljust(high, "x")})


@pytest.mark.rule("CRED-FIELD-ACL-COUNT")
def test_more_than_fifty_lists_are_refused(
    api, factories, ledger, bystander, holder, limits, acl_lists
) -> None:
    person = bystander
    lists = _lists(acl_lists, 1)
    top = cred.MAX_LISTS  # maxItems of accessControlListUuids (CredentialCreate)
    assert top == 50
    # 51 existing lists when the target has them; otherwise the missing ones are made up, and
    # the 422 is owed either way.
    too_many = (lists + [ledger.fresh_uuid() for _ in range(top + 1)])[: top + 1]
    response = api.post(
        CREDENTIALS, json=factories.credential(personUuid=person, accessControlListUuids=too_many)
    )
    assert response.status_code == 422
    assert "accessControlListUuids" in response.json()["reason"]
    assert _held_by_person(api, person) == []
    # As many as the limit are accepted: the run's credential at every limit was made with them.
    values = {"accessControlListUuids": lists[:top]}
    cred.on_record_or_own(api, factories, limits, {"personUuid": holder}, values)


@pytest.mark.rule("CRED-FIELD-REFERENCE")
def test_unknown_list_is_refused_and_nothing_assigned(
    api, factories, ledger, bystander, pair, acl_lists
) -> None:
    person = bystander
    known = _lists(acl_lists, 1)[0]
    body = factories.credential(
        personUuid=person, accessControlListUuids=[known, ledger.fresh_uuid()]
    )
    response = api.post(CREDENTIALS, json=body)
    assert response.status_code == 422
    assert _held_by_person(api, person) == []
    uuid = pair.plain.uuid  # made with no list, and no test gives it one
    assert pair.plain.body["accessControlListUuids"] == []
    response = api.put(
        f"{CREDENTIALS}/{uuid}", json={"accessControlListUuids": [known, ledger.fresh_uuid()]}
    )
    assert response.status_code == 422
    assert _assigned(api, uuid) == set()


# -- holders and identifiers -------------------------------------------------------------
@pytest.mark.rule("CRED-HOLDER-EXACTLY-ONE")
def test_exactly_one_holder(api, factories, bystander, user_held) -> None:
    person, user = bystander, user_held.user
    by_user = f"{CREDENTIALS}/by-user/{user}"
    before = {c["uuid"] for c in api.get(by_user).json()}  # the run's user holds some already
    identifier = factories.tag("card")
    for holder in ({}, {"personUuid": person, "userUuid": user}):
        body = factories.credential(uniqueIdentifier=identifier, **holder)
        assert api.post(CREDENTIALS, json=body).status_code == 422, holder
    assert _held_by_person(api, person) == []
    assert {c["uuid"] for c in api.get(by_user).json()} == before
    # Nothing was issued, so the identifier is still free.
    _issue(api, factories, {"userUuid": user}, uniqueIdentifier=identifier)


@pytest.mark.rule("CRED-HOLDER-NOT-FOUND")
@pytest.mark.parametrize("field", ["personUuid", "userUuid"])
def test_unknown_holder_answers_404(api, factories, ledger, holder, field: str) -> None:
    identifier = factories.tag("card")
    body = factories.credential(uniqueIdentifier=identifier, **{field: ledger.fresh_uuid()})
    assert api.post(CREDENTIALS, json=body).status_code == 404
    _issue(api, factories, {"personUuid": holder}, uniqueIdentifier=identifier)


@pytest.mark.rule("CRED-IDENTIFIER-UNIQUE")
def test_identifier_already_issued_answers_409(api, factories, pair, bystander) -> None:
    # The identifier of a credential the run issued to another person.
    second, identifier = bystander, pair.plain.body["uniqueIdentifier"]
    assert identifier and pair.plain.holder != second
    body = factories.credential(personUuid=second, uniqueIdentifier=identifier)
    assert api.post(CREDENTIALS, json=body).status_code == 409
    assert _held_by_person(api, second) == []


@pytest.mark.parametrize(
    "how",
    [
        # The documents reserve the identifier after a DELETE; after PUT status DELETED the
        # reservation is our choice.
        pytest.param("DELETE", marks=pytest.mark.rule("CRED-IDENTIFIER-RESERVED")),
        pytest.param(
            "PUT status DELETED", marks=pytest.mark.rule("CRED-IDENTIFIER-RESERVED-PUT-DELETED")
        ),
    ],
)
def test_deleted_identifier_stays_reserved(api, factories, holder, bystander, how: str) -> None:
    person = holder
    identifier = factories.tag("card")
    uuid = _issue(api, factories, {"personUuid": person}, uniqueIdentifier=identifier)
    if how == "DELETE":
        assert api.delete(f"{CREDENTIALS}/{uuid}").status_code == 200
    else:
        assert api.put(f"{CREDENTIALS}/{uuid}", json={"status": "DELETED"}).status_code == 200
    # Another person asks for the identifier.
    body = factories.credential(personUuid=bystander, uniqueIdentifier=identifier)
    assert api.post(CREDENTIALS, json=body).status_code == 409


@pytest.mark.rule("CRED-TYPE-DERIVED")
def test_type_follows_the_holder(api, factories, holder, pin_top, user_held) -> None:
    # The run's credentials of a person and of a user were made with the other holder's type.
    person, user = {"personUuid": holder}, {"userUuid": user_held.user}
    for_person = cred.on_record_or_own(api, factories, pin_top, person, {"type": "USER"}).uuid
    on_user = user_held.credential
    for_user = cred.on_record_or_own(api, factories, on_user, user, {"type": "PERSONNEL"}).uuid
    assert _read(api, for_person)["type"] == "PERSONNEL"
    assert _read(api, for_user)["type"] == "USER"
    assert api.put(f"{CREDENTIALS}/{for_user}", json={"type": "PERSONNEL"}).status_code == 200
    assert _read(api, for_user)["type"] == "USER"


# -- reads -------------------------------------------------------------------------------
@pytest.mark.rule("CRED-READ-SHAPE")
def test_read_shape_and_current_holder_names(api, pair) -> None:
    # A credential the run issued, and its holder with the names it has now.
    body, person, sent, uuid = pair.person_body, pair.person, pair.plain.body, pair.plain.uuid
    read = _read(api, uuid)
    assert set(READ_FIELDS) <= set(read)
    assert (read["uuid"], read["holderUuid"]) == (uuid, person)
    assert read["uniqueIdentifier"] == sent["uniqueIdentifier"]
    assert read["readerType"] == sent["readerType"]
    assert (read["holderFirstName"], read["holderLastName"]) == (
        body["firstName"],
        body["lastName"],
    )
    assert _instant(read["activeDate"]) == _instant(sent["activeDate"])
    assert _instant(read["expiryDate"]) == _instant(sent["expiryDate"])
    renamed = {**body, "firstName": f"{body['firstName'][:40]}Renamed"}
    assert api.put(f"{PERSONS}/{person}", json=renamed).status_code == 200
    body["firstName"] = renamed["firstName"]  # the holder's names now, for a later reader
    assert _read(api, uuid)["holderFirstName"] == renamed["firstName"]


@pytest.mark.rule("CRED-READ-EXTENSIONS")
def test_extension_fields_reflect_stored_values(api, factories, holder, acl_lists) -> None:
    person = holder
    lists = _lists(acl_lists, 1)[:1]
    stored = {"useLimit": 7, "comments": factories.tag("note"), "accessControlListUuids": lists}
    read = _read(api, _issue(api, factories, {"personUuid": person}, **stored))
    for field, value in stored.items():
        if read.get(field) is not None:
            assert read[field] == value, field
    if read.get("enabled") is not None:
        assert read["enabled"] is True


@pytest.mark.rule("CRED-NOT-FOUND")
def test_unknown_credential_or_holder_answers_404(api, ledger) -> None:
    unknown = ledger.fresh_uuid()
    assert api.get(f"{CREDENTIALS}/{unknown}").status_code == 404
    assert api.put(f"{CREDENTIALS}/{unknown}", json={"comments": "x"}).status_code == 404
    assert api.delete(f"{CREDENTIALS}/{unknown}").status_code == 404
    assert api.get(f"{CREDENTIALS}/by-person/{ledger.fresh_uuid()}").status_code == 404
    assert api.get(f"{CREDENTIALS}/by-user/{ledger.fresh_uuid()}").status_code == 404


@pytest.mark.rule("CRED-BY-PERSON")
def test_by_person_lists_only_that_persons_credentials(
    api, factories, pair, holder, limits, bystander
) -> None:
    # The run's person holding exactly two credentials; another person's credential, which
    # the run issued to its holder; a person holding none.
    person, empty = pair.person, bystander
    mine = {pair.plain.uuid, pair.limited.uuid}
    other = cred.on_record_or_own(api, factories, limits, {"personUuid": holder}, {})
    assert other.holder != person
    listed = _held_by_person(api, person)
    assert {c["uuid"] for c in listed} == mine
    assert all(c["holderUuid"] == person for c in listed)
    assert _held_by_person(api, empty) == []


@pytest.mark.rule("CRED-BY-USER")
def test_by_user_lists_every_status(api, factories, user_held) -> None:
    user = _user(api, factories)
    active, disabled, put_deleted, deleted = (
        _issue(api, factories, {"userUuid": user}) for _ in range(4)
    )
    assert api.put(f"{CREDENTIALS}/{disabled}", json={"status": "DISABLED"}).status_code == 200
    assert api.put(f"{CREDENTIALS}/{put_deleted}", json={"status": "DELETED"}).status_code == 200
    assert api.delete(f"{CREDENTIALS}/{deleted}").status_code == 200
    # Another user's credential: the run's.
    other = {"userUuid": user_held.user}
    assert cred.on_record_or_own(api, factories, user_held.credential, other, {}).holder != user
    response = api.get(f"{CREDENTIALS}/by-user/{user}")
    assert response.status_code == 200
    statuses = {c["uuid"]: c["status"] for c in response.json()}
    assert statuses == {
        active: "ACTIVE",
        disabled: "DISABLED",
        put_deleted: "DELETED",
        deleted: "DELETED",
    }


@pytest.mark.rule("CRED-NO-LIST-ALL")
def test_credentials_cannot_be_listed_wholesale(api) -> None:
    # Not an operation of the spec, so the client adds no key and applies no checks: send the
    # full key's header by hand so only the missing endpoint can explain the answer.
    response = api.get(CREDENTIALS, headers={"Authorization": api.header})
    assert not 200 <= response.status_code < 300, response.status_code


# -- the PUT table -----------------------------------------------------------------------
@pytest.mark.rule("CRED-PUT-PARTIAL")
def test_put_changes_only_the_fields_sent(api, pair) -> None:
    # A credential of the run made with a use limit and a comment, so that keeping them counts.
    uuid = pair.limited.uuid
    assert pair.limited.body["useLimit"] is not None and pair.limited.body["comments"]
    before = _read(api, uuid)
    assert api.put(f"{CREDENTIALS}/{uuid}", json={"comments": "second"}).status_code == 200
    after = _read(api, uuid)
    assert after["comments"] in ("second", None)  # comments is an optional read field
    for field in ("activeDate", "expiryDate", "status", "useLimit", "uniqueIdentifier"):
        assert after.get(field) == before.get(field), field
    assert after["activeDate"] is not None and after["expiryDate"] is not None


@pytest.mark.rule("CRED-PUT-FIELDS")
def test_put_sets_window_and_replaces_comment(api, factories, pair) -> None:
    uuid = pair.limited.uuid  # a credential of the run that has a comment already
    window = {"activeDate": factories.instant(days=-2), "expiryDate": factories.instant(days=9)}
    body = {**window, "comments": factories.tag("comment")}
    assert api.put(f"{CREDENTIALS}/{uuid}", json=body).status_code == 200
    read = _read(api, uuid)
    for field, value in window.items():
        assert _instant(read[field]) == _instant(value), field
    if read.get("comments") is not None:
        assert read["comments"] == body["comments"]


@pytest.mark.rule("CRED-PUT-ACL-REPLACE", "ACL-USABLE-ON-CREDENTIALS")
def test_put_replaces_the_list_set_exactly(api, factories, holder, acl_lists) -> None:
    first, second = _lists(acl_lists, 2)[:2]
    uuid = _issue(api, factories, {"personUuid": holder}, accessControlListUuids=[first])
    assert _assigned(api, uuid) == {first}
    response = api.put(f"{CREDENTIALS}/{uuid}", json={"accessControlListUuids": [second]})
    assert response.status_code == 200
    assert _assigned(api, uuid) == {second}


@pytest.mark.rule("ACL-USABLE-ON-CREDENTIALS")
def test_every_listed_list_is_accepted_on_create_and_update(
    api, factories, holder, acl_lists
) -> None:
    lists = _lists(acl_lists, 1)
    top = 50  # maxItems of accessControlListUuids: every list is tried, a batch at a time
    batches = [lists[first : first + top] for first in range(0, len(lists), top)]
    person = holder
    # A window in the future: the credentials open nothing while the test runs.
    window = {"activeDate": factories.instant(days=30), "expiryDate": factories.instant(days=31)}
    issued = []
    for batch in batches:
        body = factories.credential(personUuid=person, accessControlListUuids=batch, **window)
        response = api.post(CREDENTIALS, json=body)
        assert response.status_code == 201, (response.status_code, response.text)
        issued.append(response.json()["uuid"])
    uuid = issued[-1]
    for batch in batches:
        response = api.put(f"{CREDENTIALS}/{uuid}", json={"accessControlListUuids": batch})
        assert response.status_code == 200, (response.status_code, response.text)
        # The documented read has no accessControlListUuids (CRED-READ-EXTENSIONS adds it).
        assigned = _read(api, uuid).get("accessControlListUuids")
        if assigned is not None:
            assert set(assigned) == set(batch)


@pytest.mark.rule("CRED-PUT-ACL-EMPTY")
def test_put_empty_list_array_removes_all(api, factories, holder, acl_lists) -> None:
    lists = _lists(acl_lists, 2)[:2]
    uuid = _issue(api, factories, {"personUuid": holder}, accessControlListUuids=lists)
    assert api.put(f"{CREDENTIALS}/{uuid}", json={"accessControlListUuids": []}).status_code == 200
    assert _assigned(api, uuid) == set()


@pytest.mark.rule("CRED-PUT-ACL-OMITTED")
def test_put_without_lists_keeps_the_assignment(api, factories, holder, acl_lists) -> None:
    lists = _lists(acl_lists, 2)[:2]
    uuid = _issue(api, factories, {"personUuid": holder}, accessControlListUuids=lists)
    body = {"comments": "no lists here", "expiryDate": factories.instant(days=20)}
    assert api.put(f"{CREDENTIALS}/{uuid}", json=body).status_code == 200
    assert _assigned(api, uuid) == set(lists)


@pytest.mark.rule("CRED-PUT-READER-TYPE-IGNORED")
def test_put_reader_type_is_ignored(api, pair) -> None:
    uuid = pair.plain.uuid  # a credential of the run, made as a CONTACTLESS_CARD
    assert pair.plain.body["readerType"] == "CONTACTLESS_CARD"
    assert api.put(f"{CREDENTIALS}/{uuid}", json={"readerType": "FACE"}).status_code == 200
    assert _read(api, uuid)["readerType"] == "CONTACTLESS_CARD"


# -- holder deletion ---------------------------------------------------------------------
@pytest.mark.rule("PERS-DELETE-UNLINKS-CREDENTIALS", "USER-DELETE-UNLINKS-CREDENTIALS")
@pytest.mark.parametrize(("path", "field"), [(PERSONS, "personUuid"), (USERS, "userUuid")])
def test_holder_delete_leaves_credentials_unassigned(api, factories, path, field) -> None:
    holder = _person(api, factories) if path == PERSONS else _user(api, factories)
    uuid = _issue(api, factories, {field: holder})
    assert api.delete(f"{path}/{holder}").status_code == 200
    read = _read(api, uuid)
    assert unassigned(read), read.get("holderUuid")
    assert read["status"] != "DELETED"
