"""Records the people group's modules share across modules (persons, users, their searches
and views, files, photos and media links): each made once per run and booked as a set-up of
its own ("people::<name>"), so a plan keeping any test of any module that uses it pays for it
once. Under the self-check's fault matrix each fault gets records of its own (see
:class:`suites.rules._people.Shared`), and a test that fails drops the records it used.

Each builder's docstring says what the tests sharing the record do to it, and why none of
that changes what another one finds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from suites.rules._people import (
    API,
    PERSON,
    USER,
    Kind,
    Record,
    Shared,
    created,
    credential,
    live_references,
    read_record,
    search,
    searchable,
    staged_photo,
    token,
    uuids,
)

_GROUP: pytest.StashKey[Shared] = pytest.StashKey()

# reference field -> (path of the referenced records, its create operation): persons take
# all five; users the first four (a user has no cost center, USER-NO-COST-CENTER).
REFERENCES = {
    "location": (f"{API}/locations", "createLocation"),
    "department": (f"{API}/departments", "createDepartment"),
    "organisation": (f"{API}/organisations", "createOrganisation"),
    "group": (f"{API}/groups", "createGroup"),
    "costCenter": (f"{API}/cost-centers", "createCostCenter"),
}


def run_shared(request: pytest.FixtureRequest) -> Shared:
    """The group's shared records: one :class:`Shared` per test session (so per xdist worker,
    and new in each run of the self-check)."""
    stash = request.session.stash
    if _GROUP not in stash:
        stash[_GROUP] = Shared("people")
    return stash[_GROUP]


def references(request: pytest.FixtureRequest, api: Any, factories: Any) -> dict[str, str]:
    """A live record for each field of :data:`REFERENCES`. Persons and users only point at
    them (full bodies, the ignored cost center of a user): no test changes or deletes one,
    so one set serves every module of the group."""
    return run_shared(request).get(
        request, "references", lambda: live_references(api, factories, REFERENCES)
    )


def bare_person(request: pytest.FixtureRequest, api: Any, factories: Any) -> Record:
    """A person of the run made from a first name alone (all PERS-FIELD-REQUIRED asks), read
    once. Shared because its tests only send it refused replaces (each checking its read is
    unchanged after, the photo tests that hasPhoto stayed false), read it back, or need some
    person of the run that is none of their own to exist (the search tests: one without
    their mark): none changes it (see :class:`Shared` for a target that does)."""

    def build() -> Record:
        body = {"firstName": factories.tag("first")[:50]}
        uuid = created(api.post(PERSON.path, json=body))
        return Record(uuid, body, read_record(api, PERSON.path, uuid))

    return run_shared(request).get(request, "bare-person", build)


def bare_user(request: pytest.FixtureRequest, api: Any, factories: Any) -> Record:
    """A plain user of the run (run-tagged e-mail address and last name), read once. Shared
    because its tests leave its read as it was: refused replaces (each checking the read is
    unchanged after), a copy of its e-mail address or username for a refused conflict, a
    replace with its own body (the password test), a disable undone by an enable (the test
    checks the read is back), a credential and invitations it is given (neither is part of
    the user's read), or some user of the run that is none of their own (the search tests:
    one without their mark). The invitations are those of test_user_views' ``hosted``: no
    other test gives it any, so they are exactly its invitations."""

    def build() -> Record:
        # Enabled by name (no default is documented): the disable test starts from there.
        body = factories.user(lastName=factories.tag("ln")[:50], enabled=True)
        uuid = created(api.post(USER.path, json=body))
        return Record(uuid, body, read_record(api, USER.path, uuid))

    return run_shared(request).get(request, "bare-user", build)


@dataclass(frozen=True)
class Found:
    """Records of one kind for the search tests to find: a trio sharing a run-tagged ``mark``
    (in every searchable field; the same last name) that no other record carries, each with
    a first name, e-mail address, mobile and identity number of its own."""

    mark: str
    trio: tuple[Record, Record, Record]


def found(request: pytest.FixtureRequest, api: Any, factories: Any, kind: Kind) -> Found:
    """The :class:`Found` trio of ``kind``. Shared: the search and list tests only search and
    list them, each asserting on exactly these three (found by their mark, which no other
    record holds), so they cannot see one another's records; the invites window tests give
    the third user invitations of their own (not part of a user's search row or read). The
    users are created without a username, which no search or list looks at: the service
    generates one, and USER-USERNAME-GENERATED's test reads the first two."""
    # None: left out of the body (persons have no username).
    username = {"username": None} if kind is USER else {}

    def build() -> Found:
        mark = token(factories)
        first, second, third = (
            Record(*searchable(api, factories, kind, mark, **extra, **username))
            for extra in ({}, {"firstName": f"Other{mark}Gh"}, {"firstName": f"Third{mark}Jk"})
        )
        return Found(mark, (first, second, third))

    return run_shared(request).get(request, f"found-{kind.name}", build)


@dataclass(frozen=True)
class Pictured:
    """A record with a photo: its handle, its read (photoId, the media links), the upload its
    photo was claimed from and (where it got the photo by a replace) its read before."""

    uuid: str
    read: dict[str, Any]
    staged: str
    before: dict[str, Any] = field(default_factory=dict)


def _pictured(api: Any, factories: Any) -> Pictured:
    """A person created with the photoUuid of a fresh upload, read."""
    staged = staged_photo(api, factories)
    uuid = created(api.post(PERSON.path, json=factories.person(photoUuid=staged)))
    return Pictured(uuid, read_record(api, PERSON.path, uuid), staged)


def pictured(request: pytest.FixtureRequest, api: Any, factories: Any) -> Pictured:
    """A person given an 800x600 JPEG photo (several hundred pixels a side, as the thumbnail
    rule asks) by a replace: created without one and read (``before``), then replaced with
    its own body and the photoUuid of a fresh upload (200), and read again. Shared: its
    tests look at those reads (the photo attached by a replace), download the photo and
    thumbnail, fetch its links (as handed out or altered in a segment) or delete the upload
    it was claimed from, none of which changes the person or its photo on a correct target
    (a failing test drops it)."""

    def build() -> Pictured:
        body = factories.person()
        uuid = created(api.post(PERSON.path, json=body))
        before = read_record(api, PERSON.path, uuid)
        staged = staged_photo(api, factories, (800, 600))
        replaced = api.put(f"{PERSON.path}/{uuid}", json={**body, "photoUuid": staged})
        assert replaced.status_code == 200, (replaced.status_code, replaced.text)
        return Pictured(uuid, read_record(api, PERSON.path, uuid), staged, before)

    return run_shared(request).get(request, "pictured", build)


def pictured_user(request: pytest.FixtureRequest, api: Any, factories: Any) -> Pictured:
    """A user created with a photo (an upload claimed through photoUuid), read once. Shared:
    its tests look at that read, fetch its links (another record's photo, for a link test
    on :func:`pictured`'s) or delete the upload it was claimed from, none of which changes
    the user or its photo on a correct target (a failing test drops it)."""

    def build() -> Pictured:
        staged = staged_photo(api, factories)
        uuid = created(api.post(USER.path, json=factories.user(photoUuid=staged)))
        return Pictured(uuid, read_record(api, USER.path, uuid), staged)

    return run_shared(request).get(request, "pictured-user", build)


def emptied(request: pytest.FixtureRequest, api: Any, factories: Any, control: Any) -> Pictured:
    """A person with a photo whose stored image was emptied afterwards (only the reference
    control plane can stage storage that lost the bytes). Shared: its tests only download it
    or fetch its links, as handed out before the bytes went."""

    def build() -> Pictured:
        made = _pictured(api, factories)
        control.empty_photo(made.read["photoId"])
        return made

    return run_shared(request).get(request, "emptied", build)


@dataclass(frozen=True)
class Deleted:
    """A record deleted with a QR_CODE credential in its name: what was written (searchable
    values carrying ``mark``) and the credential."""

    uuid: str
    body: dict[str, Any]
    mark: str
    qr: str


def deleted(
    request: pytest.FixtureRequest,
    api: Any,
    factories: Any,
    amws_run: Any,
    profile: Any,
    control: Any,
    kind: Kind,
) -> Deleted:
    """A record of ``kind`` deleted with 200, found everywhere before: by search, on the
    deprecated user list and with its invites (users), in a controller phonebook (persons,
    where the target shows them: ``control`` not None). It held a QR_CODE credential (the
    virtual reader's list, where the profile has one), which is an ACTIVE credential, so the
    person was in the phonebooks. The first request for a deleted user after its delete is a
    refused disable: USER-DELETE-SESSIONS asks that the very next one is refused.

    Shared by the delete tests of every module: each only reads what is left afterwards (or
    sends requests that must be refused), so none changes what another one finds."""

    def build() -> Deleted:
        mark = token(factories)
        uuid, body = searchable(api, factories, kind, mark)
        reader = profile.section("virtual_reader") or {}
        lists = [reader["access_control_list"]] if reader.get("access_control_list") else []
        qr = credential(
            api, factories, amws_run, kind, uuid, readerType="QR_CODE", accessControlListUuids=lists
        )
        assert uuids(search(api, kind, lastName=mark)) == [uuid]
        if kind is USER:
            listed = api.get(kind.path, params={"email": body["email"]})
            assert uuid in uuids(listed.json()), "the deprecated list does not find the user"
            assert api.get(f"{kind.path}/{uuid}/invites").status_code == 200
        elif control is not None:
            books = [c["phonebook"] for c in control.controller_credentials()]
            assert any(uuid in {p["uuid"] for p in book} for book in books), (
                "a person holding an ACTIVE credential is in no phonebook (precondition)"
            )
        assert api.delete(f"{kind.path}/{uuid}").status_code == 200
        if kind is USER:
            assert api.put(f"{kind.path}/{uuid}/disable").status_code == 404
        return Deleted(uuid, body, mark, qr)

    return run_shared(request).get(request, f"deleted-{kind.name}", build)
