"""Signed media links: building them for records, and the two unkeyed routes that serve them.

A link is ``/api/ws/v1/storage/{thumbnail|file}/{photoId}/{expires}/{signature}/{filename}``
where ``expires`` is epoch milliseconds on the server clock (30 days ahead when issued) and the
signature is the URL-safe, unpadded Base64 of HMAC-SHA256 over ``"{photoId}:{expires}"`` keyed
with the deployment's link secret (the UTF-8 bytes of ``meta("link_secret")``). The signature
is the only gate: no API key is read, so the pipeline does not check these path values either
and the handler does, in a fixed order: blank segment 400, malformed values 422, per-address
throttle 429, signature 401, expiry 412, missing or empty content 404.

The decisions inside these steps are the methods of ``MediaLinkPolicy``; the handlers ask
``server.policy(MediaLinkPolicy)`` for the one in force, which is where the link faults
(``faults/_media.py``) plug in. This module holds the correct behaviour only.
"""

from __future__ import annotations

import io
import math
import re
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import quote

from PIL import Image
from starlette.responses import Response

from amws_conformance import spec
from amws_conformance.reference_server._call import Call
from amws_conformance.reference_server._crypto import equal, hmac_sha256_urlsafe
from amws_conformance.reference_server._errors import ApiError, invalid_fields
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server._validation import is_uuid
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain.photos import PRIVATE_CACHE, Rendition, stored_image

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

PREFIX = "/api/ws/v1/storage"
LINK_LIFETIME_MS = 30 * 24 * 3600 * 1000
LINK_THROTTLE_NAME = "signed-link-per-address"
_DIGITS = re.compile(r"[0-9]+")
_SEGMENTS = ("entityUUID", "expires", "signature", "filename")
# The file name each route's links are handed out with (the name itself is cosmetic).
FILENAMES: dict[Rendition, str] = {"photo": "photo.jpg", "thumbnail": "thumbnail.jpg"}


def _secret(server: ServerView) -> bytes:
    secret = server.store.meta("link_secret")
    if not secret:
        raise RuntimeError("the deployment has no link secret (not provisioned)")
    return secret.encode("utf-8")


def sign(secret: bytes, entity: str, expires: str) -> str:
    """The signature segment for an entity id and expiry text, exactly as they appear in a path."""
    return hmac_sha256_urlsafe(secret, f"{entity}:{expires}")


def links_for(server: ServerView, photo_id: str) -> dict[str, str | None]:
    """Fresh links to a photo (the file route) and its thumbnail, valid for 30 days."""
    lifetime = server.policy(MediaLinkPolicy).link_lifetime_ms()
    expires = str(math.floor(server.clock.timestamp() * 1000) + lifetime)
    signature = sign(_secret(server), photo_id, expires)
    tail = f"{photo_id}/{expires}/{signature}"
    return {
        "photo": f"{PREFIX}/file/{tail}/{FILENAMES['photo']}",
        "thumbnail": f"{PREFIX}/thumbnail/{tail}/{FILENAMES['thumbnail']}",
    }


# -- the decisions inside the steps -----------------------------------------------------------
class MediaLinkPolicy(Policy):
    """The decisions inside handing out and serving signed links, each as the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    # Handing out.
    def link_lifetime_ms(self) -> int:
        """How long a link handed out now stays valid, in milliseconds: 30 days."""
        return LINK_LIFETIME_MS

    # Serving, in the handler's order.
    def refuses_malformed_expiry(self) -> bool:
        """Whether an expires segment that is not a whole number is refused with 422."""
        return True

    def throttled(self) -> bool:
        """Whether link requests count against the per-address allowance (429 beyond it)."""
        return True

    def authorization_refused(self, header: str | None) -> bool:
        """Whether the Authorization header refuses a link: never, links are not keyed."""
        return False

    def signature_accepted(self, entity: str, expires: str, signature: str) -> bool:
        """Whether the signature is the deployment's HMAC of the link's entity and expiry."""
        return equal(sign(_secret(self.server), entity, expires), signature)

    def link_expired(self, expires: str) -> bool:
        """Whether a link's expiry (epoch milliseconds) has passed on the server clock."""
        # A genuine expiry has at most 13-14 digits; anything longer is far in the future.
        return len(expires) <= 18 and int(expires) < self.server.clock.timestamp() * 1000

    def filename_served(self, rendition: Rendition, filename: str) -> bool:
        """Whether a link's file name segment is served: any name is, it is cosmetic."""
        return True

    def serves_empty(self, entity: str) -> bool:
        """Whether a link to a photo without stored bytes is served empty: no, it is 404."""
        return False

    def file_disposition(self, filename: str) -> str:
        """The Content-Disposition of the file route: an attachment under the link's name."""
        return _attachment(filename)

    def media_type(self, rendition: Rendition, data: bytes) -> str:
        """The Content-Type a link answers: the type of its bytes, judged from the content."""
        return detected_type(data)


# -- throttle ----------------------------------------------------------------------------------
class AddressWindow:
    """At most ``throttle.requests`` requests per client address in any sliding window of
    ``throttle.window_seconds``."""

    def __init__(self, now: Callable[[], float], throttle: spec.Throttle) -> None:
        self._now = now
        self._throttle = throttle
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
            allowed = self._throttle
            while hits and hits[0] <= now - allowed.window_seconds:
                hits.popleft()
            if len(hits) >= allowed.requests:
                return max(1, math.ceil(hits[0] + allowed.window_seconds - now))
            hits.append(now)
            return None


def _throttle(server: ServerView) -> AddressWindow:
    # Each server (the tests start several) keeps its own window, made on first use.
    window: AddressWindow | None = getattr(server, "_link_throttle", None)
    if window is None:
        window = AddressWindow(server.clock.timestamp, server.throttle(LINK_THROTTLE_NAME))
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


def _check_link(policy: MediaLinkPolicy, segments: dict[str, str]) -> None:
    entity, expires = segments["entityUUID"], segments["expires"]
    if not policy.signature_accepted(entity, expires, segments["signature"]):
        raise ApiError(401, "the link signature does not match")
    if policy.link_expired(expires):
        raise ApiError(412, "the link has expired")


def _content(
    server: ServerView, policy: MediaLinkPolicy, entity: str, rendition: Rendition
) -> bytes:
    try:
        return stored_image(server, entity, rendition)
    except ApiError:
        if policy.serves_empty(entity):
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
    policy = server.policy(MediaLinkPolicy)
    _check_shape(segments, policy.refuses_malformed_expiry())
    if policy.throttled():
        wait = _throttle(server).admit(call.client)
        if wait is not None:
            raise ApiError(
                429,
                "too many signed-link requests from this address",
                headers={"Retry-After": str(wait)},
            )
    if policy.authorization_refused(call.request.headers.get("authorization")):
        raise ApiError(401, "the API key is not valid")
    _check_link(policy, segments)
    if not policy.filename_served(rendition, segments["filename"]):
        raise ApiError(404, "no file of that name")
    data = _content(server, policy, segments["entityUUID"], rendition)
    headers = {"Cache-Control": PRIVATE_CACHE}
    if rendition == "photo":
        headers["Content-Disposition"] = policy.file_disposition(segments["filename"])
    media = policy.media_type(rendition, data)
    return Response(data, media_type=media, headers=headers)


@handles("getSignedThumbnail")
async def signed_thumbnail(call: Call) -> Response:
    return _serve(call, "thumbnail")


@handles("getSignedFile")
async def signed_file(call: Call) -> Response:
    return _serve(call, "photo")
