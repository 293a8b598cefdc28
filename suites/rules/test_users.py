"""Users (USER- rules): the field checks of create and replace, the role, the generated
username, the password policy and its empty read, the onboarding flag, the photo handle,
duplicates, the read, not-found, full replacement, and enable/disable.

Search and the deprecated list are in test_user_search.py; the invitations and registrations a
user hosts, and the delete cascade, are in test_user_views.py. Limits come from the spec.
"""

from __future__ import annotations

import string
from datetime import datetime
from typing import Any

import pytest

import spec
from fixtures._limits import body_schema, field_schema, length_range
from fixtures.images import jpeg_bytes

USERS = "/api/ws/v1/users"
BODY_FIELDS = list(body_schema("createUser")["properties"])
PHONE_PATTERN = spec.openapi()["components"]["schemas"]["InternationalPhone"]["pattern"]
PHONES = [f for f in BODY_FIELDS if field_schema("createUser", f).get("pattern") == PHONE_PATTERN]
PLAIN_TEXT = [
    f
    for f in BODY_FIELDS
    if "maxLength" in field_schema("createUser", f)
    and not {"pattern", "format"} & set(field_schema("createUser", f))
]
# reference field -> (path of the referenced records, its create operation)
REFERENCES = {
    "location": ("/api/ws/v1/locations", "createLocation"),
    "group": ("/api/ws/v1/groups", "createGroup"),
    "organisation": ("/api/ws/v1/organisations", "createOrganisation"),
    "department": ("/api/ws/v1/departments", "createDepartment"),
}
TIMESTAMPS = ("accountActiveDate", "accountExpiryDate")
# Instructions of one write, not stored fields: the read has neither.
ONE_SHOT = ("photoUuid", "sendOnBoardingMessage")
SYMBOLS = "!#$%&*+-=?@^_"


# -- helpers -----------------------------------------------------------------------------
def _created(response: Any) -> str:
    assert response.status_code == 201, (response.status_code, response.text)
    return response.json()["uuid"]


def _read(api: Any, uuid: str) -> dict[str, Any]:
    response = api.get(f"{USERS}/{uuid}")
    assert response.status_code == 200, (response.status_code, response.text)
    return response.json()


def _stored(api: Any, body: dict[str, Any], field: str = "") -> list[str]:
    """UUIDs of the users stored from ``body``: found by its run-tagged e-mail address, or by
    its last name when ``field``, the field under test, is the e-mail address."""
    marker = {"lastName": body["lastName"]} if field == "email" else {"email": body["email"]}
    response = api.post(f"{USERS}/search", json=marker)
    assert response.status_code == 200, response.text
    return [row["uuid"] for row in response.json()["entries"]]


def _user(factories: Any, **overrides: Any) -> dict[str, Any]:
    """A user body whose last name is run-tagged too (a second way to find it)."""
    return factories.user(**{"lastName": factories.tag("ln")[:50], **overrides})


def _refused(response: Any, field: str) -> None:
    assert response.status_code == 422, (field, response.status_code, response.text)
    assert field in response.json()["reason"], (field, response.json()["reason"])


def _sized(factories: Any, length: int) -> str:
    return (factories.tag("len") + "x" * length)[:length]


def _email_of_length(factories: Any, length: int) -> str:
    domain = "@example.com"
    return (factories.tag("m") + "x" * length)[: length - len(domain)] + domain


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _default_role(api: Any, profile: Any) -> str:
    configured = (profile.section("roles") or {}).get("default")
    if configured:
        return configured
    defaults = [r["uuid"] for r in api.get("/api/ws/v1/roles").json() if r.get("default")]
    assert len(defaults) == 1, f"{len(defaults)} roles are flagged default"
    return defaults[0]


def _role(api: Any, factories: Any) -> str:
    return _created(api.post("/api/ws/v1/roles", json=factories.role()))


def _password(length: int, *, leave_out: str = "", space: bool = False) -> str:
    """A password of ``length`` holding every character class except ``leave_out``'s."""
    classes = {
        "upper": string.ascii_uppercase,
        "lower": string.ascii_lowercase,
        "digit": string.digits,
        "symbol": SYMBOLS,
    }
    kept = [chars for name, chars in classes.items() if name != leave_out]
    text = "".join(chars[i % len(chars)] for i, chars in enumerate(kept))
    filler = kept[0]
    text += "".join(filler[i % len(filler)] for i in range(length - len(text)))
    return text[:-2] + " " + text[-1] if space else text


# -- required, lengths, formats ----------------------------------------------------------
@pytest.mark.rule("USER-FIELD-REQUIRED")
def test_email_is_required(api, factories) -> None:
    body = _user(factories)
    del body["email"]
    _refused(api.post(USERS, json=body), "email")
    assert _stored(api, body, "email") == [], "a user without email was stored"

    uuid = _created(api.post(USERS, json=_user(factories)))
    before = _read(api, uuid)
    _refused(api.put(f"{USERS}/{uuid}", json=body), "email")
    assert _read(api, uuid) == before


@pytest.mark.rule("USER-FIELD-LENGTH")
@pytest.mark.parametrize("field", PLAIN_TEXT)
def test_text_length_limits(api, factories, field: str) -> None:
    low, high = length_range("createUser", field)
    at_limit = _sized(factories, high)
    uuid = _created(api.post(USERS, json=_user(factories, **{field: at_limit})))
    before = _read(api, uuid)
    assert before[field] == at_limit, "a value at the limit was not stored as sent"
    for length in [high + 1] + ([low - 1] if low > 0 else []):
        body = _user(factories, **{field: _sized(factories, length)})
        _refused(api.post(USERS, json=body), field)
        assert _stored(api, body, field) == [], length
        _refused(api.put(f"{USERS}/{uuid}", json=_user(factories, **{field: body[field]})), field)
    assert _read(api, uuid) == before


@pytest.mark.rule("USER-FIELD-LENGTH")
def test_username_lower_bound_and_email_limit(api, factories) -> None:
    low, _ = length_range("createUser", "username")
    for _attempt in range(8):  # a short name may be taken on a shared system
        short = "".join(factories.random.choice(string.ascii_lowercase) for _ in range(low))
        response = api.post(USERS, json=_user(factories, username=short))
        if response.status_code != 409:
            break
    uuid = _created(response)
    assert _read(api, uuid)["username"] == short
    high = field_schema("createUser", "email")["maxLength"]
    at_limit = _email_of_length(factories, high)
    assert (
        _read(api, _created(api.post(USERS, json=_user(factories, email=at_limit))))["email"]
        == at_limit
    )
    body = _user(factories, email=_email_of_length(factories, high + 1))
    _refused(api.post(USERS, json=body), "email")
    for field in PHONES:
        _refused(api.post(USERS, json=_user(factories, **{field: "+" + "1" * 50})), field)


@pytest.mark.rule("USER-FIELD-EMAIL")
def test_email_must_be_an_address(api, factories) -> None:
    uuid = _created(api.post(USERS, json=_user(factories)))
    before = _read(api, uuid)
    for bad in ("not-an-address", "two@@example.com", "no-domain@", "spaced name@example.com"):
        body = _user(factories, email=bad)
        _refused(api.post(USERS, json=body), "email")
        assert _stored(api, body, "email") == [], bad
        _refused(api.put(f"{USERS}/{uuid}", json=_user(factories, email=bad)), "email")
    assert _read(api, uuid) == before


@pytest.mark.rule("USER-FIELD-PHONE")
@pytest.mark.parametrize("field", PHONES)
def test_phone_numbers_use_international_notation(api, factories, field: str) -> None:
    good = factories.phone()
    uuid = _created(api.post(USERS, json=_user(factories, **{field: good})))
    before = _read(api, uuid)
    assert before[field] == good
    for local in ("0821234567", "082 123 4567", "27821234567"):
        body = _user(factories, **{field: local})
        _refused(api.post(USERS, json=body), field)
        assert _stored(api, body) == [], local
        _refused(api.put(f"{USERS}/{uuid}", json={**_user(factories), field: local}), field)
    assert _read(api, uuid) == before
    extension = _read(
        api, _created(api.post(USERS, json=_user(factories, telephoneExtension="0821")))
    )
    assert extension["telephoneExtension"] == "0821", "the extension is more than length-checked"


# -- references and the role -------------------------------------------------------------
@pytest.mark.rule("USER-FIELD-REFERENCE")
@pytest.mark.parametrize("field", list(REFERENCES))
def test_references_must_exist(api, factories, ledger, field: str) -> None:
    body = _user(factories, **{field: ledger.fresh_uuid()})
    response = api.post(USERS, json=body)
    _refused(response, field)
    assert f"@{field}" in response.json()["reason"]
    assert _stored(api, body) == []
    uuid = _created(api.post(USERS, json=_user(factories)))
    before = _read(api, uuid)
    _refused(
        api.put(f"{USERS}/{uuid}", json=_user(factories, **{field: ledger.fresh_uuid()})), field
    )
    assert _read(api, uuid) == before


@pytest.mark.rule("USER-ROLE-UNKNOWN")
def test_unknown_role_is_refused(api, factories, ledger) -> None:
    body = _user(factories, role=ledger.fresh_uuid())
    assert api.post(USERS, json=body).status_code == 422
    assert _stored(api, body) == []
    uuid = _created(api.post(USERS, json=_user(factories)))
    before = _read(api, uuid)
    assert (
        api.put(f"{USERS}/{uuid}", json=_user(factories, role=ledger.fresh_uuid())).status_code
        == 422
    )
    assert _read(api, uuid) == before


@pytest.mark.rule("USER-ROLE-DEFAULT")
def test_user_without_role_gets_the_default_role(api, factories, profile) -> None:
    default = _default_role(api, profile)
    body = _user(factories)
    body.pop("role", None)
    assert _read(api, _created(api.post(USERS, json=body)))["role"] == default
    mine = _role(api, factories)
    assert _read(api, _created(api.post(USERS, json=_user(factories, role=mine))))["role"] == mine


@pytest.mark.rule("USER-USERNAME-GENERATED")
def test_missing_username_is_generated(api, factories) -> None:
    low, high = length_range("createUser", "username")
    names = []
    for _ in range(2):
        body = _user(factories)
        del body["username"]
        username = _read(api, _created(api.post(USERS, json=body)))["username"]
        assert isinstance(username, str) and low <= len(username) <= high, username
        names.append(username)
    assert names[0] != names[1], "two generated usernames are the same"


# -- password and onboarding -------------------------------------------------------------
def _policy_breaches() -> list[Any]:
    low, high = length_range("createUser", "password")
    return [
        pytest.param(_password(low - 1), id="too-short"),
        pytest.param(_password(high + 1), id="too-long"),
        pytest.param(_password(low + 2, leave_out="upper"), id="no-upper-case"),
        pytest.param(_password(low + 2, leave_out="lower"), id="no-lower-case"),
        pytest.param(_password(low + 2, leave_out="digit"), id="no-digit"),
        pytest.param(_password(low + 2, leave_out="symbol"), id="no-symbol"),
        pytest.param(_password(low + 2, space=True), id="with-space"),
    ]


@pytest.mark.rule("USER-PASSWORD-POLICY")
@pytest.mark.parametrize("password", _policy_breaches())
def test_password_breaking_the_policy_is_refused(api, factories, password: str) -> None:
    body = _user(factories, password=password)
    _refused(api.post(USERS, json=body), "password")
    assert _stored(api, body) == []
    uuid = _created(api.post(USERS, json=_user(factories)))
    before = _read(api, uuid)
    _refused(api.put(f"{USERS}/{uuid}", json=_user(factories, password=password)), "password")
    assert _read(api, uuid) == before


@pytest.mark.rule("USER-PASSWORD-POLICY")
def test_password_meeting_the_policy_or_left_out_is_accepted(api, factories) -> None:
    low, high = length_range("createUser", "password")
    for password in (_password(low), _password(high)):
        uuid = _created(api.post(USERS, json=_user(factories, password=password)))
        assert (
            api.put(f"{USERS}/{uuid}", json=_user(factories, password=password)).status_code == 200
        )
    body = _user(factories)
    del body["password"]
    _created(api.post(USERS, json=body))


@pytest.mark.rule("USER-PASSWORD-NEVER-RETURNED")
def test_password_reads_back_empty(api, factories) -> None:
    password = _password(length_range("createUser", "password")[0] + 4)
    uuid = _created(api.post(USERS, json=_user(factories, password=password)))
    assert _read(api, uuid)["password"] in ("", None)
    assert api.put(f"{USERS}/{uuid}", json=_user(factories, password=password)).status_code == 200
    read = _read(api, uuid)
    assert read["password"] in ("", None), "the password (or a hash of it) is disclosed"
    assert password not in str(read)


@pytest.mark.rule("USER-ONBOARDING-MESSAGE")
def test_onboarding_flag_is_accepted(api, factories) -> None:
    """The welcome e-mail itself is not observable through this interface; the flag must be
    accepted with and without a password, and a generated password is never disclosed."""
    without = _user(factories, sendOnBoardingMessage=True)
    del without["password"]
    for body in (without, _user(factories, sendOnBoardingMessage=True), _user(factories,
                 sendOnBoardingMessage=False)):  # fmt: skip
        read = _read(api, _created(api.post(USERS, json=body)))
        assert read["email"] == body["email"]
        assert read["password"] in ("", None)
        assert "sendOnBoardingMessage" not in read


@pytest.mark.rule("USER-PHOTO-ATTACH")
def test_photo_is_attached_through_photo_uuid(api, factories) -> None:
    seed = int(factories.random.getrandbits(40)) ^ int(factories.run_id[:8], 16) ^ 0x5A5A
    upload = api.post(
        "/api/ws/v1/files/upload", files={"file": ("u.jpg", jpeg_bytes(seed), "image/jpeg")}
    )
    assert upload.status_code == 200, upload.text
    uuid = _created(api.post(USERS, json=_user(factories, photoUuid=upload.json()["uuid"])))
    read = _read(api, uuid)
    assert read["hasPhoto"] is True
    assert "photoUuid" not in read, "photoUuid is read back"


# -- duplicates, read, not found ---------------------------------------------------------
@pytest.mark.rule("USER-DUPLICATE")
@pytest.mark.parametrize("field", ["email", "username"])
def test_email_or_username_in_use_conflicts(api, factories, field: str) -> None:
    first = _user(factories)
    _created(api.post(USERS, json=first))
    body = _user(factories, **{field: first[field]})
    assert api.post(USERS, json=body).status_code == 409
    assert api.post(f"{USERS}/search", json={"lastName": body["lastName"]}).json()["entries"] == []
    second = _created(api.post(USERS, json=_user(factories)))
    before = _read(api, second)
    assert (
        api.put(f"{USERS}/{second}", json=_user(factories, **{field: first[field]})).status_code
        == 409
    )
    assert _read(api, second) == before


def _full_body(api: Any, factories: Any) -> dict[str, Any]:
    body = _user(
        factories,
        enabled=True,
        role=_role(api, factories),
        title="Ms",
        middleName="Jo",
        identityNumber=factories.tag("uid")[:50],
        address="1 Main Road",
        telephoneOffice=factories.phone(),
        telephoneHome=factories.phone(),
        telephoneExtension="12",
        comments="met at the gate",
        accountActiveDate=factories.instant(days=-1, offset_hours=2),
        accountExpiryDate=factories.instant(days=90, offset_hours=-5),
    )
    for field, (path, op) in REFERENCES.items():
        made = factories.location() if field == "location" else factories.named(op, field)
        body[field] = _created(api.post(path, json=made))
    return body


@pytest.mark.rule("USER-GET-FULL-RECORD")
def test_read_returns_the_whole_account(api, factories) -> None:
    body = _full_body(api, factories)
    assert set(BODY_FIELDS) - set(body) <= {*ONE_SHOT}
    read = _read(api, _created(api.post(USERS, json=body)))
    for field, sent in body.items():
        if field == "password":
            continue
        if field in TIMESTAMPS:
            assert read[field].endswith("Z") and _instant(read[field]) == _instant(sent), field
        else:
            assert read[field] == sent, (field, read[field], sent)
    assert read["hasPhoto"] is False


@pytest.mark.rule("USER-READ-FIELD-NAMES")
def test_read_carries_the_request_names_and_photo_fields(api, factories) -> None:
    read = _read(api, _created(api.post(USERS, json=_user(factories))))
    stored = {f for f in BODY_FIELDS if f not in ONE_SHOT}
    expected = {*stored, "uuid", "hasPhoto", "photoId", "photo", "thumbnail"}
    assert expected <= set(read), f"missing {sorted(expected - set(read))}"
    assert "photoUuid" not in read
    assert (read["photoId"], read["photo"], read["thumbnail"]) == (None, None, None)


@pytest.mark.rule("USER-NOT-FOUND")
def test_unknown_user_answers_404(api, factories, ledger) -> None:
    unknown = ledger.fresh_uuid()
    body = _user(factories)
    assert api.get(f"{USERS}/{unknown}").status_code == 404
    assert api.put(f"{USERS}/{unknown}", json=body).status_code == 404
    assert api.delete(f"{USERS}/{unknown}").status_code == 404
    for action in ("enable", "disable"):
        assert api.put(f"{USERS}/{unknown}/{action}").status_code == 404
    for view in ("invites", "registrations"):
        assert api.get(f"{USERS}/{unknown}/{view}").status_code == 404
    assert _stored(api, body) == [], "the PUT to an unknown UUID created a user"


# -- replacement -------------------------------------------------------------------------
@pytest.mark.rule("USER-PUT-FULL-REPLACEMENT")
def test_put_replaces_the_whole_account(api, factories) -> None:
    uuid = _created(api.post(USERS, json=_full_body(api, factories)))
    email = factories.email()
    assert api.put(f"{USERS}/{uuid}", json={"email": email}).status_code == 200
    read = _read(api, uuid)
    assert read["email"] == email
    # username, role and enabled have their own defaults (generated, default role, enabled).
    optional = set(BODY_FIELDS) - {*ONE_SHOT, "email", "username", "role", "enabled", "password"}
    kept = {f: read.get(f) for f in optional if read.get(f) not in (None, "")}
    assert kept == {}, f"fields left out of the PUT survived: {sorted(kept)}"


@pytest.mark.rule("USER-PUT-ROLE-RESET")
def test_put_without_role_restores_the_default(api, factories, profile) -> None:
    mine = _role(api, factories)
    body = _user(factories, role=mine)
    uuid = _created(api.post(USERS, json=body))
    assert _read(api, uuid)["role"] == mine
    del body["role"]
    assert api.put(f"{USERS}/{uuid}", json=body).status_code == 200
    assert _read(api, uuid)["role"] == _default_role(api, profile)


@pytest.mark.rule("USER-PUT-USERNAME-REGENERATED")
def test_put_without_username_generates_a_new_one(api, factories) -> None:
    low, high = length_range("updateUser", "username")
    body = _user(factories)
    uuid = _created(api.post(USERS, json=body))
    previous = body.pop("username")
    assert _read(api, uuid)["username"] == previous
    assert api.put(f"{USERS}/{uuid}", json=body).status_code == 200
    first = _read(api, uuid)["username"]
    assert isinstance(first, str) and low <= len(first) <= high and first != previous
    assert api.put(f"{USERS}/{uuid}", json=body).status_code == 200
    assert _read(api, uuid)["username"] != first, "a second replace kept the generated name"


# -- enable and disable ------------------------------------------------------------------
def _credentials(api: Any, uuid: str) -> list[dict[str, Any]]:
    response = api.get(f"/api/ws/v1/credentials/by-user/{uuid}")
    assert response.status_code == 200, response.text
    return sorted(response.json(), key=lambda c: c["uuid"])


@pytest.mark.rule("USER-DISABLE", "USER-ENABLE")
def test_disable_and_enable(api, factories) -> None:
    uuid = _created(api.post(USERS, json=_user(factories, enabled=True)))
    card = factories.credential(userUuid=uuid)
    _created(api.post("/api/ws/v1/credentials", json=card))
    before, held = _read(api, uuid), _credentials(api, uuid)
    assert before["enabled"] is True
    assert api.put(f"{USERS}/{uuid}/disable").status_code == 200
    disabled = _read(api, uuid)
    assert disabled == {**before, "enabled": False}, "disabling changed more than enabled"
    assert _credentials(api, uuid) == held, "disabling changed the user's credentials"
    assert api.put(f"{USERS}/{uuid}/enable").status_code == 200
    assert _read(api, uuid) == before


@pytest.mark.rule("USER-ENABLE-DISABLE-CONFLICT")
def test_enable_or_disable_to_the_current_state_conflicts(api, factories) -> None:
    uuid = _created(api.post(USERS, json=_user(factories, enabled=True)))
    assert api.put(f"{USERS}/{uuid}/enable").status_code == 409
    assert _read(api, uuid)["enabled"] is True
    assert api.put(f"{USERS}/{uuid}/disable").status_code == 200
    assert api.put(f"{USERS}/{uuid}/disable").status_code == 409
    assert _read(api, uuid)["enabled"] is False
