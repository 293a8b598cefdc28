"""Visitor invitations (INV- rules): create, read, list, rounding, references, spellings,
locations, field checks, the watchlist refusal and the assumed update; the cancel and status
operations are exercised with the lifecycle in test_visit_lifecycle.py.

Instants are taken from the target's clock (the control plane's when there is one); the calls
are the shared ones of _invites.py.

What decides a normative rule here calls only the documented operations (create, read, list)
and asserts only what the documents show: the create answer, the read's response fields of
doc1's table (registrationId, visitorId, type, accessCode, inviteLink, activation, expiry), the
list envelope and its entries' firstName and lastName. Such tests send the request names doc1
shows (first_name, last_name, identity_number; see _invites.documented) and find their own
invitations in a list by a unique last name. Every other read or entry field, the camelCase
request names and the update, cancel and status operations are our choice: they are checked
in tests tagged with the assumed rules, or in tests that call an assumed operation and are
therefore informative for the normative rules they carry.
"""

from __future__ import annotations

import uuid as uuidlib
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from amws_conformance.fixtures._limits import length_range
from amws_conformance.suites.rules._invites import (
    INVITES,
    WATCHLISTS,
    InviteCalls,
    instant,
    iso,
    run_invitations,
    shared_host,
)
from amws_conformance.suites.rules._watchlists import run_watchlists

# The read and list-entry shapes are our choice (INV-RECORD-SHAPE, assumed).
READ_FIELDS = {
    "registrationId", "visitorId", "firstName", "lastName", "email", "mobile", "identityNumber",
    "alternativeNumber", "visitType", "activation", "expiry", "location", "hostUser",
    "visitReason", "type", "accessCode", "qrCodeUrl", "inviteLink", "inviteTextMessage",
    "status", "arrivedAt", "leftAt",
}  # fmt: skip
ENTRY_FIELDS = {
    "registrationId", "visitorId", "firstName", "lastName", "activation", "expiry", "type",
    "accessCode", "qrCodeUrl", "inviteLink", "inviteTextMessage", "status",
}  # fmt: skip
# What doc1 shows of the read (the fields its table marks response).
DOCUMENTED_READ = ("registrationId", "visitorId", "type", "accessCode", "inviteLink")
SPELLINGS = {
    "first_name": "firstName", "last_name": "lastName", "identity_number": "identityNumber",
    "alternative_number": "alternativeNumber", "visit_type": "visitType",
}  # fmt: skip


# -- helpers ------------------------------------------------------------------------------
def refused(response: httpx.Response, field: str, status: int = 422) -> None:
    assert response.status_code == status, (field, response.status_code, response.text)
    assert field in response.json()["reason"], (field, response.json()["reason"])


@pytest.fixture
def inv(api: Any, factories: Any, control_or_none: Any, amws_run: Any) -> InviteCalls:
    """The invitation calls, hosted by the run's shared host (``_invites.shared_host``): no
    test here reads that host's invitations or changes the user."""
    host = shared_host(amws_run, api, factories)["uuid"]
    return InviteCalls(api, factories, host, control_or_none)


@pytest.fixture
def invitations(amws_run: Any, inv: InviteCalls) -> list[dict[str, Any]]:
    """The run's three shared invitations (``_invites.run_invitations``, whose docstring says
    who reads them): tests here only read them and what lists show of them."""
    return run_invitations(amws_run, inv)


# The tests that need a visitor refused only need *an* enabled watchlist to list the visitor:
# they share the second of the run's two (``_watchlists.run_watchlists``, whose docstring says
# why sharing them is safe), and none of them switches, renames or reads it. Each entry names
# values of its own test's visitor that are run-tagged (identity number, or the last name
# beside the first name), which no other test's visitor carries, so an entry refuses only the
# visitor its test meant; a refused visitor is never on record.
@pytest.fixture
def listing(amws_run: Any, api: Any, factories: Any) -> str:
    return run_watchlists(amws_run, api, factories)[1]


def put_on_list(api: Any, watchlist: str, **entry: Any) -> None:
    """Put an entry (fields as doc2 names them) in ``watchlist``."""
    added = api.post(f"{WATCHLISTS}/{watchlist}/entries", json=entry)
    assert added.status_code == 201, added.text


# -- create, read, not found ----------------------------------------------------------------
@pytest.mark.rule("INV-CREATE-201", "INV-REGISTRATION-ID")
def test_create_answers_201_with_the_handles_the_read_uses(inv, invitations) -> None:
    made = invitations[0]  # a documented create (doc1's request names)
    assert made["status"] == 201, made["created"]
    created = made["created"]
    handles = {"code", "message", "registrationId", "visitorId", "type", "accessCode", "inviteLink"}
    assert set(created) >= handles, f"missing {sorted(handles - set(created))}"
    assert (created["code"], created["message"]) == (201, "created")
    assert created["type"] in {"PIN", "QR_CODE", "OTHER"}, created["type"]
    registration = created["registrationId"]
    assert uuidlib.UUID(registration) and uuidlib.UUID(created["visitorId"])
    # The registration ID finds that invitation: the read shows it with the same handles.
    record = inv.read(registration)
    assert {f: record.get(f) for f in DOCUMENTED_READ} == {f: created[f] for f in DOCUMENTED_READ}


@pytest.mark.rule(
    "INV-CREATE-201", "INV-REGISTRATION-ID", "INV-RECORD-SHAPE", "INV-STATUS-READ", "VISIT-CREATED"
)
def test_create_answers_201_with_the_handles_later_calls_use(inv, factories) -> None:
    sent = inv.body(type="PIN", identityNumber=factories.tag("id"))
    created = inv.create(sent)
    assert (created["code"], created["message"], created["type"]) == (201, "created", "PIN")
    registration = created["registrationId"]
    assert uuidlib.UUID(registration) and uuidlib.UUID(created["visitorId"])
    record = inv.read(registration)
    assert set(record) >= READ_FIELDS
    assert record["registrationId"] == registration and record["visitorId"] == created["visitorId"]
    for field in ("firstName", "lastName", "email", "mobile", "identityNumber", "hostUser"):
        assert record[field] == sent[field], field
    assert record["status"] == "VISIT_CREATED" == inv.status(registration)
    # Every later call finds the same invitation by the registration ID.
    assert inv.put(registration, lastName=factories.tag("renamed")).status_code == 200
    assert inv.read(registration)["status"] == "VISIT_UPDATED" == inv.status(registration)
    assert inv.move(registration, "VISITOR_CHECK_IN").status_code == 200
    assert inv.status(registration) == "VISITOR_CHECK_IN"
    assert inv.api.delete(f"{INVITES}/{registration}").status_code == 200  # withdrawn
    assert inv.api.get(f"{INVITES}/{registration}").status_code == 404


@pytest.mark.rule("INV-READ-NOT-FOUND")
def test_unknown_registration_id_answers_404_on_read(api, ledger) -> None:
    response = api.get(f"{INVITES}/{ledger.fresh_uuid()}")
    assert response.status_code == 404, response.text


@pytest.mark.rule("INV-ASSUMED-OPS-NOT-FOUND")
def test_unknown_registration_id_answers_404_on_the_other_calls(inv, api, ledger) -> None:
    unknown = ledger.fresh_uuid()
    assert api.get(f"{INVITES}/{unknown}/status").status_code == 404
    assert inv.put(unknown, comments="nothing").status_code == 404
    assert api.delete(f"{INVITES}/{unknown}").status_code == 404
    assert inv.move(unknown, "VISITOR_CHECK_IN").status_code == 404


# -- listing ------------------------------------------------------------------------------
def page_of(api: Any, **params: Any) -> dict[str, Any]:
    response = api.get(INVITES, params=params)
    assert response.status_code == 200, (params, response.status_code, response.text)
    return response.json()


@pytest.mark.rule("INV-LIST-ENVELOPE", "INV-LIST-DEFAULTS")
def test_list_pages_visit_every_invitation_once(api, invitations) -> None:
    # The run's invitations are known by their unique last names (entries show lastName).
    assert [made["status"] for made in invitations] == [201] * 3
    names = [made["sent"]["last_name"] for made in invitations]
    first = page_of(api)
    assert first["startIndex"] == 0
    assert first["countReturned"] == len(first["entries"]) == min(100, first["totalCount"])
    limit = min(1000, max(1, -(-first["totalCount"] // 3)))
    seen: list[str] = []
    while True:
        page = page_of(api, start=len(seen), limit=limit)
        assert page["startIndex"] == len(seen)
        assert page["countReturned"] == len(page["entries"]) <= limit
        seen += [e["lastName"] for e in page["entries"]]
        if page["startIndex"] + page["countReturned"] >= page["totalCount"] or not page["entries"]:
            break
    assert len(seen) == page["totalCount"] >= len(names)
    assert {name: seen.count(name) for name in names} == dict.fromkeys(names, 1)


@pytest.mark.rule("INV-RECORD-SHAPE")
def test_list_entries_carry_our_entry_fields(inv) -> None:
    mine = {inv.new() for _ in range(3)}
    listed = inv.entries()
    assert all(set(entry) >= ENTRY_FIELDS for entry in listed)
    seen = [e["registrationId"] for e in listed]
    assert len(seen) == len(set(seen)) and mine <= set(seen)


@pytest.mark.rule("INV-LIST-LIMIT-RANGE")
@pytest.mark.parametrize(("limit", "status"), [(0, 400), (1, 200), (1000, 200), (1001, 400)])
def test_list_limit_outside_1_to_1000_answers_400(api, limit: int, status: int) -> None:
    response = api.get(INVITES, params={"limit": limit})
    assert response.status_code == status
    if status == 200:
        assert response.json()["countReturned"] <= limit


@pytest.mark.rule("INV-LIST-VISITOR-FILTER")
def test_visitor_uuid_narrows_the_list(api, invitations) -> None:
    # Two visitors (unique identity numbers), told apart in the list by their last names.
    assert [made["status"] for made in invitations[:2]] == [201] * 2
    sent = [made["sent"] for made in invitations[:2]]
    wanted, other = (made["created"] for made in invitations[:2])
    assert wanted["visitorId"] != other["visitorId"]
    page = page_of(api, visitorUUID=wanted["visitorId"], limit=1000)
    assert [e["lastName"] for e in page["entries"]] == [sent[0]["last_name"]]
    assert page["totalCount"] == page["countReturned"] == 1
    assert page_of(api, limit=1)["totalCount"] > page["totalCount"]


@pytest.mark.rule("INV-RECORD-SHAPE")
def test_visitor_filtered_entries_carry_the_visitor_id(inv, api, factories) -> None:
    wanted, other = (inv.create(identityNumber=factories.tag("id")) for _ in "ab")
    assert wanted["visitorId"] != other["visitorId"]
    page = page_of(api, visitorUUID=wanted["visitorId"], limit=1000)
    assert {e["visitorId"] for e in page["entries"]} == {wanted["visitorId"]}
    assert page["totalCount"] == page["countReturned"]
    ids = {e["registrationId"] for e in page["entries"]}
    assert wanted["registrationId"] in ids and other["registrationId"] not in ids


@pytest.mark.rule("INV-LIST-FILTER-VALUES")
def test_time_filters_split_past_current_and_future(inv) -> None:
    ids = {
        "PAST": inv.new(start_h=-72, hours=24),
        "CURRENT": inv.new(start_h=-1, hours=24),
        "FUTURE": inv.new(start_h=48, hours=24),
    }
    for value in ("PAST", "CURRENT", "FUTURE"):
        listed = {e["registrationId"] for e in inv.entries(filter=value)}
        assert {when for when, i in ids.items() if i in listed} == {value}, value
    for value in (None, "ALL", "NOT_A_FILTER"):
        assert set(ids.values()) <= {e["registrationId"] for e in inv.entries(filter=value)}, value


# -- rounding -----------------------------------------------------------------------------
class Window:
    """Instants from a whole minute a day ahead (``minute``, else one from now), and the window
    an invitation has stored."""

    def __init__(self, inv: InviteCalls, minute: datetime | None = None):
        self.inv = inv
        self.minute = minute or (inv.now() + timedelta(days=1)).replace(second=0, microsecond=0)

    def at(self, hours: float, seconds: float = 0) -> datetime:
        return self.minute + timedelta(hours=hours, seconds=seconds)

    def stored(self, registration: str) -> tuple[datetime, datetime]:
        """(activation, expiry) as read; the expiry's milliseconds are not stated, so dropped."""
        record = self.inv.read(registration)
        return instant(record["activation"]), instant(record["expiry"]).replace(microsecond=0)


@pytest.mark.rule("INV-ACTIVATION-ROUND-DOWN", "INV-EXPIRY-ROUND-UP")
def test_activation_truncated_and_expiry_moved_to_second_59(inv, invitations) -> None:
    # Two of the run's shared invitations, documented creates with windows from a whole minute
    # a day ahead (_invites.SHARED_WINDOWS): what they were sent with, what they are stored as.
    first, second = invitations[:2]
    window = Window(inv, first["minute"])
    at = window.at

    def stored(made: dict[str, Any], sent: tuple[datetime, datetime]) -> tuple[datetime, ...]:
        assert made["status"] == 201, made["created"]
        assert (made["sent"]["activation"], made["sent"]["expiry"]) == tuple(map(iso, sent))
        return window.stored(made["created"]["registrationId"])

    assert stored(first, (at(0, 30.5), at(8, 10))) == (at(0), at(8, 59))
    # Values already on the minute: activation is kept, expiry still moves to :59.
    assert stored(second, (at(1), at(9))) == (at(1), at(9, 59))


@pytest.mark.rule("INV-ACTIVATION-ROUND-DOWN", "INV-EXPIRY-ROUND-UP")
def test_an_update_rounds_activation_and_expiry_the_same_way(inv) -> None:
    window = Window(inv)
    at, stored = window.at, window.stored
    registration = inv.new(activation=iso(at(0, 30.5)), expiry=iso(at(8, 10)))
    assert stored(registration) == (at(0), at(8, 59))
    # Values already on the minute: activation is kept, expiry still moves to :59.
    assert inv.put(registration, activation=iso(at(1)), expiry=iso(at(9))).status_code == 200
    assert stored(registration) == (at(1), at(9, 59))
    # An update rounds the same way.
    assert inv.put(registration, activation=iso(at(2, 45.25))).status_code == 200
    assert inv.put(registration, expiry=iso(at(10, 1))).status_code == 200
    assert stored(registration) == (at(2), at(10, 59))


# -- references, spellings, locations, mandatory fields -----------------------------------
# The visit reason's field name is ours (INV-VISIT-REASON-FIELD): that case is informative.
REFERENCE_FIELDS = [
    "hostUser",
    pytest.param("visitReason", marks=pytest.mark.rule("INV-VISIT-REASON-FIELD")),
    "location",
]


@pytest.mark.rule("INV-REFERENCE-MISSING-422")
@pytest.mark.parametrize("field", REFERENCE_FIELDS)
def test_reference_to_nothing_answers_422(inv, ledger, field: str) -> None:
    sent = inv.documented(**{field: ledger.fresh_uuid()})
    refused(inv.post(sent), field)
    assert sent["last_name"] not in inv.last_names()  # nothing was created


@pytest.mark.rule("INV-REFERENCE-MISSING-422")
@pytest.mark.parametrize("field", REFERENCE_FIELDS)
def test_update_to_a_reference_to_nothing_answers_422(inv, ledger, field: str) -> None:
    registration = inv.new()
    before = inv.read(registration)
    refused(inv.put(registration, **{field: ledger.fresh_uuid()}), field)
    assert inv.read(registration) == before


@pytest.mark.rule("VER-INVITE-UNDERSCORE-SPELLINGS")
def test_underscore_spelt_create_is_accepted(inv, factories, listing) -> None:
    values = {old: factories.tag(old[:4])[:50] for old in SPELLINGS}
    sent = {**inv.body(firstName=None, lastName=None), **values}
    response = inv.post(sent)
    assert response.status_code == 201, response.text
    # The names arrive as the list entry's firstName and lastName.
    listed = [e for e in inv.entries() if e["lastName"] == values["last_name"]]
    assert [(e["firstName"], e["lastName"]) for e in listed] == [
        (values["first_name"], values["last_name"])
    ]
    # identity_number is checked against the watchlists like any identity number.
    identity = factories.tag("id")
    put_on_list(inv.api, listing, identityNumber=identity)
    sent = {**inv.body(firstName=None, lastName=None), **values, "identity_number": identity}
    sent["last_name"] = factories.tag("last")
    refusal = inv.post(sent)
    assert refusal.status_code == 451, refusal.text
    assert sent["last_name"] not in inv.last_names()


@pytest.mark.rule("INV-FIELD-SPELLINGS")
@pytest.mark.parametrize("created_in", ["underscore", "camelCase"])
def test_underscore_and_camel_case_spellings_mean_the_same(inv, factories, created_in) -> None:
    def spelt(values: dict[str, str], underscore: bool) -> dict[str, str]:
        return {(old if underscore else new): values[new] for old, new in SPELLINGS.items()}

    def fresh() -> dict[str, str]:
        return {new: factories.tag(new[:4])[:50] for new in SPELLINGS.values()}

    values = fresh()
    sent = {**inv.body(firstName=None, lastName=None), **spelt(values, created_in == "underscore")}
    registration = inv.create(sent)["registrationId"]
    record = inv.read(registration)
    assert {f: record[f] for f in SPELLINGS.values()} == values
    assert not set(SPELLINGS) & set(record)
    # An update in the other spelling changes the same fields.
    values = fresh()
    changed = inv.put(registration, **spelt(values, created_in != "underscore"))
    assert changed.status_code == 200
    assert {f: inv.read(registration)[f] for f in SPELLINGS.values()} == values


def new_location(api: Any, factories: Any, name: str | None = None) -> tuple[str, str]:
    """A location of its own: (uuid, name)."""
    name = name or factories.name_for("createLocation", "loc")
    created = api.post("/api/ws/v1/locations", json=factories.location(name=name))
    assert created.status_code == 201, created.text
    return created.json()["uuid"], name


@pytest.fixture(scope="module")
def place(api: Any, factories: Any) -> tuple[str, str]:
    """A location (uuid, name) for the tests that only name one in invitations: naming a
    location changes nothing on it. Its name is as long as an invitation's location may be,
    so the test of that bound can use it too."""
    longest = length_range("createInvite", "location")[1]
    return new_location(
        api, factories, factories.name_for("createLocation", "loc").ljust(longest, "x")
    )


@pytest.mark.rule("INV-LOCATION-BY-NAME")
def test_location_given_by_uuid_or_by_name_is_accepted(inv, place) -> None:
    location, name = place
    for given in (location, name):
        sent = inv.documented(location=given)
        response = inv.post(sent)
        assert response.status_code == 201, (given, response.text)
        assert sent["last_name"] in inv.last_names(), given


@pytest.mark.rule("INV-LOCATION-BY-NAME", "INV-FIELD-LENGTH", "INV-RECORD-SHAPE")
def test_location_given_by_uuid_or_by_name(inv, place) -> None:
    """The read's location field is our choice, so this test also runs the (assumed) update."""
    location, name = place  # its name as long as an invitation's location may be
    for given in (location, name):
        assert inv.read(inv.new(location=given))["location"] == location, given
    registration = inv.new()
    assert inv.put(registration, location=name).status_code == 200
    assert inv.read(registration)["location"] == location
    for outside in ("y", name + "y"):
        refused(inv.post(location=outside), "location")


@pytest.mark.rule("INV-LOCATION-UNKNOWN-NAME-DEFAULT", "INV-LOCATION-BY-NAME")
@pytest.mark.requires("control")
def test_unknown_location_name_follows_the_administrator_setting(
    inv, control, factories, place
) -> None:
    unknown, (_, known) = factories.tag("nowhere"), place
    with control.settings_changed(location_name_tolerant=False):
        refused(inv.post(inv.documented(location=unknown)), "location")
        inv.create(inv.documented(location=known))  # a known name is no unrecognised one
    with control.settings_changed(location_name_tolerant=True):
        inv.create(inv.documented(location=unknown))


@pytest.mark.rule("INV-LOCATION-UNKNOWN-NAME-DEFAULT", "INV-LOCATION-BY-NAME")
@pytest.mark.requires("control")
def test_unknown_location_name_on_update_follows_the_setting(inv, control, factories) -> None:
    unknown, registration = factories.tag("nowhere"), inv.new()
    with control.settings_changed(location_name_tolerant=False):
        refused(inv.put(registration, location=unknown), "location")
    with control.settings_changed(location_name_tolerant=True):
        assert inv.put(registration, location=unknown).status_code == 200


@pytest.mark.rule("INV-MANDATORY-FIELDS-DEFAULT")
def test_first_name_is_mandatory(inv) -> None:
    refused(inv.post(firstName=None), "firstName")
    inv.create(lastName=None, email=None, mobile=None)


@pytest.mark.rule("INV-MANDATORY-FIELDS-DEFAULT")
@pytest.mark.requires("control")
def test_mandatory_visitor_fields_follow_the_administrator_setting(inv, control, factories):
    with control.settings_changed(mandatory_visitor_fields=["firstName", "identityNumber"]):
        refused(inv.post(), "identityNumber")
        inv.create(identityNumber=factories.tag("id"))


# -- field checks -------------------------------------------------------------------------
@pytest.mark.rule("INV-FIELD-REQUIRED")
@pytest.mark.parametrize("missing", ["activation", "expiry", "hostUser"])
def test_create_needs_activation_expiry_and_host(inv, missing: str) -> None:
    refused(inv.post(**{missing: None}), missing)


def sized(factories: Any, field: str, length: int) -> str:
    if field == "email":  # well formed: a 20-letter local part, domain labels under 64
        return "v" * 20 + "@" + "a" * 40 + "." + "b" * (length - 66) + ".com"
    return factories.tag(field[:3]).ljust(length, "x")[:length]


@pytest.mark.rule("INV-FIELD-LENGTH")
@pytest.mark.parametrize(
    "field",
    ["firstName", "lastName", "identityNumber", "alternativeNumber", "visitType", "email",
     "comments"],
)  # fmt: skip
def test_text_field_lengths(inv, factories, field: str) -> None:
    high = length_range("createInvite", field)[1]
    inv.create(**{field: sized(factories, field, high)})
    refused(inv.post(**{field: sized(factories, field, high + 1)}), field)
    refused(inv.put(inv.new(), **{field: sized(factories, field, high + 1)}), field)


MALFORMED_EMAILS = ["visitor.example.com", "visitor@"]


@pytest.mark.rule("INV-FIELD-EMAIL")
@pytest.mark.parametrize("value", MALFORMED_EMAILS)
def test_malformed_email_answers_422(inv, value: str) -> None:
    sent = inv.documented(email=value)
    refused(inv.post(sent), "email")
    assert sent["last_name"] not in inv.last_names()


@pytest.mark.rule("INV-FIELD-EMAIL")
@pytest.mark.parametrize("value", MALFORMED_EMAILS)
def test_malformed_email_on_update_answers_422(inv, value: str) -> None:
    refused(inv.put(inv.new(), email=value), "email")


@pytest.mark.rule("INV-FIELD-PHONE")
@pytest.mark.parametrize("value", ["0821234567", "+27 82-12"])
def test_malformed_mobile_answers_422(inv, value: str) -> None:
    refused(inv.post(mobile=value), "mobile")
    refused(inv.put(inv.new(), mobile=value), "mobile")


@pytest.mark.rule("INV-FIELD-ENUM")
def test_credential_type_is_pin_or_qr_code(inv, factories) -> None:
    assert inv.create()["type"] == inv.create(type="QR_CODE")["type"] == "QR_CODE"
    pin = inv.create(type="PIN")
    assert pin["type"] == "PIN" and str(pin["accessCode"]).isdigit()
    for wrong in ("OTHER", factories.wrong_enum("createInvite", "type")):
        refused(inv.post(type=wrong), "type")
        refused(inv.put(pin["registrationId"], type=wrong), "type")
    assert inv.read(pin["registrationId"])["type"] == "PIN"


@pytest.mark.rule("INV-EXPIRY-AFTER-ACTIVATION")
def test_expiry_must_be_later_than_activation(inv) -> None:
    minute = (inv.now() + timedelta(days=1)).replace(second=0, microsecond=0)
    for start, end in ((10, 5), (10, 10), (3600, 0)):  # seconds; rounding would hide the first
        window = {
            "activation": minute + timedelta(seconds=start),
            "expiry": minute + timedelta(seconds=end),
        }
        refused(inv.post(inv.body(**{k: iso(v) for k, v in window.items()})), "expiry")
    registration = inv.new(start_h=24, hours=8)
    stored = inv.read(registration)
    before_start = iso(instant(stored["activation"]) - timedelta(minutes=5))
    refused(inv.put(registration, expiry=before_start), "expiry")
    after_end = iso(instant(stored["expiry"]) + timedelta(minutes=5))
    refused(inv.put(registration, activation=after_end), "expiry")
    assert inv.read(registration) == stored


# -- watchlist ----------------------------------------------------------------------------
@pytest.mark.rule("INV-WATCHLIST-451", "ERR-451-FINAL", "WL-CONSULTED-ON-ARRIVAL")
@pytest.mark.parametrize("by", ["identityNumber", "name"])
def test_watchlist_match_answers_451_every_time(inv, factories, listing, by: str) -> None:
    sent = inv.documented(identityNumber=factories.tag("id"))
    names = {"firstName": sent["first_name"], "lastName": sent["last_name"]}
    put_on_list(
        inv.api,
        listing,
        **({"identityNumber": sent["identity_number"]} if by == "identityNumber" else names),
    )
    for _ in range(2):
        response = inv.post(sent)
        assert response.status_code == 451, response.text
        assert not {"registrationId", "accessCode", "inviteLink"} & set(response.json())
    assert sent["last_name"] not in inv.last_names()


# -- update (the lifecycle module covers the other assumed operations) -------------------
@pytest.mark.rule("INV-UPDATE-200", "INV-FIELD-REQUIRED")
def test_update_changes_only_the_fields_sent(inv, factories) -> None:
    registration = inv.new(identityNumber=factories.tag("id"), type="PIN")
    before, new_name = inv.read(registration), factories.tag("last")
    assert inv.put(registration, lastName=new_name).status_code == 200
    after = inv.read(registration)
    assert after["lastName"] == new_name
    unchanged = READ_FIELDS - {"lastName", "status", "inviteTextMessage"}
    assert {f: after[f] for f in unchanged} == {f: before[f] for f in unchanged}
