"""Persons: personnel records with references, a photo, duplicate numbers and a delete cascade.

Also holds the pieces users share with persons: the photo claim and the photo fields of a read,
and the contains-style search over a few text criteria.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from reference_server._call import Call, ack, reply
from reference_server._errors import ApiError, invalid_fields, not_found
from reference_server.domain import handles
from reference_server.domain._common import (
    check_references,
    fetch,
    paged,
    schema_fields,
    unique_or_409,
)
from reference_server.store import Record

# Everything a person body may carry except the write-only photo handle.
FIELDS = [f for f in schema_fields("PersonBody") if f != "photoUuid"]
REFERENCES = {
    "location": "location",
    "department": "department",
    "organisation": "organisation",
    "group": "group",
    "costCenter": "cost_center",
}
# search criterion name -> record field it is matched against
CRITERIA = {
    "firstName": "firstName",
    "lastName": "lastName",
    "email": "email",
    "mobileNumber": "mobile",
    "identityNr": "identityNumber",
}
ROW_FIELDS = ("uuid", "firstName", "lastName", "email", "mobile")


# -- shared with users ---------------------------------------------------------------------
def new_qr_code() -> str:
    """An opaque QR payload the record owns until it is deleted."""
    return f"QR-{secrets.token_hex(12)}"


def claim_photo(call: Call, body: Mapping[str, Any], current: str | None) -> str | None:
    """The photo id the record should hold: a newly claimed one, or the one it already has.

    A body without photoUuid leaves the photo alone: the photo is not one of the body's fields,
    so a full replacement does not clear it.
    """
    staged = body.get("photoUuid")
    if staged is None:
        return current
    from reference_server.domain import files

    claimed = files.claim(call, staged)
    # The replaced photo belongs to nobody any more.
    files.remove_photo(call.server, current)
    return claimed


async def prepare_photo(call: Call) -> None:
    """Render the body's staged photo off the event loop before the write's transaction."""
    from reference_server.domain import files

    await files.prepare_claim(call, call.body.get("photoUuid"))


def drop_photo(call: Call, record: Record) -> None:
    """Forget the photo of a record that is being deleted."""
    if record.get("photoId"):
        from reference_server.domain import files

        files.remove_photo(call.server, record["photoId"])


def photo_fields(call: Call, record: Record) -> dict[str, Any]:
    """hasPhoto, photoId and the signed links of a read (links null without a photo)."""
    photo_id = record.get("photoId")
    links: dict[str, Any] = {"photo": None, "thumbnail": None}
    if photo_id:
        from reference_server.domain import files

        links = dict(files.media_links(call.server, photo_id))
    return {"hasPhoto": bool(photo_id), "photoId": photo_id, **links}


def matches(
    record: Record,
    criteria: Mapping[str, str],
    *,
    case_sensitive: bool = False,
    any_of: bool = False,
    prefix_only: bool = False,
) -> bool:
    """Whether every criterion (record field -> text) is contained in the record's field."""
    if not criteria:
        return True

    def holds(field: str, text: str) -> bool:
        value = record.get(field) or ""
        if not case_sensitive:
            text, value = text.casefold(), value.casefold()
        return value.startswith(text) if prefix_only else text in value

    results = (holds(field, text) for field, text in criteria.items())
    return any(results) if any_of else all(results)


def criteria_of(body: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, str]:
    """The recognised criteria of a search, keyed by record field; unknown names are dropped."""
    return {field: body[name] for name, field in names.items() if body.get(name) is not None}


def row(record: Record, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    return {f: record.get(f) for f in (*ROW_FIELDS, *extra)}


# -- persons -------------------------------------------------------------------------------
def _read(call: Call, record: Record) -> dict[str, Any]:
    shown = {
        "uuid": record["uuid"],
        **{f: record.get(f) for f in FIELDS},
        **photo_fields(call, record),
    }
    faults = call.server.faults
    if faults.on("person-read-drops-cost-center"):
        shown["costCenter"] = None
    if faults.on("person-has-photo-from-body"):
        shown["hasPhoto"] = bool(record.get("hasPhoto"))
    return shown


def _has_photo(call: Call, photo_id: str | None) -> bool:
    if call.server.faults.on("person-has-photo-from-body") and call.body.get("hasPhoto"):
        return True
    return bool(photo_id)


def _photo(call: Call, current: str | None) -> str | None:
    """The photo the person should hold after this write (see :func:`claim_photo`)."""
    faults = call.server.faults
    if call.op.operation_id == "updatePerson" and faults.on("person-put-ignores-photo"):
        return current
    try:
        return claim_photo(call, call.body, current)
    except ApiError:
        if faults.on("person-bad-photo-ignored"):
            return current
        raise


def _live(call: Call) -> Record:
    """The addressed person (a soft-deleted one, left by a fault, is not found)."""
    record = fetch(call, "person", call.path["uuid"])
    if record.get("_deleted"):
        raise not_found("person")
    return record


def _required(call: Call) -> None:
    if call.server.faults.on("person-last-name-required") and not call.body.get("lastName"):
        raise invalid_fields({"lastName": "is required"})


def _unique(call: Call, data: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers no other person of the system may share (empty values are skipped)."""
    if call.server.faults.on("person-duplicate-allowed"):
        return {}
    return {
        "identityNumber": data.get("identityNumber"),
        "staffIdNumber": data.get("staffIdNumber"),
    }


def _checked_references(call: Call) -> None:
    if call.server.faults.on("person-reference-unchecked"):
        return
    check_references(call, call.body, REFERENCES)


@handles("searchPersons")
async def search_persons(call: Call) -> Response:
    body = call.body
    criteria = criteria_of(body, CRITERIA)
    faults = call.server.faults
    found = call.server.store.all(
        "person",
        call.system,
        lambda r: (
            not r.get("_deleted")
            and matches(
                r,
                criteria,
                case_sensitive=faults.on("search-case-sensitive"),
                any_of=faults.on("search-any-criterion"),
            )
        ),
    )
    extra = ("identityNumber",) if faults.on("search-returns-identity-number") else ()
    rows = [row(r, extra) for r in found]
    start, limit = body.get("start", 0), body.get("limit", 500)
    if faults.on("person-search-total-counts-page"):
        rows = rows[start : start + limit]
        page = {"entries": rows, "startIndex": start, "countReturned": len(rows)}
        return reply(200, {**page, "totalCount": len(rows)})
    return paged(rows, start, limit)


@handles("getPerson")
async def get_person(call: Call) -> Response:
    return reply(200, _read(call, _live(call)))


@handles("createPerson")
async def create_person(call: Call) -> Response:
    _required(call)
    _checked_references(call)
    data = {f: call.body.get(f) for f in FIELDS}
    store = call.server.store
    unique = _unique(call, data)
    await prepare_photo(call)
    # One transaction: a 409 must not consume the staged photo.
    with store.transaction(), unique_or_409("person"):
        photo_id = _photo(call, None)
        record = {
            **data,
            "hasPhoto": _has_photo(call, photo_id),
            "photoId": photo_id,
            "_qrCode": new_qr_code(),
        }
        uuid = store.insert("person", call.system, record, unique=unique)
    return ack(uuid, 201)


@handles("updatePerson")
async def update_person(call: Call) -> Response:
    current = _live(call)
    _required(call)
    _checked_references(call)
    data = {f: call.body.get(f) for f in FIELDS}
    if call.server.faults.on("person-put-keeps-omitted"):
        data = {f: call.body.get(f, current.get(f)) for f in FIELDS}
    store = call.server.store
    unique = _unique(call, data)
    await prepare_photo(call)
    with store.transaction(), unique_or_409("person"):
        photo_id = _photo(call, current.get("photoId"))
        record = {
            **data,
            "hasPhoto": _has_photo(call, photo_id),
            "photoId": photo_id,
            "_qrCode": current.get("_qrCode"),
        }
        # The person's own numbers are released and reclaimed, so it never clashes with itself.
        store.replace("person", current["uuid"], record, unique=unique)
    return ack(current["uuid"])


@handles("deletePerson")
async def delete_person(call: Call) -> Response:
    record = _live(call)
    from reference_server.domain import credentials

    server, store = call.server, call.server.store
    if server.faults.on("person-delete-keeps-record"):
        credentials.unlink_holder(server, call.system, record["uuid"])
        return ack(record["uuid"])
    if server.faults.on("person-delete-soft"):
        store.replace("person", record["uuid"], {**record, "_deleted": True})
        return ack(record["uuid"])
    with store.transaction():
        held = faulty_holdings(
            call,
            record["uuid"],
            "person-delete-keeps-qr-code",
            "person-delete-marks-credentials-deleted",
        )
        # Credentials outlive their holder, as unassigned records.
        credentials.unlink_holder(server, call.system, record["uuid"])
        _delete_faults(call, held)
        # Withdraw the person from the hardware (phonebooks, QR code) before the record goes.
        store.replace("person", record["uuid"], {**record, "_qrCode": None})
        credentials.sync_hardware(server, call.system)
        drop_photo(call, record)
        store.delete("person", record["uuid"])
    return ack(record["uuid"])


def faulty_holdings(call: Call, holder: str, *names: str) -> list[Record]:
    """The holder's credentials, read before a delete unlinks them, when one of the delete
    faults ``names`` is on (none otherwise)."""
    if not any(call.server.faults.on(n) for n in names):
        return []
    return call.server.store.all("credential", call.system, lambda r: r.get("holderUuid") == holder)


def relink(call: Call, held: list[Record], *, qr_only: bool = False) -> None:
    """Give credentials the delete just unlinked their holder back (QR codes only if asked)."""
    for credential in held:
        if not qr_only or credential.get("readerType") == "QR_CODE":
            call.server.store.replace("credential", credential["uuid"], credential)


def _delete_faults(call: Call, held: list[Record]) -> None:
    faults, store = call.server.faults, call.server.store
    if faults.on("person-delete-keeps-qr-code"):
        relink(call, held, qr_only=True)
    if faults.on("person-delete-marks-credentials-deleted"):
        for credential in held:
            changed = {**credential, "holderUuid": None, "_holderKind": None, "status": "DELETED"}
            store.replace("credential", credential["uuid"], changed)
