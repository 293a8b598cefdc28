"""The virtual reader: a software reader device presented with codes over HTTP.

No API key is involved: the device's uuid and key in the body authenticate, and every
answer is a ReaderOutcome whose ``code`` is the status as text. The pipeline has already
answered 400/422 for bad bodies (and reshaped those errors for this tag); here come, in
order, the throttles (per device, and per address for failed device authentications),
the device check (404), the wiring check (424) and the decision of the reader hardware.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from starlette.responses import Response

import spec
from reference_server._call import Call, reply
from reference_server._crypto import equal
from reference_server._state import Server
from reference_server.domain import handles
from reference_server.hardware import readers

CACHED_LIST_SECONDS = 60.0  # how long the fault that serves a cached list keeps one
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

    def __init__(self) -> None:
        self.devices = SlidingWindow(spec.throttle("reader-per-device"))
        self.failures = SlidingWindow(spec.throttle("reader-auth-failures-per-address"))


def _throttle(server: Server) -> ReaderThrottle:
    # Handlers run on the event loop one at a time, so plain attribute state is safe.
    found = server.__dict__.get("_reader_throttle")
    if found is None:
        found = server.__dict__["_reader_throttle"] = ReaderThrottle()
    return found


def outcome(server: Server, status: int, reason: str, message: str, **headers: str) -> Response:
    code: Any = status if server.faults.on("reader-code-int") else str(status)
    return reply(status, {"code": code, "reason": reason, "message": message}, headers)


def _too_many(server: Server, wait: int, message: str) -> Response:
    return outcome(server, 429, "too many requests", message, **{"Retry-After": str(wait)})


def _admitted_device(call: Call) -> tuple[str, dict[str, Any]] | Response:
    """Throttles, then the device check: the device and its system, or the refusal to send."""
    server, throttle = call.server, _throttle(call.server)
    now = server.clock.timestamp()
    if not server.faults.on("reader-no-auth-throttle"):
        wait = throttle.failures.wait(call.client, now)
        if wait is not None:
            return _too_many(server, wait, "too many failed device checks from this address")
    device_uuid = str(call.body["uuid"]).lower()
    counted = call.client if server.faults.on("reader-throttle-per-address") else device_uuid
    wait = throttle.devices.wait(counted, now)
    if wait is not None:
        return _too_many(server, wait, "the device's request allowance is used up")
    throttle.devices.add(counted, now)
    if server.faults.on("reader-checks-authorization"):
        header = call.request.headers.get("authorization")
        if header is not None and server.key_by_value(header.removeprefix("Bearer ")) is None:
            return outcome(server, 401, "unauthorised", "the API key is not valid")
    found = readers.device(server, device_uuid)
    stored_key = found[1]["key"] if found else _NO_SUCH_KEY
    key_matches = equal(stored_key, str(call.body["key"]))
    if found is None or not (key_matches or server.faults.on("reader-key-not-checked")):
        throttle.failures.add(call.client, now)
        return outcome(server, 404, "unknown device", "no device with that uuid and key")
    return found


@handles("virtualRead", "virtualQrRead")
async def virtual_read(call: Call) -> Response:
    admitted = _admitted_device(call)
    if isinstance(admitted, Response):
        return admitted
    system, device = admitted
    if device.get("point") is None:
        if call.server.faults.on("unattached-reader-401"):
            return outcome(call.server, 401, "denied", "the reader has no access control point")
        message = "the device's reader is not attached to an access control point"
        return outcome(call.server, 424, "not attached", message)
    server = call.server
    result = readers.decide(server, system, device["point"], call.body["code"], device["uuid"])
    status, reason = result.status, result.reason
    if status == 200 and server.faults.on("grant-reason-ok"):
        reason = "OK"
    if status == 401 and result.credential is None and server.faults.on("unknown-code-404"):
        status, reason = 404, "unknown credential"
    return outcome(server, status, reason, result.message)


def _holder_name(server: Server, system: str, credential: dict[str, Any]) -> str | None:
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


def _entry(server: Server, system: str, credential: dict[str, Any]) -> dict[str, Any]:
    """One valid-credential entry; fields with no value are left out rather than nulled."""
    pin = credential.get("pin")
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
    entry["pin"] = int(pin) if pin is not None else None
    if pin is not None and server.faults.on("list-pin-as-text"):
        entry["pin"] = str(pin)
    entry["useLimit"] = credential.get("useLimit")
    return entry


def _listed(server: Server, system: str, point: str | None, credential: dict[str, Any]) -> bool:
    if point is None or credential.get("status") == "DELETED":
        return False
    now = server.clock.now()
    if server.faults.on("list-includes-expired"):
        return readers.lists_open(server, system, credential, point)
    return readers.admits(server, system, credential, point, now)


@handles("virtualReaderList", "virtualQrReaderList")
async def virtual_reader_list(call: Call) -> Response:
    admitted = _admitted_device(call)
    if isinstance(admitted, Response):
        return admitted
    system, device = admitted
    server, point = call.server, device.get("point")
    if server.faults.on("list-cached-for-a-minute"):
        cached = _cached_list(server, device["uuid"])
        if cached is not None:
            return reply(200, cached)
    credentials = server.store.all("credential", system)
    entries = [_entry(server, system, c) for c in credentials if _listed(server, system, point, c)]
    if not entries and server.faults.on("empty-list-404"):
        return outcome(server, 404, "not found", "no valid credentials for this device")
    server.__dict__.setdefault("_reader_lists", {})[device["uuid"]] = (
        server.clock.timestamp(),
        entries,
    )
    return reply(200, entries)


def _cached_list(server: Server, device_uuid: str) -> list[dict[str, Any]] | None:
    """The list this device got within the last minute (only the fault catalogue asks)."""
    made, entries = server.__dict__.get("_reader_lists", {}).get(device_uuid, (None, None))
    if made is None or server.clock.timestamp() - made >= CACHED_LIST_SECONDS:
        return None
    return entries
