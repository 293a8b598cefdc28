"""Outbound visit events: the integration settings, the payload's encryption and its delivery.

The VisitDTO itself is built in :mod:`reference_server.webhooks.payload`.

``emit`` runs on every ``VisitChanged`` event, which the single place a visit changes status
publishes (``install`` subscribes it). It snapshots the integration
as saved at that moment (events before an enable are never sent later), builds the VisitDTO,
encrypts the configured fields and queues the exact bytes. A background thread POSTs them,
signing each attempt with a fresh timestamp; a failed attempt (non-2xx, no answer within
5 s) is tried again 1, 2 and 4 s later, then dropped.

Default encrypted fields: the spec's list says ``mobile`` (the name on persons, users and
invitations) while VisitorDTO and HostDTO call the number ``mobileNumber``; a list naming
``mobile`` therefore also encrypts ``mobileNumber`` in payloads (HOOK-ENCRYPTION-DEFAULT-LIST).

The decisions inside these steps are the methods of ``WebhookPolicy``; saving, emitting and
sending ask ``server.policy(WebhookPolicy)`` for the one in force, which is where the webhook
faults (``faults/_reader_and_webhooks.py``) plug in. This module holds the correct behaviour
only.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import re
import secrets
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from amws_conformance.reference_server._crypto import hmac_sha256_b64
from amws_conformance.reference_server._encryption import encrypt_payload, fields_of
from amws_conformance.reference_server._events import VisitChanged
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.webhooks.payload import visit_dto

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

log = logging.getLogger(__name__)

META = "webhook_integration"
# Configured URL setting -> the visit status posted to it (pairing by name, HOOK-URL-PAIRING).
URL_SETTINGS = {
    "visit_created": "VISIT_CREATED",
    "visitor_check_in": "VISITOR_CHECK_IN",
    "visitor_check_out": "VISITOR_CHECK_OUT",
    "visit_updated": "VISIT_UPDATED",
    "visit_no_show": "VISIT_NO_SHOW",
    "visit_cancelled": "VISIT_CANCELLED",
    "visit_denied": "VISIT_DENIED",
}
STATUS_URLS = {status: setting for setting, status in URL_SETTINGS.items()}
# Paths of the demo integration's event URLs (doc3's example path is /visit/created).
DEMO_PATHS = {
    "visit_created": "/visit/created",
    "visitor_check_in": "/visitor/check-in",
    "visitor_check_out": "/visitor/check-out",
    "visit_updated": "/visit/updated",
    "visit_no_show": "/visit/no-show",
    "visit_cancelled": "/visit/cancelled",
    "visit_denied": "/visit/denied",
}
RETRY_DELAYS = (1.0, 2.0, 4.0)
TIMEOUT_SECONDS = 5.0
SIGNATURE_HEADER = "X-SERVICE-HMAC-SHA256"
TIMESTAMP_HEADER = "X-SERVICE-HMAC-TIMESTAMP"
_SETTINGS = {"name", "enabled", "hmac_key", "encryption", "header", "urls"}
_HEX = re.compile(r"[0-9a-fA-F]*")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


# -- the decisions inside the steps -----------------------------------------------------------
class WebhookPolicy(Policy):
    """The decisions inside saving the integration, emitting events and sending them.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Saving the integration.
    def hmac_key_length_allowed(self, length: int) -> bool:
        """Whether an HMAC key of this many characters may be saved: 16 to 128."""
        return 16 <= length <= 128

    # Emitting an event.
    def integration_sends(self, settings: dict[str, Any]) -> bool:
        """Whether the saved integration sends events: while it is enabled."""
        return bool(settings["enabled"])

    def posts_event(self, status: str) -> bool:
        """Whether a visit status with a configured URL is posted: every one is."""
        return True

    def encrypts(self, encryption: dict[str, Any]) -> bool:
        """Whether the payload is encrypted: when the integration has a secret and an IV."""
        return bool(encryption.get("secret") and encryption.get("iv"))

    def fields_encrypted(self, encryption: dict[str, Any]) -> list[str]:
        """The payload fields encrypted: the override list, else the default list."""
        return encrypted_fields(encryption)

    def post_delays(self) -> tuple[float, ...]:
        """When an event's delivery is queued, in seconds from now: once, at once."""
        return (0.0,)

    # Sending an attempt.
    def retry_delays(self, delays: tuple[float, ...]) -> tuple[float, ...]:
        """The waits before each new attempt of a failed delivery: the dispatcher's."""
        return delays

    def content_type(self) -> str:
        """The Content-Type of a delivery: JSON in UTF-8, the charset named."""
        return "application/json; charset=utf-8"

    def optional_header(self, header: dict[str, str] | None) -> dict[str, str] | None:
        """The configured optional header an attempt carries: the saved one, whatever its name."""
        return header

    def signing_key(self, saved: str | None) -> str | None:
        """The key an attempt is signed with: the saved one; none saved, no signature."""
        return saved

    def signature_timestamp(self, now: float) -> str:
        """The signature's timestamp for ``now`` (epoch seconds): epoch milliseconds as text."""
        return str(int(now * 1000))

    def signed_path(self, url: str) -> str:
        """The path the signature covers: the event URL's path ("/" when it has none)."""
        return urlsplit(url).path or "/"


# -- integration settings -------------------------------------------------------------------
def _hmac_key(value: Any, policy: WebhookPolicy) -> str | None:
    if value in (None, ""):
        return None
    printable = isinstance(value, str) and all(" " <= ch <= "~" for ch in value)
    if not printable or not policy.hmac_key_length_allowed(len(value)):
        raise ValueError("hmac_key must be 16 to 128 printable characters")
    return value


def _hex(value: Any, length: int, name: str) -> str:
    if not isinstance(value, str) or len(value) != length or not _HEX.fullmatch(value):
        raise ValueError(f"encryption {name} must be {length} hex characters")
    return value


def _encryption(value: Any) -> dict[str, Any] | None:
    if not value:
        return None
    if not isinstance(value, dict):
        raise ValueError("encryption must be an object")
    fields = value.get("fields") or []
    if isinstance(fields, str):  # the admin screen's comma-separated form
        fields = [f.strip() for f in fields.split(",") if f.strip()]
    if not isinstance(fields, list) or not all(isinstance(f, str) for f in fields):
        raise ValueError("encryption fields must be a list of names")
    secret, iv = value.get("secret"), value.get("iv")
    return {
        "secret": None if secret in (None, "") else _hex(secret, 64, "secret"),
        "iv": None if iv in (None, "") else _hex(iv, 32, "iv"),
        "fields": fields,
    }


def _header(value: Any) -> dict[str, str] | None:
    if not value:
        return None
    name = value.get("name") if isinstance(value, dict) else None
    text = value.get("value") if isinstance(value, dict) else None
    if not isinstance(name, str) or not _TOKEN.fullmatch(name) or not isinstance(text, str):
        raise ValueError("header must be {name, value} with a valid header name")
    if any(ch in text for ch in "\r\n"):
        raise ValueError("header value must be one line")
    return {"name": name, "value": text}


def _urls(value: Any) -> dict[str, str]:
    value = value or {}
    if not isinstance(value, dict) or set(value) - set(URL_SETTINGS):
        raise ValueError(f"urls may name only {sorted(URL_SETTINGS)}")
    urls: dict[str, str] = {}
    for setting, url in value.items():
        if url in (None, ""):
            continue
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"urls.{setting} must be an http or https URL")
        urls[setting] = url
    return urls


def shown(server: ServerView) -> dict[str, Any]:
    """The saved integration as the admin screen shows it (what ``configure`` accepts)."""
    saved = integration(server) or {}
    return {name: value for name, value in saved.items() if name in _SETTINGS}


def configure(server: ServerView, settings: dict[str, Any]) -> dict[str, Any]:
    """Validate and save the integration of the first system (the control plane's PUT)."""
    unknown = set(settings) - _SETTINGS
    if unknown:
        raise ValueError(f"unknown integration settings {sorted(unknown)}")
    enabled = settings.get("enabled", False)
    if not isinstance(enabled, bool):
        raise ValueError("enabled must be true or false")
    saved = {
        "name": str(settings.get("name") or "reference integration"),
        "enabled": enabled,
        "hmac_key": _hmac_key(settings.get("hmac_key"), server.policy(WebhookPolicy)),
        "encryption": _encryption(settings.get("encryption")),
        "header": _header(settings.get("header")),
        "urls": _urls(settings.get("urls")),
        "system": server.systems()[0],
    }
    server.store.set_meta(META, json.dumps(saved))
    return saved


def integration(server: ServerView) -> dict[str, Any] | None:
    stored = server.store.meta(META)
    return json.loads(stored) if stored else None


def encrypted_fields(encryption: dict[str, Any]) -> list[str]:
    """The override list, else the default list; ``mobile`` also covers ``mobileNumber``."""
    names = sorted(fields_of({"fields": encryption.get("fields") or []}))
    return [*names, "mobileNumber"] if "mobile" in names else names


def _encrypt(
    policy: WebhookPolicy, payload: dict[str, Any], encryption: dict[str, Any] | None
) -> Any:
    if not encryption or not policy.encrypts(encryption):
        return payload
    settings = {**encryption, "fields": policy.fields_encrypted(encryption)}
    return encrypt_payload(payload, settings)


# -- delivery -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Delivery:
    status: str
    url: str
    body: bytes
    hmac_key: str | None
    header: dict[str, str] | None
    attempt: int = 0


def signature(key: str, path: str, timestamp: str, body: bytes) -> str:
    """Base64 HMAC-SHA256 (key as UTF-8) over path + timestamp + body bytes."""
    return hmac_sha256_b64(key, (path + timestamp).encode("utf-8") + body)


class Dispatcher:
    """Sends queued deliveries from one background thread, in the order they became due."""

    def __init__(self, server: ServerView) -> None:
        self.server = server
        self.delays: tuple[float, ...] = RETRY_DELAYS
        self.timeout = TIMEOUT_SECONDS
        self.attempts: deque[dict[str, Any]] = deque(maxlen=1000)  # for diagnostics
        self._due: list[tuple[float, int, Delivery]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False

    def start(self) -> None:
        with self._wake:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stopping = False
            self._thread = threading.Thread(target=self._run, name="webhooks", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=self.timeout + 1)

    def submit(self, delivery: Delivery, delay: float = 0.0) -> None:
        with self._wake:
            heapq.heappush(self._due, (time.monotonic() + delay, next(self._order), delivery))
            self._wake.notify_all()
        self.start()  # lazily, so in-process use without an ASGI lifespan still delivers

    def _next(self) -> Delivery | None:
        with self._wake:
            while not self._stopping:
                if self._due and self._due[0][0] <= time.monotonic():
                    return heapq.heappop(self._due)[2]
                wait = self._due[0][0] - time.monotonic() if self._due else None
                self._wake.wait(wait)
            return None

    def _run(self) -> None:
        with httpx.Client(timeout=self.timeout) as client:
            while (delivery := self._next()) is not None:
                try:
                    delivered = self._attempt(client, delivery)
                except Exception:  # a bug must not kill the thread for every later event
                    log.exception("webhook delivery failed unexpectedly")
                    delivered = False
                retries = self.server.policy(WebhookPolicy).retry_delays(self.delays)
                if not delivered and delivery.attempt < len(retries):
                    retry = replace(delivery, attempt=delivery.attempt + 1)
                    self.submit(retry, retries[delivery.attempt])

    def headers(self, delivery: Delivery) -> dict[str, str]:
        policy = self.server.policy(WebhookPolicy)
        headers = {"Accept": "application/json", "Content-Type": policy.content_type()}
        extra = policy.optional_header(delivery.header)
        if extra:
            headers[extra["name"]] = extra["value"]
        hmac_key = policy.signing_key(delivery.hmac_key)
        if hmac_key is not None:
            stamp = policy.signature_timestamp(self.server.clock.timestamp())
            path = policy.signed_path(delivery.url)
            headers[TIMESTAMP_HEADER] = stamp
            headers[SIGNATURE_HEADER] = signature(hmac_key, path, stamp, delivery.body)
        return headers

    def _attempt(self, client: httpx.Client, delivery: Delivery) -> bool:
        record = {"status": delivery.status, "url": delivery.url, "attempt": delivery.attempt}
        try:
            answer = client.post(
                delivery.url,
                content=delivery.body,
                headers=self.headers(delivery),
                timeout=self.timeout,
            )
        except httpx.HTTPError as exc:
            self.attempts.append({**record, "result": type(exc).__name__})
            return False
        self.attempts.append({**record, "result": answer.status_code})
        return 200 <= answer.status_code < 300


def dispatcher_of(server: ServerView) -> Dispatcher:
    """The server's one dispatcher (made on first use)."""
    return server.part(Dispatcher, lambda: Dispatcher(server))


def emit(server: ServerView, system: str, status: str, invite: dict[str, Any]) -> None:
    """Queue the event for the integration as saved now; never raises into the caller."""
    try:
        policy = server.policy(WebhookPolicy)
        settings = integration(server)
        if settings is None or not policy.integration_sends(settings):
            return
        url = settings["urls"].get(STATUS_URLS.get(status, ""))
        if not url or settings.get("system") != system:
            return
        if not policy.posts_event(status):
            return
        payload = _encrypt(
            policy, visit_dto(server, system, status, invite), settings["encryption"]
        )
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        delivery = Delivery(status, url, body, settings["hmac_key"], settings["header"])
        for delay in policy.post_delays():
            dispatcher_of(server).submit(delivery, delay)
    except Exception:  # a webhook problem must never fail the API call that caused it
        log.exception("could not queue the %s webhook", status)


# -- demo deployment ------------------------------------------------------------------------
RECEIVER_META = "webhook_receiver"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def provision_integration(server: ServerView) -> None:
    """Save an enabled, signed and encrypted integration aimed at a loopback receiver.

    The receiver itself is the harness's to run, at the ``listen`` address of the profile;
    the port is one that was free at provisioning time.
    """
    if server.store.meta(RECEIVER_META):
        return
    address = f"127.0.0.1:{_free_port()}"
    public_url = f"http://{address}"
    configure(
        server,
        {
            "name": "Reference receiver",
            "enabled": True,
            "hmac_key": secrets.token_hex(32),  # what the admin screen's Generate button makes
            "encryption": {"secret": secrets.token_hex(32), "iv": secrets.token_hex(16)},
            "header": {"name": "Authorization", "value": f"Bearer {secrets.token_hex(16)}"},
            "urls": {setting: public_url + path for setting, path in DEMO_PATHS.items()},
        },
    )
    server.store.set_meta(RECEIVER_META, json.dumps({"listen": address, "public_url": public_url}))


def extend_profile(server: ServerView, document: dict[str, Any]) -> None:
    """The profile's ``webhooks`` entry: where the receiver listens and how to verify."""
    receiver, settings = server.store.meta(RECEIVER_META), integration(server)
    if not receiver or not settings:
        return
    encryption = settings.get("encryption") or {}
    section = {
        **json.loads(receiver),
        "hmac_key": settings.get("hmac_key"),
        "encryption": (
            {k: encryption[k] for k in ("secret", "iv", "fields") if encryption.get(k)}
            if encryption.get("secret") and encryption.get("iv")
            else None
        ),
        "header": settings.get("header"),
    }
    # A profile leaves out what is not configured rather than writing nulls.
    document["webhooks"] = {k: v for k, v in section.items() if v is not None}


def _visit_changed(server: ServerView, event: VisitChanged) -> None:
    emit(server, event.system, event.status, dict(event.visit))


def install(server: ServerView) -> None:
    """Send the domain's visit events; provision the demo integration and its profile entry.

    The control plane's PUT /_reference/webhook-integration calls ``configure`` itself.
    """
    server.add_background(dispatcher_of(server))
    server.provisioners.append(provision_integration)
    server.profile_extenders.append(extend_profile)
    server.events.subscribe(VisitChanged, lambda event: _visit_changed(server, event))
