"""Each files, photos and signed-link fault breaks its rule (the ordinary tests show it holding)."""

from __future__ import annotations

from collections.abc import Callable

from amws_conformance.reference_server.domain.files import media_links
from tests.reference_server.conftest import LiveServer
from tests.reference_server.test_files import (
    FILES,
    PHOTOS,
    decoded,
    drawing,
    encoded,
    jpeg,
    new_photo,
    stage,
    upload,
)
from tests.reference_server.test_media_links import from_address, segments

Faulty = Callable[..., LiveServer]


def test_upload_201_breaks_the_200_acknowledgement(faulty: Faulty) -> None:
    server = faulty("upload-201")
    with server.client() as client:
        assert upload(client, jpeg()).status_code == 201


def test_upload_accepts_gif_breaks_the_type_rule(faulty: Faulty) -> None:
    server = faulty("upload-accepts-gif")
    with server.client() as client:
        assert upload(client, encoded(drawing(), "GIF"), "a.gif", "image/gif").status_code == 200


def test_duplicate_upload_allowed_breaks_the_422(faulty: Faulty) -> None:
    server = faulty("duplicate-upload-allowed")
    data = jpeg()
    with server.client() as client:
        stage(client, data)
        assert upload(client, data).status_code == 200


def test_claimed_file_stays_staged_breaks_the_end_of_staging(faulty: Faulty) -> None:
    server = faulty("claimed-file-stays-staged")
    data = jpeg()
    with server.client() as client:
        person = {"firstName": "Claims", "photoUuid": stage(client, data)}
        assert client.post("/api/ws/v1/persons", json=person).status_code == 201
        assert upload(client, data).status_code == 422


def test_staged_never_expires_breaks_the_24_hours(faulty: Faulty) -> None:
    server = faulty("staged-never-expires")
    with server.client() as client, server.control() as control:
        staged = stage(client)
        control.put("/_reference/clock", json={"advance_seconds": 24 * 3600 + 60})
        assert client.delete(f"{FILES}/{staged}").status_code == 200


def test_thumbnail_is_full_image_breaks_the_smaller_thumbnail(faulty: Faulty) -> None:
    server = faulty("thumbnail-is-full-image")
    photo = new_photo(server, jpeg((640, 480)))
    with server.client() as client:
        full = client.get(f"{PHOTOS}/photo/{photo}").content
        thumb = client.get(f"{PHOTOS}/thumbnail/{photo}").content
    assert len(thumb) >= len(full)
    assert decoded(thumb).size == decoded(full).size


def test_cache_public_breaks_private_caching(faulty: Faulty) -> None:
    server = faulty("cache-public")
    photo = new_photo(server)
    with server.client() as client:
        response = client.get(f"{PHOTOS}/thumbnail/{photo}")
    assert response.status_code == 200
    assert "public" in response.headers["cache-control"]


def test_photo_other_system_served_breaks_the_refusal(faulty: Faulty) -> None:
    server = faulty("photo-other-system-served")
    theirs = new_photo(server, system=1)
    with server.client() as client:
        served = client.get(f"{PHOTOS}/photo/{theirs}")
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("image/")


def test_link_signature_ignored_breaks_the_401(faulty: Faulty) -> None:
    server = faulty("link-signature-ignored")
    route, entity, expires, _, name = segments(
        media_links(server.server, new_photo(server))["photo"]
    )
    with from_address(server) as client:
        forged = client.get(f"/api/ws/v1/storage/{route}/{entity}/{expires}/forged/{name}")
    assert forged.status_code == 200


def test_link_never_expires_breaks_the_412(faulty: Faulty) -> None:
    server = faulty("link-never-expires")
    link = media_links(server.server, new_photo(server))["thumbnail"]
    with from_address(server) as client, server.control() as control:
        control.put("/_reference/clock", json={"advance_seconds": 31 * 24 * 3600})
        assert client.get(link).status_code == 200


def test_link_no_throttle_breaks_the_per_address_allowance(faulty: Faulty) -> None:
    server = faulty("link-no-throttle")
    link = media_links(server.server, new_photo(server))["thumbnail"]
    with from_address(server) as client:
        assert all(client.get(link).status_code == 200 for _ in range(61))


def test_link_fields_renamed_moves_the_links_off_photo_and_thumbnail(faulty: Faulty) -> None:
    server = faulty("link-fields-renamed")
    with server.client() as client:
        staged = stage(client)
        for path, body in (
            ("/api/ws/v1/persons", {"firstName": "Renamed"}),
            ("/api/ws/v1/users", {"email": "renamed.links@example.com"}),
        ):
            made = client.post(path, json={**body, "photoUuid": staged})
            assert made.status_code == 201, made.text
            read = client.get(f"{path}/{made.json()['uuid']}").json()
            assert "photo" not in read and "thumbnail" not in read
            image, preview = read["media"]["image"], read["media"]["preview"]
            assert "/api/ws/v1/storage/file/" in image and "/storage/thumbnail/" in preview
            # The links themselves still work: only their names moved.
            with from_address(server) as anyone:
                assert anyone.get(image).status_code == 200
                assert anyone.get(preview).status_code == 200
            staged = stage(client, jpeg((320, 240)))
