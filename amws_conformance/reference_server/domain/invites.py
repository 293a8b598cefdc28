"""Visitor invitations: create, read, list and update; the lifecycle lives in ``visits``.

Choices where the documents are silent (each is an ``assumed`` rule or noted there):

* Spellings: first_name, last_name, identity_number, alternative_number and visit_type mean
  the same as their camelCase forms. When a body carries both spellings of one field the
  camelCase value wins. Reads only ever show camelCase.
* References: hostUser must be a user and visitReason a visit reason of the caller's system
  (422 naming the field). The reason's name is kept with the visit, so deleting the reason later
  leaves the recorded text (webhook ``reason``); reads then show visitReason null, as they show
  location null for a deleted location.
* location: a location UUID, or the name of a location (compared ignoring case). A name that
  matches nothing is refused with 422 unless the administrator setting
  ``location_name_tolerant`` is on; then the text is kept with the visit and location reads
  null. A UUID-shaped value that names no location is always refused: it is a reference.
* Mandatory visitor fields come from the setting ``mandatory_visitor_fields`` (default
  firstName); a blank value counts as missing. The check applies to the merged record on update.
* Window: expiry must be later than activation, compared as sent (before rounding); on update
  the stored value stands in for the one not sent. Activation is stored truncated to its
  minute, expiry at second 59 of its minute.
* Order of answers: 404, 422 (fields, references, window), 451 (watchlist), then on update
  409 (visit ended) and 425 (nothing would change). A watchlist match denies: a new
  registration is kept only as a ``denied_visit`` record (no invitation, visitor, credential or
  link is created, so repeating the request gives 451 again) and the VISIT_DENIED event is sent;
  an update of a pre-arrival visit moves that visit to VISIT_DENIED.
* Visitors: a registration reuses the visitor on record with the same identityNumber, or else
  the same email (both ignoring case); otherwise a new visitor is created. visitorUUID filters
  the list on it.
* registrationStatus is FINALISED for every invitation: this interface has no approval step,
  so APPROVE and WAITING are never produced.
* listInvites filter, against the server clock: CURRENT = activation <= now <= expiry,
  FUTURE = activation > now, PAST = expiry < now, ALL = everything. The value is read
  ignoring case and any other value means ALL.
* An accepted update of a pre-arrival visit moves it to VISIT_UPDATED (and sends that event);
  a checked-in visit may still be corrected, keeping its status and sending no event. A changed
  credential type issues a new credential (new access code); a changed window moves the
  existing credential's window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack, reply
from amws_conformance.reference_server._errors import ApiError, conflict, invalid_fields
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._time import (
    ceil_minute_last_second,
    floor_minute,
    format_instant,
    parse_instant,
)
from amws_conformance.reference_server._validation import is_uuid
from amws_conformance.reference_server.domain import credentials, handles
from amws_conformance.reference_server.domain._common import schema_fields
from amws_conformance.reference_server.domain.visits import (
    CREATED,
    DENIED,
    ENDED,
    KIND,
    PRE_ARRIVAL,
    UPDATED,
    WATCHLIST_DENIAL,
    cancel_hosted,
    emit,
    fetch_invite,
    hosted_by,
    move,
    on_grant,
    on_watchlist,
)
from amws_conformance.reference_server.store import Record

__all__ = ["cancel_hosted", "hosted_by", "move", "on_grant"]

# camelCase name -> the older underscore spelling accepted beside it
SPELLINGS = {
    "firstName": "first_name",
    "lastName": "last_name",
    "identityNumber": "identity_number",
    "alternativeNumber": "alternative_number",
    "visitType": "visit_type",
}
VISITOR_FIELDS = (
    "firstName",
    "lastName",
    "email",
    "mobile",
    "identityNumber",
    "alternativeNumber",
)
# Written as sent (after choosing the spelling); the others are resolved or rounded first.
_PLAIN = (*VISITOR_FIELDS, "visitType", "type", "comments")
_BODY_FIELDS = (*_PLAIN, "activation", "expiry", "hostUser", "visitReason", "location")
_READ_FIELDS = [f for f in schema_fields("Invite") if f != "registrationId"]
_ENTRY_FIELDS = [f for f in schema_fields("InviteListEntry") if f != "registrationId"]
_RECORD_DEFAULTS: dict[str, Any] = {
    **{f: None for f in _READ_FIELDS},
    "_locationText": None,
    "_visitReasonText": None,
    "comments": None,
    "registrationStatus": "FINALISED",
    "_credential": None,
}
DENIED_KIND = "denied_visit"
FINALISED = "FINALISED"
DEFAULT_TYPE = "QR_CODE"


class InvitePolicy(Policy):
    """The decisions inside the invitation steps, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Reading the body.
    def reads_underscore_spellings(self, operation_id: str) -> bool:
        """Whether a body's underscore spellings are read: on create and on update alike."""
        return True

    def stored_activation(self, text: str) -> str:
        """The activation as stored: truncated to its minute."""
        return format_instant(floor_minute(parse_instant(text)))

    def stored_expiry(self, text: str) -> str:
        """The expiry as stored: at second 59 of its minute."""
        return format_instant(ceil_minute_last_second(parse_instant(text)))

    # References.
    def requires_known_host(self) -> bool:
        """Whether hostUser must name a user of the system."""
        return True

    def location_by_name(self, uuid: str, text: str) -> tuple[str | None, str | None]:
        """(location, kept text) for a name that matches a location: that location."""
        return uuid, None

    def accepts_unknown_location_name(self) -> bool:
        """Whether a location name that matches nothing is kept as text: per the setting."""
        return bool(self.server.settings.get("location_name_tolerant"))

    # Watchlist denial.
    def refuses_visitor(self, system: str, visit: Mapping[str, Any]) -> bool:
        """Whether the watchlists refuse this visitor now: an enabled one names them."""
        return on_watchlist(self.server, system, visit)

    # Credential and answers.
    def credential_activation(self, visit: Mapping[str, Any]) -> str | None:
        """When the visitor credential becomes valid: at the visit's activation."""
        return visit.get("activation")

    def created_message(self) -> str:
        """The message of a create's 201 answer."""
        return "created"

    def registration_id_shown(self, record: Mapping[str, Any]) -> str | None:
        """The registrationId a read shows: the invitation's own."""
        return record["uuid"]

    # Update.
    def denial_ends_visit(self, status: str) -> bool:
        """Whether an update refused by a watchlist moves the visit to VISIT_DENIED."""
        return status in PRE_ARRIVAL

    def updates_visit_in(self, status: str) -> bool:
        """Whether a visit in this status may still be updated: not once it has ended."""
        return status not in ENDED

    def refuses_identical_update(self) -> bool:
        """Whether an update that would change nothing answers 425."""
        return True


# -- reading the body ---------------------------------------------------------------------
def spelled(call: Call) -> dict[str, Any]:
    """The body's invitation fields under their camelCase names (camelCase wins over _)."""
    body = call.body
    read_old = call.server.policy(InvitePolicy).reads_underscore_spellings(call.op.operation_id)
    given = {}
    for field in _BODY_FIELDS:
        old = SPELLINGS.get(field)
        if field in body:
            given[field] = body[field]
        elif old in body and read_old:
            given[field] = body[old]
    return given


def _location(call: Call, text: str) -> tuple[str | None, str | None] | None:
    """(location uuid, kept text) for a UUID or a name; None when it cannot be accepted."""
    store, system = call.server.store, call.system
    policy = call.server.policy(InvitePolicy)
    if is_uuid(text):
        return (text, None) if store.get("location", text, system) else None
    by_name = store.find_unique("location", system, "name", text)
    if by_name:
        return policy.location_by_name(by_name, text)
    if policy.accepts_unknown_location_name():
        return None, text
    return None


def _references(call: Call, given: Mapping[str, Any], errors: dict[str, str]) -> dict[str, Any]:
    """Stored values of hostUser, visitReason and location; problems go into ``errors``."""
    store, system = call.server.store, call.system
    values: dict[str, Any] = {}
    missing = "refers to a record that does not exist"
    if "hostUser" in given:
        host_known = store.get("user", given["hostUser"], system) is not None
        if not host_known and call.server.policy(InvitePolicy).requires_known_host():
            errors["hostUser"] = missing
        values["hostUser"] = given["hostUser"]
    if "visitReason" in given:
        reason = store.get("visit_reason", given["visitReason"], system)
        if reason is None:
            errors["visitReason"] = missing
        else:
            values["visitReason"] = reason["uuid"]
            values["_visitReasonText"] = reason["name"]
    if "location" in given:
        found = _location(call, given["location"])
        if found is None:
            errors["location"] = "matches no location"
        else:
            values["location"], values["_locationText"] = found
    return values


def _window_error(
    given: Mapping[str, Any], current: Mapping[str, Any] | None, errors: dict[str, str]
) -> None:
    """Expiry must be later than activation, as sent (stored values stand in on update)."""
    activation = given.get("activation") or (current or {}).get("activation")
    expiry = given.get("expiry") or (current or {}).get("expiry")
    if activation and expiry and parse_instant(expiry) <= parse_instant(activation):
        errors["expiry"] = "must be later than activation"


def _mandatory_errors(call: Call, merged: Mapping[str, Any], errors: dict[str, str]) -> None:
    underscored = {old: new for new, old in SPELLINGS.items()}
    for name in call.server.settings.get("mandatory_visitor_fields") or []:
        field = underscored.get(name, name)
        value = merged.get(field)
        if value is None or (isinstance(value, str) and not value.strip()):
            errors.setdefault(field, "is required")


def resolved(call: Call, given: Mapping[str, Any], current: Record | None) -> dict[str, Any]:
    """The values to store for the fields given; 422 naming every field that cannot be."""
    errors: dict[str, str] = {}
    values = {f: given[f] for f in _PLAIN if f in given}
    values.update(_references(call, given, errors))
    _window_error(given, current, errors)
    policy = call.server.policy(InvitePolicy)
    if "activation" in given:
        values["activation"] = policy.stored_activation(given["activation"])
    if "expiry" in given:
        values["expiry"] = policy.stored_expiry(given["expiry"])
    _mandatory_errors(call, {**(current or {}), **values}, errors)
    if errors:
        raise invalid_fields(errors)
    return values


# -- watchlist denial ---------------------------------------------------------------------
def _denied(call: Call, visit: Mapping[str, Any]) -> bool:
    """Whether an enabled watchlist refuses this visitor now."""
    return call.server.policy(InvitePolicy).refuses_visitor(call.system, visit)


def _record_denial(call: Call, visit: Mapping[str, Any]) -> None:
    """Keep the refused registration (status VISIT_DENIED) and send its event."""
    record = {**visit, "status": DENIED, "registrationStatus": None, "visitorId": None}
    uuid = call.server.store.insert(DENIED_KIND, call.system, record)
    emit(call.server, call.system, DENIED, {**record, "uuid": uuid})


# -- visitors, credentials, links ---------------------------------------------------------
def _same_key(field: str, value: Any) -> Callable[[Record], bool]:
    wanted = str(value).casefold()
    return lambda r: bool(r.get(field)) and str(r[field]).casefold() == wanted


def _visitor_for(call: Call, visit: Mapping[str, Any], reuse: str | None = None) -> str:
    """The visitor record for these details (found or created), updated with them."""
    store, system = call.server.store, call.system
    details = {f: visit.get(f) for f in VISITOR_FIELDS}
    found = store.get("visitor", reuse, system) if reuse else None
    for key in ("identityNumber", "email"):
        if found is None and details.get(key):
            found = next(iter(store.all("visitor", system, _same_key(key, details[key]))), None)
    if found is None:
        return store.insert("visitor", system, {**details, "company": None})
    given = {k: v for k, v in details.items() if v not in (None, "")}
    store.replace("visitor", found["uuid"], {**found, **given})
    return found["uuid"]


def _issue(call: Call, visit: Record) -> dict[str, Any]:
    activation = call.server.policy(InvitePolicy).credential_activation(visit)
    visit = {**visit, "activation": activation}
    credential, code = credentials.issue_visitor_credential(
        call.server, call.system, visit, visit["type"]
    )
    return {"_credential": credential, "accessCode": None if code is None else str(code)}


def _retime(call: Call, credential_uuid: str | None, visit: Mapping[str, Any]) -> None:
    """Give the visit's existing credential the visit's new window."""
    store = call.server.store
    record = store.get("credential", credential_uuid, call.system) if credential_uuid else None
    if record is None:
        return
    window = {"activeDate": visit["activation"], "expiryDate": visit["expiry"]}
    store.replace("credential", record["uuid"], {**record, **window})
    credentials.announce_change(call.server, call.system)


def _links(call: Call, visit: Mapping[str, Any]) -> dict[str, Any]:
    """The invitation link, QR code link and message a visitor would be sent."""
    base = str(call.request.base_url).rstrip("/")
    link = f"{base}/visitor/invitations/{visit['uuid']}"
    qr = f"{link}/qr-code.png" if visit["type"] == "QR_CODE" else None
    greeting = f"Hello {visit['firstName']}" if visit.get("firstName") else "Hello"
    text = (
        f"{greeting}, your visit is booked from {visit['activation']} to {visit['expiry']} "
        f"(UTC). Your access code is {visit['accessCode']}. Details: {link}"
    )
    return {"inviteLink": link, "qrCodeUrl": qr, "inviteTextMessage": text}


# -- shapes -------------------------------------------------------------------------------
def _live_reference(call: Call, kind: str, uuid: str | None) -> str | None:
    """A reference as read: null once the referenced record has been deleted."""
    if uuid and call.server.store.get(kind, uuid, call.system) is not None:
        return uuid
    return None


def invite_shape(call: Call, record: Mapping[str, Any]) -> dict[str, Any]:
    registration = call.server.policy(InvitePolicy).registration_id_shown(record)
    shown = {"registrationId": registration, **{f: record.get(f) for f in _READ_FIELDS}}
    shown["location"] = _live_reference(call, "location", record.get("location"))
    shown["visitReason"] = _live_reference(call, "visit_reason", record.get("visitReason"))
    return shown


def entry_shape(record: Mapping[str, Any]) -> dict[str, Any]:
    return {"registrationId": record["uuid"], **{f: record.get(f) for f in _ENTRY_FIELDS}}


# -- handlers -----------------------------------------------------------------------------
@handles("createInvite")
async def create_invite(call: Call) -> Response:
    server, store = call.server, call.server.store
    visit = {**_RECORD_DEFAULTS, **resolved(call, spelled(call), None)}
    visit["type"] = visit["type"] or DEFAULT_TYPE
    if _denied(call, visit):
        _record_denial(call, visit)
        raise ApiError(451, WATCHLIST_DENIAL)
    with store.transaction():
        visit["visitorId"] = _visitor_for(call, visit)
        uuid = store.insert(KIND, call.system, visit)
        stored = store.stored(KIND, uuid)
        stored.update(_issue(call, stored))
        stored.update(_links(call, stored))
        store.replace(KIND, uuid, stored)
        move(server, call.system, uuid, CREATED)
    message = server.policy(InvitePolicy).created_message()
    answer = {"code": 201, "message": message, "registrationId": uuid}
    answer.update({f: stored[f] for f in ("visitorId", "type", "accessCode", "inviteLink")})
    return reply(201, answer)


@handles("getInvite")
async def get_invite(call: Call) -> Response:
    return reply(200, invite_shape(call, fetch_invite(call)))


def _apply(call: Call, record: Record, values: Mapping[str, Any]) -> None:
    """Write an accepted update: credential, links, visitor, then the status move."""
    server, store = call.server, call.server.store
    changed = {**record, **values}
    with store.transaction():
        if changed["type"] != record["type"]:
            old = record.get("_credential")
            if old:
                credentials.revoke(server, call.system, old)
            changed.update(_issue(call, changed))
        elif (changed["activation"], changed["expiry"]) != (record["activation"], record["expiry"]):
            _retime(call, record.get("_credential"), changed)
        changed.update(_links(call, changed))
        _visitor_for(call, changed, reuse=record.get("visitorId"))
        store.replace(KIND, record["uuid"], changed)
        if record["status"] in PRE_ARRIVAL:
            move(server, call.system, record["uuid"], UPDATED)


@handles("updateInvite")
async def update_invite(call: Call) -> Response:
    record = fetch_invite(call)
    policy = call.server.policy(InvitePolicy)
    values = resolved(call, spelled(call), record)
    if _denied(call, {**record, **values}):
        if policy.denial_ends_visit(record["status"]):
            move(call.server, call.system, record["uuid"], DENIED)
        raise ApiError(451, WATCHLIST_DENIAL)
    if not policy.updates_visit_in(record["status"]):
        raise conflict("the visit has ended and can no longer be changed")
    # The reason's recorded text is bookkeeping, not a value the caller sent.
    identical = all(record.get(f) == v for f, v in values.items() if f != "_visitReasonText")
    if identical and policy.refuses_identical_update():
        raise ApiError(425, "the update is identical to the stored invitation; nothing changed")
    _apply(call, record, values)
    return ack(record["uuid"])
