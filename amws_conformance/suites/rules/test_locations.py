"""Locations: required fields, the type enum, field limits, partial PUT, reads and hard delete.

Every limit is read from the spec's LocationCreate/LocationUpdate schemas.
"""

from __future__ import annotations

import pytest

from amws_conformance import spec
from amws_conformance.fixtures._limits import enum_values, field_schema, length_range, required
from amws_conformance.fixtures.timestamps import parsed as _instant
from amws_conformance.suites.rules._conventions import Shared, refusals

PATH = "/api/ws/v1/locations"


def _text_fields() -> list[str]:
    """String fields whose only constraint is their length (keyContactNumber has a pattern
    and is covered by the phone test)."""
    schema = spec.resolve(spec.openapi()["components"]["schemas"]["LocationCreate"])
    found = []
    for name in schema["properties"]:
        prop = field_schema("createLocation", name)
        if prop.get("type") == "string" and "maxLength" in prop and "pattern" not in prop:
            found.append(name)
    return found


TEXT_FIELDS = _text_fields()


def _text(factories, length: int, taken: list[str] | None = None) -> str:
    """Exactly ``length`` characters no location has (``taken``: the names listed), run-tagged
    when there is room: names must be unique."""
    return factories.sized_name("loc", length, taken or ())


def _create(api, factories, **overrides) -> tuple[str, dict]:
    body = factories.location(**overrides)
    response = api.post(PATH, json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"], body


def _read(api, uuid: str) -> dict:
    response = api.get(f"{PATH}/{uuid}")
    assert response.status_code == 200
    return response.json()


def _names(api) -> set[str]:
    return {item["name"] for item in api.get(PATH).json()}


def _refused(response, field: str) -> None:
    assert response.status_code == 422, (field, response.status_code)
    assert field in response.json()["reason"], response.json()["reason"]


def _none_stored(api, names: list[str], what: str) -> None:
    """One list after several refused creates: none of their names was stored."""
    listed = _names(api)
    for name in names:
        assert name not in listed, f"{what} was stored ({name})"


@pytest.fixture
def plain(amws_run, api, factories) -> dict:
    """A location made of a name and a type alone, never changed afterwards, made once per run
    (``Shared.location``; the population of test_conventions.py refers to it too).

    Shared: the tests given it only read it, list it, or send it a rename that must be
    refused; the test of a two-field create asserts on this very create."""
    return Shared(amws_run, api, factories).location()


@pytest.fixture
def scratch(amws_run, api, factories) -> str:
    """A location whose fields the validation tests write and read back, made once per run
    (``Shared.scratch``, which says which test owns which field).

    Shared: a PUT changes only the fields it is given, and every test writes its fields
    before reading them (the partial-update and duplicate-name tests read what they compare
    against first), so no test sees what another did, in any order."""
    return Shared(amws_run, api, factories).scratch()


# -- required fields and the type enum -----------------------------------------------------
@pytest.mark.rule("LOC-FIELD-REQUIRED")
def test_name_and_type_are_required_on_create(api, factories) -> None:
    assert set(required("createLocation")) == {"name", "type"}
    before = {item["uuid"] for item in api.get(PATH).json()}
    marker = factories.tag("required")  # in every refused body: finds what one stored
    # One body without either; a 422 reason names every offending field (ERR-422-REASON-
    # FORMAT), so a field it leaves unnamed is tried missing on its own.
    body = factories.location(comments=marker)
    del body["name"], body["type"]
    answer = api.post(PATH, json=body)
    assert answer.status_code == 422, answer.status_code
    for missing in ("name", "type"):
        if f"@{missing}" not in answer.json()["reason"]:
            alone = factories.location(comments=marker)
            del alone[missing]
            _refused(api.post(PATH, json=alone), missing)
    # No refused create stored a location: none of those listed since carries the marker.
    for uuid in {item["uuid"] for item in api.get(PATH).json()} - before:
        assert _read(api, uuid).get("comments") != marker, "a refused create was stored"


@pytest.mark.rule("LOC-FIELD-REQUIRED")
def test_name_and_type_alone_make_a_location(api, plain: dict) -> None:
    assert plain["status"] == 201  # the fixture's create sent {name, type} and nothing else
    stored = _read(api, plain["uuid"])
    assert (stored["name"], stored["type"]) == (plain["name"], plain["type"])


@pytest.mark.rule("LOC-FIELD-ENUM")
def test_type_accepts_only_the_listed_values(api, factories, scratch: str) -> None:
    wrong = factories.wrong_enum("createLocation", "type")
    body = factories.location(type=wrong)
    _refused(api.post(PATH, json=body), "type")
    assert body["name"] not in _names(api)

    uuid = scratch
    values = enum_values("updateLocation", "type")
    for value in values:
        assert api.put(f"{PATH}/{uuid}", json={"type": value}).status_code == 200, value
        if value != values[-1]:  # the last value is read back after the refused update
            assert _read(api, uuid)["type"] == value
    _refused(api.put(f"{PATH}/{uuid}", json={"type": wrong}), "type")
    assert _read(api, uuid)["type"] == value


# -- field limits ----------------------------------------------------------------------------
@pytest.mark.rule("LOC-FIELD-LENGTH")
@pytest.mark.parametrize("field", TEXT_FIELDS)
def test_field_length_limits(api, factories, scratch: str, field: str) -> None:
    low, high = length_range("createLocation", field)
    refused = [n for n in (low - 1, high + 1) if n >= 0 and (n < low or n > high)]
    names = []
    for length in refused:
        body = factories.location(**{field: _text(factories, length)})
        _refused(api.post(PATH, json=body), field)
        names.append(body["name"])
    _none_stored(api, names, f"a location with a refused {field} length")

    uuid = scratch
    # A name too short for the run tag must still be one no location has.
    taken = [item["name"] for item in api.get(PATH).json()] if field == "name" else None
    for length in (max(low, 1), high):
        value = _text(factories, length, taken)
        assert api.put(f"{PATH}/{uuid}", json={field: value}).status_code == 200, length
        if length != high or not refused:  # else the read after the refused updates shows it
            assert _read(api, uuid)[field] == value
    for length in refused:
        _refused(api.put(f"{PATH}/{uuid}", json={field: _text(factories, length)}), field)
    if refused:  # one read shows the high value stored and every refused length not stored
        stored = _read(api, uuid)[field]
        assert stored == value, f"the {high}-character {field} was not stored, or a refused was"
        assert len(stored) == high, f"a refused length of {field} was stored"


@pytest.mark.rule("LOC-FIELD-PHONE", "LOC-FIELD-LENGTH")
def test_key_contact_number_is_international(api, factories, scratch: str) -> None:
    uuid = scratch
    good = factories.phone()
    assert api.put(f"{PATH}/{uuid}", json={"keyContactNumber": good}).status_code == 200
    national = "0" + good[-9:]
    with_letters = good[:4] + "abc" + good[7:]
    too_long = "+" + "1" * length_range("createLocation", "keyContactNumber")[1]
    names = []
    for bad in (national, with_letters, good[1:], too_long):
        body = factories.location(keyContactNumber=bad)
        _refused(api.post(PATH, json=body), "keyContactNumber")
        names.append(body["name"])
        _refused(api.put(f"{PATH}/{uuid}", json={"keyContactNumber": bad}), "keyContactNumber")
    _none_stored(api, names, "a location with a refused number")
    # One read: the good number was stored, and no refused one replaced it.
    assert _read(api, uuid)["keyContactNumber"] == good


@pytest.mark.rule("LOC-FIELD-RANGE")
def test_coordinates_lie_strictly_inside_their_range(api, factories, scratch: str) -> None:
    uuid = scratch
    bounds = {"latitude": 90, "longitude": 180}
    # Both coordinates in one update: just inside the top, then just inside the bottom.
    top = {field: bound - 0.000001 for field, bound in bounds.items()}
    bottom = {field: -bound + 0.000001 for field, bound in bounds.items()}
    assert api.put(f"{PATH}/{uuid}", json=top).status_code == 200
    stored = _read(api, uuid)
    for field, inside in top.items():
        assert stored[field] == pytest.approx(inside), field
    assert api.put(f"{PATH}/{uuid}", json=bottom).status_code == 200
    names = []
    # The k-th value outside each range shares a create and an update with the other
    # coordinate's k-th: each of the eight values is still refused on create and on update.
    # (``refusals``: one request for both where the 422 reason names both, as it must.)
    for k in range(4):
        outside = {f: (b, -b, b + 0.5, -b - 0.5)[k] for f, b in bounds.items()}
        for method, url, base in (
            ("POST", PATH, factories.location),
            ("PUT", f"{PATH}/{uuid}", dict),
        ):
            for field, (body, answer) in refusals(api, method, url, outside, base).items():
                _refused(answer, field)
                names += [body["name"]] if method == "POST" else []
    _none_stored(api, names, "a location with a coordinate out of range")
    # One read: the bottom values were stored, and no refused value replaced them.
    stored = _read(api, uuid)
    for field, inside in bottom.items():
        assert stored[field] == pytest.approx(inside), field


@pytest.mark.rule("LOC-FIELD-PRECISION")
def test_coordinates_take_at_most_15_decimals(api, factories) -> None:
    # Sent as raw JSON text: a Python float would not keep the 16th decimal as written.
    headers = {"Content-Type": "application/json"}
    name = factories.name_for("createLocation", "loc")
    kind = enum_values("createLocation", "type")[0]
    fifteen, sixteen = "12.123456789012345", "12.1234567890123456"
    created = api.post(
        PATH,
        content=f'{{"name": "{name}", "type": "{kind}", "latitude": {fifteen}}}'.encode(),
        headers=headers,
    )
    assert created.status_code == 201, created.text
    uuid = created.json()["uuid"]
    assert _read(api, uuid)["latitude"] == pytest.approx(float(fifteen), abs=1e-12)
    for field in ("latitude", "longitude"):
        other = factories.name_for("createLocation", "loc")
        body = f'{{"name": "{other}", "type": "{kind}", "{field}": {sixteen}}}'
        _refused(api.post(PATH, content=body.encode(), headers=headers), field)
        assert other not in _names(api)
        body = f'{{"{field}": {sixteen}}}'
        _refused(api.put(f"{PATH}/{uuid}", content=body.encode(), headers=headers), field)
    assert _read(api, uuid)["latitude"] == pytest.approx(float(fifteen), abs=1e-12)
    assert _read(api, uuid)["longitude"] is None


# -- writes ----------------------------------------------------------------------------------
@pytest.mark.rule("LOC-WRITE-ACK")
def test_writes_answer_an_acknowledgement(api, factories) -> None:
    body = factories.location()
    created = api.post(PATH, json=body)
    assert created.status_code == 201
    ack = created.json()
    assert ack["message"] == "success"
    assert not {"name", "type", "city"} & set(ack), "the create answer carries the record"
    uuid = ack["uuid"]
    assert _read(api, uuid)["name"] == body["name"]

    city = _text(factories, 20)
    updated = api.put(f"{PATH}/{uuid}", json={"city": city})
    assert updated.status_code == 200
    ack = updated.json()
    assert (ack["uuid"], ack["message"]) == (uuid, "success")
    assert not {"name", "type", "city"} & set(ack), "the update answer carries the record"
    assert _read(api, uuid)["city"] == city


@pytest.mark.rule("LOC-NAME-UNIQUE")
def test_duplicate_names_conflict(api, factories, plain: dict, scratch: str) -> None:
    first, first_name = plain["uuid"], plain["name"]
    # The rename is sent to the scratch location (its name as it is now: a length test may
    # have renamed it); on a conforming target it keeps that name.
    second, second_name = scratch, _read(api, scratch)["name"]
    duplicate = factories.location(name=first_name)
    assert api.post(PATH, json=duplicate).status_code == 409
    assert api.put(f"{PATH}/{second}", json={"name": first_name}).status_code == 409

    # One list after both refused writes: no second record under the name, both kept theirs.
    items = api.get(PATH).json()
    assert [i["name"] for i in items].count(first_name) == 1, "the duplicate was stored"
    assert {"uuid": first, "name": first_name} in items
    assert {"uuid": second, "name": second_name} in items, "the rename was stored"


@pytest.mark.rule("LOC-UPDATE-PARTIAL")
def test_put_changes_only_the_fields_it_is_given(api, factories, scratch: str) -> None:
    uuid = scratch  # created with complex, suburb, comments and expiresDate beside the rest
    before = _read(api, uuid)
    kept = ("complex", "suburb", "comments", "expiresDate", "name", "type")
    assert all(before[field] is not None for field in kept), before
    city = _text(factories, 15)
    assert api.put(f"{PATH}/{uuid}", json={"city": city}).status_code == 200
    after = _read(api, uuid)
    assert after == {**before, "city": city}, "fields left out of the PUT changed"

    # Neither name nor type need be sent.
    note = factories.tag("note")
    assert api.put(f"{PATH}/{uuid}", json={"comments": note}).status_code == 200
    assert _read(api, uuid) == {**after, "comments": note}


# -- reads -----------------------------------------------------------------------------------
@pytest.mark.rule("LOC-LIST-SHAPE")
def test_list_items_are_uuid_and_name_only(api, plain: dict) -> None:
    listed = api.get(PATH)
    assert listed.status_code == 200
    items = listed.json()
    assert isinstance(items, list)
    assert {"uuid": plain["uuid"], "name": plain["name"]} in items
    assert all(set(item) == {"uuid", "name"} for item in items), "list items carry more fields"


@pytest.mark.rule("LOC-READ-FULL")
def test_read_returns_the_full_record(api, factories) -> None:
    body = factories.location(
        complex=_text(factories, 10),
        suburb=_text(factories, 10),
        postalCode="8001",
        stateProvince=_text(factories, 10),
        country="ZA",
        expiresDate=factories.instant(days=365, offset_hours=-5),
        keyContactName=_text(factories, 10),
        comments="read back in full",
    )
    created = api.post(PATH, json=body)
    assert created.status_code == 201
    uuid = created.json()["uuid"]
    stored = _read(api, uuid)
    expected = set(spec.openapi()["components"]["schemas"]["Location"]["properties"])
    assert expected <= set(stored), f"missing {expected - set(stored)}"
    assert stored["uuid"] == uuid
    for field, value in body.items():
        if field in ("effectiveDate", "expiresDate"):
            assert stored[field].endswith(("Z", "+00:00")), stored[field]
            assert _instant(stored[field]) == _instant(value), field
        elif isinstance(value, float):
            assert stored[field] == pytest.approx(value), field
        else:
            assert stored[field] == value, field


@pytest.mark.rule("LOC-READ-FULL")
def test_read_lists_every_field_even_when_never_set(api, plain: dict) -> None:
    # The read answer names every location field, whatever the create body held (here only
    # name and type).
    stored = _read(api, plain["uuid"])
    expected = set(spec.openapi()["components"]["schemas"]["Location"]["properties"])
    assert expected <= set(stored), f"missing {expected - set(stored)}"
    assert (stored["name"], stored["type"]) == (plain["name"], plain["type"])


@pytest.mark.rule("LOC-NOT-FOUND")
def test_unknown_uuid_answers_404(api, factories, ledger) -> None:
    unknown = ledger.fresh_uuid()
    name = factories.name_for("updateLocation", "loc")
    assert api.get(f"{PATH}/{unknown}").status_code == 404
    assert api.put(f"{PATH}/{unknown}", json={"name": name}).status_code == 404
    assert api.delete(f"{PATH}/{unknown}").status_code == 404
    assert name not in _names(api)


@pytest.mark.rule("LOC-DELETE-HARD")
def test_delete_is_hard_and_unlinks_people(amws_run, api, factories) -> None:
    # The location and the person and user referring to it are shared with the delete tests
    # of test_reference_data.py (``Shared.holders``): this test deletes only the location and
    # reads only the location field of the two.
    holders = Shared(amws_run, api, factories).holders()
    uuid, name = holders["refs"]["location"], holders["names"]["location"]
    people = list(holders["paths"].values())  # their links checked on creation

    deleted = api.delete(f"{PATH}/{uuid}")
    assert deleted.status_code == 200
    assert deleted.json()["uuid"] == uuid
    assert api.get(f"{PATH}/{uuid}").status_code == 404
    listed = api.get(PATH).json()
    assert uuid not in {item["uuid"] for item in listed}
    assert name not in {item["name"] for item in listed}
    for person in people:
        read = api.get(person)
        assert read.status_code == 200
        assert read.json().get("location") is None, f"{person} still carries the location"
