"""Faults of persons.

The faults of decisions inside a person step override one decision of ``PersonPolicy`` each
(the policy seam, ``reference_server/_policy.py``): the correct answer comes from ``super()``
and the class states only the deviation. Validation and status faults stay declarative
(``unchecked``, ``swap``); listing the collection is the request seam's
(``RequestPolicy.answered_before_routing``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server.domain import credentials
from amws_conformance.reference_server.domain.persons import FIELDS as PERSON_FIELDS
from amws_conformance.reference_server.domain.persons import PersonPolicy
from amws_conformance.reference_server.faults._model import NOT_FOUND, overrides, swap, unchecked
from amws_conformance.reference_server.faults._requests import listed_wholesale
from amws_conformance.reference_server.store import Record

# Fault memory key (``Policy.memory``): the persons a DELETE only hid, by uuid.
_HIDDEN_PERSONS = "person-delete-soft"


@overrides(
    "person-put-keeps-omitted",
    "PERS-PUT-FULL-REPLACEMENT",
    "person PUT keeps the stored value of every field the body leaves out",
)
class _PersonPutKeepsOmitted(PersonPolicy):
    def written_fields(self, body: Mapping[str, Any], current: Record | None) -> dict[str, Any]:
        data = super().written_fields(body, current)
        if current is not None:
            data.update({f: body.get(f, current.get(f)) for f in PERSON_FIELDS})
        return data


@overrides(
    "person-duplicate-allowed",
    "PERS-DUPLICATE",
    "persons may share a non-empty identityNumber or staffIdNumber",
)
class _PersonDuplicateAllowed(PersonPolicy):
    def unique_fields(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return {}


@overrides(
    "person-reference-unchecked",
    "PERS-FIELD-REFERENCE",
    "person references to records that do not exist are stored without a 422",
)
class _PersonReferencesUnchecked(PersonPolicy):
    def references_checked(self) -> dict[str, str]:
        return {}


@overrides(
    "search-returns-identity-number",
    "PERS-SEARCH-IDENTITY-NOT-RETURNED",
    "person search rows carry the identity number",
)
class _SearchReturnsIdentityNumber(PersonPolicy):
    def search_row_extra(self) -> tuple[str, ...]:
        return (*super().search_row_extra(), "identityNumber")


@overrides("search-case-sensitive", "PERS-SEARCH-CONTAINS", "person search respects letter case")
class _SearchCaseSensitive(PersonPolicy):
    def search_ignores_case(self) -> bool:
        return False


@overrides(
    "search-any-criterion",
    "PERS-SEARCH-ALL-FIELDS",
    "person search returns persons matching any one of the criteria",
)
class _SearchAnyCriterion(PersonPolicy):
    def search_needs_every_criterion(self) -> bool:
        return False


unchecked(
    "person-first-name-unchecked", "PERS-FIELD-LENGTH", "firstName", "createPerson", "updatePerson"
)
unchecked("person-type-unchecked", "PERS-FIELD-ENUM", "personType", "createPerson", "updatePerson")
unchecked(
    "person-birth-date-unchecked", "PERS-FIELD-DATE", "dateOfBirth", "createPerson", "updatePerson"
)
unchecked("person-email-unchecked", "PERS-FIELD-EMAIL", "email", "createPerson", "updatePerson")
unchecked("person-mobile-unchecked", "PERS-FIELD-PHONE", "mobile", "createPerson", "updatePerson")
swap("person-unknown-400", "PERS-NOT-FOUND", NOT_FOUND, "getPerson", "updatePerson", "deletePerson")


@overrides(
    "person-last-name-required",
    "PERS-FIELD-REQUIRED",
    "a person body without lastName is refused with 422, although firstName alone suffices",
)
class _LastNameRequired(PersonPolicy):
    def required_fields(self) -> tuple[str, ...]:
        return (*super().required_fields(), "lastName")


@overrides(
    "person-bad-photo-ignored",
    "PERS-PHOTO-UUID-INVALID",
    "a person write with a photoUuid never issued (or expired) is stored without the photo",
)
class _BadPhotoIgnored(PersonPolicy):
    def refuses_unclaimable_photo(self) -> bool:
        return False


@overrides(
    "person-put-ignores-photo",
    "PERS-PHOTO-ATTACH",
    "person PUT ignores photoUuid, so the photo is never attached",
)
class _PutIgnoresPhoto(PersonPolicy):
    def attaches_photo_on_replace(self) -> bool:
        return False


@overrides(
    "person-has-photo-from-body",
    "PERS-HAS-PHOTO-READ-ONLY",
    "hasPhoto sent in a person body is stored and read back",
)
class _HasPhotoFromBody(PersonPolicy):
    def has_photo(self, body: Mapping[str, Any], photo_id: str | None) -> bool:
        return bool(body.get("hasPhoto")) or super().has_photo(body, photo_id)

    def read_fields(self, record: Record, photo: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().read_fields(record, photo), "hasPhoto": bool(record.get("hasPhoto"))}


@overrides(
    "person-read-drops-cost-center",
    "PERS-GET-FULL-RECORD",
    "a person read shows costCenter as null whatever was stored",
)
class _ReadDropsCostCenter(PersonPolicy):
    def read_fields(self, record: Record, photo: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().read_fields(record, photo), "costCenter": None}


unchecked(
    "person-address-city-unchecked",
    "PERS-ADDRESS-FIELD-NAMES",
    "homeAddressCity",
    "createPerson",
    "updatePerson",
)


@overrides(
    "person-delete-keeps-record",
    "PERS-DELETE-HARD",
    "person DELETE answers 200 and unlinks the credentials but keeps the record",
)
class _DeleteKeepsRecord(PersonPolicy):
    def kept_on_delete(self, system: str, record: Record) -> bool:
        credentials.unlink_holder(self.server, system, record["uuid"])
        return True


@overrides(
    "person-delete-marks-credentials-deleted",
    "PERS-DELETE-UNLINKS-CREDENTIALS",
    "deleting a person marks the credentials it held DELETED",
)
class _DeleteMarksCredentialsDeleted(PersonPolicy):
    def holder_deleted(self, system: str, held: list[Record]) -> None:
        super().holder_deleted(system, held)
        for credential in held:
            changed = {**credential, "holderUuid": None, "_holderKind": None, "status": "DELETED"}
            self.server.store.replace("credential", credential["uuid"], changed)


@overrides(
    "person-delete-soft",
    "PERS-DELETE-PHONEBOOK",
    "person DELETE only hides the record (404, not searched); its credentials stay linked, so "
    "device phonebooks keep listing the person",
)
class _DeleteSoft(PersonPolicy):
    def kept_on_delete(self, system: str, record: Record) -> bool:
        self.memory(_HIDDEN_PERSONS)[record["uuid"]] = True
        return True

    def in_sight(self, record: Record) -> bool:
        hidden = record["uuid"] in self.memory(_HIDDEN_PERSONS)
        return not hidden and super().in_sight(record)


@overrides(
    "person-delete-keeps-qr-code",
    "PERS-DELETE-QR-CODE",
    "deleting a person leaves its QR code credentials issued in its name",
)
class _PersonDeleteKeepsQrCode(PersonPolicy):
    def keeps_holder_on_delete(self, credential: Record) -> bool:
        is_qr_code = credential.get("readerType") == "QR_CODE"
        return is_qr_code or super().keeps_holder_on_delete(credential)


@overrides(
    "person-search-total-counts-page",
    "PERS-SEARCH-RESPONSE",
    "person search totalCount counts the returned page instead of every match",
)
class _SearchTotalCountsPage(PersonPolicy):
    def search_total(self, found: int, returned: int) -> int:
        return returned


swap("person-search-missing-body-422", "PERS-SEARCH-BODY-REQUIRED", (400, 422), "searchPersons")
unchecked("person-search-start-unchecked", "PERS-SEARCH-PAGING", "start", "searchPersons")
unchecked("person-search-email-unchecked", "PERS-SEARCH-CRITERIA-LENGTH", "email", "searchPersons")


@overrides(
    "persons-listed-wholesale",
    "PERS-NO-LIST-ALL",
    "GET /persons answers every person of the system",
)
class _PersonsListedWholesale(RequestPolicy):
    def answered_before_routing(self, request: Request) -> Response | None:
        listing = listed_wholesale(self.server, request, "/api/ws/v1/persons", "person")
        return super().answered_before_routing(request) if listing is None else listing
