"""The VisitDTO of a visit event: the invitation, its visitor and its host as one payload.

The one decision a fault bends (how ``uuid32`` is written) is ``PayloadPolicy``'s, asked of
``server.policy(PayloadPolicy)``; the payload faults (``faults/_reader_and_webhooks.py``) plug
in there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.domain.files import media_links

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView


class PayloadPolicy(Policy):
    """The decisions inside building a VisitDTO, each answering what the documents require."""

    def uuid32(self, uuid: str) -> str:
        """A uuid written as ``uuid32``: its 32 hex digits, without dashes."""
        return uuid.replace("-", "")


def _number_id(uuid: str) -> int:
    """A stable positive int64 for the DTOs' numeric id (derived from the uuid)."""
    return int(uuid.replace("-", "")[:15], 16)


def _initials(*names: str | None) -> str | None:
    letters = "".join(n.strip()[0].upper() for n in names if n and n.strip())
    return letters or None


def _name_of(server: ServerView, system: str, kind: str, uuid: str | None) -> str | None:
    record = server.store.get(kind, uuid, system) if uuid else None
    return record.get("name") if record else None


def _photo_links(server: ServerView, record: dict[str, Any]) -> dict[str, Any]:
    if not record.get("photoId"):
        return {"photo": None, "thumbnail": None}
    return media_links(server, record["photoId"])


def _uuid32(server: ServerView, uuid: str) -> str:
    return server.policy(PayloadPolicy).uuid32(uuid)


def visitor_dto(server: ServerView, system: str, invite: dict[str, Any]) -> dict[str, Any] | None:
    uuid = invite.get("visitorId")
    record = (server.store.get("visitor", uuid, system) if uuid else None) or {}
    # The invitation keeps its own copy of the visitor's fields; the visitor record wins.
    first = record.get("firstName", invite.get("firstName"))
    last = record.get("lastName", invite.get("lastName"))
    return {
        "id": _number_id(uuid) if uuid else None,
        "uuid": uuid,
        "uuid32": _uuid32(server, uuid) if uuid else None,
        "initials": _initials(first, last),
        "firstName": first,
        "middleName": record.get("middleName"),
        "lastName": last,
        "identityNumber": record.get("identityNumber", invite.get("identityNumber")),
        "mobileNumber": record.get("mobile", invite.get("mobile")),
        "email": record.get("email", invite.get("email")),
        "company": record.get("company"),
        **_photo_links(server, record),
        "nationality": record.get("nationality"),
        "countryOfIssue": record.get("countryOfIssue"),
    }


def host_dto(server: ServerView, system: str, invite: dict[str, Any]) -> dict[str, Any] | None:
    uuid = invite.get("hostUser")
    user = server.store.get("user", uuid, system) if uuid else None
    if not uuid or user is None:
        return None
    return {
        "id": _number_id(uuid),
        "uuid": uuid,
        "uuid32": _uuid32(server, uuid),
        "initials": _initials(user.get("firstName"), user.get("lastName")),
        "firstName": user.get("firstName"),
        "lastName": user.get("lastName"),
        "mobileNumber": user.get("mobile"),
        "homeNumber": user.get("telephoneHome"),
        "officeNumber": user.get("telephoneOffice"),
        "email": user.get("email"),
        "unitAddress": user.get("address"),
        "organisation": _name_of(server, system, "organisation", user.get("organisation")),
        "location": _name_of(server, system, "location", user.get("location")),
        "department": _name_of(server, system, "department", user.get("department")),
        "group": _name_of(server, system, "group", user.get("group")),
    }


def visit_dto(
    server: ServerView, system: str, status: str, invite: dict[str, Any]
) -> dict[str, Any]:
    """The VisitDTO of an invitation record (``visitId`` is its registrationId)."""
    reason = invite.get("_visitReasonText") or _name_of(
        server, system, "visit_reason", invite.get("visitReason")
    )
    return {
        "status": status,
        "source": "INVITED",  # every visit of the reference server comes from an invitation
        "visitId": invite.get("uuid") or invite.get("registrationId"),
        "expectedAt": invite.get("activation"),
        "leavingAt": invite.get("expiry"),
        "arrivedAt": invite.get("arrivedAt"),
        "leftAt": invite.get("leftAt"),
        "reason": reason,
        "type": invite.get("type"),
        "accessCode": invite.get("accessCode"),
        "qrCodeUrl": invite.get("qrCodeUrl"),
        "inviteLink": invite.get("inviteLink"),
        "inviteTextMessage": invite.get("inviteTextMessage"),
        "visitor": visitor_dto(server, system, invite),
        "host": host_dto(server, system, invite),
    }
