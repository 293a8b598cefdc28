"""Persons: personnel records with references, a photo, duplicate numbers and a delete cascade.

Also holds the pieces users share with persons: the photo claim and the photo fields of a read,
and the contains-style search over a few text criteria.

The decisions inside the person steps are the methods of ``PersonPolicy``; the handlers ask
``server.policy(PersonPolicy)`` for the one in force, which is where the person faults
(``faults/_persons.py``) plug in. This module holds the correct behaviour only.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack, reply
from amws_conformance.reference_server._errors import ApiError, invalid_fields, not_found
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.domain import credentials, files, handles
from amws_conformance.reference_server.domain._common import (
    check_references,
    fetch,
    page_of,
    schema_fields,
    unique_or_409,
)
from amws_conformance.reference_server.store import Record

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
    claimed = files.claim(call, staged)
    # The replaced photo belongs to nobody any more.
    files.remove_photo(call.server, current)
    return claimed


async def prepare_photo(call: Call) -> None:
    """Render the body's staged photo off the event loop before the write's transaction."""
    await files.prepare_claim(call, call.body.get("photoUuid"))


def drop_photo(call: Call, record: Record) -> None:
    """Forget the photo of a record that is being deleted."""
    if record.get("photoId"):
        files.remove_photo(call.server, record["photoId"])


def photo_fields(call: Call, record: Record) -> dict[str, Any]:
    """hasPhoto, photoId and the signed links of a read (links null without a photo)."""
    photo_id = record.get("photoId")
    links: dict[str, Any] = {"photo": None, "thumbnail": None}
    if photo_id:
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
class PersonPolicy(Policy):
    """The decisions inside the person steps, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Read shape.
    def in_sight(self, record: Record) -> bool:
        """Whether a stored person can be read, replaced, deleted and found: every one can."""
        return True

    def read_fields(self, record: Record, photo: Mapping[str, Any]) -> dict[str, Any]:
        """What a person read shows: its fields, then the ``photo`` fields (see photo_fields)."""
        return {"uuid": record["uuid"], **{f: record.get(f) for f in FIELDS}, **photo}

    # Create and replace.
    def required_fields(self) -> tuple[str, ...]:
        """Body fields a write must fill beyond those the schema requires: none."""
        return ()

    def references_checked(self) -> dict[str, str]:
        """The body fields that must name an existing record, with the record kind."""
        return dict(REFERENCES)

    def written_fields(self, body: Mapping[str, Any], current: Record | None) -> dict[str, Any]:
        """The fields a create or a replace (``current`` given) takes: the body's alone."""
        return {f: body.get(f) for f in FIELDS}

    def unique_fields(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The numbers no two persons of a system may share (empty values are skipped)."""
        return {
            "identityNumber": data.get("identityNumber"),
            "staffIdNumber": data.get("staffIdNumber"),
        }

    def attaches_photo_on_replace(self) -> bool:
        """Whether a replace's photoUuid attaches the photo."""
        return True

    def refuses_unclaimable_photo(self) -> bool:
        """Whether a write whose photoUuid cannot be claimed is refused (not stored without it)."""
        return True

    def has_photo(self, body: Mapping[str, Any], photo_id: str | None) -> bool:
        """The hasPhoto a write stores: whether the person holds a photo (the body's is ignored)."""
        return bool(photo_id)

    # Search.
    def search_ignores_case(self) -> bool:
        """Whether a search criterion matches whatever the letter case."""
        return True

    def search_needs_every_criterion(self) -> bool:
        """Whether a person must match every criterion of a search (not just one)."""
        return True

    def search_row_extra(self) -> tuple[str, ...]:
        """Fields a search row carries beside the documented ones: none."""
        return ()

    def search_total(self, found: int, returned: int) -> int:
        """The totalCount of a search page: every match, not only the ``returned`` ones."""
        return found

    # Delete.
    def kept_on_delete(self, system: str, record: Record) -> bool:
        """Whether DELETE stops short of the cascade and keeps the record: it never does.

        An override that keeps it does here whatever it does instead.
        """
        return False

    def keeps_holder_on_delete(self, credential: Record) -> bool:
        """Whether a credential of a deleted person keeps naming it as holder: none does."""
        return False

    def holder_deleted(self, system: str, held: list[Record]) -> None:
        """The person's credentials (``held``, as they were) were unlinked; nothing more to do."""


def _read(call: Call, record: Record) -> dict[str, Any]:
    return call.server.policy(PersonPolicy).read_fields(record, photo_fields(call, record))


def _photo(call: Call, current: str | None) -> str | None:
    """The photo the person should hold after this write (see :func:`claim_photo`)."""
    policy = call.server.policy(PersonPolicy)
    if call.op.operation_id == "updatePerson" and not policy.attaches_photo_on_replace():
        return current
    try:
        return claim_photo(call, call.body, current)
    except ApiError:
        if policy.refuses_unclaimable_photo():
            raise
        return current


def _live(call: Call) -> Record:
    """The addressed person, or 404."""
    record = fetch(call, "person", call.path["uuid"])
    if not call.server.policy(PersonPolicy).in_sight(record):
        raise not_found("person")
    return record


def _required(call: Call) -> None:
    required = call.server.policy(PersonPolicy).required_fields()
    missing = {f: "is required" for f in required if not call.body.get(f)}
    if missing:
        raise invalid_fields(missing)


def _unique(call: Call, data: Mapping[str, Any]) -> dict[str, Any]:
    """The numbers no other person of the system may share (empty values are skipped)."""
    return call.server.policy(PersonPolicy).unique_fields(data)


def _checked_references(call: Call) -> None:
    check_references(call, call.body, call.server.policy(PersonPolicy).references_checked())


@handles("searchPersons")
async def search_persons(call: Call) -> Response:
    body = call.body
    criteria = criteria_of(body, CRITERIA)
    policy = call.server.policy(PersonPolicy)
    case_sensitive = not policy.search_ignores_case()
    any_of = not policy.search_needs_every_criterion()
    found = call.server.store.all(
        "person",
        call.system,
        lambda r: (
            policy.in_sight(r)
            and matches(r, criteria, case_sensitive=case_sensitive, any_of=any_of)
        ),
    )
    extra = policy.search_row_extra()
    rows = [row(r, extra) for r in found]
    page = page_of(rows, body["start"], body["limit"])  # defaults from the spec
    page["totalCount"] = policy.search_total(len(rows), page["countReturned"])
    return reply(200, page)


@handles("getPerson")
async def get_person(call: Call) -> Response:
    return reply(200, _read(call, _live(call)))


@handles("createPerson")
async def create_person(call: Call) -> Response:
    _required(call)
    _checked_references(call)
    policy = call.server.policy(PersonPolicy)
    data = policy.written_fields(call.body, None)
    store = call.server.store
    unique = _unique(call, data)
    await prepare_photo(call)
    # One transaction: a 409 must not consume the staged photo.
    with store.transaction(), unique_or_409("person"):
        photo_id = _photo(call, None)
        record = {
            **data,
            "hasPhoto": policy.has_photo(call.body, photo_id),
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
    policy = call.server.policy(PersonPolicy)
    data = policy.written_fields(call.body, current)
    store = call.server.store
    unique = _unique(call, data)
    await prepare_photo(call)
    with store.transaction(), unique_or_409("person"):
        photo_id = _photo(call, current.get("photoId"))
        record = {
            **data,
            "hasPhoto": policy.has_photo(call.body, photo_id),
            "photoId": photo_id,
            "_qrCode": current.get("_qrCode"),
        }
        # The person's own numbers are released and reclaimed, so it never clashes with itself.
        store.replace("person", current["uuid"], record, unique=unique)
    return ack(current["uuid"])


@handles("deletePerson")
async def delete_person(call: Call) -> Response:
    record = _live(call)
    server, store = call.server, call.server.store
    policy = server.policy(PersonPolicy)
    if policy.kept_on_delete(call.system, record):
        return ack(record["uuid"])
    with store.transaction():
        # The credentials as they were before the unlink, for those that keep their holder.
        held = store.all("credential", call.system, lambda r: r.get("holderUuid") == record["uuid"])
        # Credentials outlive their holder, as unassigned records.
        credentials.unlink_holder(server, call.system, record["uuid"])
        relink(call, [c for c in held if policy.keeps_holder_on_delete(c)])
        policy.holder_deleted(call.system, held)
        # Withdraw the person from the hardware (phonebooks, QR code) before the record goes.
        store.replace("person", record["uuid"], {**record, "_qrCode": None})
        credentials.announce_change(server, call.system)
        drop_photo(call, record)
        store.delete("person", record["uuid"])
    return ack(record["uuid"])


def relink(call: Call, held: list[Record]) -> None:
    """Give credentials the delete just unlinked their holder back."""
    for credential in held:
        call.server.store.replace("credential", credential["uuid"], credential)
