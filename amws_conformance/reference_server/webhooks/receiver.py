"""A webhook receiver: verifies, decrypts and records the events a service sends.

``create_receiver`` returns a Starlette app. Every POST (any path) is checked the way doc3
asks receivers to: the optional header, the HMAC signature recomputed over path +
timestamp + raw body and compared in constant time, a timestamp within the tolerance either
way, and no second use of the same signature and timestamp. Accepted bodies have their
encrypted fields decrypted and are kept; ``GET /deliveries`` (optionally ``?status=…``) lists
them, ``GET /rejections`` lists what was refused and why, ``DELETE /deliveries`` forgets all.

Tests steer failures through ``app.state.inbox``: ``fail_next`` answers that many POSTs with
503, ``fail_when`` answers 503 to every verified payload it accepts, ``delay`` holds each answer
back that many seconds. Every 503 is kept in ``failures`` so a test can pick out its own.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from amws_conformance.reference_server._crypto import decrypt_text, equal
from amws_conformance.reference_server.webhooks.dispatcher import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    encrypted_fields,
    signature,
)


class Rejected(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Inbox:
    """What the receiver accepted and refused, shared between the app and its owner."""

    def __init__(self) -> None:
        self.deliveries: list[dict[str, Any]] = []
        self.rejections: list[dict[str, Any]] = []
        self.attempts = 0
        self.fail_next = 0
        self.fail_when: Callable[[Any], bool] | None = None
        self.failures: list[dict[str, Any]] = []
        self.delay = 0.0
        self.seen: set[tuple[str, str]] = set()
        self.lock = threading.Lock()

    def of_status(self, status: str | None) -> list[dict[str, Any]]:
        with self.lock:
            return [d for d in self.deliveries if status is None or d["status"] == status]

    def clear(self) -> None:
        with self.lock:
            self.deliveries.clear()
            self.rejections.clear()
            self.failures.clear()


def _decrypt(node: Any, fields: frozenset[str], secret: str, iv: str) -> Any:
    if isinstance(node, dict):
        return {
            k: decrypt_text(v, secret, iv)
            if k in fields and isinstance(v, str)
            else _decrypt(v, fields, secret, iv)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_decrypt(v, fields, secret, iv) for v in node]
    return node


class _Verifier:
    def __init__(
        self,
        hmac_key: str | None,
        encryption: dict[str, Any] | None,
        header: dict[str, str] | None,
        tolerance_seconds: float,
        now: Callable[[], float],
        inbox: Inbox,
    ) -> None:
        self.hmac_key = hmac_key
        self.encryption = encryption if encryption and encryption.get("secret") else None
        self.header = header
        self.tolerance_ms = tolerance_seconds * 1000
        self.now = now
        self.inbox = inbox

    def check_header(self, request: Request) -> None:
        if self.header is None:
            return
        sent = request.headers.get(self.header["name"])
        if sent is None or not equal(sent, self.header["value"]):
            raise Rejected(401, "the configured header is missing or wrong")

    def check_signature(self, request: Request, raw: bytes) -> None:
        if self.hmac_key is None:
            return
        sent, stamp = request.headers.get(SIGNATURE_HEADER), request.headers.get(TIMESTAMP_HEADER)
        if not sent or not stamp:
            raise Rejected(401, "the signature headers are missing")
        if not stamp.isascii() or not stamp.isdigit():
            raise Rejected(401, "the timestamp is not epoch milliseconds")
        if abs(self.now() * 1000 - int(stamp)) > self.tolerance_ms:
            raise Rejected(401, "the timestamp is outside the tolerance")
        expected = signature(self.hmac_key, request.url.path, stamp, raw)
        if not equal(expected, sent):
            raise Rejected(401, "the signature does not match")
        with self.inbox.lock:
            if (sent, stamp) in self.inbox.seen:
                raise Rejected(409, "this signature and timestamp were already used")
            self.inbox.seen.add((sent, stamp))

    def payload(self, raw: bytes) -> Any:
        try:
            payload = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise Rejected(400, "the body is not UTF-8 JSON") from None
        if self.encryption is None:
            return payload
        fields = frozenset(encrypted_fields(self.encryption))
        try:
            return _decrypt(payload, fields, self.encryption["secret"], self.encryption["iv"])
        except ValueError:
            raise Rejected(400, "an encrypted field does not decrypt with this key") from None


def create_receiver(
    hmac_key: str | None,
    encryption: dict[str, Any] | None = None,
    header: dict[str, str] | None = None,
    tolerance_seconds: float = 300,
    *,
    now: Callable[[], float] = time.time,
) -> Starlette:
    """A receiver app; ``now`` is the clock timestamps are judged by (seconds since the epoch).

    A receiver beside a reference server whose clock was moved passes that server's clock.
    """
    inbox = Inbox()
    verifier = _Verifier(hmac_key, encryption, header, tolerance_seconds, now, inbox)

    async def receive(request: Request) -> JSONResponse:
        raw = await request.body()
        with inbox.lock:
            inbox.attempts += 1
        try:
            verifier.check_header(request)
            verifier.check_signature(request, raw)
            payload = verifier.payload(raw)
        except Rejected as refused:
            with inbox.lock:
                inbox.rejections.append({"path": request.url.path, "reason": refused.reason})
            return JSONResponse({"accepted": False, "reason": refused.reason}, refused.status)
        if inbox.delay:
            await asyncio.sleep(inbox.delay)
        with inbox.lock:
            record = {
                "path": request.url.path,
                "status": payload.get("status") if isinstance(payload, dict) else None,
                "received_at": time.time(),
                "headers": dict(request.headers),
                "body": raw.decode("utf-8"),
                "payload": payload,
            }
            told = inbox.fail_when is not None and inbox.fail_when(payload)
            if told or inbox.fail_next > 0:
                inbox.fail_next -= 0 if told else 1
                # monotonic, so gaps between retries can be measured on the receiver's side
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
