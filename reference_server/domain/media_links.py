"""Signed media links: building them for records, and the two unkeyed routes that serve them.

A link is ``/api/ws/v1/storage/{thumbnail|file}/{photoId}/{expires}/{signature}/{filename}``
where ``expires`` is epoch milliseconds on the server clock (30 days ahead when issued) and the
signature is the URL-safe, unpadded Base64 of HMAC-SHA256 over ``"{photoId}:{expires}"`` keyed
with the deployment's link secret (the UTF-8 bytes of ``meta("link_secret")``). The signature
is the only gate: no API key is read, so the pipeline does not check these path values either
and the handler does, in a fixed order: blank segment 400, malformed values 422, per-address
throttle 429, signature 401, expiry 412, missing or empty content 404.
"""

from __future__ import annotations

import base64
import io
import math
import re
import threading
from collections import deque
from collections.abc import Callable
from urllib.parse import quote

from PIL import Image
from starlette.responses import Response

import spec
from reference_server._call import Call
from reference_server._crypto import equal, hmac_sha256_urlsafe
from reference_server._errors import ApiError, invalid_fields
from reference_server._state import Server
from reference_server._validation import is_uuid
from reference_server.domain import handles
from reference_server.domain.photos import PRIVATE_CACHE, Rendition, stored_image

PREFIX = "/api/ws/v1/storage"
LINK_LIFETIME_MS = 30 * 24 * 3600 * 1000
LINK_THROTTLE = spec.throttle("signed-link-per-address")
_DIGITS = re.compile(r"[0-9]+")
_SEGMENTS = ("entityUUID", "expires", "signature", "filename")


def _secret(server: Server) -> bytes:
    secret = server.store.meta("link_secret")
    if not secret:
        raise RuntimeError("the deployment has no link secret (not provisioned)")
    return secret.encode("utf-8")


def sign(secret: bytes, entity: str, expires: str) -> str:
    """The signature segment for an entity id and expiry text, exactly as they appear in a path."""
    return hmac_sha256_urlsafe(secret, f"{entity}:{expires}")


def links_for(server: Server, photo_id: str) -> dict[str, str | None]:
    """Fresh links to a photo (the file route) and its thumbnail, valid for 30 days."""
    lifetime = LINK_LIFETIME_MS // 30 if server.faults.on("link-lifetime-one-day") else None
    expires = str(math.floor(server.clock.timestamp() * 1000) + (lifetime or LINK_LIFETIME_MS))
    signature = sign(_secret(server), photo_id, expires)
    tail = f"{photo_id}/{expires}/{signature}"
    return {
        "photo": f"{PREFIX}/file/{tail}/photo.jpg",
        "thumbnail": f"{PREFIX}/thumbnail/{tail}/thumbnail.jpg",
    }


# -- throttle ----------------------------------------------------------------------------------
class AddressWindow:
    """At most ``LINK_THROTTLE.requests`` requests per client address in any sliding window of
    ``LINK_THROTTLE.window_seconds``."""

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def admit(self, address: str) -> int | None:
        """Count one request; ``None`` when allowed, else the whole seconds to wait."""
        now = self._now()
        with self._lock:
            hits = self._hits.setdefault(address, deque())
            # Forget hits that left the window, and any "future" ones after the clock moved back.
            while hits and hits[-1] > now:
                hits.pop()
            while hits and hits[0] <= now - LINK_THROTTLE.window_seconds:
                hits.popleft()
            if len(hits) >= LINK_THROTTLE.requests:
                return max(1, math.ceil(hits[0] + LINK_THROTTLE.window_seconds - now))
            hits.append(now)
            return None


def _throttle(server: Server) -> AddressWindow:
    # Each server (the tests start several) keeps its own window, made on first use.
    window: AddressWindow | None = getattr(server, "_link_throttle", None)
    if window is None:
        window = AddressWindow(server.clock.timestamp)
        setattr(server, "_link_throttle", window)  # noqa: B010 (not a declared field)
    return window


# -- the two routes ----------------------------------------------------------------------------
def _check_shape(segments: dict[str, str], expires_checked: bool = True) -> None:
    if any(not segments.get(name, "").strip() for name in _SEGMENTS):
        raise ApiError(400, "a path segment of the link is missing or blank")
    errors = {}
    if not is_uuid(segments["entityUUID"]):
        errors["entityUUID"] = "is not a valid uuid"
    if expires_checked and not _DIGITS.fullmatch(segments["expires"]):
        errors["expires"] = "is not a whole number"
    if errors:
        raise invalid_fields(errors)


def _check_link(server: Server, segments: dict[str, str]) -> None:
    entity, expires = segments["entityUUID"], segments["expires"]
    genuine = equal(sign(_secret(server), entity, expires), segments["signature"])
    if server.faults.on("link-signature-shape-only"):
        genuine = genuine or _decodes_to_digest(segments["signature"])
    if not genuine and not server.faults.on("link-signature-ignored"):
        raise ApiError(401, "the link signature does not match")
    if server.faults.on("link-never-expires"):
        return
    # A genuine expiry has at most 13-14 digits; anything longer is far in the future.
    if len(expires) <= 18 and int(expires) < server.clock.timestamp() * 1000:
        raise ApiError(412, "the link has expired")


def _decodes_to_digest(signature: str) -> bool:
    try:
        raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    except ValueError:
        return False
    return len(raw) == 32


def _key_refused(server: Server, header: str | None) -> bool:
    """Whether an Authorization header names no enabled key (only the fault catalogue asks)."""
    if header is None:
        return False
    key = server.key_by_value(header.removeprefix("Bearer "))
    return key is None or not key.enabled


def _content(server: Server, entity: str, rendition: Rendition) -> bytes:
    try:
        return stored_image(server, entity, rendition)
    except ApiError:
        known = server.store.get("photo", entity) is not None
        if known and server.faults.on("empty-link-200"):
            return b""
        raise


def detected_type(data: bytes) -> str:
    """The media type of stored bytes, judged from the content."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return Image.MIME.get(image.format or "", "application/octet-stream")
    except (OSError, SyntaxError, ValueError):
        return "application/octet-stream"


def _attachment(filename: str) -> str:
    # Plain names go in quotes; anything else is percent-encoded (RFC 6266 / 5987), which also
    # keeps quotes, separators and control characters out of the header.
    encoded = quote(filename, safe="")
    if encoded == filename:
        return f'attachment; filename="{filename}"'
    return f"attachment; filename*=utf-8''{encoded}"


def _serve(call: Call, rendition: Rendition) -> Response:
    server = call.server
    segments = call.path
    faults = server.faults
    _check_shape(segments, not faults.on("link-expires-unchecked"))
    if not server.faults.on("link-no-throttle"):
        wait = _throttle(server).admit(call.client)
        if wait is not None:
            raise ApiError(
                429,
                "too many signed-link requests from this address",
                headers={"Retry-After": str(wait)},
            )
    header = call.request.headers.get("authorization")
    if faults.on("link-checks-authorization") and _key_refused(server, header):
        raise ApiError(401, "the API key is not valid")
    _check_link(server, segments)
    handed_out = "photo.jpg" if rendition == "photo" else "thumbnail.jpg"
    if faults.on("link-filename-must-match") and segments["filename"] != handed_out:
        raise ApiError(404, "no file of that name")
    data = _content(server, segments["entityUUID"], rendition)
    headers = {"Cache-Control": PRIVATE_CACHE}
    if rendition == "photo":
        headers["Content-Disposition"] = _attachment(segments["filename"])
        if faults.on("file-link-inline"):
            headers["Content-Disposition"] = "inline"
    media = detected_type(data)
    if rendition == "thumbnail" and faults.on("thumbnail-link-octet-stream"):
        media = "application/octet-stream"
    return Response(data, media_type=media, headers=headers)


@handles("getSignedThumbnail")
async def signed_thumbnail(call: Call) -> Response:
    return _serve(call, "thumbnail")


@handles("getSignedFile")
async def signed_file(call: Call) -> Response:
    return _serve(call, "photo")
