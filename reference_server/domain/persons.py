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
) -> bool:
    """Whether every criterion (record field -> text) is contained in the record's field."""
    if not criteria:
        return True

    def holds(field: str, text: str) -> bool:
        value = record.get(field) or ""
        if case_sensitive:
            return text in value
        return text.casefold() in value.casefold()

    results = (holds(field, text) for field, text in criteria.items())
    return any(results) if any_of else all(results)


def criteria_of(body: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, str]:
    """The recognised criteria of a search, keyed by record field; unknown names are dropped."""
    return {field: body[name] for name, field in names.items() if body.get(name) is not None}


def row(record: Record, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    return {f: record.get(f) for f in (*ROW_FIELDS, *extra)}


# -- persons -------------------------------------------------------------------------------
def _read(call: Call, record: Record) -> dict[str, Any]:
    return {
        "uuid": record["uuid"],
        **{f: record.get(f) for f in FIELDS},
        **photo_fields(call, record),
    }


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
        lambda r: matches(
            r,
            criteria,
            case_sensitive=faults.on("search-case-sensitive"),
            any_of=faults.on("search-any-criterion"),
        ),
    )
    extra = ("identityNumber",) if faults.on("search-returns-identity-number") else ()
    rows = [row(r, extra) for r in found]
    return paged(rows, body.get("start", 0), body.get("limit", 500))


@handles("getPerson")
async def get_person(call: Call) -> Response:
    return reply(200, _read(call, fetch(call, "person", call.path["uuid"])))


@handles("createPerson")
async def create_person(call: Call) -> Response:
    _checked_references(call)
    data = {f: call.body.get(f) for f in FIELDS}
    store = call.server.store
    unique = _unique(call, data)
    # One transaction: a 409 must not consume the staged photo.
    with store.transaction(), unique_or_409("person"):
        photo_id = claim_photo(call, call.body, None)
        record = {**data, "hasPhoto": bool(photo_id), "photoId": photo_id, "_qrCode": new_qr_code()}
        uuid = store.insert("person", call.system, record, unique=unique)
    return ack(uuid, 201)


@handles("updatePerson")
async def update_person(call: Call) -> Response:
    current = fetch(call, "person", call.path["uuid"])
    _checked_references(call)
    data = {f: call.body.get(f) for f in FIELDS}
    if call.server.faults.on("person-put-keeps-omitted"):
        data = {f: call.body.get(f, current.get(f)) for f in FIELDS}
    store = call.server.store
    unique = _unique(call, data)
    with store.transaction(), unique_or_409("person"):
        photo_id = claim_photo(call, call.body, current.get("photoId"))
        record = {
            **data,
            "hasPhoto": bool(photo_id),
            "photoId": photo_id,
            "_qrCode": current.get("_qrCode"),
        }
        # The person's own numbers are released and reclaimed, so it never clashes with itself.
        store.replace("person", current["uuid"], record, unique=unique)
    return ack(current["uuid"])


@handles("deletePerson")
async def delete_person(call: Call) -> Response:
    record = fetch(call, "person", call.path["uuid"])
    from reference_server.domain import credentials

    server, store = call.server, call.server.store
    with store.transaction():
        # Credentials outlive their holder, as unassigned records.
        credentials.unlink_holder(server, call.system, record["uuid"])
        # Withdraw the person from the hardware (phonebooks, QR code) before the record goes.
        store.replace("person", record["uuid"], {**record, "_qrCode": None})
        credentials.sync_hardware(server, call.system)
        drop_photo(call, record)
        store.delete("person", record["uuid"])
    return ack(record["uuid"])
