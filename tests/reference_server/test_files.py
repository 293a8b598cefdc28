"""Uploads, staged-file deletes, the hand-over to a photo, and the keyed photo downloads.

Images are drawn at test time with Pillow; every drawing is different, so tests sharing the
server never collide on the identical-bytes rule. Creating a photo needs a person or user write
(another part); here :func:`new_photo` stages through HTTP and calls the files part's own
hand-over function, which those writes use.
"""

from __future__ import annotations

import io
import random
import uuid as uuidlib
from collections.abc import Callable

import httpx
import pytest
from PIL import Image, ImageDraw

from amws_conformance.reference_server._errors import ApiError
from amws_conformance.reference_server.domain.files import claim_staged
from amws_conformance.reference_server.store import Store
from tests.reference_server.conftest import LiveServer

FILES = "/api/ws/v1/files"
PHOTOS = "/api/ws/v1/photos"


# -- helpers shared with the other files tests -------------------------------------------------
def drawing(size: tuple[int, int] = (480, 360), mode: str = "RGB") -> Image.Image:
    """A random picture of coloured shapes: cheap to encode, never twice the same."""
    rng = random.Random()
    background = tuple(rng.randrange(256) for _ in range(len(mode)))
    image = Image.new(mode, size, background)
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x, y = rng.randrange(size[0]), rng.randrange(size[1])
        box = (x, y, x + rng.randrange(20, 200), y + rng.randrange(20, 200))
        draw.ellipse(box, fill=tuple(rng.randrange(256) for _ in range(len(mode))))
    return image


def encoded(image: Image.Image, fmt: str) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def jpeg(size: tuple[int, int] = (480, 360)) -> bytes:
    return encoded(drawing(size), "JPEG")


def png(size: tuple[int, int] = (480, 360), alpha: bool = True) -> bytes:
    return encoded(drawing(size, "RGBA" if alpha else "RGB"), "PNG")


def upload(
    client: httpx.Client, data: bytes, name: str = "photo.jpg", media: str = "image/jpeg"
) -> httpx.Response:
    return client.post(f"{FILES}/upload", files={"file": (name, data, media)})


def stage(client: httpx.Client, data: bytes | None = None) -> str:
    response = upload(client, data if data is not None else jpeg())
    assert response.status_code == 200, response.text
    return response.json()["uuid"]


def main_system(live: LiveServer) -> str:
    return live.server.systems()[0]


def new_photo(live: LiveServer, data: bytes | None = None, system: int = 0) -> str:
    """Stage an image over HTTP and hand it over as a photo; returns the photo id."""
    key = "full" if system == 0 else "other_system"
    with live.client(key) as client:
        staged = stage(client, data)
    return claim_staged(live.server, live.server.systems()[system], staged)


def empty_photo(store: Store, system: str) -> str:
    """A photo record whose stored image has no bytes (no HTTP route can make one)."""
    return store.insert("photo", system, {"_jpeg": "", "_thumbnail": "", "_upload": None})


def decoded(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


# -- upload --------------------------------------------------------------------------------------
@pytest.mark.parametrize("make,media", [(jpeg, "image/jpeg"), (png, "image/png")])
def test_upload_answers_200_acknowledgement(api: httpx.Client, make: Callable, media: str) -> None:
    response = upload(api, make(), "photo", media)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"code", "message", "uuid"}
    assert body["code"] == 200 and isinstance(body["message"], str)
    assert uuidlib.UUID(body["uuid"])


def test_upload_without_file_part_is_400(api: httpx.Client) -> None:
    data = jpeg()
    other_name = api.post(f"{FILES}/upload", files={"image": ("p.jpg", data, "image/jpeg")})
    assert other_name.status_code == 400
    boundary = "b0undary"
    no_parts = api.post(
        f"{FILES}/upload",
        content=f"--{boundary}--\r\n".encode(),
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    assert no_parts.status_code == 400
    assert api.post(f"{FILES}/upload").status_code == 400
    not_multipart = api.post(
        f"{FILES}/upload", content=data, headers={"Content-Type": "image/jpeg"}
    )
    assert not_multipart.status_code == 400
    assert set(other_name.json()) == {"code", "reason"}
    # Nothing was staged: the same bytes are still new.
    assert upload(api, data).status_code == 200


def test_upload_of_empty_file_is_400(api: httpx.Client) -> None:
    response = upload(api, b"")
    assert response.status_code == 400
    assert response.json()["code"] == 400


def test_upload_refuses_types_other_than_jpeg_and_png(api: httpx.Client) -> None:
    gif = encoded(drawing(mode="RGB"), "GIF")
    bmp = encoded(drawing(), "BMP")
    pdf = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"
    for data, media in ((gif, "image/gif"), (bmp, "image/bmp"), (pdf, "application/pdf")):
        assert upload(api, data, "file", media).status_code == 400
    assert upload(api, b"just some text", "notes.txt", "text/plain").status_code == 400


def test_upload_type_is_judged_by_content(api: httpx.Client) -> None:
    disguised_png = upload(api, png(), "upload.bin", "application/octet-stream")
    assert disguised_png.status_code == 200
    gif_named_jpeg = upload(api, encoded(drawing(), "GIF"), "photo.jpg", "image/jpeg")
    assert gif_named_jpeg.status_code == 400


def test_undecodable_image_fails_the_safety_scan(api: httpx.Client) -> None:
    whole = jpeg()
    assert upload(api, whole[: len(whole) // 2]).status_code == 400
    broken_png = bytearray(png())
    broken_png[len(broken_png) // 2] ^= 0xFF  # inside the image data: its checksum fails
    assert upload(api, bytes(broken_png), "p.png", "image/png").status_code == 400
    assert upload(api, b"\xff\xd8\xff\xe0" + b"\x00" * 64).status_code == 400
    assert upload(api, whole).status_code == 200  # the intact file was never staged


def test_identical_staged_file_is_422_until_deleted(live: LiveServer, api: httpx.Client) -> None:
    data = jpeg()
    first = stage(api, data)
    again = upload(api, data)
    assert again.status_code == 422
    assert set(again.json()) >= {"code", "reason"}
    with live.client("other_system") as other:
        assert upload(other, data).status_code == 200  # staging areas are per system
    assert api.delete(f"{FILES}/{first}").status_code == 200
    assert upload(api, data).status_code == 200


def test_upload_and_delete_need_photos_write(live: LiveServer, api: httpx.Client) -> None:
    data = jpeg()
    with live.client("readonly") as readonly:
        assert upload(readonly, data).status_code == 403
        staged = stage(api, data)  # 200: the refused upload staged nothing
        assert readonly.delete(f"{FILES}/{staged}").status_code == 403
    assert api.delete(f"{FILES}/{staged}").status_code == 200  # still there after the 403


# -- delete --------------------------------------------------------------------------------------
def test_delete_staged_file_answers_ack_and_withdraws_it(live: LiveServer, api: httpx.Client):
    staged = stage(api)
    response = api.delete(f"{FILES}/{staged}")
    assert response.status_code == 200
    assert response.json() == {"code": 200, "message": "success", "uuid": staged}
    with pytest.raises(ApiError) as refused:
        claim_staged(live.server, main_system(live), staged)
    assert refused.value.status == 422


def test_delete_of_unknown_or_deleted_file_is_404(live: LiveServer, api: httpx.Client) -> None:
    assert api.delete(f"{FILES}/{uuidlib.uuid4()}").status_code == 404
    staged = stage(api)
    assert api.delete(f"{FILES}/{staged}").status_code == 200
    gone = api.delete(f"{FILES}/{staged}")
    assert gone.status_code == 404 and set(gone.json()) == {"code", "reason"}
    with live.client("other_system") as other:
        theirs = stage(other)
    assert api.delete(f"{FILES}/{theirs}").status_code == 404
    assert api.delete(f"{FILES}/not-a-uuid").status_code == 422


# -- hand-over -----------------------------------------------------------------------------------
def test_claim_makes_a_photo_with_its_own_id(live: LiveServer, api: httpx.Client) -> None:
    staged = stage(api)
    photo = claim_staged(live.server, main_system(live), staged)
    assert photo != staged
    assert api.get(f"{PHOTOS}/photo/{photo}").status_code == 200
    assert api.get(f"{PHOTOS}/photo/{staged}").status_code == 404
    with pytest.raises(ApiError) as twice:
        claim_staged(live.server, main_system(live), staged)
    assert twice.value.status == 422
    assert set(twice.value.errors or {}) == {"photoUuid"}


def test_claim_of_unknown_or_foreign_upload_is_422(live: LiveServer) -> None:
    with live.client("other_system") as other:
        theirs = stage(other)
    for candidate in (str(uuidlib.uuid4()), theirs):
        with pytest.raises(ApiError) as refused:
            claim_staged(live.server, main_system(live), candidate)
        assert refused.value.status == 422
        assert set(refused.value.errors or {}) == {"photoUuid"}


def test_delete_of_claimed_upload_keeps_the_photo(live: LiveServer, api: httpx.Client) -> None:
    data = jpeg()
    staged = stage(api, data)
    photo = claim_staged(live.server, main_system(live), staged)
    assert api.delete(f"{FILES}/{staged}").status_code == 404  # no longer staged
    assert api.get(f"{PHOTOS}/photo/{photo}").content == data
    assert upload(api, data).status_code == 200  # the bytes left the staging area


def test_staged_file_expires_after_24_hours(faulty: Callable[..., LiveServer]) -> None:
    private = faulty()  # a server of our own: this test moves its clock
    with private.client() as client, private.control() as control:
        kept, late, deleted = jpeg(), jpeg(), jpeg()
        kept_id, late_id, deleted_id = (
            stage(client, kept),
            stage(client, late),
            stage(client, deleted),
        )
        control.put("/_reference/clock", json={"advance_seconds": 24 * 3600 - 60})
        assert client.delete(f"{FILES}/{deleted_id}").status_code == 200
        claim_staged(private.server, main_system(private), kept_id)
        assert upload(client, late).status_code == 422  # still staged
        control.put("/_reference/clock", json={"advance_seconds": 120})
        assert client.delete(f"{FILES}/{late_id}").status_code == 404
        with pytest.raises(ApiError) as expired:
            claim_staged(private.server, main_system(private), late_id)
        assert expired.value.status == 422
        assert upload(client, late).status_code == 200  # expiry freed the bytes


# -- downloads -----------------------------------------------------------------------------------
def test_downloads_are_privately_cached_jpeg(live: LiveServer, api: httpx.Client) -> None:
    photo = new_photo(live)
    for path in (f"{PHOTOS}/photo/{photo}", f"{PHOTOS}/thumbnail/{photo}"):
        response = api.get(path)
        assert response.status_code == 200
        assert response.headers["content-type"] == "image/jpeg"
        assert response.headers["cache-control"] == "private, max-age=3600"
        assert "public" not in response.headers["cache-control"]
        assert decoded(response.content).format == "JPEG"


def test_png_upload_is_served_as_jpeg(live: LiveServer, api: httpx.Client) -> None:
    photo = new_photo(live, png((300, 200)))
    full = decoded(api.get(f"{PHOTOS}/photo/{photo}").content)
    assert full.format == "JPEG" and full.size == (300, 200)
    assert decoded(api.get(f"{PHOTOS}/thumbnail/{photo}").content).format == "JPEG"


def test_thumbnail_is_smaller_than_the_photo(live: LiveServer, api: httpx.Client) -> None:
    photo = new_photo(live, jpeg((640, 480)))
    full = api.get(f"{PHOTOS}/photo/{photo}").content
    thumb = api.get(f"{PHOTOS}/thumbnail/{photo}").content
    assert len(thumb) < len(full)
    full_size, thumb_size = decoded(full).size, decoded(thumb).size
    assert thumb_size[0] <= full_size[0] and thumb_size[1] <= full_size[1]
    assert thumb_size != full_size


def test_downloads_need_photos_read(live: LiveServer) -> None:
    photo = new_photo(live)
    with live.client("none") as none:
        for kind in ("photo", "thumbnail"):
            response = none.get(f"{PHOTOS}/{kind}/{photo}")
            assert response.status_code == 403
            assert response.headers["content-type"].startswith("application/json")
    with live.client("readonly") as readonly:
        assert readonly.get(f"{PHOTOS}/photo/{photo}").status_code == 200


def test_photo_of_another_system_is_403(live: LiveServer, api: httpx.Client) -> None:
    theirs = new_photo(live, system=1)
    for kind in ("photo", "thumbnail"):
        response = api.get(f"{PHOTOS}/{kind}/{theirs}")
        assert response.status_code == 403
        assert set(response.json()) == {"code", "reason"}


def test_unknown_photo_id_is_404(live: LiveServer, api: httpx.Client) -> None:
    staged = stage(api)
    department = api.post("/api/ws/v1/departments", json={"name": f"d-{uuidlib.uuid4().hex[:8]}"})
    for candidate in (str(uuidlib.uuid4()), staged, department.json()["uuid"]):
        for kind in ("photo", "thumbnail"):
            assert api.get(f"{PHOTOS}/{kind}/{candidate}").status_code == 404
    assert api.get(f"{PHOTOS}/photo/12345").status_code == 422


def test_photo_with_empty_content_is_404(live: LiveServer, api: httpx.Client) -> None:
    photo = empty_photo(live.server.store, main_system(live))
    for kind in ("photo", "thumbnail"):
        response = api.get(f"{PHOTOS}/{kind}/{photo}")
        assert response.status_code == 404 and response.json()["code"] == 404


def test_upload_delete_and_download_costs(live: LiveServer) -> None:
    # The documented bucket refills about 13 units a second, so allow a little slack.
    key = live.server.key_by_value(live.profile["keys"]["rate_limit"])
    assert key is not None

    def cost(action: Callable[[], httpx.Response]) -> float:
        before = live.server.buckets.remaining(key.uuid)
        assert action().status_code == 200
        return before - live.server.buckets.remaining(key.uuid)

    with live.client("rate_limit") as client:
        staged_ids: list[str] = []
        assert 40 <= cost(lambda: _keep(staged_ids, upload(client, jpeg()))) <= 50
        assert 0 <= cost(lambda: client.delete(f"{FILES}/{staged_ids[0]}")) <= 10
        photo = new_photo(live)
        assert 40 <= cost(lambda: client.get(f"{PHOTOS}/photo/{photo}")) <= 50
        assert 40 <= cost(lambda: client.get(f"{PHOTOS}/thumbnail/{photo}")) <= 50


def _keep(into: list[str], response: httpx.Response) -> httpx.Response:
    into.append(response.json()["uuid"])
    return response


def test_person_photo_downloads_through_its_photo_id(api: httpx.Client) -> None:
    data = jpeg()
    staged = stage(api, data)
    created = api.post("/api/ws/v1/persons", json={"firstName": "Photo", "photoUuid": staged})
    assert created.status_code == 201, created.text
    person_path = f"/api/ws/v1/persons/{created.json()['uuid']}"
    record = api.get(person_path).json()
    assert record["hasPhoto"] is True
    photo = record["photoId"]
    assert photo not in (staged, record["uuid"])
    assert api.get(f"{PHOTOS}/photo/{photo}").content == data
    assert api.get(f"{PHOTOS}/photo/{record['uuid']}").status_code == 404
    # The upload id is no longer staged (404), and its delete never reaches the photo.
    assert api.delete(f"{FILES}/{staged}").status_code == 404
    assert api.get(person_path).json()["hasPhoto"] is True
    assert api.get(f"{PHOTOS}/thumbnail/{photo}").status_code == 200
