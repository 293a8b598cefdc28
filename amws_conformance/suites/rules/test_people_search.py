"""Finding persons and users (PERS-SEARCH-, USER-SEARCH- rules): the required body, paging
ranges, criterion lengths, case-insensitive contains matching on every criterion, the
conjunction of criteria, the hidden identity number and the answer's shape. And that a deleted
person or user is found nowhere afterwards (PERS-DELETE-, USER-DELETE- rules): not by GET or
search, not as a credential's holder (the credentials stay, unassigned), not in a hardware
phonebook, and no QR code in its name.

The two searches are specified alike, so most tests run for both kinds, each parameter tagged
with its own kind's rule. Every record a test searches for carries a run-tagged token no other
record has, so the tests hold on a system full of other people. Ranges and lengths are read
from the spec. The user search's own rules (unknown criteria, the deprecated list) are in
test_user_search.py. The records searched for and the deleted ones are the group's (made once
per run, see _people_records.py), each test looking at them without changing them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from amws_conformance.fixtures._limits import body_schema, field_schema
from amws_conformance.suites.rules import _people_records as records
from amws_conformance.suites.rules._people import (
    CREDENTIALS,
    ENVELOPE,
    KINDS,
    MATCHED_ON,
    PERSON,
    ROW_FIELDS,
    Kind,
    Record,
    created,
    credential,
    each_kind,
    limit_range,
    search,
    searchable,
    token,
    unassigned,
    uuids,
)

PERSONS = PERSON.path


def criteria(kind: Kind) -> list[str]:
    return [f for f in body_schema(kind.search_op)["properties"] if f not in ("start", "limit")]


def each_criterion(suffix: str) -> list[Any]:
    """(kind, criterion) for every criterion of both searches, tagged with the kind's rule."""
    return [
        pytest.param(
            kind,
            criterion,
            marks=pytest.mark.rule(kind.rule(suffix)),
            id=f"{kind.name}-{criterion}",
        )
        for kind in KINDS
        for criterion in criteria(kind)
    ]


# -- the records the searches find ---------------------------------------------------------
@pytest.fixture
def found(request, api, factories) -> Callable[[Kind], records.Found]:
    """The group's :class:`Found` trio of a kind (see :func:`records.found` for why sharing is
    safe): the search tests only search them, each asserting on exactly these three."""
    return lambda kind: records.found(request, api, factories, kind)


@pytest.fixture
def plain(request, api, factories) -> Callable[[Kind], Record]:
    """The group's plain record of a kind: one of the run without the trio's mark (see
    :func:`records.bare_person`, :func:`records.bare_user`)."""
    return lambda kind: (records.bare_person if kind is PERSON else records.bare_user)(
        request, api, factories
    )


@pytest.fixture
def deleted(
    request, api, factories, amws_run, profile, control_or_none
) -> Callable[[Kind], records.Deleted]:
    """The group's deleted record of a kind (see :func:`records.deleted`): the delete tests only
    look at what is left of it."""
    return lambda kind: records.deleted(
        request, api, factories, amws_run, profile, control_or_none, kind
    )


# -- body and paging ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", each_kind("SEARCH-BODY-REQUIRED"))
def test_search_needs_a_json_body(api, kind: Kind) -> None:
    assert api.post(kind.search_path).status_code == 400, "a search without a body was answered"
    for broken in (b"{", b"not json", b'{"lastName": '):
        response = api.post(
            kind.search_path, content=broken, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 400, (broken, response.status_code)
    assert api.post(kind.search_path, json={}).status_code == 200


@pytest.mark.parametrize("kind", each_kind("SEARCH-PAGING"))
def test_paging_defaults_and_ranges(api, found, kind: Kind) -> None:
    low, high = limit_range(kind)
    mark = found(kind).mark
    mine = sorted(record.uuid for record in found(kind).trio)
    page = search(api, kind, lastName=mark)
    assert page["startIndex"] == 0, "start does not default to 0"
    assert sorted(uuids(page)) == mine
    everyone = search(api, kind)
    default = int(field_schema(kind.search_op, "limit")["default"])
    assert everyone["countReturned"] == min(everyone["totalCount"], default)
    for limit in (low, high):
        assert sorted(uuids(search(api, kind, lastName=mark, limit=limit))) == mine
    for bad in ({"start": -1}, {"limit": low - 1}, {"limit": high + 1}, {"limit": 0}):
        response = api.post(kind.search_path, json={"lastName": mark, **bad})
        assert response.status_code == 422, (bad, response.status_code)


@pytest.mark.parametrize(("kind", "criterion"), each_criterion("SEARCH-CRITERIA-LENGTH"))
def test_criteria_are_length_limited(api, kind: Kind, criterion: str) -> None:
    high = field_schema(kind.search_op, criterion)["maxLength"]
    assert api.post(kind.search_path, json={criterion: "9" * high}).status_code == 200
    response = api.post(kind.search_path, json={criterion: "9" * (high + 1)})
    assert response.status_code == 422, response.status_code
    assert criterion in response.json()["reason"]


# -- matching ----------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "criterion"), each_criterion("SEARCH-CONTAINS"))
def test_criterion_is_a_case_insensitive_contains(api, found, plain, kind, criterion) -> None:
    field = MATCHED_ON.get(criterion, criterion)
    # The piece below holds the trio's mark: the trio all match; a record without it does not.
    wanted, body = found(kind).trio[0].uuid, found(kind).trio[0].body
    other = plain(kind).uuid
    value = body[field]
    # A piece from inside the value, in the opposite letter case.
    piece = value[3:-1].swapcase() if field != "mobile" else value[4:-1]
    page = search(api, kind, **{criterion: piece})
    found = uuids(page)
    assert wanted in found, f"{criterion}={piece!r} did not find {value!r}"
    assert other not in found, f"{criterion}={piece!r} also found a {kind.name} without it"
    if field in ROW_FIELDS:
        for row in page["entries"]:
            assert piece.casefold() in (row[field] or "").casefold(), row
    if kind is PERSON and field == "lastName":  # the rule's own example: "OOS" finds "Roosevelt"
        assert wanted in uuids(search(api, kind, lastName="OOS", email=body["email"]))


@pytest.mark.parametrize("kind", each_kind("SEARCH-ALL-FIELDS"))
def test_every_given_criterion_must_match(api, found, kind: Kind) -> None:
    mark, trio = found(kind).mark, found(kind).trio
    first, body = trio[0].uuid, trio[0].body
    assert sorted(uuids(search(api, kind, lastName=mark))) == sorted(r.uuid for r in trio)
    both = search(api, kind, lastName=mark, firstName=body["firstName"])
    assert uuids(both) == [first], f"a {kind.name} matching only one of two criteria was returned"
    assert search(api, kind, lastName=mark, email="no-such-address-" + mark)["entries"] == []
    three = search(api, kind, lastName=mark, identityNr=body["identityNumber"], mobileNumber="+27")
    assert uuids(three) == [first]


@pytest.mark.rule("PERS-SEARCH-IDENTITY-NOT-RETURNED")
def test_identity_number_is_searchable_but_not_shown(api, found) -> None:
    mark, first = found(PERSON).mark, found(PERSON).trio[0]
    uuid, body = first.uuid, first.body
    page = search(api, PERSON, identityNr=body["identityNumber"])
    assert uuids(page) == [uuid], "the identity number did not find its person"
    for row in [*page["entries"], *search(api, PERSON, lastName=mark)["entries"]]:
        assert not {"identityNumber", "identityNr"} & set(row), row
        assert body["identityNumber"] not in {str(v) for v in row.values()}, row


# -- the answer --------------------------------------------------------------------------
@pytest.mark.parametrize("kind", each_kind("SEARCH-RESPONSE"))
def test_answer_shape_and_counts(api, found, kind: Kind) -> None:
    mark = found(kind).mark
    made = {record.uuid: record.body for record in found(kind).trio}
    page = search(api, kind, lastName=mark)
    assert set(page) == ENVELOPE, set(page)
    assert (page["startIndex"], page["countReturned"], page["totalCount"]) == (0, 3, 3)
    for row in page["entries"]:
        assert set(row) == ROW_FIELDS, set(row)
        sent = made[row["uuid"]]
        assert {f: row[f] for f in ROW_FIELDS - {"uuid"}} == {
            f: sent[f] for f in ROW_FIELDS - {"uuid"}
        }
    low, _ = limit_range(kind)
    for start in (0, 1, 2, 3, 5):
        part = search(api, kind, lastName=mark, start=start, limit=low)
        assert (part["startIndex"], part["totalCount"]) == (start, 3)
        assert part["countReturned"] == len(part["entries"]) == max(0, 3 - start)
        assert uuids(part) == uuids(page)[start:], "pages do not follow one order"
    # The identity number stays out of the rows, even when it was the criterion.
    one = next(iter(made.values()))
    for row in search(api, kind, identityNr=one["identityNumber"])["entries"]:
        assert set(row) == ROW_FIELDS, set(row)
        assert one["identityNumber"] not in {str(v) for v in row.values()}


@pytest.mark.rule("PERS-SEARCH-RESPONSE")
@pytest.mark.slow
def test_stepping_start_by_limit_visits_every_match_once(api, factories) -> None:
    low, _ = limit_range(PERSON)
    mark = token(factories)
    made = {searchable(api, factories, PERSON, mark)[0] for _ in range(low + 1)}
    visited: list[str] = []
    start = 0
    while True:
        page = search(api, PERSON, lastName=mark, start=start, limit=low)
        assert page["totalCount"] == low + 1
        assert page["countReturned"] == len(page["entries"]) <= low
        visited += uuids(page)
        if not page["entries"]:
            break
        start += low
    assert len(visited) == len(set(visited)), "a match was returned twice"
    assert set(visited) == made


# -- delete: the record is found nowhere afterwards ---------------------------------------
@pytest.mark.parametrize("kind", each_kind("DELETE-HARD"))
def test_deleted_record_is_gone(api, deleted, kind: Kind) -> None:
    gone = deleted(kind)  # its delete answered 200
    uuid, body = gone.uuid, gone.body
    assert gone.observed("search") == [uuid], "before its delete, its mark did not find it"
    assert api.get(f"{kind.path}/{uuid}").status_code == 404
    for criterion in criteria(kind):
        field = MATCHED_ON.get(criterion, criterion)
        assert uuid not in uuids(search(api, kind, **{criterion: body[field]})), criterion


@pytest.mark.rule("PERS-DELETE-UNLINKS-CREDENTIALS")
def test_delete_keeps_credentials_unassigned(api, factories, amws_run) -> None:
    uuid = created(api.post(PERSONS, json=factories.person()))
    held = [credential(api, factories, amws_run, PERSON, uuid) for _ in range(2)]
    for made in held:
        assert api.get(f"{CREDENTIALS}/{made}").json()["holderUuid"] == uuid
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    for made in held:
        response = api.get(f"{CREDENTIALS}/{made}")
        assert response.status_code == 200, "the credential did not survive its holder"
        assert unassigned(response.json()), response.json().get("holderUuid")
        assert response.json()["status"] != "DELETED"


@pytest.mark.rule("PERS-DELETE-PHONEBOOK")
@pytest.mark.requires("control")
def test_delete_withdraws_the_person_from_phonebooks(deleted, control) -> None:
    gone = deleted(PERSON)  # its delete answered 200
    uuid = gone.uuid
    gone.observed("credential")  # it held an ACTIVE credential
    assert gone.observed("phonebook"), "a person holding an ACTIVE credential is in no phonebook"
    for controller in control.controller_credentials():
        assert uuid not in {p["uuid"] for p in controller["phonebook"]}, controller["controller"]


@pytest.mark.parametrize("kind", each_kind("DELETE-QR-CODE"))
def test_delete_leaves_no_qr_code_in_its_name(
    api, profile, control_or_none, deleted, kind: Kind
) -> None:
    """The record's QR code is observable as a QR_CODE credential issued in its name (on the
    virtual reader's list, where the profile has one): after the delete, nothing on the API,
    a reader or (with a control plane) a controller is in its name."""
    gone = deleted(kind)  # its delete answered 200
    uuid, qr = gone.uuid, gone.observed("credential")
    reader = profile.section("virtual_reader") or {}
    assert unassigned(api.get(f"{CREDENTIALS}/{qr}").json())
    assert api.get(f"{CREDENTIALS}/by-{kind.name}/{uuid}").status_code == 404
    if reader.get("uuid"):
        body = {"uuid": reader["uuid"], "key": reader["key"]}
        listed = api.post("/api/ws/v1/virtual/qr-code-reader/list", json=body)
        assert listed.status_code == 200, listed.text
        assert uuid not in {e.get("holderUuid") for e in listed.json()}
    if control_or_none is not None:
        for controller in control_or_none.controller_credentials():
            holders = {c.get("holderUuid") for c in controller["credentials"]}
            assert uuid not in holders, f"a controller still holds a code in the {kind.name}'s name"
