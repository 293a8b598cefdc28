"""Staged uploads: the multipart upload, its delete, and the hand-over to a record as its photo.

An upload is judged by its bytes alone (Pillow must recognise JPEG or PNG and decode the whole
image), kept as a "staged_file" for 24 hours on the server clock, and refused when the same
bytes are already staged in the system. A person or user create or update turns a staged file
into a "photo" record through :func:`claim`; from then on the staged entry is gone
(FILE-CLAIM-ENDS-STAGING), so the same bytes upload anew and a later delete of the upload id
answers 404 and never touches the photo.

Record formats (store kinds owned here):

- ``staged_file``: ``_sha256`` (hex), ``_format`` ("JPEG" or "PNG"), ``_expires`` (epoch
  seconds, server clock), ``_blob`` (id of its bytes). Unique: ``sha256``.
- ``staged_bytes``: ``_data`` (Base64 of the upload), apart so that listing staged files to
  purge the expired ones never loads image data.
- ``photo``: ``_jpeg`` and ``_thumbnail`` (Base64 JPEG bytes), ``_sha256`` of the upload.

The decisions inside these steps are the methods of ``FilePolicy``; the handlers ask
``server.policy(FilePolicy)`` for the one in force, which is where the staged-file faults
(``faults/_media.py``) plug in. This module holds the correct behaviour only.
"""

from __future__ import annotations

import base64
import hashlib
import io
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from PIL import Image, ImageOps, UnidentifiedImageError
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from amws_conformance.reference_server._call import Call, ack
from amws_conformance.reference_server._errors import ApiError, invalid_fields, not_found
from amws_conformance.reference_server._policy import Policy
from amws_conformance.reference_server.domain import handles
from amws_conformance.reference_server.domain.media_links import links_for
from amws_conformance.reference_server.store import Duplicate, Record

if TYPE_CHECKING:
    # Annotations only: the fault package imports this module for its policy, and the server
    # state imports the fault package.
    from amws_conformance.reference_server._server import ServerView

STAGED_LIFETIME_SECONDS = 24 * 3600  # our choice (rules: FILE-STAGED-EXPIRY)
THUMBNAIL_BOX = (160, 160)
ACCEPTED_FORMATS = ("JPEG", "PNG")
# Part of the safety scan: a small file may still claim an enormous canvas (decompression bomb).
MAX_PIXELS = 50_000_000
# Pillow names a multi-picture JPEG "MPO"; it is still a JPEG file.
_ACCEPTED = {"MPO": "JPEG"}
# Huffman optimisation makes libjpeg buffer the whole image's coefficients (about as much
# memory again as the decoded pixels); above this size the rendition is written without it.
OPTIMISE_UP_TO_PIXELS = 16_000_000
_T = TypeVar("_T")


class PixelBudget:
    """Decoded pixels allowed in memory at once, across every request of the process.

    A decode reserves its image's pixel count (at most the whole budget) and waits while
    others hold it, so the budget of one near-cap image lets many small images decode side
    by side but only one image near the cap at a time.
    """

    def __init__(self, pixels: int) -> None:
        self.total = pixels
        self._free = pixels
        self._changed = threading.Condition()

    @contextmanager
    def reserve(self, pixels: int) -> Iterator[None]:
        wanted = max(1, min(pixels, self.total))
        with self._changed:
            self._changed.wait_for(lambda: self._free >= wanted)
            self._free -= wanted
        try:
            yield
        finally:
            with self._changed:
                self._free += wanted
                self._changed.notify_all()


DECODING = PixelBudget(MAX_PIXELS)


def _pixels(data: bytes) -> int:
    """The canvas size an image's header claims (0 when it has no readable header)."""
    try:
        with Image.open(io.BytesIO(data)) as probe:
            width, height = probe.size
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        return 0
    return width * height


async def off_loop(work: Callable[..., _T], data: bytes, *args: Any) -> _T:
    """Run an image step on ``data`` in a worker thread within the pixel budget.

    Decoding a near-cap image takes a CPU-second or more; on the event loop it would hold up
    every other request meanwhile. The worker must not touch the store: a transaction is the
    event loop's alone.
    """

    def bounded() -> _T:
        with DECODING.reserve(_pixels(data)):
            return work(data, *args)

    return await run_in_threadpool(bounded)


# -- multipart ---------------------------------------------------------------------------------
def _parts(content_type: str, body: bytes) -> list[tuple[dict[bytes, bytes], bytes]]:
    """Every part of a multipart/form-data body as (Content-Disposition options, bytes)."""
    mime, options = parse_options_header(content_type)
    if mime != b"multipart/form-data" or not options.get(b"boundary"):
        raise ApiError(400, "the upload must be multipart/form-data with a boundary")
    parts: list[tuple[dict[bytes, bytes], bytes]] = []
    state: dict[str, Any] = {}

    def begin() -> None:
        state.update(headers={}, field=b"", value=b"", data=bytearray())

    def header_field(data: bytes, start: int, end: int) -> None:
        state["field"] += data[start:end]

    def header_value(data: bytes, start: int, end: int) -> None:
        state["value"] += data[start:end]

    def header_end() -> None:
        state["headers"][state["field"].lower()] = state["value"]
        state["field"], state["value"] = b"", b""

    def part_data(data: bytes, start: int, end: int) -> None:
        state["data"] += data[start:end]

    def part_end() -> None:
        _, disposition = parse_options_header(state["headers"].get(b"content-disposition"))
        parts.append((disposition, bytes(state["data"])))

    parser = MultipartParser(
        options[b"boundary"],
        {
            "on_part_begin": begin,
            "on_header_field": header_field,
            "on_header_value": header_value,
            "on_header_end": header_end,
            "on_part_data": part_data,
            "on_part_end": part_end,
        },
    )
    try:
        parser.write(body)
        parser.finalize()
    except (FormParserError, ValueError):
        raise ApiError(400, "the multipart body cannot be read") from None
    return parts


def _file_bytes(call: Call) -> bytes:
    content_type = call.request.headers.get("content-type", "")
    raw: bytes = getattr(call.request.state, "raw_body", b"")
    for disposition, data in _parts(content_type, raw):
        if disposition.get(b"name") == b"file":
            return data
    raise ApiError(400, "no part named file")


# -- images ------------------------------------------------------------------------------------
def image_format(
    data: bytes, formats: tuple[str, ...] = ACCEPTED_FORMATS, scan: bool = True
) -> str:
    """The format (one of ``formats``) of bytes that decode completely as an image; else 400.

    The type comes from the content (never the part's declared type or name), and with
    ``scan`` the whole image is decoded, which is our reading of the documented safety scan
    (``FilePolicy`` decides both arguments).
    """
    try:
        with Image.open(io.BytesIO(data), formats=formats) as probe:
            kind = _ACCEPTED.get(probe.format or "", probe.format or "")
            width, height = probe.size
            if scan:
                probe.verify()
        if scan and width * height > MAX_PIXELS:
            raise ApiError(400, "the image failed the safety scan")
        if scan:
            with Image.open(io.BytesIO(data), formats=formats) as full:
                full.load()
    except ApiError:
        raise
    except UnidentifiedImageError:
        raise ApiError(400, "only JPEG and PNG images are accepted") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        raise ApiError(400, "the image failed the safety scan") from None
    if kind not in formats:
        raise ApiError(400, "only JPEG and PNG images are accepted")
    return kind


def _as_rgb(image: Image.Image) -> Image.Image:
    """Upright RGB, transparency flattened onto white (JPEG has no alpha channel).

    ``image`` itself is turned upright and handed back when it is RGB already: a near-cap
    image is 150 MB of pixels, and every needless copy is as much again.
    """
    ImageOps.exif_transpose(image, in_place=True)
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        canvas = Image.new("RGB", rgba.size, "white")
        canvas.paste(rgba, mask=rgba.getchannel("A"))
        return canvas
    return image if image.mode == "RGB" else image.convert("RGB")


def _jpeg(image: Image.Image, quality: int) -> bytes:
    out = io.BytesIO()
    optimise = image.width * image.height <= OPTIMISE_UP_TO_PIXELS
    image.save(out, "JPEG", quality=quality, optimize=optimise)
    return out.getvalue()


def render(data: bytes, fmt: str, policy: FilePolicy) -> tuple[bytes, bytes]:
    """The stored photo (a JPEG rendition; JPEG uploads are kept as sent) and its thumbnail.

    CPU-heavy: handlers call it through :func:`off_loop` (see :func:`prepare_claim`).
    """
    kept = policy.keeps_upload_bytes(fmt)
    whole = not policy.thumbnail_reduced()
    with Image.open(io.BytesIO(data)) as source:
        if kept and not whole:
            # Only the thumbnail needs pixels: a JPEG decodes at 1/2 to 1/8 scale directly.
            source.draft("RGB", (THUMBNAIL_BOX[0] * 2, THUMBNAIL_BOX[1] * 2))
        source.load()
        rgb = _as_rgb(source)
        photo = data if kept else _jpeg(rgb, 90)
        if whole:
            return photo, photo
        # In place: the full-size pixels are not needed once the photo is written.
        rgb.thumbnail(THUMBNAIL_BOX, Image.Resampling.LANCZOS)
        return photo, _jpeg(rgb, 80)


# -- the decisions inside the steps -----------------------------------------------------------
class FilePolicy(Policy):
    """The decisions inside the staged-file steps, each answering what the documents require.

    One method per decision, named after what it decides; faults bend them by overriding
    (``reference_server/_policy.py`` describes how). The image decisions are also asked in
    worker threads, so they must not touch the store.
    """

    # Upload.
    def empty_file_format(self) -> str:
        """The format a zero-byte file part is staged as: none, it is refused with 400."""
        raise ApiError(400, "the file is empty")

    def accepted_formats(self) -> tuple[str, ...]:
        """The image formats an upload may be, judged from its bytes: JPEG and PNG."""
        return ACCEPTED_FORMATS

    def scans_whole_image(self) -> bool:
        """Whether an upload must decode completely (the safety scan), not just by its header."""
        return True

    def staged_unique(self, digest: str) -> dict[str, str | None] | None:
        """The unique value a staged file claims in its system: the sha256 of its bytes."""
        return {"sha256": digest}

    def upload_status(self) -> int:
        """The status of a successful upload's acknowledgement: 200."""
        return 200

    # Staging.
    def staged_expired(self, record: Record) -> bool:
        """Whether a staged file has outlived its 24 hours on the server clock."""
        return self.server.clock.timestamp() >= float(record["_expires"])

    def discards_deleted_file(self) -> bool:
        """Whether a staged-file delete removes the file (it is no longer claimable)."""
        return True

    def deleted_when_not_staged(self, system: str, uuid: str) -> bool:
        """Whether a delete of an id that is not staged removed anything: no, it answers 404."""
        return False

    # Claim.
    def keeps_upload_bytes(self, fmt: str) -> bool:
        """Whether the stored photo is the upload as sent: a JPEG is, others become JPEG."""
        return fmt == "JPEG"

    def thumbnail_reduced(self) -> bool:
        """Whether the thumbnail is a reduced rendition (at most 160x160), not the photo."""
        return True

    def claim_ends_staging(self) -> bool:
        """Whether a claim takes the file out of the staging area: yes, so its bytes may be
        uploaded again and its upload id is no staged file any more."""
        return True

    def claimed(self, system: str, upload_uuid: str, photo_id: str) -> None:
        """A staged file became a photo; nothing more to decide on the correct server."""

    def photo_id_of_claim(self, upload_uuid: str, photo_id: str) -> str:
        """The photoId a person or user gets for a claimed upload: the photo made from it."""
        return photo_id


# -- staging -----------------------------------------------------------------------------------
def _expired(server: ServerView, record: Record) -> bool:
    return server.policy(FilePolicy).staged_expired(record)


def _discard(server: ServerView, record: Record) -> None:
    with server.store.transaction():
        server.store.delete("staged_bytes", record["_blob"])
        server.store.delete("staged_file", record["uuid"])


def _purge_expired(server: ServerView, system: str) -> None:
    """Drop this system's expired staged files, freeing their bytes for a new upload."""
    expired = server.policy(FilePolicy).staged_expired
    for record in server.store.all("staged_file", system, expired):
        _discard(server, record)


def staged(server: ServerView, system: str, uuid: str) -> Record | None:
    """The system's staged file that is still waiting to be claimed, or ``None``."""
    record = server.store.get("staged_file", uuid, system)
    if record is None:
        return None
    if _expired(server, record):
        _discard(server, record)
        return None
    return record


def _staged_bytes(server: ServerView, record: Record) -> bytes:
    blob = server.store.get("staged_bytes", record["_blob"]) or {}
    return base64.b64decode(blob.get("_data", ""))


@handles("uploadFile")
async def upload_file(call: Call) -> Response:
    server = call.server
    policy = server.policy(FilePolicy)
    data = _file_bytes(call)
    if data:
        formats, scan = policy.accepted_formats(), policy.scans_whole_image()
        fmt = await off_loop(image_format, data, formats, scan)
    else:
        fmt = policy.empty_file_format()
    digest = hashlib.sha256(data).hexdigest()
    unique = policy.staged_unique(digest)
    with server.store.transaction():
        _purge_expired(server, call.system)
        blob = server.store.insert(
            "staged_bytes", call.system, {"_data": base64.b64encode(data).decode("ascii")}
        )
        record = {
            "_sha256": digest,
            "_format": fmt,
            "_expires": server.clock.timestamp() + STAGED_LIFETIME_SECONDS,
            "_blob": blob,
        }
        try:
            uuid = server.store.insert("staged_file", call.system, record, unique=unique)
        except Duplicate:
            raise invalid_fields({"file": "an identical file is already staged"}) from None
    return ack(uuid, policy.upload_status())


@handles("deleteFile")
async def delete_file(call: Call) -> Response:
    uuid = call.path["uuid"]
    policy = call.server.policy(FilePolicy)
    with call.server.store.transaction():
        # A claimed upload is no longer staged (claim removed it), so it is 404 here and its
        # photo, a separate record, is never reached by this delete.
        record = staged(call.server, call.system, uuid)
        if record is None:
            if policy.deleted_when_not_staged(call.system, uuid):
                return ack(uuid)
            raise not_found("staged file")
        if policy.discards_deleted_file():
            _discard(call.server, record)
    return ack(uuid)


# -- hand-over to records ----------------------------------------------------------------------
Renditions = dict[str, tuple[bytes, bytes]]  # staged file's sha256 -> (photo, thumbnail)


async def prepare_claim(call: Call, staged_uuid: Any) -> None:
    """Render a staged file off the event loop ahead of the write that will claim it.

    The write claims inside a store transaction, where nothing may be awaited; so the
    renditions are made first and kept on the request for :func:`claim`. An id that is no
    staged file is left for the claim to refuse.
    """
    if not isinstance(staged_uuid, str):
        return
    # Read only: an expired file is left for the claim, whose refusal writes nothing.
    record = call.server.store.get("staged_file", staged_uuid, call.system)
    if record is None or _expired(call.server, record):
        return
    data = _staged_bytes(call.server, record)
    made = await off_loop(render, data, record["_format"], call.server.policy(FilePolicy))
    prepared: Renditions | None = getattr(call.request.state, "renditions", None)
    if prepared is None:
        prepared = call.request.state.renditions = {}
    prepared[record["_sha256"]] = made


def claim_staged(
    server: ServerView, system: str, staged_uuid: str, prepared: Renditions | None = None
) -> str:
    """Turn the system's staged file into a photo record and return the photo id.

    Raises the 422 naming ``photoUuid`` when the id is expired, already claimed, deleted or
    was never issued in this system. Joins the caller's transaction when there is one.
    ``prepared`` holds renditions made ahead (:func:`prepare_claim`); without them the
    image is rendered here, on the caller's thread.
    """
    policy = server.policy(FilePolicy)
    with server.store.transaction():
        record = staged(server, system, staged_uuid)
        if record is None:
            raise invalid_fields({"photoUuid": "is not a staged file of this system"})
        made = (prepared or {}).get(record["_sha256"])
        if made is None:
            made = render(_staged_bytes(server, record), record["_format"], policy)
        photo, thumbnail = made
        photo_id = server.store.insert(
            "photo",
            system,
            {
                "_jpeg": base64.b64encode(photo).decode("ascii"),
                "_thumbnail": base64.b64encode(thumbnail).decode("ascii"),
                "_sha256": record["_sha256"],
            },
        )
        if policy.claim_ends_staging():
            _discard(server, record)
        policy.claimed(system, staged_uuid, photo_id)
    return photo_id


def claim(call: Call, staged_uuid: str) -> str:
    """The photo id for ``photoUuid`` on a person or user write (see :func:`claim_staged`)."""
    prepared = getattr(call.request.state, "renditions", None)
    photo_id = claim_staged(call.server, call.system, staged_uuid, prepared)
    return call.server.policy(FilePolicy).photo_id_of_claim(staged_uuid, photo_id)


def remove_photo(server: ServerView, photo_id: str | None) -> None:
    """Forget a photo record (for a record that drops or replaces its photo)."""
    if photo_id:
        server.store.delete("photo", photo_id)


def media_links(server: ServerView, photo_id: str | None) -> dict[str, str | None]:
    """Signed links (30 days) to a photo and its thumbnail; both ``None`` without a photo."""
    if not photo_id:
        return {"photo": None, "thumbnail": None}
    return links_for(server, photo_id)
