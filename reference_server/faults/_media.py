"""Faults of staged files, photos and signed media links."""

from reference_server.faults._model import NOT_FOUND, fault, swap

fault("upload-201", "FILE-UPLOAD-200-ACK", "a successful upload answers 201 instead of 200")
fault("upload-accepts-gif", "FILE-UPLOAD-400-TYPE", "GIF images are staged like JPEG and PNG")
fault(
    "duplicate-upload-allowed",
    "FILE-UPLOAD-422-DUPLICATE",
    "a byte-identical file is staged a second time",
)
fault("staged-never-expires", "FILE-STAGED-EXPIRY", "staged files never expire")
fault(
    "thumbnail-is-full-image",
    "PHOTO-THUMBNAIL-SMALLER",
    "the thumbnail is the full photo, not a smaller rendition",
)
fault("cache-public", "PHOTO-CACHE-PRIVATE", "photo downloads are marked public, max-age=3600")
fault(
    "photo-other-system-404",
    "PHOTO-403-OTHER-SYSTEM",
    "another system's photo answers 404 instead of 403",
)
fault("link-signature-ignored", "LINK-401-ALTERED", "signed links are served whatever signature")
fault("link-never-expires", "LINK-412-EXPIRED", "signed links are served after their expiry")
fault("link-no-throttle", "LINK-429-PER-ADDRESS", "signed links are never throttled")
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
fault("empty-upload-staged", "FILE-UPLOAD-400-EMPTY", "a zero-byte file part is staged")
fault(
    "safety-scan-header-only",
    "FILE-UPLOAD-400-SAFETY-SCAN",
    "uploads are judged by their header; truncated or corrupted images are staged",
)
fault(
    "file-writes-need-read",
    "FILE-403-NO-WRITE-RIGHT",
    "upload and staged-file delete check Photos - Read instead of Photos - Write",
)
fault("upload-charged-as-read", "FILE-RATE-COST", "an upload draws 30 units, not 50")
fault(
    "claim-keeps-upload-id",
    "FILE-CLAIM-PHOTOUUID",
    "the record's photoId is the upload's uuid, not the photo made from it",
)
fault(
    "staged-delete-keeps-file",
    "FILE-DELETE-200",
    "a staged-file delete answers 200 but the file stays claimable",
)
fault(
    "claimed-delete-removes-photo",
    "FILE-DELETE-KEEPS-CLAIMED",
    "deleting a claimed upload's uuid deletes the photo made from it",
)
fault("png-kept-as-png", "PHOTO-DOWNLOAD-JPEG", "PNG uploads are stored and served as PNG bytes")
fault(
    "photo-downloads-unguarded",
    "PHOTO-403-NO-READ-RIGHT",
    "photo and thumbnail downloads need no permission",
)
fault("empty-photo-200", "PHOTO-404-EMPTY", "a photo with no stored bytes answers an empty 200")
fault("thumbnail-charged-as-read", "PHOTO-RATE-COST", "a thumbnail download draws 30 units")
fault(
    "link-checks-authorization",
    "LINK-NO-AUTHORIZATION",
    "a link sent with an unknown or disabled key in Authorization answers 401",
)
fault("link-lifetime-one-day", "LINK-VALIDITY-30-DAYS", "links are handed out valid for one day")
fault(
    "link-filename-must-match",
    "LINK-FILENAME-COSMETIC",
    "a link whose file name is not the one handed out answers 404",
)
fault(
    "thumbnail-link-octet-stream",
    "LINK-THUMBNAIL-IMAGE",
    "the thumbnail route answers application/octet-stream",
)
fault(
    "file-link-inline", "LINK-FILE-ATTACHMENT", "the file route answers Content-Disposition inline"
)
fault(
    "link-signature-shape-only",
    "LINK-401-OTHER-ENVIRONMENT",
    "any signature that decodes to 32 bytes is accepted",
)
fault("empty-link-200", "LINK-404-EMPTY", "a link to content with no bytes answers an empty 200")
fault(
    "link-expires-unchecked",
    "LINK-422-EXPIRES-NOT-NUMBER",
    "a non-numeric expires segment is not refused with 422 (the signature check answers 401)",
)
