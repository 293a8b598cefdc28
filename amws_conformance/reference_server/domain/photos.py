"""Photo and thumbnail downloads (keyed), and the byte lookup the signed links share.

The pipeline answers 404 for another system's records, but for these two downloads doc3 gives
403 when the photo exists in a different system; the handler therefore looks the photo up
across systems and compares owners itself.

The decisions inside a download are the methods of ``PhotoPolicy``; the handler asks
``server.policy(PhotoPolicy)`` for the one in force, which is where the photo faults
(``faults/_media.py``) plug in. This module holds the correct behaviour only.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Literal

from starlette.responses import Response

from amws_conformance.reference_server._call import Call
from amws_conformance.reference_server._errors import ApiError, not_found
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.domain import handles

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

Rendition = Literal["photo", "thumbnail"]
_FIELD: dict[Rendition, str] = {"photo": "_jpeg", "thumbnail": "_thumbnail"}
PRIVATE_CACHE = "private, max-age=3600"


def stored_image(server: ServerView, photo_id: str, rendition: Rendition) -> bytes:
    """The stored bytes of a photo rendition in any system ("" when the record holds none).

    Raises 404 when no photo has that id, and for stored content that is empty.
    """
    record = server.store.get("photo", photo_id)
    data = base64.b64decode(record.get(_FIELD[rendition]) or "") if record else b""
    if not data:
        raise not_found("photo")
    return data


class PhotoPolicy(Policy):
    """The decisions inside a photo download, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how).
    """

    def other_system_refusal(self) -> ApiError:
        """The refusal of a download of a photo that exists in another system: 403 (doc3's
        download table; doc1's general 404 is the other reading, which the suite accepts)."""
        return ApiError(403, "the photo belongs to another system")

    def serves_other_systems(self) -> bool:
        """Whether a photo that exists in another system is served: never."""
        return False

    def serves_empty_image(self) -> bool:
        """Whether a photo holding no bytes is served empty instead of answered 404."""
        return False

    def cache_control(self) -> str:
        """The Cache-Control of a download: private, for an hour."""
        return PRIVATE_CACHE


def _download(call: Call, rendition: Rendition) -> Response:
    photo_id = call.path["uuid"]
    server = call.server
    policy = server.policy(PhotoPolicy)
    if server.store.get("photo", photo_id) is None:
        raise not_found("photo")
    if server.store.system_of(photo_id) != call.system and not policy.serves_other_systems():
        raise policy.other_system_refusal()
    try:
        data = stored_image(server, photo_id, rendition)
    except ApiError:
        if not policy.serves_empty_image():
            raise
        data = b""
    headers = {"Cache-Control": policy.cache_control()}
    return Response(data, media_type="image/jpeg", headers=headers)


@handles("downloadPhoto")
async def download_photo(call: Call) -> Response:
    return _download(call, "photo")


@handles("downloadThumbnail")
async def download_thumbnail(call: Call) -> Response:
    return _download(call, "thumbnail")
