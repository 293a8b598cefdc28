"""Signed media links: their form and signature, and the checks of the two unkeyed routes.

Links are handed out on person and user reads (other parts); here they come from the files
part's ``media_links``, which those reads call. Each test fetches from a loopback address of its
own (127.x.y.z), because signed links are throttled per client address and the session shares
one server.
"""

from __future__ import annotations

import random
import secrets
import uuid as uuidlib
from collections.abc import Callable, Iterator
from urllib.parse import quote

import httpx
import pytest

from amws_conformance.reference_server._crypto import hmac_sha256_urlsafe
from amws_conformance.reference_server.domain.files import media_links
from tests.reference_server.conftest import LiveServer
from tests.reference_server.test_files import decoded, empty_photo, main_system, new_photo, png

STORAGE = "/api/ws/v1/storage"
THIRTY_DAYS_MS = 30 * 24 * 3600 * 1000


def from_address(live: LiveServer, address: str | None = None, **headers: str) -> httpx.Client:
    """A client without an API key whose requests leave from the given loopback address."""
    address = address or ".".join(["127", *(str(random.randrange(1, 255)) for _ in range(3))])
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=live.base_url, transport=transport, headers=headers, timeout=10)


@pytest.fixture
def browser(live: LiveServer) -> Iterator[httpx.Client]:
    with from_address(live) as client:
        yield client


def segments(link: str) -> list[str]:
    """[route, entityUUID, expires, signature, filename] of a handed-out link."""
    assert link.startswith(f"{STORAGE}/")
    return link.removeprefix(f"{STORAGE}/").split("/")


def build(route: str, entity: str, expires: str, signature: str, filename: str) -> str:
    return f"{STORAGE}/{route}/{entity}/{expires}/{signature}/{filename}"


def signed(live: LiveServer, entity: str, expires: str, secret: bytes | None = None) -> str:
    secret = secret if secret is not None else live.server.store.meta("link_secret").encode()
    return hmac_sha256_urlsafe(secret, f"{entity}:{expires}")


def server_ms(control: httpx.Client) -> int:
    from amws_conformance.reference_server._time import parse_instant

    return int(parse_instant(control.get("/_reference/clock").json()["now"]).timestamp() * 1000)


def test_links_have_the_documented_form_and_signature(
    live: LiveServer, control: httpx.Client
) -> None:
    photo = new_photo(live)
    before = server_ms(control)
    links = media_links(live.server, photo)
    after = server_ms(control)
    assert set(links) == {"photo", "thumbnail"}
    for link, route in ((links["photo"], "file"), (links["thumbnail"], "thumbnail")):
        parts = segments(link)
        assert parts[:2] == [route, photo] and len(parts) == 5
        expires = int(parts[2])
        assert before + THIRTY_DAYS_MS - 1000 <= expires <= after + THIRTY_DAYS_MS + 1000
        assert parts[3] == signed(live, photo, parts[2])
        assert "=" not in parts[3] and "+" not in parts[3] and "/" not in parts[3]
    assert media_links(live.server, None) == {"photo": None, "thumbnail": None}


def test_link_serves_without_any_api_key(live: LiveServer, browser: httpx.Client) -> None:
    photo = new_photo(live)
    links = media_links(live.server, photo)
    thumb = browser.get(links["thumbnail"])
    assert thumb.status_code == 200
    assert thumb.headers["content-type"].startswith("image/")
    assert decoded(thumb.content).format == "JPEG"
    whole = browser.get(links["photo"])
    assert whole.status_code == 200
    assert whole.headers["content-type"] == "image/jpeg"
    assert whole.headers["content-disposition"] == 'attachment; filename="photo.jpg"'
    with live.client("full") as api:
        assert whole.content == api.get(f"/api/ws/v1/photos/photo/{photo}").content


def test_link_ignores_the_authorization_header(live: LiveServer) -> None:
    links = media_links(live.server, new_photo(live))
    full = live.server.key_by_value(live.profile["keys"]["rate_limit"])
    assert full is not None
    before = live.server.buckets.remaining(full.uuid)
    for header in (
        "not a key",
        live.profile["keys"]["disabled"],
        live.profile["keys"]["rate_limit"],
    ):
        with from_address(live, Authorization=header) as client:
            assert client.get(links["thumbnail"]).status_code == 200
            assert client.get(links["photo"]).status_code == 200
    assert live.server.buckets.remaining(full.uuid) >= before  # nothing charged


def test_filename_segment_is_cosmetic(live: LiveServer, browser: httpx.Client) -> None:
    links = media_links(live.server, new_photo(live))
    original = browser.get(links["photo"]).content
    route, entity, expires, signature, _ = segments(links["photo"])
    renamed = browser.get(build(route, entity, expires, signature, "badge.jpeg"))
    assert renamed.status_code == 200 and renamed.content == original
    assert renamed.headers["content-disposition"] == 'attachment; filename="badge.jpeg"'
    spaced = browser.get(build(route, entity, expires, signature, quote("my photo.jpg")))
    assert spaced.status_code == 200 and spaced.content == original
    assert spaced.headers["content-disposition"] == "attachment; filename*=utf-8''my%20photo.jpg"
    thumb = segments(links["thumbnail"])
    assert browser.get(build(*thumb[:4], "x")).status_code == 200


def test_blank_segment_is_400(live: LiveServer, browser: httpx.Client) -> None:
    for link in media_links(live.server, new_photo(live)).values():
        parts = segments(link)
        for index in range(1, 5):
            for blank in ("%20", "", "%20%09"):
                changed = [*parts]
                changed[index] = blank
                response = browser.get(build(*changed))
                assert response.status_code == 400, (index, blank)
                assert set(response.json()) == {"code", "reason"}


def test_bad_uuid_or_expiry_is_422(live: LiveServer, browser: httpx.Client) -> None:
    photo = new_photo(live)
    route, entity, expires, signature, name = segments(media_links(live.server, photo)["photo"])
    for bad in ("12345", "not-a-uuid", entity[:-1]):
        response = browser.get(build(route, bad, expires, signature, name))
        assert response.status_code == 422 and set(response.json()["errors"]) == {"entityUUID"}
    for bad in ("soon", "2030-01-01T00:00:00Z", "-5", "1e12"):
        response = browser.get(build(route, entity, quote(bad), signature, name))
        assert response.status_code == 422 and set(response.json()["errors"]) == {"expires"}


def test_altered_link_is_401(live: LiveServer, browser: httpx.Client) -> None:
    links = media_links(live.server, new_photo(live))
    other = segments(media_links(live.server, new_photo(live))["thumbnail"])[1]
    for link in links.values():
        route, entity, expires, signature, name = segments(link)
        flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
        for changed in (
            (route, entity, expires, flipped, name),
            (route, other, expires, signature, name),
            (route, entity, str(int(expires) + 1), signature, name),
            (route, entity, str(int(expires) - 1000), signature, name),
        ):
            response = browser.get(build(*changed))
            assert response.status_code == 401
            assert set(response.json()) == {"code", "reason"}


def test_link_signed_for_another_environment_is_401(
    live: LiveServer, control: httpx.Client, browser: httpx.Client
) -> None:
    photo = new_photo(live)
    expires = str(server_ms(control) + 3600_000)
    foreign = signed(live, photo, expires, secrets.token_hex(32).encode())
    for route in ("thumbnail", "file"):
        assert browser.get(build(route, photo, expires, foreign, "p.jpg")).status_code == 401
        genuine = signed(live, photo, expires)
        assert browser.get(build(route, photo, expires, genuine, "p.jpg")).status_code == 200


def test_signed_link_to_no_file_is_404(
    live: LiveServer, control: httpx.Client, browser: httpx.Client
) -> None:
    expires = str(server_ms(control) + 3600_000)
    nothing = str(uuidlib.uuid4())
    empty = empty_photo(live.server.store, main_system(live))
    for entity in (nothing, empty):
        for route in ("thumbnail", "file"):
            response = browser.get(
                build(route, entity, expires, signed(live, entity, expires), "f")
            )
            assert response.status_code == 404 and response.json()["code"] == 404


def test_link_is_valid_for_30_days_then_412(faulty: Callable[..., LiveServer]) -> None:
    private = faulty()  # this test moves the clock
    links = media_links(private.server, new_photo(private))
    with from_address(private) as client, private.control() as control:
        control.put("/_reference/clock", json={"advance_seconds": 30 * 24 * 3600 - 60})
        assert all(client.get(link).status_code == 200 for link in links.values())
        control.put("/_reference/clock", json={"advance_seconds": 120})
        for link in links.values():
            response = client.get(link)
            assert response.status_code == 412 and response.json()["code"] == 412
        altered = [*segments(links["photo"])]
        altered[3] = "x" + altered[3][1:]
        assert client.get(build(*altered)).status_code == 401  # the signature is checked first


def test_links_are_throttled_per_address(faulty: Callable[..., LiveServer]) -> None:
    private = faulty()  # this test moves the clock
    links = media_links(private.server, new_photo(private))
    with from_address(private, "127.0.0.2") as first, from_address(private, "127.0.0.3") as second:
        for i in range(60):
            assert first.get(links["thumbnail" if i % 2 else "photo"]).status_code == 200
        refused = first.get(links["thumbnail"])
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert set(refused.json()) == {"code", "reason"}
        assert second.get(links["thumbnail"]).status_code == 200
        with private.control() as control:
            control.put("/_reference/clock", json={"advance_seconds": 61})
        assert first.get(links["thumbnail"]).status_code == 200


def test_person_read_hands_out_working_links(api: httpx.Client, browser: httpx.Client) -> None:
    staged = api.post(
        "/api/ws/v1/files/upload", files={"file": ("p.png", png(), "image/png")}
    ).json()["uuid"]
    created = api.post("/api/ws/v1/persons", json={"firstName": "Linked", "photoUuid": staged})
    record = api.get(f"/api/ws/v1/persons/{created.json()['uuid']}").json()
    assert segments(record["photo"])[:2] == ["file", record["photoId"]]
    assert segments(record["thumbnail"])[:2] == ["thumbnail", record["photoId"]]
    for link in (record["photo"], record["thumbnail"]):
        response = browser.get(link)
        assert response.status_code == 200 and decoded(response.content).format == "JPEG"
