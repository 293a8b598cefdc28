"""Credentials: issuing, partial updates, soft deletes, per-holder lists and the status lifecycle.

A credential belongs to one person, one user or (issued by an invitation) one visitor. An
explicit status (DISABLED, DELETED, LOST, STOLEN, DESTROYED) is stored and read as stored.
VALID, ACTIVE and EXPIRED are the window-driven lifecycle: the record keeps the one that held
at its last write, but every read re-derives it from the validity window on the server clock,
so the window opening or closing needs no write. Every write ends by publishing
``CredentialsChanged``; the simulated controllers follow it at once and hold exactly the
ACTIVE credentials.

Choices where the documents are silent:
- ``enabled: false`` on create stores the credential DISABLED. Any explicit status reads
  ``enabled`` false; a lifecycle status in a PUT (VALID, ACTIVE, EXPIRED) puts the credential
  back on the window-driven lifecycle with ``enabled`` true.
- A DELETED credential stays deleted: a PUT trying to give it another status answers 409.
- Holder names on a read are the holder record's current names; once the holder is unlinked,
  holderUuid and both names read null (the type keeps the value it had).
- Visitor credentials get the lists covering the points of the system's reader devices (the
  virtual reader's door in the demo deployment), or every list with a rule when no reader is
  wired. ``revoke`` (a cancelled visit) turns the credential DISABLED; it stays readable.

The decisions inside these steps are the methods of ``CredentialPolicy``; the handlers ask
``server.policy(CredentialPolicy)`` for the one in force, which is where the credential faults
(``faults/_credentials.py``) plug in. This module holds the correct behaviour only.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack, reply
from amws_conformance.reference_server._errors import ApiError, invalid_fields, not_found
from amws_conformance.reference_server._events import CredentialsChanged
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._time import format_instant, parse_instant
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain._common import (
    fetch,
    public,
    schema_fields,
    unique_or_409,
)
from amws_conformance.reference_server.store import Record

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

KIND = "credential"
LIFECYCLE = frozenset({"VALID", "ACTIVE", "EXPIRED"})
# The statuses an operator uses to switch a credential off (PUT and DELETE).
NOT_LIVE = frozenset({"DISABLED", "DELETED"})
_HOLDER_TYPE = {"person": "PERSONNEL", "user": "USER", "visitor": "VISITOR"}
_READ_FIELDS = schema_fields("Credential")
# The plain fields a PUT copies from its body when sent (readerType is fixed at issue).
_PUT_FIELDS = ("activeDate", "expiryDate", "useLimit", "comments")


# -- status --------------------------------------------------------------------------------
def status_of(record: Record, now: datetime) -> str:
    """The status a credential has at ``now``: explicit statuses as stored, else from its window."""
    stored = record.get("status")
    if stored not in LIFECYCLE and stored is not None:
        return stored
    expiry, active = record.get("expiryDate"), record.get("activeDate")
    if expiry and now > parse_instant(expiry):
        return "EXPIRED"
    if active and now < parse_instant(active):
        return "VALID"
    return "ACTIVE"


def effective_status(server: ServerView, record: Record) -> str:
    """The status a credential reads now, as the policy in force derives it."""
    return server.policy(CredentialPolicy).status(record, server.clock.now())


def _lifecycle_status(server: ServerView, record: Record) -> str:
    """What a lifecycle credential is stored as at write time (re-derived on every read)."""
    return status_of({**record, "status": None}, server.clock.now())


def identifier_of(record: Record) -> str | None:
    """The value kept unique per system: the identifier, or the PIN when there is none."""
    if record.get("uniqueIdentifier"):
        return record["uniqueIdentifier"]
    return None if record.get("pin") is None else str(record["pin"])


def _unique(record: Record) -> dict[str, str | None]:
    return {"identifier": identifier_of(record)}


# -- the decisions inside the steps -----------------------------------------------------------
class CredentialPolicy(Policy):
    """The decisions inside the credential steps, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Status and hardware.
    def status(self, record: Record, now: datetime) -> str:
        """The status a stored credential reads at ``now``."""
        return status_of(record, now)

    def held_by_controller(self, status: str) -> bool:
        """Whether the controllers hold a credential of this status: the ACTIVE ones only."""
        return status == "ACTIVE"

    def writes_reach_hardware(self) -> bool:
        """Whether every credential write, and every look at the controllers, syncs them."""
        return True

    # Create.
    def enabled_on_create(self, body: dict[str, Any]) -> bool:
        """Whether a create body leaves the credential live (``enabled`` defaults to true)."""
        return body.get("enabled", True) is not False

    def missing_holder(self, kind: str) -> ApiError:
        """The refusal of a create naming a holder that does not exist: 404 for the holder."""
        return not_found(kind)

    def lists_accepted(self, wanted: list[str], unknown: list[str]) -> list[str]:
        """The lists a write stores, given those it named and the ones that do not exist."""
        if unknown:
            raise invalid_fields(
                {"accessControlListUuids": "refers to an access control list that does not exist"}
            )
        return wanted

    def created(self, system: str, uuid: str, record: Record) -> None:
        """A created credential was stored; nothing more to decide on the correct server."""

    # Read shape.
    def holder_type(self, record: Record) -> str | None:
        """The credential type: derived from the holder's kind, else the one stored."""
        return _HOLDER_TYPE.get(record.get("_holderKind") or "", record.get("type"))

    def holder_names(self, record: Record, holder: Record) -> tuple[Any, Any]:
        """(first, last) name of the holder as read now: the holder record's current names."""
        return holder.get("firstName"), holder.get("lastName")

    # PUT.
    def put_changes(self, old: Record, body: dict[str, Any]) -> dict[str, Any]:
        """The plain fields a PUT writes: only those it sends, as sent."""
        return {field: body[field] for field in _PUT_FIELDS if field in body}

    def lists_after_put(self, old: list[str] | None, sent: list[str] | None) -> list[str] | None:
        """The lists after a PUT: those it sent (checked) replace the old; none sent, no change."""
        return old if sent is None else sent

    def lifecycle_after_put(self, old: Record, new: Record, body: dict[str, Any]) -> str:
        """What a lifecycle credential is stored as after a PUT: its status on the new window."""
        return status_of({**new, "status": None}, self.server.clock.now())

    # Delete (DELETE, or a PUT with status DELETED).
    def keeps_deleted_record(self, by: Literal["PUT", "DELETE"]) -> bool:
        """Whether a deleted credential stays stored (soft delete, readable for audit)."""
        return True

    def keeps_deleted_identifier(self) -> bool:
        """Whether a deleted credential keeps its identifier reserved."""
        return True

    # Per-holder lists.
    def belongs_to(self, record: Record, kind: str, holder_uuid: str) -> bool:
        """Whether a credential is in the list of this person or user: that holder's own."""
        return record.get("holderUuid") == holder_uuid and record.get("_holderKind") == kind

    def listed_with_status(self, kind: str, status: str) -> bool:
        """Whether a holder's credential of this status is listed: every status is."""
        return True


# -- cross-module functions ------------------------------------------------------------------
def announce_change(server: ServerView, system: str) -> None:
    """Announce that the system's credentials or their holders changed (``CredentialsChanged``).

    The controllers follow it within the same call, so they hold exactly the ACTIVE ones when
    the write answers.
    """
    server.events.publish(CredentialsChanged(system))


def unlink_holder(server: ServerView, system: str, holder_uuid: str) -> None:
    """Detach every credential of a holder being deleted; the credentials themselves survive."""
    store = server.store
    with store.transaction():
        for record in store.all(KIND, system, lambda r: r.get("holderUuid") == holder_uuid):
            store.replace(KIND, record["uuid"], {**record, "holderUuid": None, "_holderKind": None})
        announce_change(server, system)


def revoke(server: ServerView, system: str, credential_uuid: str) -> None:
    """Stop a credential from working (a cancelled visit): it turns DISABLED and leaves hardware."""
    store = server.store
    with store.transaction():
        record = store.get(KIND, credential_uuid, system)
        if record is None or record.get("status") in NOT_LIVE:
            return
        store.replace(KIND, credential_uuid, {**record, "status": "DISABLED", "enabled": False})
        announce_change(server, system)


def visitor_acls(server: ServerView, system: str) -> list[str]:
    """Lists a visitor credential gets: those covering a point some reader device is wired to.

    Invitations name no list and no door, so the visitor may use the points where readers
    (the virtual reader included) stand; a system without wired readers gives every list
    whose rules cover a point.
    """
    lists = [acl for acl in server.store.all("acl", system) if acl.get("_rules")]
    wired = {d.get("point") for d in server.store.all("reader_device", system)} - {None}
    at_readers = [a for a in lists if any(r.get("point") in wired for r in a["_rules"])]
    return [acl["uuid"] for acl in (at_readers or lists)]


def _instant(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return format_instant(value)
    return format_instant(parse_instant(str(value)))


def _free_code(server: ServerView, system: str, kind: str) -> tuple[int | None, str]:
    """A (pin, code) pair no credential of the system uses, as identifier or as PIN.

    Called inside the store transaction, which holds the store lock, so the code stays free
    until the insert.
    """
    pins = {str(r["pin"]) for r in server.store.all(KIND, system) if r.get("pin") is not None}
    while True:
        if kind == "PIN":
            pin = 100000 + secrets.randbelow(900000)
            code = str(pin)
        else:
            pin, code = None, "VQR-" + secrets.token_hex(12).upper()
        if code not in pins and not server.store.find_unique(KIND, system, "identifier", code):
            return pin, code


def issue_visitor_credential(
    server: ServerView, system: str, invite: dict[str, Any], kind: str
) -> tuple[str, str]:
    """Issue the VISITOR credential of an invitation; returns (credential uuid, access code).

    ``kind`` PIN gives a unique six-digit PIN (the access code is the PIN); QR_CODE gives a
    random code text carried as the identifier. The window is the invitation's; the lists are
    those of ``visitor_acls``.
    """
    with server.store.transaction():
        pin, code = _free_code(server, system, kind)
        record: Record = {
            "readerType": "PIN" if kind == "PIN" else "QR_CODE",
            "status": None,
            "type": "VISITOR",
            "uniqueIdentifier": None if kind == "PIN" else code,
            "pin": pin,
            "holderUuid": invite.get("visitorId"),
            "_holderKind": "visitor",
            "activeDate": _instant(invite.get("activation")),
            "expiryDate": _instant(invite.get("expiry")),
            "useLimit": None,
            "enabled": True,
            "accessControlListUuids": visitor_acls(server, system),
            "comments": None,
            "data": None,
            "_invite": invite.get("uuid") or invite.get("registrationId"),
        }
        record["status"] = _lifecycle_status(server, record)
        uuid = server.store.insert(KIND, system, record, unique=_unique(record))
        announce_change(server, system)
    return uuid, code


# -- read shape ------------------------------------------------------------------------------
def _holder(server: ServerView, system: str, record: Record) -> Record | None:
    kind, uuid = record.get("_holderKind"), record.get("holderUuid")
    if not kind or not uuid:
        return None
    holder = server.store.get(kind, uuid, system)
    if holder is None and kind == "visitor" and record.get("_invite"):
        # A visitor known only through the invitation still has the invitation's names.
        holder = server.store.get("invite", record["_invite"], system)
    return holder


def shape(server: ServerView, system: str, record: Record) -> dict[str, Any]:
    """A credential as read back (the Credential schema)."""
    policy = server.policy(CredentialPolicy)
    first, last = policy.holder_names(record, _holder(server, system, record) or {})
    values = {
        **public(record),
        "status": policy.status(record, server.clock.now()),
        "type": policy.holder_type(record),
        "holderUuid": record.get("holderUuid") if record.get("_holderKind") else None,
        "holderFirstName": first,
        "holderLastName": last,
        "accessControlListUuids": list(record.get("accessControlListUuids") or []),
        "enabled": record.get("enabled", True),
    }
    return {field: values.get(field) for field in _READ_FIELDS}


# -- checks ----------------------------------------------------------------------------------
def _check_acls(call: Call, uuids: list[str] | None) -> list[str]:
    """422 naming accessControlListUuids when a list is not one of the caller's system."""
    wanted = list(dict.fromkeys(uuids or []))
    unknown = [u for u in wanted if call.server.store.get("acl", u, call.system) is None]
    return call.server.policy(CredentialPolicy).lists_accepted(wanted, unknown)


def _holder_of(call: Call) -> tuple[str, str]:
    """The (kind, uuid) of the create body's single holder; 404 when it does not exist."""
    kind = "person" if call.body.get("personUuid") else "user"
    uuid = call.body.get(f"{kind}Uuid")
    if uuid is None:
        raise invalid_fields({"body": "a holder (personUuid or userUuid) is required"})
    if call.server.store.get(kind, uuid, call.system) is None:
        raise call.server.policy(CredentialPolicy).missing_holder(kind)
    return kind, uuid


# -- handlers --------------------------------------------------------------------------------
@handles("getCredential")
async def get_credential(call: Call) -> Response:
    record = fetch(call, KIND, call.path["uuid"], "credential")
    return reply(200, shape(call.server, call.system, record))


@handles("createCredential")
async def create_credential(call: Call) -> Response:
    body, policy = call.body, call.server.policy(CredentialPolicy)
    acls = _check_acls(call, body.get("accessControlListUuids"))
    kind, holder = _holder_of(call)
    explicit = body.get("status")
    enabled = policy.enabled_on_create(body)
    if explicit in LIFECYCLE or explicit is None:
        explicit = None if enabled else "DISABLED"
    record: Record = {
        "readerType": body.get("readerType"),
        "status": explicit,
        "type": _HOLDER_TYPE[kind],
        "uniqueIdentifier": body.get("uniqueIdentifier"),
        "pin": body.get("pin"),
        "holderUuid": holder,
        "_holderKind": kind,
        "activeDate": body.get("activeDate"),
        "expiryDate": body.get("expiryDate"),
        "useLimit": body.get("useLimit"),
        "enabled": explicit is None,
        "accessControlListUuids": acls,
        "comments": body.get("comments"),
        "data": body.get("data"),
    }
    if explicit is None:
        record["status"] = _lifecycle_status(call.server, record)
    store = call.server.store
    with store.transaction(), unique_or_409("credential"):
        uuid = store.insert(KIND, call.system, record, unique=_unique(record))
        policy.created(call.system, uuid, record)
        announce_change(call.server, call.system)
    return ack(uuid, 201)


def _apply_status(call: Call, record: Record, status: str) -> None:
    """A PUT status: DISABLED and DELETED take it off hardware; others follow the window."""
    if record.get("status") == "DELETED" and status != "DELETED":
        raise ApiError(409, "a deleted credential cannot be given another status")
    # Only the window-driven lifecycle is live; every explicit status switches it off.
    record["status"], record["enabled"] = (None, True) if status in LIFECYCLE else (status, False)


def _updated(call: Call, record: Record, policy: CredentialPolicy) -> Record:
    """The record after the PUT body: only the fields sent change (readerType never)."""
    body = call.body
    new = {**record, **policy.put_changes(record, body)}
    sent: list[str] | None = None
    if "accessControlListUuids" in body:
        sent = _check_acls(call, body["accessControlListUuids"])
    new["accessControlListUuids"] = policy.lists_after_put(
        record.get("accessControlListUuids"), sent
    )
    if body.get("status") is not None:
        _apply_status(call, new, body["status"])
    if new.get("status") in LIFECYCLE or new.get("status") is None:
        new["status"] = policy.lifecycle_after_put(record, new, body)
    return new


def _unique_after_delete(policy: CredentialPolicy) -> dict[str, str | None] | None:
    """The unique values a deleted record keeps: all of them (None), or none when freed."""
    return None if policy.keeps_deleted_identifier() else {}


@handles("updateCredential")
async def update_credential(call: Call) -> Response:
    store, policy = call.server.store, call.server.policy(CredentialPolicy)
    with store.transaction():
        record = fetch(call, KIND, call.path["uuid"], "credential")
        new = _updated(call, record, policy)
        if new.get("status") != "DELETED":
            store.replace(KIND, record["uuid"], new)
        elif policy.keeps_deleted_record("PUT"):
            store.replace(KIND, record["uuid"], new, unique=_unique_after_delete(policy))
        else:
            store.delete(KIND, record["uuid"])
        announce_change(call.server, call.system)
    return ack(record["uuid"])


@handles("deleteCredential")
async def delete_credential(call: Call) -> Response:
    store, policy = call.server.store, call.server.policy(CredentialPolicy)
    with store.transaction():
        record = fetch(call, KIND, call.path["uuid"], "credential")
        if policy.keeps_deleted_record("DELETE"):
            # Soft: the record stays readable for audit and keeps its identifier reserved.
            deleted = {**record, "status": "DELETED", "enabled": False}
            store.replace(KIND, record["uuid"], deleted, unique=_unique_after_delete(policy))
        else:
            store.delete(KIND, record["uuid"])
        announce_change(call.server, call.system)
    return ack(record["uuid"])


def _held_by(call: Call, kind: str, uuid: str) -> list[dict[str, Any]]:
    """The credentials listed for one person or user, as read back."""
    policy = call.server.policy(CredentialPolicy)
    mine = call.server.store.all(KIND, call.system, lambda r: policy.belongs_to(r, kind, uuid))
    shaped = [shape(call.server, call.system, r) for r in mine]
    return [c for c in shaped if policy.listed_with_status(kind, c["status"])]


@handles("listCredentialsByPerson")
async def list_credentials_by_person(call: Call) -> Response:
    person = fetch(call, "person", call.path["personUuid"], "person")
    return reply(200, _held_by(call, "person", person["uuid"]))


@handles("listCredentialsByUser")
async def list_credentials_by_user(call: Call) -> Response:
    user = fetch(call, "user", call.path["userUuid"], "user")
    return reply(200, _held_by(call, "user", user["uuid"]))
