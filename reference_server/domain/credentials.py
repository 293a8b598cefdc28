"""Credentials: issuing, partial updates, soft deletes, per-holder lists and the status lifecycle.

A credential belongs to one person, one user or (issued by an invitation) one visitor. An
explicit status (DISABLED, DELETED, LOST, STOLEN, DESTROYED) is stored and read as stored.
VALID, ACTIVE and EXPIRED are the window-driven lifecycle: the record keeps the one that held
at its last write, but every read re-derives it from the validity window on the server clock,
so the window opening or closing needs no write. Every write ends with a hardware sync, which
leaves the simulated controllers holding exactly the ACTIVE credentials.

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
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server._errors import ApiError, invalid_fields, not_found
from reference_server._state import Server
from reference_server._time import format_instant, parse_instant
from reference_server.domain import handles
from reference_server.domain._common import fetch, public, schema_fields, unique_or_409
from reference_server.store import Record

KIND = "credential"
LIFECYCLE = frozenset({"VALID", "ACTIVE", "EXPIRED"})
# The statuses an operator uses to switch a credential off (PUT and DELETE).
NOT_LIVE = frozenset({"DISABLED", "DELETED"})
_HOLDER_TYPE = {"person": "PERSONNEL", "user": "USER", "visitor": "VISITOR"}
_READ_FIELDS = schema_fields("Credential")


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


def effective_status(server: Server, record: Record) -> str:
    """``status_of`` on the server clock, with this module's faults applied."""
    status = status_of(record, server.clock.now())
    # The fault freezes a credential written as VALID: the window opening changes nothing.
    if server.faults.on("valid-never-activates") and record.get("status") == "VALID":
        return "VALID"
    if server.faults.on("credential-never-expires") and status == "EXPIRED":
        return "ACTIVE"
    if server.faults.on("future-start-reads-active") and status == "VALID":
        return "ACTIVE"
    # The fault keeps a credential that was EXPIRED when a PUT gave it a new window EXPIRED.
    stuck = record.get("_expiredStuck") and record.get("status") == "EXPIRED"
    if stuck and server.faults.on("extended-credential-stays-expired"):
        return "EXPIRED"
    return status


def _lifecycle_status(server: Server, record: Record) -> str:
    """What a lifecycle credential is stored as at write time (re-derived on every read)."""
    return status_of({**record, "status": None}, server.clock.now())


def identifier_of(record: Record) -> str | None:
    """The value kept unique per system: the identifier, or the PIN when there is none."""
    if record.get("uniqueIdentifier"):
        return record["uniqueIdentifier"]
    return None if record.get("pin") is None else str(record["pin"])


def _unique(record: Record) -> dict[str, str | None]:
    return {"identifier": identifier_of(record)}


# -- cross-module functions ------------------------------------------------------------------
def sync_hardware(server: Server, system: str) -> None:
    """Push the system's credentials to its controllers (they then hold exactly the ACTIVE ones)."""
    from reference_server.hardware import controllers

    if server.faults.on("credential-writes-not-pushed"):
        return
    controllers.sync(server, system)


def unlink_holder(server: Server, system: str, holder_uuid: str) -> None:
    """Detach every credential of a holder being deleted; the credentials themselves survive."""
    store = server.store
    with store.transaction():
        for record in store.all(KIND, system, lambda r: r.get("holderUuid") == holder_uuid):
            store.replace(KIND, record["uuid"], {**record, "holderUuid": None, "_holderKind": None})
        sync_hardware(server, system)


def revoke(server: Server, system: str, credential_uuid: str) -> None:
    """Stop a credential from working (a cancelled visit): it turns DISABLED and leaves hardware."""
    store = server.store
    with store.transaction():
        record = store.get(KIND, credential_uuid, system)
        if record is None or record.get("status") in NOT_LIVE:
            return
        store.replace(KIND, credential_uuid, {**record, "status": "DISABLED", "enabled": False})
        sync_hardware(server, system)


def visitor_acls(server: Server, system: str) -> list[str]:
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


def _free_code(server: Server, system: str, kind: str) -> tuple[int | None, str]:
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
    server: Server, system: str, invite: dict[str, Any], kind: str
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
        sync_hardware(server, system)
    return uuid, code


# -- read shape ------------------------------------------------------------------------------
def _holder(server: Server, system: str, record: Record) -> Record | None:
    kind, uuid = record.get("_holderKind"), record.get("holderUuid")
    if not kind or not uuid:
        return None
    holder = server.store.get(kind, uuid, system)
    if holder is None and kind == "visitor" and record.get("_invite"):
        # A visitor known only through the invitation still has the invitation's names.
        holder = server.store.get("invite", record["_invite"], system)
    return holder


def shape(server: Server, system: str, record: Record) -> dict[str, Any]:
    """A credential as read back (the Credential schema)."""
    holder = _holder(server, system, record) or {}
    if server.faults.on("holder-names-frozen") and record.get("_holderNames"):
        holder = record["_holderNames"]
    kind = record.get("_holderKind")
    kind_type = _HOLDER_TYPE.get(kind or "", record.get("type"))
    if server.faults.on("credential-type-not-derived"):
        kind_type = "PERSONNEL"
    values = {
        **public(record),
        "status": effective_status(server, record),
        "type": kind_type,
        "holderUuid": record.get("holderUuid") if kind else None,
        "holderFirstName": holder.get("firstName"),
        "holderLastName": holder.get("lastName"),
        "accessControlListUuids": list(record.get("accessControlListUuids") or []),
        "enabled": record.get("enabled", True),
    }
    return {field: values.get(field) for field in _READ_FIELDS}


# -- checks ----------------------------------------------------------------------------------
def _check_acls(call: Call, uuids: list[str] | None) -> list[str]:
    """422 naming accessControlListUuids when a list is not one of the caller's system."""
    wanted = list(dict.fromkeys(uuids or []))
    if call.server.faults.on("unknown-acl-ignored"):
        return [u for u in wanted if call.server.store.get("acl", u, call.system) is not None]
    if any(call.server.store.get("acl", u, call.system) is None for u in wanted):
        raise invalid_fields(
            {"accessControlListUuids": "refers to an access control list that does not exist"}
        )
    return wanted


def _holder_of(call: Call) -> tuple[str, str]:
    """The (kind, uuid) of the create body's single holder; 404 when it does not exist."""
    kind = "person" if call.body.get("personUuid") else "user"
    uuid = call.body.get(f"{kind}Uuid")
    if uuid is None:
        raise invalid_fields({"body": "a holder (personUuid or userUuid) is required"})
    if call.server.store.get(kind, uuid, call.system) is None:
        if call.server.faults.on("holder-missing-422"):
            raise invalid_fields({f"{kind}Uuid": "refers to a record that does not exist"})
        raise not_found(kind)
    return kind, uuid


# -- handlers --------------------------------------------------------------------------------
@handles("getCredential")
async def get_credential(call: Call) -> Response:
    record = fetch(call, KIND, call.path["uuid"], "credential")
    return reply(200, shape(call.server, call.system, record))


@handles("createCredential")
async def create_credential(call: Call) -> Response:
    body = call.body
    acls = _check_acls(call, body.get("accessControlListUuids"))
    kind, holder = _holder_of(call)
    explicit = body.get("status")
    enabled = body.get("enabled", True) is not False
    if call.server.faults.on("enabled-flag-ignored"):
        enabled = True  # enabled false is dropped: the credential is stored live
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
    if call.server.faults.on("holder-names-frozen"):
        named = call.server.store.get(kind, holder, call.system) or {}
        record["_holderNames"] = {k: named.get(k) for k in ("firstName", "lastName")}
    store = call.server.store
    with store.transaction(), unique_or_409("credential"):
        uuid = store.insert(KIND, call.system, record, unique=_unique(record))
        sync_hardware(call.server, call.system)
    return ack(uuid, 201)


def _apply_status(call: Call, record: Record, status: str) -> None:
    """A PUT status: DISABLED and DELETED take it off hardware; others follow the window."""
    if record.get("status") == "DELETED" and status != "DELETED":
        raise ApiError(409, "a deleted credential cannot be given another status")
    # Only the window-driven lifecycle is live; every explicit status switches it off.
    record["status"], record["enabled"] = (None, True) if status in LIFECYCLE else (status, False)


def _put_fields(call: Call) -> tuple[str, ...]:
    """The plain fields a PUT copies over (fewer under this module's faults)."""
    fields: tuple[str, ...] = ("activeDate", "expiryDate", "useLimit", "comments")
    if call.server.faults.on("put-use-limit-ignored"):
        fields = ("activeDate", "expiryDate", "comments")
    if call.server.faults.on("put-status-drops-window") and call.body.get("status") is not None:
        fields = ("comments",)
    return fields


def _updated(call: Call, record: Record) -> Record:
    """The record after the PUT body: only the fields sent change (readerType never)."""
    body, new, faults = call.body, dict(record), call.server.faults
    was_expired = effective_status(call.server, record) == "EXPIRED"
    if faults.on("credential-put-clears-omitted"):
        new.update({f: None for f in ("activeDate", "expiryDate", "useLimit", "comments")})
    for field in _put_fields(call):
        if field in body:
            new[field] = body[field]
    if faults.on("put-comments-appended") and record.get("comments") and body.get("comments"):
        new["comments"] = f"{record['comments']}\n{body['comments']}"
    if faults.on("omitted-acl-put-clears") and "accessControlListUuids" not in body:
        new["accessControlListUuids"] = []
    if "accessControlListUuids" in body and not (
        faults.on("empty-acl-put-ignored") and not body["accessControlListUuids"]
    ):
        wanted = _check_acls(call, body["accessControlListUuids"])
        if call.server.faults.on("acl-put-merges"):
            wanted = list(dict.fromkeys([*record.get("accessControlListUuids", []), *wanted]))
        new["accessControlListUuids"] = wanted
    if call.server.faults.on("reader-type-changeable") and body.get("readerType"):
        new["readerType"] = body["readerType"]
    if body.get("status") is not None:
        _apply_status(call, new, body["status"])
    if new.get("status") in LIFECYCLE or new.get("status") is None:
        new["status"] = _lifecycle_status(call.server, new)
        rewindowed = "activeDate" in body or "expiryDate" in body
        if was_expired and rewindowed and faults.on("extended-credential-stays-expired"):
            new["status"], new["_expiredStuck"] = "EXPIRED", True
    return new


def _release_identifier(call: Call) -> bool:
    """Whether a deletion frees the identifier (only under the fault: it stays reserved)."""
    return call.server.faults.on("deleted-identifier-reusable")


@handles("updateCredential")
async def update_credential(call: Call) -> Response:
    store = call.server.store
    with store.transaction():
        record = fetch(call, KIND, call.path["uuid"], "credential")
        new = _updated(call, record)
        deleting = new.get("status") == "DELETED" and _release_identifier(call)
        if new.get("status") == "DELETED" and call.server.faults.on("put-deleted-removes-record"):
            store.delete(KIND, record["uuid"])
        else:
            store.replace(KIND, record["uuid"], new, unique={} if deleting else None)
        sync_hardware(call.server, call.system)
    return ack(record["uuid"])


@handles("deleteCredential")
async def delete_credential(call: Call) -> Response:
    store = call.server.store
    with store.transaction():
        record = fetch(call, KIND, call.path["uuid"], "credential")
        if call.server.faults.on("credential-delete-hard"):
            store.delete(KIND, record["uuid"])
        else:
            # Soft: the record stays readable for audit and keeps its identifier reserved.
            deleted = {**record, "status": "DELETED", "enabled": False}
            store.replace(
                KIND, record["uuid"], deleted, unique={} if _release_identifier(call) else None
            )
        sync_hardware(call.server, call.system)
    return ack(record["uuid"])


def _held_by(call: Call, kind: str, uuid: str) -> list[dict[str, Any]]:
    def mine(record: Record) -> bool:
        if call.server.faults.on("by-person-every-person") and kind == "person":
            return record.get("_holderKind") == kind
        return record.get("holderUuid") == uuid and record.get("_holderKind") == kind

    return [
        shape(call.server, call.system, r) for r in call.server.store.all(KIND, call.system, mine)
    ]


@handles("listCredentialsByPerson")
async def list_credentials_by_person(call: Call) -> Response:
    person = fetch(call, "person", call.path["personUuid"], "person")
    return reply(200, _held_by(call, "person", person["uuid"]))


@handles("listCredentialsByUser")
async def list_credentials_by_user(call: Call) -> Response:
    user = fetch(call, "user", call.path["userUuid"], "user")
    held = _held_by(call, "user", user["uuid"])
    if call.server.faults.on("by-user-hides-deleted"):
        held = [c for c in held if c["status"] not in NOT_LIVE]
    return reply(200, held)
