"""Users: login accounts with a role, a generated username, a hidden password and a cascade.

Also lists what a user hosts: the invitations in a fixed window around now, and the
registrations paged by their registration state.

The decisions inside these steps are the methods of ``UserPolicy``; the handlers ask
``server.policy(UserPolicy)`` for the one in force, which is where the user faults
(``faults/_users.py``) plug in. This module holds the correct behaviour only.
"""

from __future__ import annotations

import hashlib
import secrets
import string
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack, reply
from amws_conformance.reference_server._errors import conflict
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._time import format_instant, parse_instant
from amws_conformance.reference_server.domain import credentials, handles, invites
from amws_conformance.reference_server.domain._common import (
    check_references,
    fetch,
    paged,
    schema_fields,
    unique_or_409,
)
from amws_conformance.reference_server.domain.persons import (
    CRITERIA,
    claim_photo,
    criteria_of,
    drop_photo,
    matches,
    new_qr_code,
    photo_fields,
    prepare_photo,
    relink,
    row,
)
from amws_conformance.reference_server.store import Record

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

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


def _default_role(server: ServerView, system: str) -> str | None:
    defaults = server.store.all("role", system, lambda r: bool(r.get("default")))
    return defaults[0]["uuid"] if defaults else None


def invite_entry(invite: Mapping[str, Any]) -> dict[str, Any]:
    """One hosted invitation as the user listings show it."""
    return {
        "registrationId": invite["uuid"],
        **{f: invite.get(f) for f in INVITE_ENTRY_FIELDS},
    }


class UserPolicy(Policy):
    """The decisions inside the user steps, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Read shape.
    def read_fields(self, record: Record) -> dict[str, Any]:
        """The account fields a read shows (the photo fields aside)."""
        shown = {"uuid": record["uuid"], **{f: record.get(f) for f in FIELDS}}
        # Only the empty string ever leaves the server: the password is write-only.
        shown["password"] = ""
        return shown

    # Create and replace.
    def written_fields(self, body: dict[str, Any], current: Record | None) -> dict[str, Any]:
        """The account fields a create or a replace (``current`` given) takes: the body's alone."""
        return {f: body.get(f) for f in FIELDS}

    def role_when_omitted(self, system: str, current: Record | None) -> str | None:
        """The role of an account written without one: the system's default role."""
        return _default_role(self.server, system)

    def username_when_omitted(self, current: Record | None) -> str | None:
        """The username of an account written without one: a generated one."""
        return _generated_username()

    def unique_fields(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The fields no two accounts of a system may share: e-mail and username."""
        return {"email": data.get("email"), "username": data.get("username")}

    def references_checked(self) -> dict[str, str]:
        """The body fields that must name an existing record, with the record kind."""
        return dict(REFERENCES)

    def attaches_photo_on_create(self) -> bool:
        """Whether a create's photoUuid attaches the photo."""
        return True

    def sends_onboarding_message(self) -> bool:
        """Whether a create asking for it sends the welcome e-mail."""
        return True

    # Lists and search.
    def list_parameters(self) -> dict[str, str]:
        """The deprecated list's query parameters, each with the field it filters."""
        return dict(_LIST_PARAMS)

    def search_criteria(self) -> dict[str, str]:
        """The search body's criteria, each with the field it filters."""
        return dict(CRITERIA)

    def search_matches_anywhere(self) -> bool:
        """Whether a search criterion matches anywhere in the field (not only at its start)."""
        return True

    def search_row_extra(self) -> tuple[str, ...]:
        """Fields a search row carries beside the documented ones: none."""
        return ()

    # Delete.
    def keeps_deleted_account(self) -> bool:
        """Whether DELETE keeps the account (disabled) instead of removing it."""
        return False

    def cancels_hosted_invites(self) -> bool:
        """Whether deleting a user cancels the invitations it hosts."""
        return True

    def keeps_holder_on_delete(self, credential: Record) -> bool:
        """Whether a credential of a deleted user keeps naming it as holder: none does."""
        return False

    # Enable and disable.
    def refuses_unchanged_enabled(self) -> bool:
        """Whether enabling an enabled user (or disabling a disabled one) answers 409."""
        return True

    def disabled(self, system: str, user_uuid: str) -> None:
        """A user is being disabled; nothing more to do on the correct server."""

    def writes_enabled(self, enabled: bool) -> bool:
        """Whether an enable (``enabled``) or a disable is stored."""
        return True

    # Hosted invitations and registrations.
    def invites_window_back(self) -> timedelta:
        """How far back the user's invitation list reaches."""
        return WINDOW_BACK

    def invite_list_entry(self, invite: Mapping[str, Any]) -> dict[str, Any]:
        """One entry of the user's invitation list."""
        return invite_entry(invite)

    def registration_filter(self, status: str) -> str | None:
        """The registration state a status parameter lists (None: every one)."""
        # Any value other than the three named states lists everything, like ALL.
        return REGISTRATION_FILTERS.get(status)

    def registrations_start(self, start: int) -> int:
        """The first registration of the page asked for from ``start``."""
        return start


def _read(call: Call, record: Record) -> dict[str, Any]:
    shown = call.server.policy(UserPolicy).read_fields(record)
    return {**shown, **photo_fields(call, record)}


def _build(call: Call, current: Record | None) -> dict[str, Any]:
    """The account rebuilt from the body alone, with the documented defaults filled in."""
    body, policy = call.body, call.server.policy(UserPolicy)
    data = policy.written_fields(body, current)
    if data["role"] is None:
        data["role"] = policy.role_when_omitted(call.system, current)
    generated = data["username"] is None
    if generated:
        data["username"] = policy.username_when_omitted(current)
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
    return call.server.policy(UserPolicy).unique_fields(data)


def _checked_references(call: Call) -> None:
    check_references(call, call.body, call.server.policy(UserPolicy).references_checked())


@handles("listUsersDeprecated")
async def list_users_deprecated(call: Call) -> Response:
    params = call.server.policy(UserPolicy).list_parameters()
    criteria = {field: call.query[p] for p, field in params.items() if p in call.query}
    found = call.server.store.all("user", call.system, lambda r: matches(r, criteria))
    return paged([row(r) for r in found], call.query["start"], call.query["limit"])


@handles("searchUsers")
async def search_users(call: Call) -> Response:
    policy = call.server.policy(UserPolicy)
    criteria = criteria_of(call.body, policy.search_criteria())
    prefix_only = not policy.search_matches_anywhere()
    found = call.server.store.all(
        "user", call.system, lambda r: matches(r, criteria, prefix_only=prefix_only)
    )
    extra = policy.search_row_extra()
    rows = [row(r, extra) for r in found]
    return paged(rows, call.body["start"], call.body["limit"])  # defaults from the spec


@handles("getUser")
async def get_user(call: Call) -> Response:
    return reply(200, _read(call, fetch(call, "user", call.path["uuid"])))


@handles("createUser")
async def create_user(call: Call) -> Response:
    _checked_references(call)
    data = _build(call, None)
    hashed, mailed = _password_of(call, None)
    store, policy = call.server.store, call.server.policy(UserPolicy)
    await prepare_photo(call)
    with store.transaction(), unique_or_409("user"):
        photo_id = None
        if policy.attaches_photo_on_create():
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
        if welcome and policy.sends_onboarding_message():
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
    server, store = call.server, call.server.store
    policy = server.policy(UserPolicy)
    if policy.keeps_deleted_account():
        store.replace("user", record["uuid"], {**record, "enabled": False})
        return ack(record["uuid"])
    with store.transaction():
        if policy.cancels_hosted_invites():
            invites.cancel_hosted(server, call.system, record["uuid"])
        # The credentials as they were before the unlink, for those that keep their holder.
        held = store.all("credential", call.system, lambda r: r.get("holderUuid") == record["uuid"])
        credentials.unlink_holder(server, call.system, record["uuid"])
        relink(call, [c for c in held if policy.keeps_holder_on_delete(c)])
        # The QR code goes first, and the hardware forgets it, then the account itself.
        revoked = format_instant(server.clock.now())
        store.replace(
            "user", record["uuid"], {**record, "_qrCode": None, "_sessions_revoked_at": revoked}
        )
        credentials.announce_change(server, call.system)
        drop_photo(call, record)
        store.delete("user", record["uuid"])
    return ack(record["uuid"])


async def _set_enabled(call: Call, enabled: bool) -> Response:
    record = fetch(call, "user", call.path["uuid"])
    policy = call.server.policy(UserPolicy)
    already = bool(record.get("enabled")) == enabled
    if already and policy.refuses_unchanged_enabled():
        raise conflict(f"the user is already {'enabled' if enabled else 'disabled'}")
    changed = {**record, "enabled": enabled}
    if not enabled:
        # Sign-in stops at once: sessions opened before this moment are no longer honoured.
        changed["_sessions_revoked_at"] = format_instant(call.server.clock.now())
        policy.disabled(call.system, record["uuid"])
    if not policy.writes_enabled(enabled):
        return ack(record["uuid"])
    call.server.store.replace("user", record["uuid"], changed)
    return ack(record["uuid"])


@handles("enableUser")
async def enable_user(call: Call) -> Response:
    return await _set_enabled(call, True)


@handles("disableUser")
async def disable_user(call: Call) -> Response:
    return await _set_enabled(call, False)


def _hosted(call: Call, user_uuid: str) -> list[dict[str, Any]]:
    return list(invites.hosted_by(call.server, call.system, user_uuid))


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
    now, policy = call.server.clock.now(), call.server.policy(UserPolicy)
    earliest, latest = now - policy.invites_window_back(), now + WINDOW_AHEAD
    hosted = [i for i in _hosted(call, user["uuid"]) if _in_window(i, earliest, latest)]
    return reply(200, [policy.invite_list_entry(i) for i in hosted])


@handles("listUserRegistrations")
async def list_user_registrations(call: Call) -> Response:
    user = fetch(call, "user", call.path["uuid"])
    policy = call.server.policy(UserPolicy)
    status = call.query["status"]  # the spec's default (ALL) when left out
    wanted = policy.registration_filter(status)
    entries = [
        {**invite_entry(i), "registrationStatus": i.get("registrationStatus")}
        for i in _hosted(call, user["uuid"])
        if wanted is None or i.get("registrationStatus") == wanted
    ]
    return paged(entries, policy.registrations_start(call.query["start"]), call.query["limit"])
