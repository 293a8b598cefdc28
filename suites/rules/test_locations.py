"""Locations: required fields, the type enum, field limits, partial PUT, reads and hard delete.

Every limit is read from the spec's LocationCreate/LocationUpdate schemas.
"""

from __future__ import annotations

import string
from datetime import datetime

import pytest

import spec
from fixtures._limits import enum_values, field_schema, length_range, required

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


def _short(factories, length: int) -> str:
    alphabet = string.ascii_lowercase + string.digits
    return "".join(factories.random.choice(alphabet) for _ in range(length))


def _text(factories, length: int) -> str:
    """Exactly ``length`` characters, run-tagged when there is room (names must be unique)."""
    base = factories.tag("loc")
    return _short(factories, length) if length < len(base) else (base + "x" * length)[:length]


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


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _refused(response, field: str) -> None:
    assert response.status_code == 422, (field, response.status_code)
    assert field in response.json()["reason"], response.json()["reason"]


def _none_stored(api, names: list[str], what: str) -> None:
    """One list after several refused creates: none of their names was stored."""
    listed = _names(api)
    for name in names:
        assert name not in listed, f"{what} was stored ({name})"


@pytest.fixture(scope="module")
def plain(api, factories) -> dict:
    """A location made of a name and a type alone, never changed afterwards.

    Shared: the tests given it only read it, list it, or send it a rename that must be
    refused; the test of a two-field create asserts on this very create."""
    name = factories.name_for("createLocation", "loc")
    kind = enum_values("createLocation", "type")[0]
    created = api.post(PATH, json={"name": name, "type": kind})
    assert created.status_code == 201, created.text
    return {"uuid": created.json()["uuid"], "name": name, "type": kind, "status": 201}


@pytest.fixture(scope="module")
def scratch(api, factories) -> str:
    """A location whose fields the validation tests write and read back.

    Shared: each field belongs to one test only (type: the enum test; latitude and longitude:
    the range test; keyContactNumber: the phone test; each text field: its length test). A
    PUT changes only the fields it is given, and every test writes its field before reading
    it, so no test sees what another did, in any order."""
    return _create(api, factories)[0]


# -- required fields and the type enum -----------------------------------------------------
@pytest.mark.rule("LOC-FIELD-REQUIRED")
def test_name_and_type_are_required_on_create(api, factories) -> None:
    assert set(required("createLocation")) == {"name", "type"}
    for missing in ("name", "type"):
        body = factories.location()
        del body[missing]
        _refused(api.post(PATH, json=body), missing)
        if missing == "type":
            assert body["name"] not in _names(api), "a location without type was stored"


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
    for length in (max(low, 1), high):
        value = _text(factories, length)
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
    for field, bound in bounds.items():
        for outside in (bound, -bound, bound + 0.5, -bound - 0.5):
            body = factories.location(**{field: outside})
            _refused(api.post(PATH, json=body), field)
            names.append(body["name"])
            _refused(api.put(f"{PATH}/{uuid}", json={field: outside}), field)
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
def test_duplicate_names_conflict(api, factories, plain: dict) -> None:
    first, first_name = plain["uuid"], plain["name"]
    second, second_body = _create(api, factories)
    duplicate = factories.location(name=first_name)
    assert api.post(PATH, json=duplicate).status_code == 409
    assert api.put(f"{PATH}/{second}", json={"name": first_name}).status_code == 409

    # One list after both refused writes: no second record under the name, both kept theirs.
    items = api.get(PATH).json()
    assert [i["name"] for i in items].count(first_name) == 1, "the duplicate was stored"
    assert {"uuid": first, "name": first_name} in items
    assert {"uuid": second, "name": second_body["name"]} in items, "the rename was stored"


@pytest.mark.rule("LOC-UPDATE-PARTIAL")
def test_put_changes_only_the_fields_it_is_given(api, factories) -> None:
    uuid, _ = _create(
        api,
        factories,
        complex=_text(factories, 12),
        suburb=_text(factories, 12),
        comments="kept by a partial update",
        expiresDate=factories.instant(days=90),
    )
    before = _read(api, uuid)
    city = _text(factories, 15)
    assert api.put(f"{PATH}/{uuid}", json={"city": city}).status_code == 200
    after = _read(api, uuid)
    assert after == {**before, "city": city}, "fields left out of the PUT changed"

    # Neither name nor type need be sent.
    assert api.put(f"{PATH}/{uuid}", json={"comments": "second note"}).status_code == 200
    assert _read(api, uuid) == {**after, "comments": "second note"}


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
def test_delete_is_hard_and_unlinks_people(api, factories) -> None:
    uuid, body = _create(api, factories)
    people = []
    for holder, make in (("persons", factories.person), ("users", factories.user)):
        created = api.post(f"/api/ws/v1/{holder}", json=make(location=uuid))
        assert created.status_code == 201, created.text
        people.append(f"/api/ws/v1/{holder}/{created.json()['uuid']}")

    deleted = api.delete(f"{PATH}/{uuid}")
    assert deleted.status_code == 200
    assert deleted.json()["uuid"] == uuid
    assert api.get(f"{PATH}/{uuid}").status_code == 404
    listed = api.get(PATH).json()
    assert uuid not in {item["uuid"] for item in listed}
    assert body["name"] not in {item["name"] for item in listed}
    for person in people:
        read = api.get(person)
        assert read.status_code == 200
        assert read.json().get("location") is None, f"{person} still carries the location"
