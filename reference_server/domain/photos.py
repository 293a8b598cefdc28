"""Photo and thumbnail downloads (keyed), and the byte lookup the signed links share.

The pipeline answers 404 for another system's records, but for these two downloads doc3 gives
403 when the photo exists in a different system; the handler therefore looks the photo up
across systems and compares owners itself.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Literal

from starlette.responses import Response

from reference_server._call import Call
from reference_server._errors import ApiError, not_found
from reference_server.domain import handles

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from reference_server._state import Server

Rendition = Literal["photo", "thumbnail"]
_FIELD: dict[Rendition, str] = {"photo": "_jpeg", "thumbnail": "_thumbnail"}
PRIVATE_CACHE = "private, max-age=3600"


def stored_image(server: Server, photo_id: str, rendition: Rendition) -> bytes:
    """The stored bytes of a photo rendition in any system ("" when the record holds none).

    Raises 404 when no photo has that id, and for stored content that is empty.
    """
    record = server.store.get("photo", photo_id)
    data = base64.b64decode(record.get(_FIELD[rendition]) or "") if record else b""
    if not data:
        raise not_found("photo")
    return data


def _download(call: Call, rendition: Rendition) -> Response:
    photo_id = call.path["uuid"]
    server = call.server
    if server.store.get("photo", photo_id) is None:
        raise not_found("photo")
    if server.store.system_of(photo_id) != call.system:
        if server.faults.on("photo-other-system-404"):
            raise not_found("photo")
        raise ApiError(403, "the photo belongs to another system")
    try:
        data = stored_image(server, photo_id, rendition)
    except ApiError:
        if not server.faults.on("empty-photo-200"):
            raise
        data = b""
    cache = "public, max-age=3600" if server.faults.on("cache-public") else PRIVATE_CACHE
    return Response(data, media_type="image/jpeg", headers={"Cache-Control": cache})


@handles("downloadPhoto")
async def download_photo(call: Call) -> Response:
    return _download(call, "photo")


@handles("downloadThumbnail")
async def download_thumbnail(call: Call) -> Response:
    return _download(call, "thumbnail")
