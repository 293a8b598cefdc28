"""The visit lifecycle of an invitation: status moves, cancel, check-in/out, reader grants.

Lifecycle (the reference server's choice; the documents list the statuses but no moves)::

    (new) ──► VISIT_CREATED ─┐   pre-arrival: VISIT_CREATED, VISIT_UPDATED
                             ├─► VISIT_UPDATED (every accepted update, again and again)
                             ├─► VISITOR_CHECK_IN ──► VISITOR_CHECK_OUT
                             └─► VISIT_NO_SHOW | VISIT_CANCELLED | VISIT_DENIED

Any other move answers 409. VISITOR_CHECK_OUT, VISIT_NO_SHOW, VISIT_CANCELLED and VISIT_DENIED
are terminal: reaching one revokes the visitor credential. VISITOR_ON_SITE, VISITOR_IN_PARKING
and VISITOR_HOSTED are never reached through this interface.

:func:`move` is the single place a visit changes status: it stamps arrivedAt/leftAt, revokes
the credential of an ended visit and publishes ``VisitChanged`` (the webhook dispatcher
subscribes to it).

Check-in (through changeInviteStatus or a reader grant, :func:`on_grant`) consults every
enabled watchlist again. A match does not admit the visitor: the visit moves to VISIT_DENIED
and changeInviteStatus answers 451, the same answer a registration gets for a match.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack, reply
from amws_conformance.reference_server._errors import ApiError, conflict, not_found
from amws_conformance.reference_server._events import VisitChanged
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._time import format_instant
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain._common import fetch, public
from amws_conformance.reference_server.domain.credentials import announce_change, revoke
from amws_conformance.reference_server.domain.watchlists import find_matches
from amws_conformance.reference_server.store import Record

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

CREATED, UPDATED = "VISIT_CREATED", "VISIT_UPDATED"
CHECK_IN, CHECK_OUT = "VISITOR_CHECK_IN", "VISITOR_CHECK_OUT"
NO_SHOW, CANCELLED, DENIED = "VISIT_NO_SHOW", "VISIT_CANCELLED", "VISIT_DENIED"

PRE_ARRIVAL = frozenset({CREATED, UPDATED})
ENDED = frozenset({CHECK_OUT, NO_SHOW, CANCELLED, DENIED})
_FROM_PRE_ARRIVAL = frozenset({UPDATED, CHECK_IN, NO_SHOW, CANCELLED, DENIED})
# current status -> statuses it may move to; None is a record that has just been stored.
MOVES: dict[str | None, frozenset[str]] = {
    None: frozenset({CREATED}),
    CREATED: _FROM_PRE_ARRIVAL,
    UPDATED: _FROM_PRE_ARRIVAL,
    CHECK_IN: frozenset({CHECK_OUT}),
}

WATCHLIST_DENIAL = "the visitor matched an enabled watchlist and was denied"
KIND = "invite"


class VisitPolicy(Policy):
    """The decisions inside the visit lifecycle, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    def may_move(self, current: str | None, target: str) -> bool:
        """Whether the lifecycle lets a visit in ``current`` move to ``target``."""
        return target in MOVES.get(current, frozenset())

    def consults_enabled_watchlists_only(self) -> bool:
        """Whether a visitor is checked against the enabled watchlists alone."""
        return True


# -- events -------------------------------------------------------------------------------
def emit(server: ServerView, system: str, status: str, visit: Mapping[str, Any]) -> None:
    """Publish one visit event (the webhook dispatcher queues it; nothing blocks here)."""
    server.events.publish(VisitChanged(system, status, dict(visit)))


# -- watchlists ---------------------------------------------------------------------------
def watchlist_details(visit: Mapping[str, Any]) -> dict[str, Any]:
    """The visitor's identifying values, under the watchlist entry field names.

    alternativeNumber (the visitor's second identity document) is compared with an entry's
    passport number, as the watchlist visitors listing does.
    """
    details = {
        "identityNumber": visit.get("identityNumber"),
        "passportNr": visit.get("alternativeNumber"),
        "firstName": visit.get("firstName"),
        "lastName": visit.get("lastName"),
        "mobileNumber": visit.get("mobile"),
    }
    return {k: v for k, v in details.items() if v not in (None, "")}


def on_watchlist(server: ServerView, system: str, visit: Mapping[str, Any]) -> bool:
    """Whether the visitor matches an entry of an enabled watchlist of the system."""
    details = watchlist_details(visit)
    enabled_only = server.policy(VisitPolicy).consults_enabled_watchlists_only()
    return bool(details) and bool(find_matches(server, system, details, enabled_only=enabled_only))


# -- moving a visit -----------------------------------------------------------------------
def allowed(server: ServerView, current: str | None, target: str) -> bool:
    """Whether the lifecycle lets a visit in ``current`` move to ``target``."""
    return server.policy(VisitPolicy).may_move(current, target)


def _revoke(server: ServerView, system: str, credential_uuid: str | None) -> None:
    if not credential_uuid:
        return
    revoke(server, system, credential_uuid)


def move(
    server: ServerView, system: str, invite_uuid: str, new_status: str, *, strict: bool = True
) -> None:
    """Move a visit to ``new_status``; the one place a visit's status changes.

    ``strict`` (the default) enforces the lifecycle and raises a 409 ApiError for a move it
    does not allow; only a host's deletion passes False, to close a visit already under way.
    """
    store = server.store
    with store.transaction():
        record = store.get(KIND, invite_uuid, system)
        if record is None:
            raise not_found("invitation")
        current = record.get("status")
        if strict and not allowed(server, current, new_status):
            raise conflict("the visit cannot move to that status from its current status")
        now = format_instant(server.clock.now())
        changed = {**record, "status": new_status}
        if new_status == CHECK_IN:
            changed["arrivedAt"] = now
        elif new_status == CHECK_OUT:
            changed["leftAt"] = now
        if new_status in ENDED:
            # An ended visit keeps no working credential (cancel, no-show, denial, check-out).
            _revoke(server, system, record.get("_credential"))
        store.replace(KIND, invite_uuid, changed)
    emit(server, system, new_status, changed)


def check_in(server: ServerView, system: str, invite_uuid: str) -> bool:
    """Check a pre-arrival visitor in, unless an enabled watchlist now names them.

    Returns False (and leaves the visit VISIT_DENIED) on a watchlist match.
    """
    record = server.store.get(KIND, invite_uuid, system)
    if record is not None and on_watchlist(server, system, record):
        move(server, system, invite_uuid, DENIED)
        return False
    move(server, system, invite_uuid, CHECK_IN)
    return True


# -- functions other parts call -----------------------------------------------------------
def on_grant(server: ServerView, system: str, credential: Mapping[str, Any]) -> None:
    """A reader granted a visitor credential: the first grant checks in, the next checks out.

    Grants of a visit in any other status change nothing.
    """
    registration = credential.get("_invite")
    record = server.store.get(KIND, registration, system) if registration else None
    if record is None:
        return
    status = record.get("status")
    if status in PRE_ARRIVAL:
        check_in(server, system, record["uuid"])
    elif status == CHECK_IN:
        move(server, system, record["uuid"], CHECK_OUT)


def cancel_hosted(server: ServerView, system: str, user_uuid: str) -> list[str]:
    """Cancel every visit the user hosts that has not ended; returns their registration IDs.

    A visit under way (checked in) is cancelled too: its host is gone.
    """
    cancelled = []
    with server.store.transaction():
        for record in hosted_by(server, system, user_uuid):
            if record.get("status") not in ENDED:
                move(server, system, record["uuid"], CANCELLED, strict=False)
                cancelled.append(record["uuid"])
    return cancelled


def hosted_by(server: ServerView, system: str, user_uuid: str) -> list[dict[str, Any]]:
    """The user's invitations, oldest first, as stored without private fields.

    Each carries ``uuid`` (the registrationId), the InviteListEntry fields and
    registrationStatus.
    """
    return [
        public(r) for r in server.store.all(KIND, system, lambda r: r.get("hostUser") == user_uuid)
    ]


# -- handlers -----------------------------------------------------------------------------
def fetch_invite(call: Call) -> Record:
    return fetch(call, KIND, call.path["registrationId"], "invitation")


@handles("getInviteStatus")
async def get_invite_status(call: Call) -> Response:
    record = fetch_invite(call)
    return reply(200, {"registrationId": record["uuid"], "status": record["status"]})


@handles("changeInviteStatus")
async def change_invite_status(call: Call) -> Response:
    record = fetch_invite(call)
    target = call.body["status"]
    if not allowed(call.server, record.get("status"), target):
        raise conflict("the visit cannot move to that status from its current status")
    if target == CHECK_IN and not check_in(call.server, call.system, record["uuid"]):
        raise ApiError(451, WATCHLIST_DENIAL)
    if target != CHECK_IN:
        move(call.server, call.system, record["uuid"], target)
    return ack(record["uuid"])


@handles("cancelInvite")
async def withdraw_invite(call: Call) -> Response:
    """Cancel the visit if it has not ended, then remove it (INV-DELETE-WITHDRAWS).

    Cancelling while keeping the record is the status change to VISIT_CANCELLED.
    """
    record = fetch_invite(call)
    store = call.server.store
    with store.transaction():
        if record.get("status") not in ENDED:
            # Withdrawing ends a visit under way too, as a host's deletion does.
            move(call.server, call.system, record["uuid"], CANCELLED, strict=False)
        if record.get("_credential"):
            store.delete("credential", record["_credential"])
        store.delete(KIND, record["uuid"])
        visitor = record.get("visitorId")
        others = store.all(KIND, call.system, lambda r: r.get("visitorId") == visitor)
        if visitor and not others:
            store.delete("visitor", visitor)
    announce_change(call.server, call.system)
    return ack(record["uuid"])
