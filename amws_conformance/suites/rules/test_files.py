"""Staged files: the multipart upload, what it accepts and refuses, the staged-file delete, and
what a delete does (and does not do) once a record has claimed the file as its photo.

Claiming through photoUuid, expiry of staged files and the photo downloads are in
test_photos.py; signed media links in test_media_links.py.
"""

from __future__ import annotations

import hashlib
import uuid as uuidlib
from typing import Any

import pytest

from amws_conformance.fixtures.images import gif_bytes, jpeg_bytes, png_bytes
from amws_conformance.suites.rules import _people_records as records
from amws_conformance.suites.rules._media import photo_id as photo_of
from amws_conformance.suites.rules._run_shared import shared_pictured

UPLOAD = "/api/ws/v1/files/upload"
FILES = "/api/ws/v1/files"
PERSONS = "/api/ws/v1/persons"
USERS = "/api/ws/v1/users"
PHOTOS = "/api/ws/v1/photos"


# -- helpers -----------------------------------------------------------------------------
def _seed(factories: Any) -> int:
    """An image seed of this run: distinct images never meet the identical-file 422 rule."""
    text = f"{factories.run_id}:{factories.random.getrandbits(64)}"
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def _jpeg(factories: Any, size: tuple[int, int] = (640, 480)) -> bytes:
    return jpeg_bytes(_seed(factories), size)


def _upload(client: Any, data: bytes, name: str = "photo.jpg", media: str = "image/jpeg") -> Any:
    return client.post(UPLOAD, files={"file": (name, data, media)})


def _multipart(client: Any, parts: list[tuple[str, str | None, bytes]]) -> Any:
    """POST a hand-made multipart/form-data body: (part name, file name or None, bytes)."""
    boundary = f"amws{uuidlib.uuid4().hex}"
    body = b""
    for name, filename, data in parts:
        disposition = f'form-data; name="{name}"'
        if filename is not None:
            disposition += f'; filename="{filename}"'
        body += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode()
        body += data + b"\r\n"
    body += f"--{boundary}--\r\n".encode()
    content_type = f"multipart/form-data; boundary={boundary}"
    return client.post(UPLOAD, content=body, headers={"Content-Type": content_type})


def _staged(client: Any, data: bytes, name: str = "photo.jpg", media: str = "image/jpeg") -> str:
    response = _upload(client, data, name, media)
    assert response.status_code == 200, (response.status_code, response.text)
    return response.json()["uuid"]


def _assert_not_staged(api: Any, data: bytes) -> None:
    """Nothing holds these bytes in the staging area: they stage anew (no 422 duplicate)."""
    response = _upload(api, data)
    assert response.status_code == 200, (
        "the refused upload left a staged copy behind",
        response.status_code,
        response.text,
    )
    assert api.delete(f"{FILES}/{response.json()['uuid']}").status_code == 200


def _assert_json_refusal(response: Any, status: int) -> None:
    assert response.status_code == status, (response.status_code, response.text)
    # The documented failure body: an integer code (equal to the status only by our reading,
    # ERR-BODY-CODE-IS-STATUS, assumed) and a reason.
    body = response.json()
    assert isinstance(body.get("code"), int) and isinstance(body.get("reason"), str), body


# -- upload ------------------------------------------------------------------------------
@pytest.mark.rule("FILE-UPLOAD-200-ACK")
@pytest.mark.parametrize("kind", ["jpeg", "png"])
def test_upload_answers_200_with_acknowledgement(api, factories, kind: str) -> None:
    if kind == "jpeg":
        data, name, media = _jpeg(factories), "photo.jpg", "image/jpeg"
    else:
        data, name, media = png_bytes(_seed(factories)), "photo.png", "image/png"
    response = _upload(api, data, name, media)
    assert response.status_code == 200, (response.status_code, response.text)
    body = response.json()
    assert body["code"] == 200
    assert isinstance(body["message"], str)
    assert str(uuidlib.UUID(body["uuid"])) == body["uuid"].lower()


@pytest.mark.rule("FILE-UPLOAD-400-NO-FILE")
def test_upload_without_a_file_part_is_400(api, factories) -> None:
    data = _jpeg(factories)
    # The image under another part name, next to an ordinary form field.
    other_name = api.post(UPLOAD, files={"photo": ("photo.jpg", data, "image/jpeg")})
    _assert_json_refusal(other_name, 400)
    only_field = _multipart(api, [("note", None, b"photo.jpg"), ("image", "x.jpg", data)])
    _assert_json_refusal(only_field, 400)
    _assert_json_refusal(_multipart(api, []), 400)  # a multipart body with no parts at all
    _assert_not_staged(api, data)


@pytest.mark.rule("FILE-UPLOAD-400-EMPTY")
def test_upload_of_an_empty_file_is_400(api) -> None:
    _assert_json_refusal(_upload(api, b""), 400)
    _assert_json_refusal(_upload(api, b"", "photo.png", "image/png"), 400)


@pytest.mark.rule("FILE-UPLOAD-400-TYPE")
def test_upload_of_other_types_is_400(api, factories) -> None:
    gif = gif_bytes(_seed(factories))
    pdf = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"
    webp_header = b"RIFF\x1a\x00\x00\x00WEBPVP8 \x0e\x00\x00\x00" + b"\x00" * 14
    for data, name, media in (
        (gif, "photo.gif", "image/gif"),
        (pdf, "photo.pdf", "application/pdf"),
        (webp_header, "photo.webp", "image/webp"),
        (f"plain text {factories.tag('txt')}".encode(), "notes.txt", "text/plain"),
    ):
        _assert_json_refusal(_upload(api, data, name, media), 400)
    # JPEG and PNG content is accepted (the counterpart of the refusal).
    _staged(api, _jpeg(factories))
    _staged(api, png_bytes(_seed(factories)), "photo.png", "image/png")


@pytest.mark.rule("FILE-UPLOAD-TYPE-BY-CONTENT")
def test_upload_type_is_judged_by_the_bytes(api, factories) -> None:
    # PNG bytes under a neutral name and type, JPEG bytes dressed as PNG: both are accepted.
    _staged(api, png_bytes(_seed(factories)), "blob.bin", "application/octet-stream")
    _staged(api, _jpeg(factories), "picture.png", "image/png")
    # GIF bytes dressed as a JPEG are still a GIF.
    dressed = _upload(api, gif_bytes(_seed(factories)), "photo.jpg", "image/jpeg")
    _assert_json_refusal(dressed, 400)


@pytest.mark.rule("FILE-UPLOAD-400-SAFETY-SCAN")
def test_undecodable_image_fails_the_safety_scan(api, factories) -> None:
    jpeg = _jpeg(factories)
    truncated = jpeg[: len(jpeg) // 2]
    png = png_bytes(_seed(factories))
    middle = len(png) // 2
    corrupted = (
        png[:middle] + bytes(b ^ 0x5A for b in png[middle : middle + 64]) + png[middle + 64 :]
    )
    header_only = jpeg[:600]
    for data, name, media in (
        (truncated, "photo.jpg", "image/jpeg"),
        (corrupted, "photo.png", "image/png"),
        (header_only, "photo.jpg", "image/jpeg"),
    ):
        _assert_json_refusal(_upload(api, data, name, media), 400)
    # The complete image of the truncated one is fine: the refusal was about decoding.
    _staged(api, jpeg)


@pytest.mark.rule("FILE-UPLOAD-422-DUPLICATE")
def test_identical_staged_file_is_422_until_deleted(api, factories) -> None:
    data = _jpeg(factories)
    first = _staged(api, data)
    again = _upload(api, data)
    _assert_json_refusal(again, 422)
    # Also under another name and declared type: identical bytes are identical.
    _assert_json_refusal(_upload(api, data, "other.png", "image/png"), 422)
    assert api.delete(f"{FILES}/{first}").status_code == 200
    # Only one staged copy existed: with it gone, the bytes stage again.
    second = _staged(api, data)
    assert second != first


@pytest.mark.rule("FILE-CLAIM-ENDS-STAGING")
def test_claimed_upload_is_no_longer_staged(amws_run, api, factories) -> None:
    # The run's shared person with a photo claimed its upload when it was made (nobody deletes
    # that upload), so its bytes have left the staging area: they upload again as a new file.
    pictured = shared_pictured(amws_run, api, factories)
    again = _upload(api, pictured["image"])
    assert again.status_code == 200, (
        "the upload a person claimed still counts as staged",
        again.status_code,
        again.text,
    )
    assert again.json()["uuid"] != pictured["staged"]


@pytest.mark.rule("FILE-403-NO-WRITE-RIGHT")
@pytest.mark.parametrize("key", ["readonly", "none"])
def test_upload_and_delete_need_photos_write(api, client, factories, key: str) -> None:
    limited = client(key)
    data = _jpeg(factories)
    _assert_json_refusal(_upload(limited, data), 403)
    # Nothing was staged by the refused upload: the same bytes stage anew (no 422 duplicate).
    # That upload is then the staged file the key without the right may not delete.
    staged = _staged(api, data)
    _assert_json_refusal(limited.delete(f"{FILES}/{staged}"), 403)
    # The staged file survived the refused delete.
    assert api.delete(f"{FILES}/{staged}").status_code == 200


# -- staged-file delete -------------------------------------------------------------------
@pytest.mark.rule("FILE-DELETE-200")
def test_delete_of_staged_file_answers_ack_and_withdraws_it(api, factories) -> None:
    for_person, for_user = _staged(api, _jpeg(factories)), _staged(api, _jpeg(factories))
    for staged in (for_person, for_user):
        response = api.delete(f"{FILES}/{staged}")
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["code"] == 200 and isinstance(body["message"], str)
        assert body["uuid"].lower() == staged.lower()
    person = api.post(PERSONS, json=factories.person(photoUuid=for_person))
    _assert_json_refusal(person, 422)
    user = api.post(USERS, json=factories.user(photoUuid=for_user))
    _assert_json_refusal(user, 422)


@pytest.mark.rule("FILE-DELETE-404")
def test_delete_of_unknown_or_deleted_file_is_404(api, factories, ledger) -> None:
    _assert_json_refusal(api.delete(f"{FILES}/{ledger.fresh_uuid()}"), 404)
    staged = _staged(api, _jpeg(factories))
    assert api.delete(f"{FILES}/{staged}").status_code == 200
    _assert_json_refusal(api.delete(f"{FILES}/{staged}"), 404)


@pytest.mark.rule("FILE-DELETE-KEEPS-CLAIMED")
@pytest.mark.parametrize("resource", [PERSONS, USERS], ids=["person", "user"])
def test_delete_of_claimed_upload_keeps_the_photo(request, api, factories, resource) -> None:
    # The group's person or user with a photo (records.pictured, records.pictured_user): deleting
    # the upload it was claimed from must leave its photo as it was, which is all the other
    # tests sharing it need.
    made = (records.pictured if resource == PERSONS else records.pictured_user)(
        request, api, factories
    )
    staged, record = made.staged, made.uuid
    # The status of this delete is not stated (the upload is no longer staged); only the
    # surviving photo is the rule.
    assert api.delete(f"{FILES}/{staged}").status_code in (200, 404)
    read = api.get(f"{resource}/{record}")
    assert read.status_code == 200, read.text
    assert read.json()["hasPhoto"] is True
    photo_id = photo_of(read.json(), record, staged)
    for kind in ("photo", "thumbnail"):
        download = api.get(f"{PHOTOS}/{kind}/{photo_id}")
        assert download.status_code == 200 and download.content, kind


# -- cost ---------------------------------------------------------------------------------
# FILE-RATE-COST (uploads 50, staged-file deletes 10, then 429) is decided in test_rate_limits.py
# by test_media_and_invitation_calls_cost_their_units: its one burst prices the uploads and the
# deletes together with the other 50-unit calls, so the rate_limit key is drained once for all.
