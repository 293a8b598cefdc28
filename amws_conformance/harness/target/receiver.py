"""The webhook receiver a run listens with, at the profile's ``webhooks.listen`` address.

Written from document 3 (§ Events) and nothing else: the harness judges the target's sender,
so it shares no code with the reference server's dispatcher or receiver (a bug both shared
would pass its own test). Every POST, whatever its path, is checked in this order:

1. the optional header (``webhooks.header``: name and value), when the profile configures one;
2. when an HMAC key is configured: both ``X-SERVICE-HMAC-*`` headers are there, the timestamp
   is epoch milliseconds within :data:`TOLERANCE_SECONDS` of the target's clock (either way),
   the signature is Base64 of HMAC-SHA256 (key as UTF-8) over the UTF-8 bytes of
   path + timestamp + raw body, compared in constant time, and the same signature and
   timestamp are never accepted twice (a replay);
3. the body is UTF-8 JSON; with an encryption secret and IV, the encrypted fields (the
   profile's list, else the spec's default list; ``mobile`` also names ``mobileNumber``, the
   name the payload's visitor and host use) are decrypted with the harness's own AES code.

A refused POST is answered 401 (header, signature, timestamp), 409 (replay) or 400 (body) and
kept in ``rejections`` with the reason. An accepted one is kept in ``deliveries`` with its
path, status, headers, raw body and decrypted payload. ``GET /deliveries`` (``?status=``) and
``GET /rejections`` show them; ``DELETE /deliveries`` forgets everything.

Tests steer failures through :attr:`Receiver.inbox`: ``fail_next`` answers that many verified
POSTs with 503, ``fail_when(payload)`` answers 503 to every verified payload it accepts,
``delay`` holds each answer back that many seconds; every 503 is kept in ``failures`` (with a
monotonic ``answered_at``, so gaps between retries can be measured here). Tests wait for
deliveries with a deadline (``wait_for``) instead of sleeping.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from amws_conformance import spec
from amws_conformance.harness.target.crypto import decrypt_text

Delivery = dict[str, Any]
SIGNATURE_HEADER = "X-SERVICE-HMAC-SHA256"
TIMESTAMP_HEADER = "X-SERVICE-HMAC-TIMESTAMP"
# doc3: receivers "should reject timestamps that are too old (for example older than 5 minutes)".
TOLERANCE_SECONDS = 300.0


class Refused(Exception):
    """A POST the receiver does not accept: the status it answers and why."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class Inbox:
    """What the receiver accepted, refused and was told to fail; shared with the test thread."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.deliveries: list[Delivery] = []
        self.rejections: list[dict[str, Any]] = []
        self.failures: list[Delivery] = []
        self.attempts = 0
        self.fail_next = 0
        self.fail_when: Callable[[Any], bool] | None = None
        self.delay = 0.0
        self.used: dict[tuple[str, str], float] = {}  # (signature, timestamp) -> its time

    def of_status(self, status: str | None) -> list[Delivery]:
        with self.lock:
            return [d for d in self.deliveries if status is None or d["status"] == status]

    def clear(self) -> None:
        with self.lock:
            self.deliveries.clear()
            self.rejections.clear()
            self.failures.clear()


def payload_names(fields: list[str] | None) -> frozenset[str]:
    """The payload field names an encryption list covers (the spec's default list if empty)."""
    names = set(fields or spec.openapi()["x-default-encrypted-fields"])
    if "mobile" in names:
        names.add("mobileNumber")  # the visitor's and host's name for it in a VisitDTO
    return frozenset(names)


def expected_signature(key: str, path: str, stamp: str, raw: bytes) -> str:
    """doc3: Base64 of HMAC-SHA256, key as UTF-8, over path + timestamp + the body as sent."""
    text = path.encode("utf-8") + stamp.encode("utf-8") + raw
    return base64.b64encode(hmac.new(key.encode("utf-8"), text, hashlib.sha256).digest()).decode()


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


class Verifier:
    """The checks of one receiver's settings (the profile's ``webhooks`` section)."""

    def __init__(
        self, settings: dict[str, Any], inbox: Inbox, now: Callable[[], float] = time.time
    ) -> None:
        self.key: str | None = settings.get("hmac_key") or None
        self.header: dict[str, str] | None = settings.get("header") or None
        encryption = settings.get("encryption") or {}
        self.secret, self.iv = encryption.get("secret"), encryption.get("iv")
        self.fields = payload_names(encryption.get("fields")) if self.secret else frozenset()
        self.inbox, self.now = inbox, now

    def check(self, request: Request, raw: bytes) -> Any:
        """The payload of an acceptable POST, decrypted; :class:`Refused` otherwise."""
        self._check_header(request)
        self._check_signature(request, raw)
        return self._payload(raw)

    def _check_header(self, request: Request) -> None:
        if self.header is None:
            return
        sent = request.headers.get(self.header["name"])
        if sent is None or not _same(sent, self.header["value"]):
            raise Refused(401, "the configured header is missing or wrong")

    def _check_signature(self, request: Request, raw: bytes) -> None:
        if self.key is None:
            return
        sent = request.headers.get(SIGNATURE_HEADER)
        stamp = request.headers.get(TIMESTAMP_HEADER)
        if not sent or not stamp:
            raise Refused(401, "the signature headers are missing")
        if not (stamp.isascii() and stamp.isdigit()):
            raise Refused(401, "the timestamp is not epoch milliseconds")
        now = self.now()
        if abs(now - int(stamp) / 1000) > TOLERANCE_SECONDS:
            raise Refused(401, "the timestamp is outside the tolerance")
        if not _same(sent, expected_signature(self.key, request.url.path, stamp, raw)):
            raise Refused(401, "the signature does not match")
        with self.inbox.lock:
            used = self.inbox.used
            if (sent, stamp) in used:
                raise Refused(409, "this signature and timestamp were already used")
            # Pairs older than the tolerance are refused by their timestamp anyway.
            for pair in [p for p, at in used.items() if now - at > 2 * TOLERANCE_SECONDS]:
                del used[pair]
            used[(sent, stamp)] = now

    def _payload(self, raw: bytes) -> Any:
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise Refused(400, "the body is not UTF-8 JSON") from None
        if not (self.secret and self.iv):
            return payload
        try:
            return self._decrypted(payload)
        except ValueError:
            raise Refused(400, "an encrypted field does not decrypt with this key") from None

    def _decrypted(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self._decrypted(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for name, value in node.items():
            if name in self.fields and isinstance(value, str):
                out[name] = decrypt_text(value, str(self.secret), str(self.iv))
            else:
                out[name] = self._decrypted(value)
        return out


def receiver_app(settings: dict[str, Any], now: Callable[[], float] = time.time) -> Starlette:
    """The receiver as a Starlette app; its :class:`Inbox` is ``app.state.inbox``.

    ``now`` is the clock timestamps are judged by (seconds since the epoch): the target's.
    """
    inbox = Inbox()
    verifier = Verifier(settings, inbox, now)

    async def receive(request: Request) -> JSONResponse:
        raw = await request.body()
        with inbox.lock:
            inbox.attempts += 1
        try:
            payload = verifier.check(request, raw)
        except Refused as refused:
            with inbox.lock:
                inbox.rejections.append({"path": request.url.path, "reason": refused.reason})
            return JSONResponse({"accepted": False, "reason": refused.reason}, refused.status)
        if inbox.delay:
            await asyncio.sleep(inbox.delay)
        record = {
            "path": request.url.path,
            "status": payload.get("status") if isinstance(payload, dict) else None,
            "received_at": time.time(),
            "headers": dict(request.headers),
            "body": raw.decode("utf-8"),
            "payload": payload,
        }
        with inbox.lock:
            told = inbox.fail_when is not None and bool(inbox.fail_when(payload))
            if told or inbox.fail_next > 0:
                if not told:
                    inbox.fail_next -= 1
                inbox.failures.append({**record, "answered_at": time.monotonic()})
                return JSONResponse({"accepted": False, "reason": "told to fail"}, 503)
            inbox.deliveries.append(record)
        return JSONResponse({"accepted": True})

    async def deliveries(request: Request) -> JSONResponse:
        if request.method == "DELETE":
            inbox.clear()
            return JSONResponse({"cleared": True})
        return JSONResponse(inbox.of_status(request.query_params.get("status")))

    async def rejections(request: Request) -> JSONResponse:
        with inbox.lock:
            return JSONResponse(list(inbox.rejections))

    app = Starlette(
        routes=[
            Route("/deliveries", deliveries, methods=["GET", "DELETE"]),
            Route("/rejections", rejections, methods=["GET"]),
            Route("/{path:path}", receive, methods=["POST"]),
        ]
    )
    app.state.inbox = inbox
    return app


class Receiver:
    """Runs the receiver at ``settings["listen"]`` until :meth:`stop`."""

    def __init__(self, settings: dict[str, Any], now: Callable[[], float] = time.time) -> None:
        app = receiver_app(settings, now=now)
        self.inbox: Inbox = app.state.inbox
        host, _, port = settings["listen"].rpartition(":")
        config = uvicorn.Config(app, host=host, port=int(port), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def start(self, timeout: float = 10.0) -> Receiver:
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the webhook receiver could not listen at its address")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def deliveries(self, status: str | None = None) -> list[Delivery]:
        return self.inbox.of_status(status)

    def rejections(self) -> list[dict[str, Any]]:
        with self.inbox.lock:
            return list(self.inbox.rejections)

    def failures(self) -> list[Delivery]:
        """Verified deliveries the receiver was told to answer with 503."""
        with self.inbox.lock:
            return list(self.inbox.failures)

    def wait_for(
        self,
        status: str,
        where: Callable[[Delivery], bool] = lambda _: True,
        timeout: float = 10.0,
    ) -> Delivery:
        """The first delivery of ``status`` that ``where`` accepts, within ``timeout`` seconds.

        A delivery the receiver refused meanwhile (bad signature, stale timestamp …) ends the
        wait at once: the target sent it, and it is not one the documents allow.
        """
        deadline = time.monotonic() + timeout
        refused_before = len(self.rejections())
        while True:
            for delivery in self.deliveries(status):
                if where(delivery):
                    return delivery
            refused = self.rejections()[refused_before:]
            if refused:
                raise AssertionError(f"the receiver refused a delivery: {refused[0]['reason']}")
            if time.monotonic() > deadline:
                seen = [(d["status"], d["path"]) for d in self.deliveries()][-10:]
                raise AssertionError(f"no {status} delivery within {timeout}s; last seen: {seen}")
            time.sleep(0.02)

    def quiet_for(
        self,
        status: str | None,
        where: Callable[[Delivery], bool] = lambda _: True,
        seconds: float = 1.0,
    ) -> bool:
        """True when no matching delivery arrives during ``seconds`` (for "nothing is sent")."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if any(where(d) for d in self.deliveries(status)):
                return False
            time.sleep(0.05)
        return True
