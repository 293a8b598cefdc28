"""Faults of staged files, photos and signed media links.

The faults of decisions inside a staged-file, photo or link step override one decision of
``FilePolicy``, ``PhotoPolicy`` or ``MediaLinkPolicy`` each (the policy seam,
``reference_server/_policy.py``); where the links appear on a read is shaped by
``ShapingPolicy``; status faults stay declarative (``swap``).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from amws_conformance import spec
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server._shaping import ShapingPolicy
from amws_conformance.reference_server.domain.files import FilePolicy
from amws_conformance.reference_server.domain.media_links import FILENAMES, MediaLinkPolicy
from amws_conformance.reference_server.domain.photos import PhotoPolicy, Rendition
from amws_conformance.reference_server.faults._model import NOT_FOUND, overrides, swap
from amws_conformance.reference_server.store import Record

if TYPE_CHECKING:
    from amws_conformance.reference_server._api_key import ApiKey


# Fault memory keys (``Policy.memory``): what a fault remembers between a write and a read.
_CLAIMED_PHOTOS = "claimed-delete-removes-photo"  # upload uuid -> ids of the photos made from it


@overrides(
    "link-fields-renamed",
    "LINK-ON-RECORD",
    "person and user reads carry their signed links nested under media.image and media.preview, "
    "not as photo and thumbnail",
)
class _LinkFieldsRenamed(ShapingPolicy):
    """Valid links under other names: what an implementation free to name its read fields
    (doc2 shows none but hasPhoto) may do. Only the assumed naming rule breaks."""

    def read(self, op: spec.Operation, body: Any) -> Any:
        body = super().read(op, body)
        if op.operation_id in ("getPerson", "getUser") and isinstance(body, dict):
            photo, thumbnail = body.pop("photo", None), body.pop("thumbnail", None)
            body["media"] = {"image": photo, "preview": thumbnail}
        return body


@overrides("upload-201", "FILE-UPLOAD-200-ACK", "a successful upload answers 201 instead of 200")
class _Upload201(FilePolicy):
    def upload_status(self) -> int:
        return 201


@overrides("upload-accepts-gif", "FILE-UPLOAD-400-TYPE", "GIF images are staged like JPEG and PNG")
class _UploadAcceptsGif(FilePolicy):
    def accepted_formats(self) -> tuple[str, ...]:
        return (*super().accepted_formats(), "GIF")


@overrides(
    "duplicate-upload-allowed",
    "FILE-UPLOAD-422-DUPLICATE",
    "a byte-identical file is staged a second time",
)
class _DuplicateUploadAllowed(FilePolicy):
    def staged_unique(self, digest: str) -> dict[str, str | None] | None:
        return None


@overrides(
    "claimed-file-stays-staged",
    "FILE-CLAIM-ENDS-STAGING",
    "a claimed upload stays staged: its bytes still answer the identical-file 422",
)
class _ClaimedFileStaysStaged(FilePolicy):
    def claim_ends_staging(self) -> bool:
        return False


@overrides("staged-never-expires", "FILE-STAGED-EXPIRY", "staged files never expire")
class _StagedNeverExpires(FilePolicy):
    def staged_expired(self, record: Record) -> bool:
        return False


@overrides(
    "thumbnail-is-full-image",
    "PHOTO-THUMBNAIL-SMALLER",
    "the thumbnail is the full photo, not a smaller rendition",
)
class _ThumbnailIsFullImage(FilePolicy):
    def thumbnail_reduced(self) -> bool:
        return False


@overrides("cache-public", "PHOTO-CACHE-PRIVATE", "photo downloads are marked public, max-age=3600")
class _CachePublic(PhotoPolicy):
    def cache_control(self) -> str:
        return "public, max-age=3600"


@overrides(
    "photo-other-system-served",
    "PHOTO-403-OTHER-SYSTEM",
    "another system's photo is served to a key of this system",
)
class _OtherSystemPhotoServed(PhotoPolicy):
    def serves_other_systems(self) -> bool:
        return True


@overrides(
    "link-signature-ignored", "LINK-401-ALTERED", "signed links are served whatever signature"
)
class _LinkSignatureIgnored(MediaLinkPolicy):
    def signature_accepted(self, entity: str, expires: str, signature: str) -> bool:
        super().signature_accepted(entity, expires, signature)  # still needs the link secret
        return True


@overrides("link-never-expires", "LINK-412-EXPIRED", "signed links are served after their expiry")
class _LinkNeverExpires(MediaLinkPolicy):
    def link_expired(self, expires: str) -> bool:
        return False


@overrides("link-no-throttle", "LINK-429-PER-ADDRESS", "signed links are never throttled")
class _LinkNoThrottle(MediaLinkPolicy):
    def throttled(self) -> bool:
        return False


swap("staged-file-unknown-400", "FILE-DELETE-404", NOT_FOUND, "deleteFile")
swap("photo-unknown-400", "PHOTO-404-NONE", NOT_FOUND, "downloadPhoto", "downloadThumbnail")
swap("link-unknown-400", "LINK-404-NONE", NOT_FOUND, "getSignedThumbnail", "getSignedFile")
swap("upload-without-file-415", "FILE-UPLOAD-400-NO-FILE", (400, 415), "uploadFile")
swap(
    "blank-link-segment-404",
    "LINK-400-BLANK-SEGMENT",
    (400, 404),
    "getSignedThumbnail",
    "getSignedFile",
)
swap("bad-link-uuid-400", "LINK-422-BAD-UUID", (422, 400), "getSignedThumbnail", "getSignedFile")


@overrides("empty-upload-staged", "FILE-UPLOAD-400-EMPTY", "a zero-byte file part is staged")
class _EmptyUploadStaged(FilePolicy):
    def empty_file_format(self) -> str:
        return "JPEG"


@overrides(
    "safety-scan-header-only",
    "FILE-UPLOAD-400-SAFETY-SCAN",
    "uploads are judged by their header; truncated or corrupted images are staged",
)
class _SafetyScanHeaderOnly(FilePolicy):
    def scans_whole_image(self) -> bool:
        return False


@overrides(
    "file-writes-need-read",
    "FILE-403-NO-WRITE-RIGHT",
    "upload and staged-file delete check Photos - Read instead of Photos - Write",
)
class _FileWritesNeedRead(RequestPolicy):
    def permitted(self, key: ApiKey, op: spec.Operation) -> bool:
        if op.operation_id in ("uploadFile", "deleteFile"):
            return "Photos - Read" in key.permissions
        return super().permitted(key, op)


@overrides("upload-charged-as-read", "FILE-RATE-COST", "an upload draws 30 units, not 50")
class _UploadChargedAsRead(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id == "uploadFile" else super().cost(op)


@overrides(
    "claim-keeps-upload-id",
    "FILE-CLAIM-PHOTOUUID",
    "the record's photoId is the upload's uuid, not the photo made from it",
)
class _ClaimKeepsUploadId(FilePolicy):
    def photo_id_of_claim(self, upload_uuid: str, photo_id: str) -> str:
        return upload_uuid


@overrides(
    "staged-delete-keeps-file",
    "FILE-DELETE-200",
    "a staged-file delete answers 200 but the file stays claimable",
)
class _StagedDeleteKeepsFile(FilePolicy):
    def discards_deleted_file(self) -> bool:
        return False


@overrides(
    "claimed-delete-removes-photo",
    "FILE-DELETE-KEEPS-CLAIMED",
    "deleting a claimed upload's uuid deletes the photo made from it",
)
class _ClaimedDeleteRemovesPhoto(FilePolicy):
    # Two decisions: a claim remembers the photo it made, a delete of the upload's id drops it.
    def claimed(self, system: str, upload_uuid: str, photo_id: str) -> None:
        super().claimed(system, upload_uuid, photo_id)
        self.memory(_CLAIMED_PHOTOS).setdefault(upload_uuid, []).append(photo_id)

    def deleted_when_not_staged(self, system: str, uuid: str) -> bool:
        store = self.server.store
        made = self.memory(_CLAIMED_PHOTOS).get(uuid, [])
        photos = [photo for photo in made if store.get("photo", photo, system) is not None]
        for photo in photos:
            store.delete("photo", photo)
        return bool(photos) or super().deleted_when_not_staged(system, uuid)


@overrides(
    "png-kept-as-png", "PHOTO-DOWNLOAD-JPEG", "PNG uploads are stored and served as PNG bytes"
)
class _PngKeptAsPng(FilePolicy):
    def keeps_upload_bytes(self, fmt: str) -> bool:
        return True


@overrides(
    "photo-downloads-unguarded",
    "PHOTO-403-NO-READ-RIGHT",
    "photo and thumbnail downloads need no permission",
)
class _PhotoDownloadsUnguarded(RequestPolicy):
    def permitted(self, key: ApiKey, op: spec.Operation) -> bool:
        return op.operation_id.startswith("download") or super().permitted(key, op)


@overrides(
    "empty-photo-200", "PHOTO-404-EMPTY", "a photo with no stored bytes answers an empty 200"
)
class _EmptyPhoto200(PhotoPolicy):
    def serves_empty_image(self) -> bool:
        return True


@overrides("thumbnail-charged-as-read", "PHOTO-RATE-COST", "a thumbnail download draws 30 units")
class _ThumbnailChargedAsRead(RequestPolicy):
    def cost(self, op: spec.Operation) -> int:
        return 30 if op.operation_id == "downloadThumbnail" else super().cost(op)


@overrides(
    "link-checks-authorization",
    "LINK-NO-AUTHORIZATION",
    "a link sent with an unknown or disabled key in Authorization answers 401",
)
class _LinkChecksAuthorization(MediaLinkPolicy):
    def authorization_refused(self, header: str | None) -> bool:
        if header is None:
            return super().authorization_refused(header)
        key = self.server.key_by_value(header.removeprefix("Bearer "))
        return key is None or not key.enabled


@overrides(
    "link-lifetime-one-day", "LINK-VALIDITY-30-DAYS", "links are handed out valid for one day"
)
class _LinkLifetimeOneDay(MediaLinkPolicy):
    def link_lifetime_ms(self) -> int:
        return super().link_lifetime_ms() // 30


@overrides(
    "link-filename-must-match",
    "LINK-FILENAME-COSMETIC",
    "a link whose file name is not the one handed out answers 404",
)
class _LinkFilenameMustMatch(MediaLinkPolicy):
    def filename_served(self, rendition: Rendition, filename: str) -> bool:
        handed_out = filename == FILENAMES[rendition]
        return handed_out and super().filename_served(rendition, filename)


@overrides(
    "thumbnail-link-octet-stream",
    "LINK-THUMBNAIL-IMAGE",
    "the thumbnail route answers application/octet-stream",
)
class _ThumbnailLinkOctetStream(MediaLinkPolicy):
    def media_type(self, rendition: Rendition, data: bytes) -> str:
        if rendition == "thumbnail":
            return "application/octet-stream"
        return super().media_type(rendition, data)


@overrides(
    "file-link-inline", "LINK-FILE-ATTACHMENT", "the file route answers Content-Disposition inline"
)
class _FileLinkInline(MediaLinkPolicy):
    def file_disposition(self, filename: str) -> str:
        return "inline"


@overrides(
    "link-signature-shape-only",
    "LINK-401-OTHER-ENVIRONMENT",
    "any signature that decodes to 32 bytes is accepted",
)
class _LinkSignatureShapeOnly(MediaLinkPolicy):
    def signature_accepted(self, entity: str, expires: str, signature: str) -> bool:
        genuine = super().signature_accepted(entity, expires, signature)
        return genuine or _decodes_to_digest(signature)


def _decodes_to_digest(signature: str) -> bool:
    try:
        raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    except ValueError:
        return False
    return len(raw) == 32


@overrides(
    "empty-link-200", "LINK-404-EMPTY", "a link to content with no bytes answers an empty 200"
)
class _EmptyLink200(MediaLinkPolicy):
    def serves_empty(self, entity: str) -> bool:
        known = self.server.store.get("photo", entity) is not None
        return known or super().serves_empty(entity)


@overrides(
    "link-expires-unchecked",
    "LINK-422-EXPIRES-NOT-NUMBER",
    "a non-numeric expires segment is not refused with 422 (the signature check answers 401)",
)
class _LinkExpiresUnchecked(MediaLinkPolicy):
    def refuses_malformed_expiry(self) -> bool:
        return False
