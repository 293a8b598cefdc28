"""The virtual reader: a software reader device presented with codes over HTTP.

No API key is involved: the device's uuid and key in the body authenticate, and every
answer is a ReaderOutcome whose ``code`` is the status as text. The pipeline has already
answered 400/422 for bad bodies (and reshaped those errors for this tag); here come, in
order, the throttles (per device, and per address for failed device authentications),
the device check (404), the wiring check (424) and the decision of the reader hardware.

The decisions inside these steps are the methods of ``VirtualReaderPolicy``; the handlers ask
``server.policy(VirtualReaderPolicy)`` for the one in force, which is where the virtual reader
faults (``faults/_reader_and_webhooks.py``) plug in. This module holds the correct behaviour
only.
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING, Any

from starlette.responses import Response

from amws_conformance import spec
from amws_conformance.reference_server._call import Call, reply
from amws_conformance.reference_server._crypto import equal
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.hardware import readers

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

# A refusal the reader answers: (status, reason, message).
Refusal = tuple[int, str, str]

SWEEP_ABOVE = 1024  # names tracked before stale ones are swept out
_NO_SUCH_KEY = "x" * 32  # compared against when the device is unknown, to keep timing even


class SlidingWindow:
    """Events per name within the throttle's window of the server clock."""

    def __init__(self, throttle: spec.Throttle) -> None:
        self.limit = throttle.requests
        self.seconds = throttle.window_seconds
        self._events: dict[str, deque[float]] = {}

    def _recent(self, name: str, now: float) -> deque[float]:
        events = self._events.get(name, deque())
        # A clock moved backwards leaves events "in the future"; they no longer count.
        kept = deque(t for t in events if now - self.seconds < t <= now)
        if kept:
            self._events[name] = kept
        else:
            self._events.pop(name, None)
        return kept

    def wait(self, name: str, now: float) -> int | None:
        """Whole seconds until ``name`` may act again, or ``None`` when it may act now."""
        recent = self._recent(name, now)
        if len(recent) < self.limit:
            return None
        return max(1, math.ceil(recent[0] + self.seconds - now))

    def add(self, name: str, now: float) -> None:
        if len(self._events) > SWEEP_ABOVE:
            # Many one-off names (random device uuids): drop those with nothing recent.
            for stale in list(self._events):
                self._recent(stale, now)
        self._events.setdefault(name, deque()).append(now)


class ReaderThrottle:
    """The two throttles of the virtual reader, kept per server."""

    def __init__(self, server: ServerView) -> None:
        self.devices = SlidingWindow(server.throttle("reader-per-device"))
        self.failures = SlidingWindow(server.throttle("reader-auth-failures-per-address"))


def _throttle(server: ServerView) -> ReaderThrottle:
    # Handlers run on the event loop one at a time, so its plain state is safe.
    return server.part(ReaderThrottle, lambda: ReaderThrottle(server))


# -- the decisions inside the steps -----------------------------------------------------------
class VirtualReaderPolicy(Policy):
    """The decisions inside the virtual reader's steps, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Answers.
    def outcome_code(self, status: int) -> Any:
        """The ``code`` of a reader answer: the status as text."""
        return str(status)

    # Throttles and the device check.
    def holds_off_failing_address(self) -> bool:
        """Whether an address past its allowance of failed device checks is answered 429."""
        return True

    def allowance_name(self, device_uuid: str, client: str) -> str:
        """The name a request counts against in the reader allowance: its device."""
        return device_uuid

    def authorization_refusal(self, header: str | None) -> Refusal | None:
        """The refusal an Authorization header earns: none, the device's key authenticates."""
        return None

    def key_accepted(self, stored: str, presented: str) -> bool:
        """Whether the presented key authenticates the device: it is the stored key."""
        return equal(stored, presented)

    # Reads.
    def unattached_refusal(self) -> Refusal:
        """The answer to a read at a device wired to no access control point: 424."""
        message = "the device's reader is not attached to an access control point"
        return 424, "not attached", message

    def read_answer(self, decided: readers.Outcome) -> readers.Outcome:
        """What a read answers for the reader's decision: that decision as it stands."""
        return decided

    # Lists.
    def lists_credential(self, system: str, credential: dict[str, Any], point: str) -> bool:
        """Whether a credential is on the list of the point's device: a read would pass now."""
        return readers.admits(self.server, system, credential, point, self.server.clock.now())

    def entry_pin(self, pin: Any) -> Any:
        """The ``pin`` of a list entry: a number, or null without one."""
        return int(pin) if pin is not None else None

    def empty_list_refusal(self) -> Refusal | None:
        """The refusal of a list with no valid credential: none, the list is empty."""
        return None

    def earlier_list(self, device_uuid: str) -> list[dict[str, Any]] | None:
        """A list served before that the device gets again: none, every list is made afresh."""
        return None

    def list_served(self, device_uuid: str, entries: list[dict[str, Any]]) -> None:
        """A device was served a freshly made list; nothing more to decide on the correct server."""


def outcome(server: ServerView, status: int, reason: str, message: str, **headers: str) -> Response:
    code = server.policy(VirtualReaderPolicy).outcome_code(status)
    return reply(status, {"code": code, "reason": reason, "message": message}, headers)


def _too_many(server: ServerView, wait: int, message: str) -> Response:
    return outcome(server, 429, "too many requests", message, **{"Retry-After": str(wait)})


def _admitted_device(call: Call) -> tuple[str, dict[str, Any]] | Response:
    """Throttles, then the device check: the device and its system, or the refusal to send."""
    server, throttle = call.server, _throttle(call.server)
    policy = server.policy(VirtualReaderPolicy)
    now = server.clock.timestamp()
    if policy.holds_off_failing_address():
        wait = throttle.failures.wait(call.client, now)
        if wait is not None:
            return _too_many(server, wait, "too many failed device checks from this address")
    device_uuid = str(call.body["uuid"]).lower()
    counted = policy.allowance_name(device_uuid, call.client)
    wait = throttle.devices.wait(counted, now)
    if wait is not None:
        return _too_many(server, wait, "the device's request allowance is used up")
    throttle.devices.add(counted, now)
    refused = policy.authorization_refusal(call.request.headers.get("authorization"))
    if refused is not None:
        return outcome(server, *refused)
    found = readers.device(server, device_uuid)
    stored_key = found[1]["key"] if found else _NO_SUCH_KEY
    key_matches = policy.key_accepted(stored_key, str(call.body["key"]))
    if found is None or not key_matches:
        throttle.failures.add(call.client, now)
        return outcome(server, 404, "unknown device", "no device with that uuid and key")
    return found


@handles("virtualRead", "virtualQrRead")
async def virtual_read(call: Call) -> Response:
    admitted = _admitted_device(call)
    if isinstance(admitted, Response):
        return admitted
    system, device = admitted
    server = call.server
    policy = server.policy(VirtualReaderPolicy)
    if device.get("point") is None:
        return outcome(server, *policy.unattached_refusal())
    decided = readers.decide(server, system, device["point"], call.body["code"], device["uuid"])
    answer = policy.read_answer(decided)
    return outcome(server, answer.status, answer.reason, answer.message)


def _holder_name(server: ServerView, system: str, credential: dict[str, Any]) -> str | None:
    kind, uuid = credential.get("_holderKind"), credential.get("holderUuid")
    if not kind or not uuid:
        return None
    holder = server.store.get(kind, uuid, system)
    if holder is None and kind == "visitor" and credential.get("_invite"):
        # A visitor known only through the invitation has the invitation's names.
        holder = server.store.get("invite", credential["_invite"], system)
    holder = holder or {}
    name = " ".join(p for p in (holder.get("firstName"), holder.get("lastName")) if p)
    return name or None


def _entry(
    server: ServerView, policy: VirtualReaderPolicy, system: str, credential: dict[str, Any]
) -> dict[str, Any]:
    """One valid-credential entry; fields with no value are left out rather than nulled."""
    entry: dict[str, Any] = {
        "uuid": credential["uuid"],
        "holderType": credential.get("type"),
        "holderUuid": credential.get("holderUuid"),
        "holderName": _holder_name(server, system, credential),
        "status": "ACTIVE",
        "active": credential.get("activeDate"),
        "expiry": credential.get("expiryDate"),
        "type": credential.get("readerType"),
        "code": readers.code_of(credential),
    }
    entry = {k: v for k, v in entry.items() if v is not None}
    entry["pin"] = policy.entry_pin(credential.get("pin"))
    entry["useLimit"] = credential.get("useLimit")
    return entry


def _listed(
    policy: VirtualReaderPolicy, system: str, point: str | None, credential: dict[str, Any]
) -> bool:
    if point is None or credential.get("status") == "DELETED":
        return False
    return policy.lists_credential(system, credential, point)


@handles("virtualReaderList", "virtualQrReaderList")
async def virtual_reader_list(call: Call) -> Response:
    admitted = _admitted_device(call)
    if isinstance(admitted, Response):
        return admitted
    system, device = admitted
    server, point = call.server, device.get("point")
    policy = server.policy(VirtualReaderPolicy)
    earlier = policy.earlier_list(device["uuid"])
    if earlier is not None:
        return reply(200, earlier)
    credentials = server.store.all("credential", system)
    entries = [
        _entry(server, policy, system, c) for c in credentials if _listed(policy, system, point, c)
    ]
    refused = policy.empty_list_refusal() if not entries else None
    if refused is not None:
        return outcome(server, *refused)
    policy.list_served(device["uuid"], entries)
    return reply(200, entries)
