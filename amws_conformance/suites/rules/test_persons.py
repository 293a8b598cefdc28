"""Persons (PERS- rules): the field checks of create and replace, references, the photo handle,
the read, duplicates, full replacement, not-found and the missing list-all.

Every limit, enum and pattern comes from the spec (fixtures/_limits.py). Person search and the
delete cascade are in test_people_search.py; photo staging and downloads in test_photos.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.fixtures._limits import body_schema, enum_values, field_schema
from amws_conformance.suites.rules import _people as people
from amws_conformance.suites.rules import _people_records as records

PERSON = people.PERSON
PERSONS = PERSON.path


def _documented(field: str) -> dict[str, Any]:
    """What the documents state of a body field ({} for a field whose name is our choice)."""
    return field_schema("createPerson", field, documented=True)


# Every body field the reference server takes, our assumed names included (the address fields
# the documents do not name): only the assumed read-name tests enumerate these.
ALL_FIELDS = [f for f in body_schema("createPerson")["properties"] if f != "photoUuid"]
# The fields the documents state, with their documented constraints: the normative tests
# enumerate these, so no field whose name is our choice is tested under a normative rule.
BODY_FIELDS = [
    f
    for f in body_schema("createPerson", documented=True)["properties"]
    if f != "photoUuid" and _documented(f)
]
# Text fields whose only constraint is a length (no pattern, format or enum).
PLAIN_TEXT = [
    f
    for f in BODY_FIELDS
    if "maxLength" in _documented(f) and not {"pattern", "format", "enum"} & set(_documented(f))
]
PHONE_PATTERN = spec.openapi()["components"]["schemas"]["InternationalPhone"]["pattern"]
PHONES = [f for f in BODY_FIELDS if _documented(f).get("pattern") == PHONE_PATTERN]
EMAILS = [f for f in BODY_FIELDS if _documented(f).get("format") == "email"]
DATES = [f for f in BODY_FIELDS if _documented(f).get("format") == "date"]
ENUMS = [f for f in BODY_FIELDS if "enum" in _documented(f)]
# The person's reference fields (all of the group's shared set).
REFERENCES = list(records.REFERENCES)
ADDRESS_FIELDS = [
    f"{block}Address{part}"
    for block in ("home", "work", "other")
    for part in ("Line1", "Line2", "Suburb", "City", "State", "PostalCode", "Country")
]
# The address fields named by us, not by the documents (their limits are ours too).
ASSUMED_ADDRESS = [f for f in ADDRESS_FIELDS if f not in BODY_FIELDS]
TIMESTAMP_PATTERN = spec.openapi()["components"]["schemas"]["TimestampIn"]["pattern"]
TIMESTAMPS = [f for f in BODY_FIELDS if _documented(f).get("pattern") == TIMESTAMP_PATTERN]


# -- helpers -----------------------------------------------------------------------------
def _read(api: Any, uuid: str) -> dict[str, Any]:
    return people.read_record(api, PERSONS, uuid)


def _stored(api: Any, body: dict[str, Any], field: str = "") -> list[str]:
    """UUIDs of the persons stored from ``body``, found by its run-tagged last name (or by its
    e-mail address when ``field``, the field under test, is the last name)."""
    marker = {"email": body["email"]} if field == "lastName" else {"lastName": body["lastName"]}
    response = api.post(f"{PERSONS}/search", json=marker)
    assert response.status_code == 200, response.text
    return [row["uuid"] for row in response.json()["entries"]]


def _marker(factories: Any, field: str = "") -> dict[str, str]:
    """A run-tagged value the refused bodies of one test share, in the field :func:`_stored`
    finds them by (never ``field``, the field under test): one search then covers them all. A
    body wrongly stored would not hide the others: the search finds every one stored."""
    if field == "lastName":
        return {"email": factories.email()}
    return {"lastName": factories.tag("ln")[:50]}


# -- records the tests share ---------------------------------------------------------------
@pytest.fixture(scope="module")
def shared() -> people.Shared:
    return people.Shared()


def _made(api: Any, body: dict[str, Any]) -> people.Record:
    uuid = people.created(api.post(PERSONS, json=body))
    return people.Record(uuid, body, _read(api, uuid))


@pytest.fixture
def bare(request, api, factories) -> people.Record:
    """The group's plain person: the tests here only send it refused replaces (each checking
    its read is unchanged after), read its e-mail addresses back or need some person to
    exist; see :func:`records.bare_person` for everything done to it."""
    return records.bare_person(request, api, factories)


# Good values of the formatted fields, one shared person per rule (so a target refusing one
# kind of value fails only that rule's tests): dates, phone numbers (with the extension and
# fax, free text under the same rule). The e-mail addresses are the plain person's: a plain
# body holds one already, and the group's plain person one in each e-mail field.
GOOD_VALUES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "date": lambda fa: dict.fromkeys(DATES, "2004-02-29"),
    "phone": lambda fa: {
        **{f: fa.phone() for f in PHONES},
        "telephoneExtension": "0821234567",
        "fax": "021 555 0100 ext. 4",
    },
}


@pytest.fixture
def formatted(request, shared, api, factories) -> Callable[[str], people.Record]:
    """The shared person holding good values of a group of :data:`GOOD_VALUES` (for "email"
    the group's plain person), read once: its tests read it back and send it refused
    replaces, which leave it as it was."""

    def get(group: str) -> people.Record:
        def build() -> people.Record:
            return _made(api, factories.person(**GOOD_VALUES[group](factories)))

        if group == "email":
            return records.bare_person(request, api, factories)
        return shared.get(request, f"formatted-{group}", build)

    return get


@pytest.fixture
def references(request, api, factories) -> dict[str, str]:
    """A live record for each reference field (the group's set, shared with the users'):
    persons only point at them, so one of each serves every full body."""
    return records.references(request, api, factories)


# -- required ----------------------------------------------------------------------------
@pytest.mark.rule("PERS-FIELD-REQUIRED")
def test_first_name_is_required(api, factories, bare) -> None:
    body = factories.person()
    del body["firstName"]
    people.refused(api.post(PERSONS, json=body), "firstName")
    assert _stored(api, body) == [], "a person without firstName was stored"

    first_name = factories.tag("first")[:50]
    alone = people.created(api.post(PERSONS, json={"firstName": first_name}))
    replace = {**body, "lastName": "changed"}
    people.refused(api.put(f"{PERSONS}/{bare.uuid}", json=replace), "firstName")
    assert _read(api, bare.uuid) == bare.read
    people.read_back(PERSON, _read(api, alone), {"firstName": first_name})


# -- lengths -----------------------------------------------------------------------------
@pytest.fixture
def at_limits(request, shared, api, factories) -> people.Record:
    """A person with every plain-text field at its maximum length, read once. Shared by the
    length tests (one rule): each reads its field back and sends the person a refused replace,
    checking its read is unchanged after."""

    def build() -> people.Record:
        values = {f: people.sized(factories, _documented(f)["maxLength"]) for f in PLAIN_TEXT}
        return _made(api, factories.person(**values))

    return shared.get(request, "at_limits", build)


@pytest.mark.rule("PERS-FIELD-LENGTH")
@pytest.mark.parametrize("field", PLAIN_TEXT)
def test_text_length_limits(api, factories, at_limits, field: str) -> None:
    high = _documented(field)["maxLength"]
    at_limit = at_limits.body[field]
    assert len(at_limit) == high
    people.read_back(PERSON, at_limits.read, {field: at_limit})

    body = factories.person(**{field: people.sized(factories, high + 1)})
    people.refused(api.post(PERSONS, json=body), field)
    assert _stored(api, body, field) == []

    over = factories.person(**{field: people.sized(factories, high + 1)})
    people.refused(api.put(f"{PERSONS}/{at_limits.uuid}", json=over), field)
    assert _read(api, at_limits.uuid) == at_limits.read


@pytest.mark.rule("PERS-FIELD-LENGTH")
@pytest.mark.parametrize("field", [*EMAILS, *PHONES])
def test_patterned_fields_length_limits(api, factories, field: str) -> None:
    high = _documented(field)["maxLength"]
    if field in EMAILS:
        at_limit = people.email_of_length(factories, high)
        uuid = people.created(api.post(PERSONS, json=factories.person(**{field: at_limit})))
        people.read_back(PERSON, _read(api, uuid), {field: at_limit})
        over = people.email_of_length(factories, high + 1)
    else:  # an international number cannot reach the limit; only the excess is refused
        over = "+" + "1" * high
    body = factories.person(**{field: over})
    people.refused(api.post(PERSONS, json=body), field)
    assert _stored(api, body, field) == []


# -- enums and formats -----------------------------------------------------------------------
@pytest.mark.rule("PERS-FIELD-ENUM")
@pytest.mark.parametrize("field", ENUMS)
def test_enum_fields_take_only_listed_values(api, factories, field: str) -> None:
    values = enum_values("createPerson", field)
    uuid = people.created(api.post(PERSONS, json=factories.person(**{field: values[0]})))
    for value in values:
        assert (
            api.put(f"{PERSONS}/{uuid}", json=factories.person(**{field: value})).status_code == 200
        )
        before = _read(api, uuid)  # the last one: the state the refused writes must keep
        people.read_back(PERSON, before, {field: value})
    wrong = factories.wrong_enum("createPerson", field)
    body = factories.person(**{field: wrong})
    people.refused(api.post(PERSONS, json=body), field)
    assert _stored(api, body) == []
    for bad in (wrong, values[0].lower()):
        people.refused(api.put(f"{PERSONS}/{uuid}", json=factories.person(**{field: bad})), field)
    assert _read(api, uuid) == before, "a refused replace changed the person"


BAD_DATES = ("2004-02-29T00:00:00Z", "29/02/2004", "2003-02-29", "2004-13-01", "20040229")
BAD_EMAILS = ("not-an-address", "two@@example.com", "no-domain@", "spaced name@example.com")
LOCAL_PHONES = ("0821234567", "082 123 4567", "27821234567")
# (field, its group of GOOD_VALUES, bad values) for each formatted field, tagged with its rule
FORMATS = [
    *[pytest.param(f, "date", BAD_DATES, marks=pytest.mark.rule("PERS-FIELD-DATE"), id=f)
      for f in DATES],
    *[pytest.param(f, "email", BAD_EMAILS, marks=pytest.mark.rule("PERS-FIELD-EMAIL"), id=f)
      for f in EMAILS],
    *[pytest.param(f, "phone", LOCAL_PHONES, marks=pytest.mark.rule("PERS-FIELD-PHONE"), id=f)
      for f in PHONES],
]  # fmt: skip


@pytest.mark.parametrize(("field", "group", "bad_values"), FORMATS)
def test_formatted_fields_refuse_other_layouts(
    api, factories, formatted, field, group, bad_values
) -> None:
    """Dates are yyyy-MM-dd, e-mails addresses, phones international; others answer 422."""
    target = formatted(group)  # holds a good value of the field, read back here
    people.read_back(PERSON, target.read, {field: target.body[field]})
    marker = _marker(factories, field)
    for bad in bad_values:
        body = factories.person(**{field: bad}, **marker)
        people.refused(api.post(PERSONS, json=body), field)
        replace = factories.person(**{field: bad})
        people.refused(api.put(f"{PERSONS}/{target.uuid}", json=replace), field)
    assert _stored(api, body, field) == [], "a person with a badly formatted value was stored"
    assert _read(api, target.uuid) == target.read, "a refused replace changed the person"


@pytest.mark.rule("PERS-FIELD-PHONE")
def test_extension_and_fax_are_only_length_checked(formatted) -> None:
    free = {"telephoneExtension": "0821234567", "fax": "021 555 0100 ext. 4"}
    people.read_back(PERSON, formatted("phone").read, free)


# -- references and the photo handle -----------------------------------------------------
@pytest.mark.rule("PERS-FIELD-REFERENCE")
@pytest.mark.parametrize("field", REFERENCES)
def test_references_must_exist(api, factories, ledger, bare, field: str) -> None:
    body = factories.person(**{field: ledger.fresh_uuid()})
    response = api.post(PERSONS, json=body)
    people.refused(response, field)
    assert _stored(api, body) == [], "the person was stored despite the bad reference"

    changed = factories.person(**{field: ledger.fresh_uuid()})
    people.refused(api.put(f"{PERSONS}/{bare.uuid}", json=changed), field)
    assert _read(api, bare.uuid) == bare.read


@pytest.mark.rule("PERS-PHOTO-UUID-INVALID")
def test_never_issued_photo_uuid_is_refused(api, factories, ledger, bare) -> None:
    body = factories.person(photoUuid=ledger.fresh_uuid())
    people.refused(api.post(PERSONS, json=body), "photoUuid")
    assert _stored(api, body) == []

    changed = factories.person(photoUuid=ledger.fresh_uuid())
    assert api.put(f"{PERSONS}/{bare.uuid}", json=changed).status_code == 422
    assert _read(api, bare.uuid) == bare.read


@pytest.mark.rule("PERS-PHOTO-ATTACH")
def test_photo_is_attached_through_photo_uuid(api, factories) -> None:
    uuid = people.created(api.post(PERSONS, json=factories.person()))
    assert _read(api, uuid)["hasPhoto"] is False
    staged = people.staged_photo(api, factories)
    assert api.put(f"{PERSONS}/{uuid}", json=factories.person(photoUuid=staged)).status_code == 200
    read = _read(api, uuid)
    assert read["hasPhoto"] is True
    assert "photoUuid" not in read, "photoUuid is read back"


@pytest.mark.rule("PERS-HAS-PHOTO-READ-ONLY")
def test_has_photo_in_a_request_is_ignored(api, factories) -> None:
    uuid = people.created(api.post(PERSONS, json=factories.person(hasPhoto=True)))
    assert _read(api, uuid)["hasPhoto"] is False
    assert api.put(f"{PERSONS}/{uuid}", json=factories.person(hasPhoto=True)).status_code == 200
    assert _read(api, uuid)["hasPhoto"] is False


# -- the read ----------------------------------------------------------------------------
def _full_body(factories: Any, references: dict[str, str], fields: list[str]) -> dict[str, Any]:
    """A body filling each of ``fields`` (values chosen by each field's schema)."""
    body = {**factories.person(), **references}
    for i, field in enumerate(f for f in fields if f not in body):
        schema = field_schema("createPerson", field)
        if field in TIMESTAMPS:  # sent with a +02:00 offset, read back in UTC
            body[field] = factories.instant(days=i - 20, offset_hours=2)
        elif schema.get("type") == "boolean":
            body[field] = i % 2 == 0
        elif field in ENUMS:
            body[field] = enum_values("createPerson", field)[-1]
        elif field in DATES:
            body[field] = "2015-06-01"
        elif field in EMAILS or field in PHONES:
            body[field] = factories.email() if field in EMAILS else factories.phone()
        else:
            body[field] = people.sized(factories, min(schema["maxLength"], 30))
    return body


@pytest.mark.rule("PERS-GET-FULL-RECORD")
def test_read_returns_the_stored_record(api, factories, references) -> None:
    """200 with hasPhoto false (no photo) and every documented field's value as written, where
    the read shows it under the request's name (which names it uses is PERS-READ-FIELD-NAMES'
    question); timestamps as the same instant in UTC."""
    body = _full_body(factories, references, BODY_FIELDS)
    assert set(BODY_FIELDS) <= set(body), set(BODY_FIELDS) - set(body)
    read = _read(api, people.created(api.post(PERSONS, json=body)))
    assert read.get("hasPhoto") is False, "hasPhoto is not the boolean false"
    people.read_back(PERSON, read, body, instants=TIMESTAMPS)


@pytest.mark.rule("PERS-READ-FIELD-NAMES")
def test_read_carries_every_value_under_its_request_name(api, factories, references) -> None:
    body = _full_body(factories, references, ALL_FIELDS)
    read = _read(api, people.created(api.post(PERSONS, json=body)))
    people.check_read_field_names(read, set(ALL_FIELDS))
    people.read_back(PERSON, read, body, instants=TIMESTAMPS)


@pytest.mark.rule("PERS-ADDRESS-FIELD-NAMES")
def test_address_blocks_use_their_field_names(api, factories) -> None:
    values = {field: people.sized(factories, 50) for field in ADDRESS_FIELDS}
    read = _read(api, people.created(api.post(PERSONS, json=factories.person(**values))))
    assert {field: read.get(field) for field in ADDRESS_FIELDS} == values
    # Our names carry our limits: 51 characters are refused (the reference server enforces them).
    marker = _marker(factories)
    for field in ASSUMED_ADDRESS:
        over = people.sized(factories, field_schema("createPerson", field)["maxLength"] + 1)
        body = factories.person(**{field: over}, **marker)
        people.refused(api.post(PERSONS, json=body), field)
    assert _stored(api, body) == [], "a person with an address value too long was stored"


# -- not found, no list ------------------------------------------------------------------
@pytest.mark.rule("PERS-NOT-FOUND")
def test_unknown_person_answers_404(api, factories, ledger) -> None:
    unknown = ledger.fresh_uuid()
    body = factories.person()
    assert api.get(f"{PERSONS}/{unknown}").status_code == 404
    assert api.put(f"{PERSONS}/{unknown}", json=body).status_code == 404
    assert api.delete(f"{PERSONS}/{unknown}").status_code == 404
    assert _stored(api, body) == [], "the PUT to an unknown UUID created a person"
    assert api.get(f"{PERSONS}/{unknown}").status_code == 404


@pytest.mark.rule("PERS-NO-LIST-ALL")
def test_persons_cannot_be_listed_wholesale(api, bare) -> None:
    assert bare.uuid  # a person of the run exists, so a list would not be empty
    # Not an operation of the spec, so the client adds no key and applies no checks: send the
    # full key's header by hand so only the missing endpoint can explain the answer.
    response = api.unchecked.get(PERSONS, headers={"Authorization": api.header})
    if 200 <= response.status_code < 300:
        try:
            body = response.json()
        except ValueError:
            body = None
        assert not isinstance(body, list), "GET /persons answered a list"
        assert not (isinstance(body, dict) and "entries" in body), "GET /persons answered a page"


# -- duplicates and replacement ----------------------------------------------------------
@pytest.mark.rule("PERS-DUPLICATE")
@pytest.mark.parametrize("field", ["identityNumber", "staffIdNumber"])
def test_duplicate_numbers_conflict(api, factories, bare, field: str) -> None:
    number = factories.tag("dup")[:50]
    first = people.created(api.post(PERSONS, json=factories.person(**{field: number})))
    body = factories.person(**{field: number})
    assert api.post(PERSONS, json=body).status_code == 409
    assert _stored(api, body) == [], "the duplicate was stored"

    second = bare  # another person of the run, refused the number
    assert (
        api.put(f"{PERSONS}/{second.uuid}", json=factories.person(**{field: number})).status_code
        == 409
    )
    assert _read(api, second.uuid) == second.read
    # A person replaced with its own numbers does not conflict with itself.
    own = factories.person(**{field: number})
    assert api.put(f"{PERSONS}/{first}", json=own).status_code == 200
    # Empty or absent numbers never conflict.
    for value in ("", None):
        for _ in range(2):
            body = factories.person(**{"identityNumber": value, field: value})
            people.created(api.post(PERSONS, json={k: v for k, v in body.items() if v is not None}))


@pytest.mark.rule("PERS-PUT-FULL-REPLACEMENT")
def test_put_replaces_the_whole_record(api, factories, references) -> None:
    body = _full_body(factories, references, BODY_FIELDS)
    uuid = people.created(api.post(PERSONS, json=body))
    first_name = factories.tag("only")[:50]
    assert api.put(f"{PERSONS}/{uuid}", json={"firstName": first_name}).status_code == 200
    read = _read(api, uuid)
    people.read_back(PERSON, read, {"firstName": first_name})
    # doc2 says cleared, not how: null, an empty text or a false flag all read as cleared.
    kept = {f: read[f] for f in BODY_FIELDS if f != "firstName" and not people.cleared(read.get(f))}
    assert kept == {}, f"fields left out of the PUT survived: {sorted(kept)}"
    # Whatever names the read uses: no text the PUT left out is shown anywhere in it.
    shown = {v for v in people.scalars(read) if isinstance(v, str)}
    left = sorted(f for f, v in body.items() if f != "firstName" and v in shown)
    assert left == [], f"values left out of the PUT are still read back: {left}"
