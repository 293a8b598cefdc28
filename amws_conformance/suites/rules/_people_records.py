"""Records the people group's modules share across modules (persons, users, their searches
and views, files, photos and media links): each made once per run and booked as a set-up of
its own ("people::<name>"), so a plan keeping any test of any module that uses it pays for it
once. Under the self-check's fault matrix each fault gets records of its own (see
:class:`suites.rules._people.Shared`), and a test that fails drops the records it used.

Each builder's docstring says what the tests sharing the record do to it, and why none of
that changes what another one finds. A shared record is made only with what every test using
it relied on before it was shared (plain values, the writes they all made), so a target that
deviates from one rule does not block the tests of another: what only some of its tests
need is tried and recorded, and those tests assert it themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import pytest

from amws_conformance.suites.rules import _media as media
from amws_conformance.suites.rules._people import (
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
    searchable_body,
    staged_photo,
    token,
    uuids,
)

_GROUP: pytest.StashKey[Shared] = pytest.StashKey()
T = TypeVar("T")

# reference field -> (path of the referenced records, its create operation): persons take
# all five; users the first four (a user has no cost center, USER-NO-COST-CENTER).
REFERENCES = {
    "location": (f"{API}/locations", "createLocation"),
    "department": (f"{API}/departments", "createDepartment"),
    "organisation": (f"{API}/organisations", "createOrganisation"),
    "group": (f"{API}/groups", "createGroup"),
    "costCenter": (f"{API}/cost-centers", "createCostCenter"),
}


def _try(send: Callable[[], T]) -> T | Exception:
    """What ``send`` returns, or the error it raised (a failed assertion, a global check's
    RuleViolation, a control-plane error): what only some tests of a shared record rely on
    is tried this way, so its failure never stops the record being made for the others."""
    try:
        return send()
    except Exception as error:  # handed to the tests that rely on it (observed)
        return error


def observed(seen: dict[str, Any], key: str) -> Any:
    """What a shared record's maker saw as ``key``; an error met there is raised here, in the
    test that relies on it, as the request would have raised had the test sent it itself."""
    value = seen[key]
    if isinstance(value, Exception):
        raise value
    return value


def _read(api: Any, path: str, uuid: str) -> dict[str, Any]:
    """A shared plain record's read. Where a global check refuses the answer, the record is
    read again without the checks: the tests that rely on the read's values read a record
    themselves too (and meet the refusal there), while those that never read it go on."""
    read = _try(lambda: read_record(api, path, uuid))
    if isinstance(read, Exception):
        response = api.unchecked.get(f"{path}/{uuid}")
        assert response.status_code == 200, (response.status_code, response.text)
        return dict(response.json())
    return read


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
    """A plain person of the run, with a good address in each e-mail field, read once. Shared
    because its tests only send it refused replaces (each checking its read is unchanged
    after), read its values back (the e-mail format tests), or need some person of the run
    that is none of their own to exist (the search tests: one without their mark): none
    changes it (see :class:`Shared` for a target that does). The plain body already holds an
    e-mail address, so the second one ties it to no rule it was not tied to."""

    def build() -> Record:
        body = factories.person(emailAlternative=factories.email())
        uuid = created(api.post(PERSON.path, json=body))
        return Record(uuid, body, _read(api, PERSON.path, uuid))

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
        return Record(uuid, body, _read(api, USER.path, uuid))

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
    the third user invitations of their own (not part of a user's search row or read)."""

    def build() -> Found:
        mark = token(factories)
        first, second, third = (
            Record(*searchable(api, factories, kind, mark, **extra))
            for extra in ({}, {"firstName": f"Other{mark}Gh"}, {"firstName": f"Third{mark}Jk"})
        )
        return Found(mark, (first, second, third))

    return run_shared(request).get(request, f"found-{kind.name}", build)


@dataclass(frozen=True)
class Pictured:
    """A record with a photo: its handle, its read (photoId, the media links), the upload its
    photo was claimed from and what was seen when it was worked on (:func:`observed`)."""

    uuid: str
    read: dict[str, Any]
    staged: str
    seen: dict[str, Any] = field(default_factory=dict)

    def observed(self, key: str) -> Any:
        return observed(self.seen, key)


def _pictured(
    api: Any, factories: Any, kind: Kind = PERSON, size: tuple[int, int] = (640, 480)
) -> Pictured:
    """A record of ``kind`` created with the photoUuid of a fresh upload of ``size``, read."""
    staged = staged_photo(api, factories, size)
    uuid = created(api.post(kind.path, json=kind.body(factories, photoUuid=staged)))
    return Pictured(uuid, read_record(api, kind.path, uuid), staged)


def pictured(request: pytest.FixtureRequest, api: Any, factories: Any) -> Pictured:
    """A person created with an 800x600 JPEG photo (several hundred pixels a side, as the
    thumbnail rule asks). Shared: its tests download the photo and thumbnail, fetch its links
    (as handed out or altered in a segment) or delete the upload it was claimed from, none of
    which changes the person or its photo on a correct target (a failing test drops it)."""
    size = (800, 600)
    return run_shared(request).get(
        request, "pictured", lambda: _pictured(api, factories, size=size)
    )


def pictured_user(request: pytest.FixtureRequest, api: Any, factories: Any) -> Pictured:
    """A user created with a photo (an upload claimed through photoUuid), read once. Shared:
    its tests look at that read, delete the upload it was claimed from, or put its photo's
    identifier into another record's link (the altered-link test, which needs a photo whose
    bytes exist), none of which changes the user or its photo on a correct target (a failing
    test drops it)."""
    return run_shared(request).get(
        request, "pictured-user", lambda: _pictured(api, factories, USER)
    )


def emptied(request: pytest.FixtureRequest, api: Any, factories: Any, control: Any) -> Pictured:
    """A person with a photo whose stored image was emptied afterwards (only the reference
    control plane can stage storage that lost the bytes; ``seen["emptied"]`` holds how that
    went, which the empty-content tests assert). Shared: its tests only download it or fetch
    its links, as handed out before the bytes went."""

    def build() -> Pictured:
        made = _pictured(api, factories)
        photo = media.photo_id(made.read, made.uuid, made.staged)
        made.seen["emptied"] = _try(lambda: control.empty_photo(photo))
        return made

    return run_shared(request).get(request, "emptied", build)


def fetched(api: Any, amws_run: Any, profile: Any, link: str) -> Any:
    """GET a media link as a read handed it out (a relative one joined with the profile's
    base_url), waiting out the per-address throttle the link tests share (a 429 is not an
    answer about the link). As in test_media_links, only the thumbnail route's answer gets
    the global checks: the file route's 200 carries the stored type, which openapi.yaml does
    not list there."""
    url = link if urlsplit(link).scheme else profile.base_url + "/" * (link[:1] != "/") + link
    for _ in range(4):
        thumbnail = "/storage/thumbnail/" in url
        response = (api.unretried if thumbnail else api.unretried.unchecked).get(url)
        if response.status_code != 429:
            break
        advised = response.headers.get("retry-after", "")
        amws_run.pass_time(int(advised) if advised.isdigit() else 5)
    return response


@dataclass(frozen=True)
class Deleted:
    """A record deleted with 200: what was written (searchable values carrying ``mark``) and
    what was seen of it before the delete (and, for a user, right after it): see
    :func:`deleted` and :meth:`observed`."""

    uuid: str
    body: dict[str, Any]
    mark: str
    seen: dict[str, Any]

    def observed(self, key: str) -> Any:
        return observed(self.seen, key)


def _claimed(api: Any, factories: Any, body: dict[str, Any]) -> str:
    """A person created from ``body`` with the photoUuid of a fresh upload."""
    photo = staged_photo(api, factories)
    return created(api.post(PERSON.path, json={**body, "photoUuid": photo}))


def _answered(response: Any) -> tuple[int, int]:
    """(status, bytes of the body)."""
    return response.status_code, len(response.content)


def deleted(
    request: pytest.FixtureRequest,
    api: Any,
    factories: Any,
    amws_run: Any,
    profile: Any,
    control: Any,
    kind: Kind,
) -> Deleted:
    """A record of ``kind`` with searchable values and a QR_CODE credential (on the virtual
    reader's list, where the profile has one), deleted with 200. Before the delete ``seen``
    records: the credential (``credential``), the search for the mark (``search``); for a
    user the deprecated list by e-mail address (``listed``) and the invites' status
    (``invites``); for a person whether a controller phonebook listed it (``phonebook``,
    where ``control`` shows them), and a photo claimed on create (``claim``, else the person
    is made without one), its read (``read``) and its downloads and links (``download ...``,
    ``link ...``: status and bytes). For a user, ``disable`` holds the answer to a disable
    sent right after the delete (USER-DELETE-SESSIONS: the very next request is refused).

    Only the create and the delete are asserted here, as every delete test did for its own
    record; the rest is tried (:func:`_try`) and each test asserts what it relies on, so a
    target that breaks one of those fails only the tests relying on it. Shared by the delete
    tests of every module: each only reads what is left afterwards (or sends requests that
    must be refused), so none changes what another one finds."""

    def build() -> Deleted:
        mark, seen = token(factories), {}
        body = searchable_body(factories, kind, mark)
        if kind is PERSON:
            seen["claim"] = _try(lambda: _claimed(api, factories, body))
        claimed = seen.get("claim")
        uuid = claimed if isinstance(claimed, str) else created(api.post(kind.path, json=body))
        reader = profile.section("virtual_reader") or {}
        lists = [reader["access_control_list"]] if reader.get("access_control_list") else []
        qr = {"readerType": "QR_CODE", "accessControlListUuids": lists}
        seen["credential"] = _try(lambda: credential(api, factories, amws_run, kind, uuid, **qr))
        seen["search"] = _try(lambda: uuids(search(api, kind, lastName=mark)))
        if kind is USER:
            by_email = {"email": body["email"]}
            seen["listed"] = _try(lambda: uuids(api.get(kind.path, params=by_email).json()))
            seen["invites"] = _try(lambda: api.get(f"{kind.path}/{uuid}/invites").status_code)
        else:
            _person_seen(api, amws_run, profile, control, uuid, seen)
        assert api.delete(f"{kind.path}/{uuid}").status_code == 200
        if kind is USER:
            seen["disable"] = _try(lambda: api.put(f"{kind.path}/{uuid}/disable").status_code)
        return Deleted(uuid, body, mark, seen)

    return run_shared(request).get(request, f"deleted-{kind.name}", build)


def _person_seen(
    api: Any, amws_run: Any, profile: Any, control: Any, uuid: str, seen: dict[str, Any]
) -> None:
    """What :func:`deleted` sees of a person before its delete: the phonebooks, its read, and
    its photo's downloads and links."""
    if control is not None:
        books = _try(lambda: [c["phonebook"] for c in control.controller_credentials()])
        seen["phonebook"] = (
            books
            if isinstance(books, Exception)
            else any(uuid in {p["uuid"] for p in b} for b in books)
        )
    seen["read"] = read = _try(lambda: read_record(api, PERSON.path, uuid))
    if isinstance(read, Exception):
        return
    photo = media.photo_id(read, uuid, seen.get("claim")) if read.get("hasPhoto") else None
    for name in ("photo", "thumbnail"):
        if photo:
            path = f"{API}/photos/{name}/{photo}"
            seen[f"download {name}"] = _try(lambda path=path: _answered(api.get(path)))
    # The signed links, wherever the read carries them (found by their documented shape).
    for route, link in media.found(profile, read).items():
        seen[f"link {route}"] = _try(
            lambda url=link.url: _answered(fetched(api, amws_run, profile, url))
        )
