"""Users (USER- rules): the field checks of create and replace, the role, the generated
username, the password policy and its empty read, the onboarding flag, the photo handle,
duplicates, the read, not-found and full replacement.

Search is in test_people_search.py (with the person's) and test_user_search.py (with the
deprecated list); the invitations and registrations a user hosts, enable/disable and the delete
cascade are in test_user_views.py and test_people_search.py. Limits come from the spec.
"""

from __future__ import annotations

import string
from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.fixtures._limits import body_schema, field_schema, length_range
from amws_conformance.suites.rules import _people as people
from amws_conformance.suites.rules import _people_records as records

USER = people.USER
USERS = USER.path


def _documented(field: str) -> dict[str, Any]:
    """What the documents state of a body field (the normative tests enumerate by these)."""
    return field_schema("createUser", field, documented=True)


BODY_FIELDS = list(body_schema("createUser", documented=True)["properties"])
PHONE_PATTERN = spec.openapi()["components"]["schemas"]["InternationalPhone"]["pattern"]
PHONES = [f for f in BODY_FIELDS if _documented(f).get("pattern") == PHONE_PATTERN]
PLAIN_TEXT = [
    f
    for f in BODY_FIELDS
    if "maxLength" in _documented(f) and not {"pattern", "format"} & set(_documented(f))
]
# The user's reference fields: the group's shared set but the cost center.
REFERENCES = [f for f in records.REFERENCES if f != "costCenter"]
TIMESTAMPS = ("accountActiveDate", "accountExpiryDate")
# Instructions of one write, not stored fields: the read has neither.
ONE_SHOT = ("photoUuid", "sendOnBoardingMessage")
SYMBOLS = "!#$%&*+-=?@^_"


# -- helpers -----------------------------------------------------------------------------
def _read(api: Any, uuid: str) -> dict[str, Any]:
    return people.read_record(api, USERS, uuid)


def _stored(api: Any, body: dict[str, Any], field: str = "") -> list[str]:
    """UUIDs of the users stored from ``body``: found by its run-tagged e-mail address, or by
    its last name when ``field``, the field under test, is the e-mail address. Refused bodies
    that share that marker (:func:`_marker`) are all looked for with one search."""
    marker = {"lastName": body["lastName"]} if field == "email" else {"email": body["email"]}
    response = api.post(f"{USERS}/search", json=marker)
    assert response.status_code == 200, response.text
    return [row["uuid"] for row in response.json()["entries"]]


def _marker(factories: Any, field: str = "") -> dict[str, str]:
    """A run-tagged value the refused bodies of one test share, in the field :func:`_stored`
    finds them by (never ``field``, the field under test): one search then covers them all. A
    body wrongly stored would make the next one's create conflict, so the test fails anyway."""
    if field == "email":
        return {"lastName": factories.tag("ln")[:50]}
    return {"email": factories.email()}


def _user(factories: Any, **overrides: Any) -> dict[str, Any]:
    """A user body whose last name is run-tagged too (a second way to find it)."""
    return factories.user(**{"lastName": factories.tag("ln")[:50], **overrides})


def _default_role(api: Any, profile: Any) -> str:
    configured = (profile.section("roles") or {}).get("default")
    if configured:
        return configured
    defaults = [r["uuid"] for r in api.get("/api/ws/v1/roles").json() if r.get("default")]
    assert len(defaults) == 1, f"{len(defaults)} roles are flagged default"
    return defaults[0]


def _role(api: Any, factories: Any) -> str:
    return people.created(api.post("/api/ws/v1/roles", json=factories.role()))


# -- records the tests share ---------------------------------------------------------------
@pytest.fixture(scope="module")
def shared() -> people.Shared:
    return people.Shared()


@pytest.fixture
def bare(request, api, factories) -> people.Record:
    """The group's plain user: the tests here send it refused replaces (each checking its read
    is unchanged after) or a replace with its own body, copy its e-mail address or username
    for a conflict, or read it; see :func:`records.bare_user` for everything done to it."""
    return records.bare_user(request, api, factories)


@pytest.fixture
def extension(request, shared, api, factories) -> people.Record:
    """A user with a local number as extension (free text), read once: the formatted-field
    tests read it back and send it their refused replaces (its own record, so a target that
    refuses the extension fails only the tests that check it)."""

    def build() -> people.Record:
        body = _user(factories, telephoneExtension="0821")
        uuid = people.created(api.post(USERS, json=body))
        return people.Record(uuid, body, _read(api, uuid))

    return shared.get(request, "extension", build)


@pytest.fixture
def role(request, shared, api, factories) -> str:
    """A role of the run: only ever assigned, never changed, so one serves every test."""
    return shared.get(request, "role", lambda: _role(api, factories))


@pytest.fixture
def references(request, api, factories) -> dict[str, str]:
    """Live location, group, organisation and department (of the group's set, shared with the
    persons'): users only point at them, so one of each serves every full body."""
    return {
        f: uuid
        for f, uuid in records.references(request, api, factories).items()
        if f in REFERENCES
    }


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
def test_email_is_required(api, factories, bare) -> None:
    body = _user(factories)
    del body["email"]
    people.refused(api.post(USERS, json=body), "email")
    assert _stored(api, body, "email") == [], "a user without email was stored"

    people.refused(api.put(f"{USERS}/{bare.uuid}", json=body), "email")
    assert _read(api, bare.uuid) == bare.read


@pytest.fixture
def at_limits(request, shared, api, factories) -> people.Record:
    """A user with every plain-text field at its maximum length, read once. Shared by the
    length tests (one rule): each reads its field back and sends the user refused replaces,
    checking its read is unchanged after."""

    def build() -> people.Record:
        values = {f: people.sized(factories, length_range("createUser", f)[1]) for f in PLAIN_TEXT}
        body = _user(factories, **values)
        uuid = people.created(api.post(USERS, json=body))
        return people.Record(uuid, body, _read(api, uuid))

    return shared.get(request, "at_limits", build)


@pytest.mark.rule("USER-FIELD-LENGTH")
@pytest.mark.parametrize("field", PLAIN_TEXT)
def test_text_length_limits(api, factories, at_limits, field: str) -> None:
    low, high = length_range("createUser", field)
    at_limit = at_limits.body[field]
    assert len(at_limit) == high
    people.read_back(USER, at_limits.read, {field: at_limit})
    marker = _marker(factories, field)
    for length in [high + 1] + ([low - 1] if low > 0 else []):
        body = _user(factories, **{field: people.sized(factories, length)}, **marker)
        people.refused(api.post(USERS, json=body), field)
        replace = _user(factories, **{field: body[field]})
        people.refused(api.put(f"{USERS}/{at_limits.uuid}", json=replace), field)
    assert _stored(api, body, field) == [], "a user with a value out of range was stored"
    assert _read(api, at_limits.uuid) == at_limits.read


@pytest.mark.rule("USER-FIELD-LENGTH")
def test_username_lower_bound_and_email_limit(api, factories) -> None:
    low, _ = length_range("createUser", "username")
    # Usernames are not listed anywhere: the run's next short name is one this run never gave;
    # another user of the system may hold it (409), and the name after it is tried then.
    for _attempt in range(8):
        short = factories.short_name(low)
        response = api.post(USERS, json=_user(factories, username=short))
        if response.status_code != 409:
            break
    uuid = people.created(response)
    assert _read(api, uuid)["username"] == short
    high = _documented("email")["maxLength"]
    at_limit = people.email_of_length(factories, high)
    uuid = people.created(api.post(USERS, json=_user(factories, email=at_limit)))
    people.read_back(USER, _read(api, uuid), {"email": at_limit})
    people.refused(
        api.post(USERS, json=_user(factories, email=people.email_of_length(factories, high + 1))),
        "email",
    )
    for field in PHONES:  # an international number cannot reach the limit: only the excess
        over = "+" + "1" * _documented(field)["maxLength"]
        people.refused(api.post(USERS, json=_user(factories, **{field: over})), field)


BAD_EMAILS = ("not-an-address", "two@@example.com", "no-domain@", "spaced name@example.com")
LOCAL_PHONES = ("0821234567", "082 123 4567", "27821234567")
FORMATS = [
    pytest.param("email", BAD_EMAILS, marks=pytest.mark.rule("USER-FIELD-EMAIL"), id="email"),
    *[
        pytest.param(f, LOCAL_PHONES, marks=pytest.mark.rule("USER-FIELD-PHONE"), id=f)
        for f in PHONES
    ],
]


@pytest.mark.parametrize(("field", "bad_values"), FORMATS)
def test_formatted_fields_refuse_other_layouts(
    api, factories, extension, field, bad_values
) -> None:
    """The e-mail must be an address, phones international; the extension is free text."""
    target = extension
    people.read_back(USER, target.read, {"telephoneExtension": "0821"})
    marker = _marker(factories, field)
    for bad in bad_values:
        body = _user(factories, **{field: bad}, **marker)
        people.refused(api.post(USERS, json=body), field)
        people.refused(
            api.put(f"{USERS}/{target.uuid}", json=_user(factories, **{field: bad})), field
        )
    assert _stored(api, body, field) == [], "a user with a badly formatted value was stored"
    assert _read(api, target.uuid) == target.read


# -- references and the role -------------------------------------------------------------
REFERENCE_PARAMS = [
    *[pytest.param(f, marks=pytest.mark.rule("USER-FIELD-REFERENCE"), id=f) for f in REFERENCES],
    pytest.param("role", marks=pytest.mark.rule("USER-ROLE-UNKNOWN"), id="role"),
]


@pytest.mark.parametrize("field", REFERENCE_PARAMS)
def test_references_must_exist(api, factories, ledger, bare, field: str) -> None:
    """An unknown UUID is refused with 422 (naming the field; the role rule does not require
    that) on create and replace, and nothing is stored."""
    body = _user(factories, **{field: ledger.fresh_uuid()})
    replace = _user(factories, **{field: ledger.fresh_uuid()})
    for response in (api.post(USERS, json=body), api.put(f"{USERS}/{bare.uuid}", json=replace)):
        if field == "role":
            assert response.status_code == 422, (response.status_code, response.text)
        else:
            people.refused(response, field)
    assert _stored(api, body) == [], "the user was stored despite the bad reference"
    assert _read(api, bare.uuid) == bare.read


@pytest.mark.rule("USER-ROLE-DEFAULT")
def test_user_without_role_gets_the_default_role(api, factories, profile, role) -> None:
    default = _default_role(api, profile)
    body = _user(factories)
    body.pop("role", None)
    assert _read(api, people.created(api.post(USERS, json=body)))["role"] == default
    assert (
        _read(api, people.created(api.post(USERS, json=_user(factories, role=role))))["role"]
        == role
    )


@pytest.mark.rule("USER-USERNAME-GENERATED")
def test_missing_username_is_generated(api, factories) -> None:
    low, high = length_range("createUser", "username")
    names = []
    for _ in range(2):
        body = _user(factories)
        del body["username"]
        username = _read(api, people.created(api.post(USERS, json=body)))["username"]
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
def test_password_breaking_the_policy_is_refused(api, factories, bare, password: str) -> None:
    body = _user(factories, password=password)
    people.refused(api.post(USERS, json=body), "password")
    assert _stored(api, body) == []
    replace = _user(factories, password=password)
    people.refused(api.put(f"{USERS}/{bare.uuid}", json=replace), "password")
    assert _read(api, bare.uuid) == bare.read


@pytest.mark.rule("USER-PASSWORD-POLICY")
def test_password_meeting_the_policy_or_left_out_is_accepted(api, factories) -> None:
    low, high = length_range("createUser", "password")
    for password in (_password(low), _password(high)):
        uuid = people.created(api.post(USERS, json=_user(factories, password=password)))
        assert (
            api.put(f"{USERS}/{uuid}", json=_user(factories, password=password)).status_code == 200
        )
    body = _user(factories)
    del body["password"]
    people.created(api.post(USERS, json=body))


@pytest.mark.rule("USER-PASSWORD-NEVER-RETURNED")
def test_password_reads_back_empty(request, api, bare) -> None:
    """The shared user was created with a password and read right after; here it is replaced
    with its own body (password included), which leaves its read as it was."""
    password = bare.body["password"]
    assert password
    assert bare.read["password"] in ("", None), "the password is disclosed after the create"
    assert password not in str(bare.read)
    assert api.put(f"{USERS}/{bare.uuid}", json=bare.body).status_code == 200
    read = _read(api, bare.uuid)
    if read != bare.read:  # not this rule's question; the next test gets a user of its own
        records.run_shared(request).forget(request, "bare-user")
    assert read["password"] in ("", None), "the password (or a hash of it) is disclosed"
    assert password not in str(read)


@pytest.mark.rule("USER-ONBOARDING-MESSAGE")
def test_onboarding_message_goes_only_where_asked(api, factories, control_or_none, bare) -> None:
    """Everywhere: the flag is accepted with and without a password and a generated password
    is never disclosed. Where the target shows what it mails (the reference control plane's
    outbox): exactly the users asking get one welcome e-mail, with a generated password when
    they sent none."""
    bodies = [_user(factories, sendOnBoardingMessage=flag) for flag in (True, True, False)]
    del bodies[0]["password"]  # the service then generates one for the e-mail
    made = []
    for body in bodies:
        made.append(people.created(api.post(USERS, json=body)))
        read = _read(api, made[-1])
        people.read_back(USER, read, {"email": body["email"]})
        assert read["password"] in ("", None)
    # The flag left out (no e-mail either): the shared user, created without the flag.
    assert "sendOnBoardingMessage" not in bare.body
    people.read_back(USER, bare.read, {"email": bare.body["email"]})
    assert bare.read["password"] in ("", None)
    made.append(bare.uuid)
    if control_or_none is None:
        return
    mailed = {m["user"]: m for m in control_or_none.outbox() if m.get("user") in made}
    assert sorted(mailed) == sorted(made[:2]), "welcome e-mails went to the wrong users"
    assert mailed[made[0]]["to"] == bodies[0]["email"]
    assert mailed[made[0]]["password"], "no password was sent, so the e-mail must carry one"
    assert not mailed[made[1]]["password"], "the user chose a password; none is generated"


@pytest.mark.rule("USER-PHOTO-ATTACH")
def test_photo_is_attached_through_photo_uuid(request, api, factories) -> None:
    # The group's user created with the uuid of a fresh upload as photoUuid, read right after.
    read = records.pictured_user(request, api, factories).read
    assert read["hasPhoto"] is True
    assert "photoUuid" not in read, "photoUuid is read back"


# -- duplicates, read, not found ---------------------------------------------------------
@pytest.mark.rule("USER-DUPLICATE")
@pytest.mark.parametrize("field", ["email", "username"])
def test_create_with_email_or_username_in_use_conflicts(api, factories, bare, field) -> None:
    first = bare.body  # a user of the run, unchanged
    body = _user(factories, **{field: first[field]})
    assert api.post(USERS, json=body).status_code == 409
    assert api.post(f"{USERS}/search", json={"lastName": body["lastName"]}).json()["entries"] == []


@pytest.mark.rule("USER-DUPLICATE-ON-REPLACE")
@pytest.mark.parametrize("field", ["email", "username"])
def test_replace_with_email_or_username_in_use_conflicts(
    api, factories, bare, extension, field: str
) -> None:
    # Two shared users of the run: the bare one holds the e-mail address and username, the
    # other is refused them (and stays as it was read).
    first, second = bare.body, extension
    replace = _user(factories, **{field: first[field]})
    assert api.put(f"{USERS}/{second.uuid}", json=replace).status_code == 409
    assert _read(api, second.uuid) == second.read


def _full_body(factories: Any, role: str, references: dict[str, str]) -> dict[str, Any]:
    body = _user(
        factories,
        enabled=True,
        role=role,
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
    return {**body, **references}


@pytest.fixture
def full(request, shared, api, factories, role, references) -> people.Record:
    """A user with every field filled. Shared because its tests only read it or copy its
    e-mail address and username (a refused replace of another user)."""

    def build() -> people.Record:
        body = _full_body(factories, role, references)
        return people.Record(people.created(api.post(USERS, json=body)), body)

    return shared.get(request, "full", build)


@pytest.mark.rule("USER-GET-FULL-RECORD")
def test_read_returns_the_whole_account(api, full) -> None:
    """Every stored value reads back as written: under the names doc2 gives the user read
    (these must be there), and under the request's name wherever the read shows it (names the
    read only describes are USER-READ-FIELD-NAMES' question); timestamps as the same instant,
    in UTC."""
    body = full.body
    assert set(BODY_FIELDS) - set(body) <= {*ONE_SHOT}
    read = _read(api, full.uuid)
    stored = {f: v for f, v in body.items() if f != "password"}
    people.read_back(USER, read, stored, instants=TIMESTAMPS)
    assert read["hasPhoto"] is False


@pytest.mark.rule("USER-READ-FIELD-NAMES")
def test_read_carries_every_value_under_its_request_name(api, full) -> None:
    read = _read(api, full.uuid)
    people.check_read_field_names(read, {f for f in BODY_FIELDS if f not in ONE_SHOT})
    stored = {f: v for f, v in full.body.items() if f != "password"}
    people.read_back(USER, read, stored, instants=TIMESTAMPS)


@pytest.mark.rule("USER-NO-COST-CENTER")
def test_cost_center_on_a_user_is_ignored(request, api, factories, ledger) -> None:
    """A costCenter is no user field: ignored like any unknown field, even when it points at
    nothing, and never read back (under any name)."""
    live = records.references(request, api, factories)["costCenter"]  # the group's, live
    for cost_center in (ledger.fresh_uuid(), live):
        uuid = people.created(api.post(USERS, json=_user(factories, costCenter=cost_center)))
        shown = {str(v).lower() for v in people.scalars(_read(api, uuid))}
        assert cost_center.lower() not in shown, "the user reads back the cost center"


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
def test_put_replaces_the_whole_account(api, factories, role, references) -> None:
    body = _full_body(factories, role, references)
    uuid = people.created(api.post(USERS, json=body))
    email = factories.email()
    assert api.put(f"{USERS}/{uuid}", json={"email": email}).status_code == 200
    read = _read(api, uuid)
    people.read_back(USER, read, {"email": email})
    # username, role and enabled have their own defaults (generated, default role, enabled).
    optional = set(BODY_FIELDS) - {*ONE_SHOT, "email", "username", "role", "enabled", "password"}
    kept = {f: read.get(f) for f in optional if not people.cleared(read.get(f))}
    assert kept == {}, f"fields left out of the PUT survived: {sorted(kept)}"
    # Whatever names the read uses: no text of an optional field left out is shown anywhere.
    shown = {v for v in people.scalars(read) if isinstance(v, str)}
    left = sorted(f for f in optional if body.get(f) in shown)
    assert left == [], f"values left out of the PUT are still read back: {left}"


@pytest.mark.rule("USER-PUT-ROLE-RESET")
def test_put_without_role_restores_the_default(api, factories, profile, role) -> None:
    mine = role
    body = _user(factories, role=mine)
    uuid = people.created(api.post(USERS, json=body))
    assert _read(api, uuid)["role"] == mine
    del body["role"]
    assert api.put(f"{USERS}/{uuid}", json=body).status_code == 200
    assert _read(api, uuid)["role"] == _default_role(api, profile)


@pytest.mark.rule("USER-PUT-USERNAME-REGENERATED")
def test_put_without_username_generates_a_new_one(api, factories) -> None:
    low, high = length_range("updateUser", "username")
    body = _user(factories)
    uuid = people.created(api.post(USERS, json=body))
    previous = body.pop("username")
    assert _read(api, uuid)["username"] == previous
    assert api.put(f"{USERS}/{uuid}", json=body).status_code == 200
    first = _read(api, uuid)["username"]
    assert isinstance(first, str) and low <= len(first) <= high and first != previous
    assert api.put(f"{USERS}/{uuid}", json=body).status_code == 200
    assert _read(api, uuid)["username"] != first, "a second replace kept the generated name"
