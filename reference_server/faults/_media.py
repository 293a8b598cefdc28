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
