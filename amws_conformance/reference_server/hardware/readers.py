"""Reader devices and the access decision every reader makes, virtual or physical.

The demo deployment gets two devices of type "Virtual Reader WS" in its first system: one
wired to the main entrance (the DOOR point) and one wired to nothing, so the 424 answer can be
exercised. :func:`decide` is the single place a presented code is judged; the virtual reader
endpoints and any simulated physical reader call it, so both consult the same lists, log the
same events, fire the same relays and move visits the same way.

The decisions inside a read are the methods of ``ReaderPolicy``; :func:`decide` and
:func:`refusal` ask ``server.policy(ReaderPolicy)`` for the one in force, which is where the
reader faults (``faults/_reader_and_webhooks.py``) plug in. This module holds the correct
behaviour only.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._time import format_instant, parse_instant
from amws_conformance.reference_server._trails import record_relay
from amws_conformance.reference_server.domain import credentials, visits

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

DEVICE_KIND = "reader_device"
DEVICE_TYPE = "Virtual Reader WS"
READER_NAME = "Virtual Reader"
OPEN_SCHEDULE = "always"

# Reader types that pair the code with a further factor (plate, MVL disc, ID document, PIN)
# that a code-only interface cannot collect (our reading of READER-415-SECOND-FACTOR).
SECOND_FACTOR = frozenset(
    {
        "MVL_ID",
        "LPR_MVL_ID",
        "PIN_LPR",
        "PIN_ID",
        "PIN_MVL",
        "PIN_MVL_ID",
        "PIN_ID_LPR",
        "PIN_MVL_LPR",
        "PIN_MVL_ID_LPR",
    }
)


@dataclass(frozen=True)
class Outcome:
    """What a reader answers: the HTTP status, a short reason and a sentence for people."""

    status: int
    reason: str
    message: str
    credential: str | None = None


# -- devices and provisioning ---------------------------------------------------------------
def install(server: ServerView) -> None:
    server.provisioners.append(provision_devices)
    server.profile_extenders.append(extend_profile)


def _new_device(server: ServerView, system: str, name: str, point: str | None, role: str) -> str:
    record = {
        "name": name,
        "type": DEVICE_TYPE,
        "readerName": READER_NAME,
        "key": secrets.token_hex(16),  # 32 characters, inside the documented 10..64
        "point": point,
        "_role": role,
    }
    return server.store.insert(DEVICE_KIND, system, record)


def provision_devices(server: ServerView) -> None:
    """Create the attached and the unattached virtual reader once per database."""
    main = server.systems()[0]
    if server.store.all(DEVICE_KIND, main):
        return
    door = next(p for p in server.store.all("access_point", main) if p["type"] == "DOOR")
    with server.store.transaction():
        _new_device(server, main, "Virtual reader - main entrance", door["uuid"], "attached")
        _new_device(server, main, "Virtual reader - not wired", None, "unattached")


def _device_with_role(server: ServerView, system: str, role: str) -> dict[str, Any]:
    return next(d for d in server.store.all(DEVICE_KIND, system) if d.get("_role") == role)


def lists_covering(server: ServerView, system: str, point: str) -> list[dict[str, Any]]:
    """The access control lists with an open-schedule rule for the point."""
    return [
        acl
        for acl in server.store.all("acl", system)
        if any(_opens(rule, point) for rule in acl.get("_rules", []))
    ]


def extend_profile(server: ServerView, document: dict[str, Any]) -> None:
    main = server.systems()[0]
    attached = _device_with_role(server, main, "attached")
    unattached = _device_with_role(server, main, "unattached")
    document["virtual_reader"] = {
        "uuid": attached["uuid"],
        "key": attached["key"],
        "access_control_point": attached["point"],
        "access_control_list": lists_covering(server, main, attached["point"])[0]["uuid"],
    }
    document["unattached_reader"] = {"uuid": unattached["uuid"], "key": unattached["key"]}


def device(server: ServerView, uuid: str) -> tuple[str, dict[str, Any]] | None:
    """The device record with that uuid and its system, or ``None``."""
    record = server.store.get(DEVICE_KIND, uuid)
    if record is None:
        return None
    system = server.store.system_of(uuid)
    return (system, record) if system else None


# -- the decision -------------------------------------------------------------------------
def _opens(rule: dict[str, Any], point: str) -> bool:
    return rule.get("point") == point and rule.get("schedule") == OPEN_SCHEDULE


def code_of(credential: dict[str, Any]) -> str:
    """The text a holder presents: the identifier, else the PIN."""
    if credential.get("uniqueIdentifier"):
        return str(credential["uniqueIdentifier"])
    pin = credential.get("pin")
    return "" if pin is None else str(pin)


def _presents(credential: dict[str, Any], code: str) -> bool:
    pin = credential.get("pin")
    return credential.get("uniqueIdentifier") == code or (pin is not None and str(pin) == code)


def find_credential(server: ServerView, system: str, code: str) -> dict[str, Any] | None:
    """The system's credential whose identifier or PIN text is exactly ``code``."""
    if not code:
        return None
    store = server.store
    indexed = store.find_unique("credential", system, "identifier", code)
    record = store.get("credential", indexed, system) if indexed else None
    if record is not None and _presents(record, code):
        return record
    # A PIN of a credential that also has an identifier is not in the unique index.
    matches = store.all("credential", system, lambda r: _presents(r, code))
    live = [m for m in matches if m.get("status") != "DELETED"]
    found = live or matches
    return found[0] if found else None


def _inside_window(credential: dict[str, Any], now: datetime) -> bool:
    active, expiry = credential.get("activeDate"), credential.get("expiryDate")
    if active and parse_instant(active) > now:
        return False
    return not (expiry and parse_instant(expiry) < now)


def lists_open(server: ServerView, system: str, credential: dict[str, Any], point: str) -> bool:
    """Whether one of the credential's lists has an open-schedule rule for the point."""
    for acl_uuid in credential.get("accessControlListUuids") or []:
        acl = server.store.get("acl", acl_uuid, system)
        if acl and any(_opens(rule, point) for rule in acl.get("_rules", [])):
            return True
    return False


# -- the decisions inside a read ------------------------------------------------------------
class ReaderPolicy(Policy):
    """The decisions inside a reader's judgement, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Refusals.
    def refuses_second_factor(self, credential: dict[str, Any]) -> bool:
        """Whether a read is refused (415) because the credential needs a second factor."""
        return credential.get("readerType") in SECOND_FACTOR

    def status_admits(self, status: str) -> bool:
        """Whether a credential of this status may be admitted: the ACTIVE ones only."""
        return status == "ACTIVE"

    def inside_window(self, credential: dict[str, Any], now: datetime) -> bool:
        """Whether ``now`` lies inside the credential's validity window."""
        return _inside_window(credential, now)

    def allowed_at(self, system: str, credential: dict[str, Any], point: str) -> bool:
        """Whether the credential's lists let it in at the point (no list: nowhere)."""
        return lists_open(self.server, system, credential, point)

    # Consequences.
    def consumes_use(self, granted: bool) -> bool:
        """Whether a read of a limited credential uses up one of its uses: a grant only."""
        return granted

    def fires_relay(self) -> bool:
        """Whether a grant fires the point's relay."""
        return True

    def grant_moves_visit(self, device_uuid: str | None) -> bool:
        """Whether a visitor grant moves its visit: at any reader, virtual or physical."""
        return True


def refusal(
    server: ServerView, system: str, credential: dict[str, Any], point: str, now: datetime
) -> str | None:
    """Why a credential found by its code is not admitted at the point now (None: admitted)."""
    policy = server.policy(ReaderPolicy)
    if credential.get("enabled") is False:
        return "the credential is disabled"
    # The status as the credentials part reads it now (its policy in force, faults included).
    if not policy.status_admits(credentials.effective_status(server, credential)):
        return "the credential is not active"
    if not policy.inside_window(credential, now):
        return "the credential is outside its validity window"
    if credential.get("useLimit") is not None and credential["useLimit"] <= 0:
        return "the credential has no uses left"
    if not policy.allowed_at(system, credential, point):
        return "the credential is not allowed at this access control point"
    return None


def admits(
    server: ServerView, system: str, credential: dict[str, Any], point: str, now: datetime
) -> bool:
    """Whether a read of this credential at the point would be granted now."""
    if credential.get("readerType") in SECOND_FACTOR:
        return False
    return refusal(server, system, credential, point, now) is None


def _log(
    server: ServerView,
    system: str,
    point: str,
    result: str,
    credential: dict[str, Any] | None,
    device_uuid: str | None,
    detail: str,
) -> None:
    """Write a logbook event; refusals are the "attempted entry" events."""
    server.store.insert(
        "access_event",
        system,
        {
            "at": format_instant(server.clock.now()),
            "point": point,
            "device": device_uuid,
            "result": result,
            "credential": credential["uuid"] if credential else None,
            "holderUuid": credential.get("holderUuid") if credential else None,
            "detail": detail,
        },
    )


def _consume_use(
    server: ServerView, policy: ReaderPolicy, credential: dict[str, Any], granted: bool
) -> None:
    """Take one use from a limited credential when the read spends one."""
    limit = credential.get("useLimit")
    # A grant passed the no-uses-left check, so its limit, when set, is at least 1.
    if limit and policy.consumes_use(granted):
        server.store.replace(
            "credential", credential["uuid"], {**credential, "useLimit": limit - 1}
        )


def _grant(
    server: ServerView,
    policy: ReaderPolicy,
    system: str,
    credential: dict[str, Any],
    point: str,
    device_uuid: str | None,
) -> None:
    _consume_use(server, policy, credential, granted=True)
    _log(server, system, point, "granted", credential, device_uuid, "access granted")
    if policy.fires_relay():
        record_relay(server, system, point, cause="reader")


def decide(
    server: ServerView, system: str, point_uuid: str, code: str, device_uuid: str | None = None
) -> Outcome:
    """Judge a code presented at a reader on ``point_uuid``; grants fire the point's relay."""
    now, policy = server.clock.now(), server.policy(ReaderPolicy)
    with server.store.transaction():
        credential = find_credential(server, system, code)
        if credential is None:
            detail = "no credential matches the code"
            _log(server, system, point_uuid, "denied", None, device_uuid, detail)
            return Outcome(401, "denied", detail)
        if policy.refuses_second_factor(credential):
            detail = "the credential needs a second factor this reader cannot collect"
            _log(server, system, point_uuid, "second factor", credential, device_uuid, detail)
            return Outcome(415, "second factor required", detail, credential["uuid"])
        why = refusal(server, system, credential, point_uuid, now)
        if why is not None:
            _log(server, system, point_uuid, "denied", credential, device_uuid, why)
            _consume_use(server, policy, credential, granted=False)
            return Outcome(401, "denied", why, credential["uuid"])
        _grant(server, policy, system, credential, point_uuid, device_uuid)
    if credential.get("type") == "VISITOR" and policy.grant_moves_visit(device_uuid):
        # The visit moves: the first grant checks in, the next checks out.
        visits.on_grant(server, system, credential)
    return Outcome(200, "granted", "access granted", credential["uuid"])
