"""Users: login accounts with a role, a generated username, a hidden password and a cascade.

Also lists what a user hosts: the invitations in a fixed window around now, and the
registrations paged by their registration state.
"""

from __future__ import annotations

import hashlib
import secrets
import string
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server._errors import conflict
from reference_server._time import format_instant, parse_instant
from reference_server.domain import handles
from reference_server.domain._common import (
    check_references,
    fetch,
    paged,
    schema_fields,
    unique_or_409,
)
from reference_server.domain.persons import (
    CRITERIA,
    claim_photo,
    criteria_of,
    drop_photo,
    faulty_holdings,
    matches,
    new_qr_code,
    photo_fields,
    prepare_photo,
    relink,
    row,
)
from reference_server.store import Record

# Body fields kept on the record; the password is kept only as a hash, the rest is one-shot.
_WRITE_ONLY = ("password", "sendOnBoardingMessage", "photoUuid")
FIELDS = [f for f in schema_fields("UserBody") if f not in _WRITE_ONLY]
REFERENCES = {
    "role": "role",
    "location": "location",
    "group": "group",
    "organisation": "organisation",
    "department": "department",
}
# query parameter of the deprecated list -> record field
_LIST_PARAMS = {
    "first_name": "firstName",
    "last_name": "lastName",
    "mobile": "mobile",
    "email": "email",
    "identity_nr": "identityNumber",
}
INVITE_ENTRY_FIELDS = [f for f in schema_fields("UserInviteEntry") if f != "registrationId"]
REGISTRATION_FILTERS = {
    "FINALISED": "FINALISED",
    "APPROVE": "APPROVE",
    "WAITING": "WAITING",
}
WINDOW_BACK = timedelta(days=62)
WINDOW_AHEAD = timedelta(days=365)


def password_hash(password: str) -> str:
    return hashlib.sha256(password.encode()).hexdigest()


def generated_password() -> str:
    """A random password that meets the policy (one of each character class, no spaces)."""
    pick = secrets.choice
    chars = [pick(string.ascii_uppercase), pick(string.ascii_lowercase), pick(string.digits)]
    chars += [pick("!#$%&*+-=?@^_")]
    chars += [pick(string.ascii_letters + string.digits) for _ in range(12)]
    secrets.SystemRandom().shuffle(chars)
    return "".join(chars)


def _generated_username() -> str:
    # Nobody knows it, so the account can only be reached by single sign-on or the API.
    return f"sso-{secrets.token_hex(8)}"


def _default_role(call: Call) -> str | None:
    defaults = call.server.store.all("role", call.system, lambda r: bool(r.get("default")))
    return defaults[0]["uuid"] if defaults else None


def _read(call: Call, record: Record) -> dict[str, Any]:
    shown = {"uuid": record["uuid"], **{f: record.get(f) for f in FIELDS}}
    # Only the empty string ever leaves the server (the fault shows the stored hash).
    shown["password"] = ""
    if call.server.faults.on("user-password-returned"):
        shown["password"] = record.get("_password") or ""
    if call.server.faults.on("user-read-drops-department"):
        shown["department"] = None
    return {**shown, **photo_fields(call, record)}


def _build(call: Call, current: Record | None) -> dict[str, Any]:
    """The account rebuilt from the body alone, with the documented defaults filled in."""
    body, faults = call.body, call.server.faults
    data = {f: body.get(f) for f in FIELDS}
    if current is not None and faults.on("user-put-keeps-omitted"):
        kept = [f for f in FIELDS if f not in ("username", "role", "enabled")]
        data.update({f: body.get(f, current.get(f)) for f in kept})
    if data["role"] is None:
        data["role"] = _default_role(call)
        if current is not None and faults.on("user-put-keeps-role"):
            data["role"] = current.get("role")
        if current is None and faults.on("user-default-role-unset"):
            data["role"] = None
    generated = data["username"] is None
    if generated:
        data["username"] = _generated_username()
        if current is None and faults.on("user-username-not-generated"):
            data["username"] = None
        if current is not None and faults.on("user-put-keeps-username"):
            data["username"] = current.get("username")
    if data["enabled"] is None:
        data["enabled"] = True
    data["_passwordLogin"] = not generated
    return data


def _password_of(call: Call, current: Record | None) -> tuple[str | None, str | None]:
    """(stored hash, password to mail) for this write.

    Leaving password out of a replace keeps the stored one (it is write-only, like the photo).
    A welcome e-mail requested on create without a password gets a fresh password, which that
    e-mail carries.
    """
    body = call.body
    if body.get("password") is not None:
        return password_hash(body["password"]), None
    if current is None and body.get("sendOnBoardingMessage"):
        fresh = generated_password()
        return password_hash(fresh), fresh
    return (current or {}).get("_password"), None


def _send_onboarding(call: Call, uuid: str, email: str, password: str | None) -> None:
    """The welcome e-mail, kept in the simulated outbox (the server sends no real mail)."""
    call.server.store.insert(
        "outbox",
        call.system,
        {
            "kind": "onboarding",
            "to": email,
            "user": uuid,
            "password": password,
            "at": format_instant(call.server.clock.now()),
        },
    )


def _unique(call: Call, data: Mapping[str, Any]) -> dict[str, Any]:
    if call.server.faults.on("user-duplicate-username-allowed"):
        return {"email": data.get("email")}
    return {"email": data.get("email"), "username": data.get("username")}


def _checked_references(call: Call) -> None:
    faults = call.server.faults
    checked = dict(REFERENCES)
    if faults.on("user-reference-unchecked"):
        checked = {"role": "role"}
    if faults.on("user-role-unchecked"):
        checked.pop("role")
    if faults.on("user-cost-center-checked"):
        # Users carry no cost center; the fault checks one like a reference all the same.
        checked["costCenter"] = "cost_center"
    check_references(call, call.body, checked)


@handles("listUsersDeprecated")
async def list_users_deprecated(call: Call) -> Response:
    params = dict(_LIST_PARAMS)
    if call.server.faults.on("user-list-ignores-identity-nr"):
        params.pop("identity_nr")
    criteria = {field: call.query[p] for p, field in params.items() if p in call.query}
    found = call.server.store.all("user", call.system, lambda r: matches(r, criteria))
    return paged([row(r) for r in found], call.query["start"], call.query["limit"])


@handles("searchUsers")
async def search_users(call: Call) -> Response:
    names = dict(CRITERIA)
    if call.server.faults.on("user-search-unknown-criterion-applied"):
        names["mobile"] = "mobile"
    criteria = criteria_of(call.body, names)
    prefix_only = call.server.faults.on("user-search-prefix-only")
    found = call.server.store.all(
        "user", call.system, lambda r: matches(r, criteria, prefix_only=prefix_only)
    )
    extra = ("username",) if call.server.faults.on("user-search-rows-carry-username") else ()
    rows = [row(r, extra) for r in found]
    return paged(rows, call.body.get("start", 0), call.body.get("limit", 500))


@handles("getUser")
async def get_user(call: Call) -> Response:
    return reply(200, _read(call, fetch(call, "user", call.path["uuid"])))


@handles("createUser")
async def create_user(call: Call) -> Response:
    _checked_references(call)
    data = _build(call, None)
    hashed, mailed = _password_of(call, None)
    store = call.server.store
    await prepare_photo(call)
    with store.transaction(), unique_or_409("user"):
        photo_id = None
        if not call.server.faults.on("user-create-ignores-photo"):
            photo_id = claim_photo(call, call.body, None)
        record = {
            **data,
            "hasPhoto": bool(photo_id),
            "photoId": photo_id,
            "_password": hashed,
            "_qrCode": new_qr_code(),
            "_sessions_revoked_at": None,
        }
        uuid = store.insert("user", call.system, record, unique=_unique(call, data))
        welcome = call.body.get("sendOnBoardingMessage")
        if welcome and not call.server.faults.on("onboarding-message-not-sent"):
            _send_onboarding(call, uuid, data["email"], mailed)
    return ack(uuid, 201)


@handles("updateUser")
async def update_user(call: Call) -> Response:
    current = fetch(call, "user", call.path["uuid"])
    _checked_references(call)
    data = _build(call, current)
    hashed, _ = _password_of(call, current)
    store = call.server.store
    await prepare_photo(call)
    with store.transaction(), unique_or_409("user"):
        photo_id = claim_photo(call, call.body, current.get("photoId"))
        record = {
            **data,
            "hasPhoto": bool(photo_id),
            "photoId": photo_id,
            "_password": hashed,
            "_qrCode": current.get("_qrCode"),
            "_sessions_revoked_at": current.get("_sessions_revoked_at"),
        }
        # The welcome e-mail belongs to account creation; a replace never sends it.
        store.replace("user", current["uuid"], record, unique=_unique(call, data))
    return ack(current["uuid"])


@handles("deleteUser")
async def delete_user(call: Call) -> Response:
    record = fetch(call, "user", call.path["uuid"])
    from reference_server.domain import credentials, invites

    server, store = call.server, call.server.store
    if server.faults.on("user-delete-disables-only"):
        store.replace("user", record["uuid"], {**record, "enabled": False})
        return ack(record["uuid"])
    with store.transaction():
        if not server.faults.on("user-delete-keeps-invites"):
            invites.cancel_hosted(server, call.system, record["uuid"])
        faults = ("user-delete-keeps-holder", "user-delete-keeps-qr-code")
        held = faulty_holdings(call, record["uuid"], *faults)
        credentials.unlink_holder(server, call.system, record["uuid"])
        relink(call, held, qr_only=not server.faults.on(faults[0]))
        # The QR code goes first, and the hardware forgets it, then the account itself.
        revoked = format_instant(server.clock.now())
        store.replace(
            "user", record["uuid"], {**record, "_qrCode": None, "_sessions_revoked_at": revoked}
        )
        credentials.sync_hardware(server, call.system)
        drop_photo(call, record)
        store.delete("user", record["uuid"])
    return ack(record["uuid"])


async def _set_enabled(call: Call, enabled: bool) -> Response:
    record = fetch(call, "user", call.path["uuid"])
    already = bool(record.get("enabled")) == enabled
    if already and not call.server.faults.on("user-enable-twice-accepted"):
        raise conflict(f"the user is already {'enabled' if enabled else 'disabled'}")
    changed = {**record, "enabled": enabled}
    if not enabled:
        # Sign-in stops at once: sessions opened before this moment are no longer honoured.
        changed["_sessions_revoked_at"] = format_instant(call.server.clock.now())
        if call.server.faults.on("user-disable-suspends-credentials"):
            _suspend_credentials(call, record["uuid"])
    if enabled and call.server.faults.on("user-enable-ignored"):
        return ack(record["uuid"])
    call.server.store.replace("user", record["uuid"], changed)
    return ack(record["uuid"])


def _suspend_credentials(call: Call, user_uuid: str) -> None:
    store = call.server.store
    for held in store.all("credential", call.system, lambda r: r.get("holderUuid") == user_uuid):
        store.replace("credential", held["uuid"], {**held, "enabled": False})


@handles("enableUser")
async def enable_user(call: Call) -> Response:
    return await _set_enabled(call, True)


@handles("disableUser")
async def disable_user(call: Call) -> Response:
    return await _set_enabled(call, False)


def _hosted(call: Call, user_uuid: str) -> list[dict[str, Any]]:
    from reference_server.domain import invites

    return list(invites.hosted_by(call.server, call.system, user_uuid))


def invite_entry(invite: Mapping[str, Any]) -> dict[str, Any]:
    """One hosted invitation as the user listings show it."""
    return {
        "registrationId": invite["uuid"],
        **{f: invite.get(f) for f in INVITE_ENTRY_FIELDS},
    }


def _in_window(invite: Mapping[str, Any], earliest: Any, latest: Any) -> bool:
    """Whether the invitation's validity overlaps [earliest, latest]."""
    try:
        starts = parse_instant(invite["activation"])
        ends = parse_instant(invite["expiry"])
    except (KeyError, TypeError, ValueError):
        return False
    return starts <= latest and ends >= earliest


@handles("listUserInvites")
async def list_user_invites(call: Call) -> Response:
    user = fetch(call, "user", call.path["uuid"])
    now = call.server.clock.now()
    back = timedelta(days=30) if call.server.faults.on("user-invites-window-30-days-back") else None
    earliest, latest = now - (back or WINDOW_BACK), now + WINDOW_AHEAD
    hosted = [i for i in _hosted(call, user["uuid"]) if _in_window(i, earliest, latest)]
    entries = [invite_entry(i) for i in hosted]
    if call.server.faults.on("user-invite-entry-no-text-message"):
        entries = [{**e, "inviteTextMessage": None} for e in entries]
    return reply(200, entries)


@handles("listUserRegistrations")
async def list_user_registrations(call: Call) -> Response:
    user = fetch(call, "user", call.path["uuid"])
    # Any value other than the three named states lists everything, like ALL.
    status = call.query.get("status") or "ALL"
    wanted = REGISTRATION_FILTERS.get(status)
    if status not in (*REGISTRATION_FILTERS, "ALL") and call.server.faults.on(
        "user-registrations-unknown-status-empty"
    ):
        wanted = status
    entries = [
        {**invite_entry(i), "registrationStatus": i.get("registrationStatus")}
        for i in _hosted(call, user["uuid"])
        if wanted is None or i.get("registrationStatus") == wanted
    ]
    start = call.query["start"]
    if call.server.faults.on("user-registrations-ignore-start"):
        start = 0
    return paged(entries, start, call.query["limit"])
