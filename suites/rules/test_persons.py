"""Persons (PERS- rules): the field checks of create and replace, references, the photo handle,
the read, duplicates, full replacement, not-found, the missing list-all, and the delete cascade
(credentials unlinked, phonebooks and QR code withdrawn).

Every limit, enum and pattern comes from the spec (fixtures/_limits.py). Person search is in
test_person_search.py; photo staging and downloads are in test_photos.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import spec
from fixtures._limits import body_schema, enum_values, field_schema
from fixtures.images import jpeg_bytes

PERSONS = "/api/ws/v1/persons"
CREDENTIALS = "/api/ws/v1/credentials"
BODY_FIELDS = [f for f in body_schema("createPerson")["properties"] if f != "photoUuid"]
# Text fields whose only constraint is a length (no pattern, format or enum).
PLAIN_TEXT = [
    f
    for f in BODY_FIELDS
    if "maxLength" in field_schema("createPerson", f)
    and not {"pattern", "format", "enum"} & set(field_schema("createPerson", f))
]
PHONE_PATTERN = spec.openapi()["components"]["schemas"]["InternationalPhone"]["pattern"]
PHONES = [f for f in BODY_FIELDS if field_schema("createPerson", f).get("pattern") == PHONE_PATTERN]
EMAILS = [f for f in BODY_FIELDS if field_schema("createPerson", f).get("format") == "email"]
DATES = [f for f in BODY_FIELDS if field_schema("createPerson", f).get("format") == "date"]
ENUMS = [f for f in BODY_FIELDS if "enum" in field_schema("createPerson", f)]
# reference field -> (path of the referenced records, its create operation)
REFERENCES = {
    "location": ("/api/ws/v1/locations", "createLocation"),
    "department": ("/api/ws/v1/departments", "createDepartment"),
    "organisation": ("/api/ws/v1/organisations", "createOrganisation"),
    "group": ("/api/ws/v1/groups", "createGroup"),
    "costCenter": ("/api/ws/v1/cost-centers", "createCostCenter"),
}
ADDRESS_FIELDS = [
    f"{block}Address{part}"
    for block in ("home", "work", "other")
    for part in ("Line1", "Line2", "Suburb", "City", "State", "PostalCode", "Country")
]
TIMESTAMPS = [f for f in BODY_FIELDS if f.endswith(("ActiveDate", "ExpiryDate")) or f in (
    "activeDate", "expiryDate")]  # fmt: skip


# -- helpers -----------------------------------------------------------------------------
def _created(response: Any) -> str:
    assert response.status_code == 201, (response.status_code, response.text)
    return response.json()["uuid"]


def _read(api: Any, uuid: str) -> dict[str, Any]:
    response = api.get(f"{PERSONS}/{uuid}")
    assert response.status_code == 200, (response.status_code, response.text)
    return response.json()


def _stored(api: Any, body: dict[str, Any], field: str = "") -> list[str]:
    """UUIDs of the persons stored from ``body``, found by its run-tagged last name (or by its
    e-mail address when ``field``, the field under test, is the last name)."""
    marker = {"email": body["email"]} if field == "lastName" else {"lastName": body["lastName"]}
    response = api.post(f"{PERSONS}/search", json=marker)
    assert response.status_code == 200, response.text
    return [row["uuid"] for row in response.json()["entries"]]


def _refused(response: Any, field: str) -> None:
    assert response.status_code == 422, (field, response.status_code, response.text)
    assert field in response.json()["reason"], (field, response.json()["reason"])


def _sized(factories: Any, length: int) -> str:
    """A run-tagged value of exactly ``length`` characters (unique, for the numbers)."""
    return (factories.tag("len") + "x" * length)[:length]


def _email_of_length(factories: Any, length: int) -> str:
    domain = "@example.com"
    local = (factories.tag("m") + "x" * length)[: length - len(domain)]
    return local + domain


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _references(api: Any, factories: Any) -> dict[str, str]:
    """A live record of each kind a person may point at."""
    made = {}
    for field, (path, op) in REFERENCES.items():
        body = factories.location() if field == "location" else factories.named(op, field)
        made[field] = _created(api.post(path, json=body))
    return made


# -- required ----------------------------------------------------------------------------
@pytest.mark.rule("PERS-FIELD-REQUIRED")
def test_first_name_is_required(api, factories) -> None:
    body = factories.person()
    del body["firstName"]
    _refused(api.post(PERSONS, json=body), "firstName")
    assert _stored(api, body) == [], "a person without firstName was stored"

    alone = _created(api.post(PERSONS, json={"firstName": factories.tag("first")[:50]}))
    uuid = _created(api.post(PERSONS, json=factories.person()))
    before = _read(api, uuid)
    _refused(api.put(f"{PERSONS}/{uuid}", json={**body, "lastName": "changed"}), "firstName")
    assert _read(api, uuid) == before
    assert _read(api, alone)["firstName"]


# -- lengths -----------------------------------------------------------------------------
@pytest.mark.rule("PERS-FIELD-LENGTH")
@pytest.mark.parametrize("field", PLAIN_TEXT)
def test_text_length_limits(api, factories, field: str) -> None:
    high = field_schema("createPerson", field)["maxLength"]
    at_limit = _sized(factories, high)
    uuid = _created(api.post(PERSONS, json=factories.person(**{field: at_limit})))
    assert _read(api, uuid)[field] == at_limit, "a value at the limit was not stored as sent"

    body = factories.person(**{field: _sized(factories, high + 1)})
    _refused(api.post(PERSONS, json=body), field)
    assert _stored(api, body, field) == []

    before = _read(api, uuid)
    over = factories.person(**{field: _sized(factories, high + 1)})
    _refused(api.put(f"{PERSONS}/{uuid}", json=over), field)
    assert _read(api, uuid) == before


@pytest.mark.rule("PERS-FIELD-LENGTH")
@pytest.mark.parametrize("field", [*EMAILS, *PHONES])
def test_patterned_fields_length_limits(api, factories, field: str) -> None:
    high = field_schema("createPerson", field)["maxLength"]
    if field in EMAILS:
        at_limit = _email_of_length(factories, high)
        uuid = _created(api.post(PERSONS, json=factories.person(**{field: at_limit})))
        assert _read(api, uuid)[field] == at_limit
        over = _email_of_length(factories, high + 1)
    else:  # an international number cannot reach the limit; only the excess is refused
        over = "+" + "1" * high
    body = factories.person(**{field: over})
    _refused(api.post(PERSONS, json=body), field)
    assert _stored(api, body, field) == []


# -- enums, dates, e-mail, phones --------------------------------------------------------
@pytest.mark.rule("PERS-FIELD-ENUM")
@pytest.mark.parametrize("field", ENUMS)
def test_enum_fields_take_only_listed_values(api, factories, field: str) -> None:
    values = enum_values("createPerson", field)
    uuid = _created(api.post(PERSONS, json=factories.person(**{field: values[0]})))
    for value in values:
        assert (
            api.put(f"{PERSONS}/{uuid}", json=factories.person(**{field: value})).status_code == 200
        )
        assert _read(api, uuid)[field] == value
    wrong = factories.wrong_enum("createPerson", field)
    body = factories.person(**{field: wrong})
    _refused(api.post(PERSONS, json=body), field)
    assert _stored(api, body) == []
    for bad in (wrong, values[0].lower()):
        _refused(api.put(f"{PERSONS}/{uuid}", json=factories.person(**{field: bad})), field)
    assert _read(api, uuid)[field] == values[-1]


@pytest.mark.rule("PERS-FIELD-DATE")
@pytest.mark.parametrize("field", DATES)
def test_dates_are_plain_calendar_dates(api, factories, field: str) -> None:
    uuid = _created(api.post(PERSONS, json=factories.person(**{field: "2004-02-29"})))
    assert _read(api, uuid)[field] == "2004-02-29", "the date did not read back unchanged"
    for bad in ("2004-02-29T00:00:00Z", "29/02/2004", "2003-02-29", "2004-13-01", "20040229"):
        body = factories.person(**{field: bad})
        _refused(api.post(PERSONS, json=body), field)
        assert _stored(api, body) == [], bad
        _refused(api.put(f"{PERSONS}/{uuid}", json=factories.person(**{field: bad})), field)
    assert _read(api, uuid)[field] == "2004-02-29"


@pytest.mark.rule("PERS-FIELD-EMAIL")
@pytest.mark.parametrize("field", EMAILS)
def test_email_fields_must_be_addresses(api, factories, field: str) -> None:
    good = factories.email()
    uuid = _created(api.post(PERSONS, json=factories.person(**{field: good})))
    assert _read(api, uuid)[field] == good
    for bad in ("not-an-address", "two@@example.com", "no-domain@", "spaced name@example.com"):
        body = factories.person(**{field: bad})
        _refused(api.post(PERSONS, json=body), field)
        assert _stored(api, body) == [], bad
        _refused(api.put(f"{PERSONS}/{uuid}", json=factories.person(**{field: bad})), field)
    assert _read(api, uuid)[field] == good


@pytest.mark.rule("PERS-FIELD-PHONE")
@pytest.mark.parametrize("field", PHONES)
def test_phone_numbers_use_international_notation(api, factories, field: str) -> None:
    good = factories.phone()
    uuid = _created(api.post(PERSONS, json=factories.person(**{field: good})))
    assert _read(api, uuid)[field] == good
    for local in ("0821234567", "082 123 4567", "27821234567"):
        body = factories.person(**{field: local})
        _refused(api.post(PERSONS, json=body), field)
        assert _stored(api, body) == [], local
        _refused(api.put(f"{PERSONS}/{uuid}", json=factories.person(**{field: local})), field)
    assert _read(api, uuid)[field] == good


@pytest.mark.rule("PERS-FIELD-PHONE")
def test_extension_and_fax_are_only_length_checked(api, factories) -> None:
    body = factories.person(telephoneExtension="0821234567", fax="021 555 0100 ext. 4")
    read = _read(api, _created(api.post(PERSONS, json=body)))
    assert read["telephoneExtension"] == "0821234567"
    assert read["fax"] == "021 555 0100 ext. 4"


# -- references and the photo handle -----------------------------------------------------
@pytest.mark.rule("PERS-FIELD-REFERENCE")
@pytest.mark.parametrize("field", list(REFERENCES))
def test_references_must_exist(api, factories, ledger, field: str) -> None:
    body = factories.person(**{field: ledger.fresh_uuid()})
    response = api.post(PERSONS, json=body)
    _refused(response, field)
    assert f"@{field}" in response.json()["reason"]
    assert _stored(api, body) == [], "the person was stored despite the bad reference"

    uuid = _created(api.post(PERSONS, json=factories.person()))
    before = _read(api, uuid)
    changed = factories.person(**{field: ledger.fresh_uuid()})
    _refused(api.put(f"{PERSONS}/{uuid}", json=changed), field)
    assert _read(api, uuid) == before


@pytest.mark.rule("PERS-PHOTO-UUID-INVALID")
def test_never_issued_photo_uuid_is_refused(api, factories, ledger) -> None:
    body = factories.person(photoUuid=ledger.fresh_uuid())
    _refused(api.post(PERSONS, json=body), "photoUuid")
    assert _stored(api, body) == []

    uuid = _created(api.post(PERSONS, json=factories.person()))
    before = _read(api, uuid)
    changed = factories.person(photoUuid=ledger.fresh_uuid())
    assert api.put(f"{PERSONS}/{uuid}", json=changed).status_code == 422
    assert _read(api, uuid) == before


@pytest.mark.rule("PERS-PHOTO-ATTACH")
def test_photo_is_attached_through_photo_uuid(api, factories) -> None:
    uuid = _created(api.post(PERSONS, json=factories.person()))
    assert _read(api, uuid)["hasPhoto"] is False
    seed = int(factories.random.getrandbits(40)) ^ int(factories.run_id[:8], 16)
    upload = api.post(
        "/api/ws/v1/files/upload", files={"file": ("p.jpg", jpeg_bytes(seed), "image/jpeg")}
    )
    assert upload.status_code == 200, upload.text
    staged = upload.json()["uuid"]
    assert api.put(f"{PERSONS}/{uuid}", json=factories.person(photoUuid=staged)).status_code == 200
    read = _read(api, uuid)
    assert read["hasPhoto"] is True
    assert "photoUuid" not in read, "photoUuid is read back"


@pytest.mark.rule("PERS-HAS-PHOTO-READ-ONLY")
def test_has_photo_in_a_request_is_ignored(api, factories) -> None:
    uuid = _created(api.post(PERSONS, json=factories.person(hasPhoto=True)))
    assert _read(api, uuid)["hasPhoto"] is False
    assert api.put(f"{PERSONS}/{uuid}", json=factories.person(hasPhoto=True)).status_code == 200
    assert _read(api, uuid)["hasPhoto"] is False


# -- the read ----------------------------------------------------------------------------
def _full_body(api: Any, factories: Any) -> dict[str, Any]:
    """A body filling every person field, references to live records included."""
    body = factories.person(
        middleName="Quincy",
        nickName="Q",
        title="Dr",
        suffix="Jr",
        status=enum_values("createPerson", "status")[0],
        hiredDate="2015-06-01",
        terminationDate="2030-12-31",
        emailAlternative=factories.email(),
        telephoneOffice=factories.phone(),
        telephoneHome=factories.phone(),
        telephoneOther=factories.phone(),
        telephoneExtension="204",
        fax="+27215550100",
        passportNumber=factories.tag("pp")[:50],
        driversLicenceNumber=factories.tag("dl")[:50],
        staffIdNumber=factories.tag("staff")[:50],
        occupation="Engineer",
        notes="first note",
        comments="a comment",
        enable=True,
        firstNations=False,
        peopleOfDetermination=True,
        **{field: f"{field[:12]}-{i}" for i, field in enumerate(ADDRESS_FIELDS)},
        **_references(api, factories),
    )
    for i, field in enumerate(TIMESTAMPS):
        # Sent with a +02:00 offset; read back in UTC.
        body[field] = factories.instant(days=i - 2, offset_hours=2)
    return body


@pytest.mark.rule("PERS-GET-FULL-RECORD")
def test_read_returns_the_whole_stored_record(api, factories) -> None:
    body = _full_body(api, factories)
    assert set(BODY_FIELDS) <= set(body), set(BODY_FIELDS) - set(body)
    read = _read(api, _created(api.post(PERSONS, json=body)))
    for field, sent in body.items():
        if field in TIMESTAMPS:
            assert read[field].endswith("Z"), (field, read[field])
            assert _instant(read[field]) == _instant(sent), field
        else:
            assert read[field] == sent, (field, read[field], sent)
    assert read["hasPhoto"] is False


@pytest.mark.rule("PERS-ADDRESS-FIELD-NAMES")
def test_address_blocks_use_their_field_names(api, factories) -> None:
    values = {field: _sized(factories, 50) for field in ADDRESS_FIELDS}
    read = _read(api, _created(api.post(PERSONS, json=factories.person(**values))))
    assert {field: read.get(field) for field in ADDRESS_FIELDS} == values


@pytest.mark.rule("PERS-READ-FIELD-NAMES")
def test_read_carries_the_request_names_and_photo_fields(api, factories) -> None:
    read = _read(api, _created(api.post(PERSONS, json=factories.person())))
    expected = {*BODY_FIELDS, "uuid", "hasPhoto", "photoId", "photo", "thumbnail"}
    assert expected <= set(read), f"missing {sorted(expected - set(read))}"
    assert "photoUuid" not in read
    assert (read["photoId"], read["photo"], read["thumbnail"]) == (None, None, None)


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
def test_persons_cannot_be_listed_wholesale(api, factories) -> None:
    _created(api.post(PERSONS, json=factories.person()))
    # Not an operation of the spec: the global checks have nothing to compare with.
    response = api.get(PERSONS, checks=False)
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
def test_duplicate_numbers_conflict(api, factories, field: str) -> None:
    number = factories.tag("dup")[:50]
    first = _created(api.post(PERSONS, json=factories.person(**{field: number})))
    body = factories.person(**{field: number})
    assert api.post(PERSONS, json=body).status_code == 409
    assert _stored(api, body) == [], "the duplicate was stored"

    second = _created(api.post(PERSONS, json=factories.person()))
    before = _read(api, second)
    assert (
        api.put(f"{PERSONS}/{second}", json=factories.person(**{field: number})).status_code == 409
    )
    assert _read(api, second) == before
    # A person replaced with its own numbers does not conflict with itself.
    own = factories.person(**{field: number})
    assert api.put(f"{PERSONS}/{first}", json=own).status_code == 200
    # Empty or absent numbers never conflict.
    for value in ("", None):
        for _ in range(2):
            body = factories.person(**{"identityNumber": value, field: value})
            _created(api.post(PERSONS, json={k: v for k, v in body.items() if v is not None}))


@pytest.mark.rule("PERS-PUT-FULL-REPLACEMENT")
def test_put_replaces_the_whole_record(api, factories) -> None:
    body = _full_body(api, factories)
    uuid = _created(api.post(PERSONS, json=body))
    first_name = factories.tag("only")[:50]
    assert api.put(f"{PERSONS}/{uuid}", json={"firstName": first_name}).status_code == 200
    read = _read(api, uuid)
    assert read["firstName"] == first_name
    kept = {f: read[f] for f in BODY_FIELDS if f != "firstName" and read.get(f) is not None}
    assert kept == {}, f"fields left out of the PUT survived: {sorted(kept)}"


# -- delete ------------------------------------------------------------------------------
def _now(amws_run: Any) -> datetime:
    return datetime.fromtimestamp(amws_run.target_clock(), UTC)


def _credential(api: Any, factories: Any, amws_run: Any, person: str, **extra: Any) -> str:
    """A credential the person holds, open now on the target's clock."""
    now = _now(amws_run)
    body = factories.credential(
        personUuid=person,
        activeDate=_iso(now - timedelta(hours=1)),
        expiryDate=_iso(now + timedelta(days=30)),
        **extra,
    )
    return _created(api.post(CREDENTIALS, json=body))


def _hardware(control: Any) -> list[dict[str, Any]]:
    """What each controller holds now (control plane)."""
    inside = control.base_url.path.rstrip("/").endswith("/_reference")
    response = control.get(("" if inside else "/_reference") + "/hardware/credentials")
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.rule("PERS-DELETE-UNLINKS-CREDENTIALS")
def test_delete_keeps_credentials_unassigned(api, factories, amws_run) -> None:
    uuid = _created(api.post(PERSONS, json=factories.person()))
    held = [_credential(api, factories, amws_run, uuid) for _ in range(2)]
    for credential in held:
        assert api.get(f"{CREDENTIALS}/{credential}").json()["holderUuid"] == uuid
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    for credential in held:
        response = api.get(f"{CREDENTIALS}/{credential}")
        assert response.status_code == 200, "the credential did not survive its holder"
        assert response.json()["holderUuid"] is None
        assert response.json()["status"] != "DELETED"


@pytest.mark.rule("PERS-DELETE-PHONEBOOK")
@pytest.mark.requires("control")
def test_delete_withdraws_the_person_from_phonebooks(api, factories, amws_run, control) -> None:
    uuid = _created(api.post(PERSONS, json=factories.person()))
    _credential(api, factories, amws_run, uuid)
    listed = [c for c in _hardware(control) if uuid in {p["uuid"] for p in c["phonebook"]}]
    assert listed, "a person holding an ACTIVE credential is in no phonebook (precondition)"
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    for controller in _hardware(control):
        assert uuid not in {p["uuid"] for p in controller["phonebook"]}, controller["controller"]


@pytest.mark.rule("PERS-DELETE-QR-CODE")
def test_delete_leaves_no_qr_code_of_the_person(api, factories, amws_run, profile) -> None:
    """The person's QR code is observable as a QR_CODE credential issued in its name: after the
    delete, nothing on the API, a reader or (with a control plane) a controller is in its name."""
    uuid = _created(api.post(PERSONS, json=factories.person()))
    reader = profile.section("virtual_reader") or {}
    lists = [reader["access_control_list"]] if reader.get("access_control_list") else []
    qr = _credential(
        api, factories, amws_run, uuid, readerType="QR_CODE", accessControlListUuids=lists
    )
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    assert api.get(f"{CREDENTIALS}/{qr}").json()["holderUuid"] is None
    assert api.get(f"{CREDENTIALS}/by-person/{uuid}").status_code == 404
    if reader.get("uuid"):
        body = {"uuid": reader["uuid"], "key": reader["key"]}
        listed = api.post("/api/ws/v1/virtual/qr-code-reader/list", json=body)
        assert listed.status_code == 200, listed.text
        assert uuid not in {e.get("holderUuid") for e in listed.json()}
    control = amws_run.control()
    if control is not None:
        with control:
            for controller in _hardware(control):
                holders = {c.get("holderUuid") for c in controller["credentials"]}
                assert uuid not in holders, "a controller still holds a code in the person's name"
