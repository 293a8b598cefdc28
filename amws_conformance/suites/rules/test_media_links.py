"""Signed media links: the photo and thumbnail links handed out on person and user reads, and
the two unkeyed storage routes that serve them.

The suite never builds a link: every link is one the API handed out on a record, used as it is
or altered in one place (a segment replaced) to see the refusal. Links may be relative paths or
absolute URLs; relative ones are joined with the profile's base_url. The per-address throttle
of the two routes is tested in test_media_link_throttles.py.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import re
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import pytest
from PIL import Image

from amws_conformance import spec
from amws_conformance.fixtures.images import jpeg_bytes
from amws_conformance.harness._checks import check
from amws_conformance.harness.plan.forecast import Bucket, undrainable
from amws_conformance.suites.rules import _media as media
from amws_conformance.suites.rules import _people_records as records
from amws_conformance.suites.rules._media import Link
from amws_conformance.suites.rules._people import PERSON

UPLOAD = "/api/ws/v1/files/upload"
PERSONS = "/api/ws/v1/persons"
USERS = "/api/ws/v1/users"
PHOTOS = "/api/ws/v1/photos"
DAY = 24 * 3600
THIRTY_DAYS_MS = 30 * DAY * 1000
_UUID = spec.uuid_pattern()


# -- helpers -----------------------------------------------------------------------------
def _seed(factories: Any) -> int:
    text = f"{factories.run_id}:{factories.random.getrandbits(64)}"
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def _with_photo(api: Any, factories: Any, resource: str = PERSONS) -> tuple[str, Any]:
    """A record with a photo: (record uuid, its read response)."""
    upload = api.post(UPLOAD, files={"file": ("p.jpg", jpeg_bytes(_seed(factories)), "image/jpeg")})
    assert upload.status_code == 200, upload.text
    body = factories.person() if resource == PERSONS else factories.user()
    created = api.post(resource, json={**body, "photoUuid": upload.json()["uuid"]})
    assert created.status_code == 201, created.text
    uuid = created.json()["uuid"]
    read = api.get(f"{resource}/{uuid}")
    assert read.status_code == 200, read.text
    return uuid, read


# One person with a photo (the group's, records.pictured) serves every test that only fetches
# its links (as handed out, or altered in a segment): fetching a link changes nothing on the
# record. The signature test reads it anew (its expiry is judged against that read); the
# validity test makes its own record (its create bounds when the links were generated); the
# empty link's test shares the group's emptied photo (records.emptied), the deleted person's
# photo is the group's deleted person's (records.deleted); the deleted user's photo is made here.
# The links stay valid: they last 30 days, and the tests that move the clock further move it
# back (restored_clock).
@pytest.fixture
def pictured(request, api: Any, factories: Any) -> tuple[str, dict[str, Any]]:
    """(uuid, read) of the group's person with a photo."""
    made = records.pictured(request, api, factories)
    return made.uuid, made.read


def _links(profile: Any, read: dict[str, Any]) -> tuple[Link, Link]:
    """The (file, thumbnail) links of a record read, found by their documented shape wherever
    the read carries them (or in the profile's media_links.fields); a read without them leaves
    the test's rules undecided."""
    links = media.of_record(profile, read)
    return links["file"], links["thumbnail"]


def _get(
    api: Any, link: Link, wait: Callable[[float], None], url: str | None = None, **kw: Any
) -> httpx.Response:
    """GET a link (``url``: an altered form of it). The per-address allowance is shared by all
    link tests, so a 429 is waited out (``wait``: by moving the reference clock where there is
    one).

    The file route's 200 carries the stored type (LINK-FILE-ATTACHMENT: image/jpeg for a JPEG)
    while openapi.yaml lists only application/octet-stream there, so that route's 200 is left
    to the tests and its refusals get the global checks here."""
    on_file = link.route == "file"
    sender = api.unretried.unchecked if on_file else api.unretried
    for _ in range(4):
        response = sender.get(url or link.url, **kw)
        if response.status_code != 429:
            break
        advised = response.headers.get("retry-after", "")
        wait(int(advised) if advised.isdigit() else 5)
    if on_file and response.status_code != 200:
        violations = check(spec.operation("getSignedFile"), None, response)
        assert not violations, "; ".join(str(v) for v in violations)
    return response


def _assert_refused(response: httpx.Response, *statuses: int) -> None:
    """A refusal with one of ``statuses``, the JSON error body and no image bytes."""
    assert response.status_code in statuses, (response.status_code, response.text[:200])
    assert not response.headers.get("content-type", "").startswith("image/")
    # A JSON failure body; that its code repeats the status is only our reading
    # (ERR-BODY-CODE-IS-STATUS, assumed), not asked of the target here.
    assert isinstance(response.json(), dict), response.text[:200]


def _decoded(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


# -- handed out on records -------------------------------------------------------------------
@pytest.mark.rule("LINK-ON-RECORD")
@pytest.mark.parametrize("resource", [PERSONS, USERS], ids=["person", "user"])
def test_reads_hand_out_working_links(api, wait, factories, profile, resource: str) -> None:
    body = factories.person() if resource == PERSONS else factories.user()
    bare = api.get(f"{resource}/{api.post(resource, json=body).json()['uuid']}").json()
    # Our names (the rule is assumed): photo and thumbnail, null without a photo.
    assert "photo" in bare and "thumbnail" in bare, sorted(bare)
    assert bare["photo"] is None and bare["thumbnail"] is None
    read = _with_photo(api, factories, resource)[1].json()
    named = {}
    for field, route in (("photo", "file"), ("thumbnail", "thumbnail")):
        value = read.get(field)
        assert isinstance(value, str), f"the read has no {field} field holding a link"
        match = media.SHAPE.match(media.absolute(profile, value))
        assert match and match["route"] == route, f"{field} is not a signed {route} link"
        named[route] = Link(**match.groupdict())
    photo, thumbnail = named["file"], named["thumbnail"]
    for link in (photo, thumbnail):
        assert _UUID.fullmatch(link.entity) and link.expires.isdigit(), link
        assert _get(api, link, wait).status_code == 200, link.url


@pytest.mark.rule("LINK-THUMBNAIL-IMAGE")
def test_thumbnail_link_serves_an_image(api, wait, profile, pictured) -> None:
    _, thumbnail = _links(profile, pictured[1])
    response = _get(api, thumbnail, wait)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/")
    assert _decoded(response.content).size[0] > 0


@pytest.mark.rule("LINK-FILE-ATTACHMENT")
def test_file_link_is_offered_as_a_download(api, wait, profile, pictured) -> None:
    photo, _ = _links(profile, pictured[1])
    for name in (photo.filename, "portrait-2024.jpg"):
        response = _get(api, photo, wait, photo.altered(filename=name))
        assert response.status_code == 200, name
        disposition = response.headers.get("content-disposition", "")
        assert disposition.lower().startswith("attachment"), disposition
        assert name in disposition, (name, disposition)
        stored = Image.MIME[_decoded(response.content).format or ""]
        assert response.headers["content-type"].split(";")[0].strip() == stored


# -- authorization and signature ------------------------------------------------------------
@pytest.mark.rule("LINK-NO-AUTHORIZATION")
def test_links_ignore_the_authorization_header(api, wait, profile, pictured) -> None:
    for link in _links(profile, pictured[1]):
        plain = _get(api, link, wait)
        assert plain.status_code == 200
        assert "authorization" not in plain.request.headers  # really sent without a key
        headers = ["k" * 64, "short", f"Bearer {'0' * 64}"]
        headers += [profile.key(n) for n in ("disabled", "none") if profile.has_key(n)]
        for header in headers:
            response = _get(api, link, wait, headers={"Authorization": header})
            assert response.status_code == 200, (link.route, response.text[:200])
            assert response.content == plain.content


@pytest.mark.rule("LINK-NO-AUTHORIZATION")
@pytest.mark.rate_limit
@pytest.mark.requires("control")
def test_links_draw_nothing_from_the_key_bucket(
    request, api, client, control, wait, factories, profile, pictured
) -> None:
    limited = client("rate_limit")
    size = profile.bucket("rate_limit")
    capacity, per_second = size["capacity"], size["refill_per_minute"] / 60
    cost = spec.operation("downloadPhoto").rate_cost or 0
    # The drain below is bounded like every drain of the suite: a declared bucket it cannot
    # empty within MAX_DRAIN_REQUESTS is not configured for this test (the figures say why).
    reason = undrainable(Bucket(capacity, size["refill_per_minute"]), cost, 0.0)
    if reason is not None:
        pytest.skip(reason)
    read = pictured[1]
    photo, thumbnail = _links(profile, read)
    # The upload it was claimed from is not the photo's identifier, whatever the read shows.
    staged = records.pictured(request, api, factories).staged
    photo_id = media.photo_id(read, pictured[0], staged)
    control.advance(capacity / per_second + 5)  # the key's bucket is full again
    header = {"Authorization": profile.key("rate_limit") or ""}
    for link in (photo, thumbnail) * 5:
        assert _get(api, link, wait, headers=header).status_code == 200
    downloads, started = 0, time.monotonic()
    for _ in range(capacity // cost + 10):
        response = limited.unretried.get(f"{PHOTOS}/photo/{photo_id}")
        if response.status_code != 200:
            break
        downloads += 1
    elapsed = time.monotonic() - started
    control.advance(capacity / per_second + 5)
    assert response.status_code == 429
    # Had the ten links drawn units, fewer downloads would have fitted the full bucket.
    assert downloads >= capacity // cost, (downloads, capacity, cost, elapsed)


@pytest.mark.rule("LINK-SIGNATURE-ALGORITHM")
def test_signature_is_an_hmac_over_entity_and_expiry(
    api, control_or_none, wait, profile, pictured
) -> None:
    # Read now: the expiry is judged against the moment of this read.
    read = api.get(f"{PERSONS}/{pictured[0]}")
    assert read.status_code == 200, read.text
    photo, thumbnail = _links(profile, read.json())
    if control_or_none is not None:
        issued = control_or_none.now()
    elif "date" in read.headers:
        issued = parsedate_to_datetime(read.headers["date"])
    else:
        issued = datetime.now(UTC)
    for link in (photo, thumbnail):
        assert re.fullmatch(r"[A-Za-z0-9_-]+", link.signature), link.signature
        raw = base64.urlsafe_b64decode(link.signature + "=" * (-len(link.signature) % 4))
        assert len(raw) == hashlib.sha256().digest_size, "not an HMAC-SHA256 value"
        # Milliseconds since the epoch, 30 days after the read.
        expected = issued.timestamp() * 1000 + THIRTY_DAYS_MS
        assert abs(int(link.expires) - expected) < 120_000, (link.expires, issued)
    if (photo.entity, photo.expires) == (thumbnail.entity, thumbnail.expires):
        # The signature covers only entity and expiry: not the route, not the file name.
        assert photo.signature == thumbnail.signature
        moved = thumbnail.altered(signature=photo.signature, filename="t.jpg")
        assert _get(api, thumbnail, wait, moved).status_code == 200


@pytest.mark.rule("LINK-FILENAME-COSMETIC")
def test_filename_segment_is_cosmetic(api, wait, profile, pictured) -> None:
    for link in _links(profile, pictured[1]):
        original = _get(api, link, wait)
        assert original.status_code == 200
        for name in ("renamed.png", "x", "a%20name%20with%20spaces.jpg"):
            response = _get(api, link, wait, link.altered(filename=name))
            assert response.status_code == 200, (link.route, name)
            assert response.content == original.content


@pytest.mark.rule("LINK-401-ALTERED")
def test_altered_link_is_401(request, api, wait, factories, profile, ledger, pictured) -> None:
    photo, thumbnail = _links(profile, pictured[1])
    # Another record's photo, whose file and bytes exist (the group's user with a photo), so
    # that only the signature's mismatch applies: a file with no bytes would meet doc3's 404
    # row as well, and the documents do not order the two.
    other, _ = _links(profile, records.pictured_user(request, api, factories).read)
    for link in (photo, thumbnail):
        first = link.signature[0]
        forged = ("B" if first == "A" else "A") + link.signature[1:]
        altered = [
            link.altered(signature=forged),
            link.altered(signature=link.signature[::-1]),
            link.altered(expires=str(int(link.expires) + 86_400_000)),
            link.altered(expires=str(int(link.expires) - 1000)),
            link.altered(entity=other.entity),
        ]
        for url in altered:
            _assert_refused(_get(api, link, wait, url), 401)
        # An identifier naming no file meets both the mismatch (401) and doc3's "no such
        # file" (404); either refusal is conformant, never the bytes.
        _assert_refused(_get(api, link, wait, link.altered(entity=ledger.fresh_uuid())), 401, 404)


@pytest.mark.rule("LINK-401-OTHER-ENVIRONMENT")
def test_link_signed_for_another_environment_is_401(api, wait, profile, pictured) -> None:
    for link in _links(profile, pictured[1]):
        # The same entity and expiry, signed the same way with another deployment's secret.
        message = f"{link.entity}:{link.expires}".encode()
        digest = hmac.new(secrets.token_bytes(32), message, hashlib.sha256).digest()
        elsewhere = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        _assert_refused(_get(api, link, wait, link.altered(signature=elsewhere)), 401)


# -- malformed links ------------------------------------------------------------------------
@pytest.mark.rule("LINK-400-BLANK-SEGMENT")
def test_blank_segment_is_400(api, wait, profile, pictured) -> None:
    # The file name is not signed: blanking it meets only the blank-segment row (400). A blank
    # entity, expiry or signature also breaks the signature (401) and, for the first two, the
    # format (422): doc3 lists those rows without an order, so any of them is a conformant
    # refusal there.
    due = {"filename": (400,), "signature": (400, 401)}
    for link in _links(profile, pictured[1]):
        for segment in ("entity", "expires", "signature", "filename"):
            for blank in ("%20", "%20%09"):
                response = _get(api, link, wait, link.altered(**{segment: blank}))
                _assert_refused(response, *due.get(segment, (400, 401, 422)))


@pytest.mark.rule("LINK-422-BAD-UUID")
def test_non_uuid_entity_is_422(api, wait, profile, pictured) -> None:
    for link in _links(profile, pictured[1]):
        for entity in ("not-a-uuid", "12345", link.entity[:-1]):
            _assert_refused(_get(api, link, wait, link.altered(entity=entity)), 422)


@pytest.mark.rule("LINK-422-EXPIRES-NOT-NUMBER")
def test_non_numeric_expiry_is_422(api, wait, profile, pictured) -> None:
    for link in _links(profile, pictured[1]):
        for expires in ("soon", "2030-01-01T00:00:00Z", f"{link.expires}.5", "1e13"):
            _assert_refused(_get(api, link, wait, link.altered(expires=expires)), 422)


# -- lifetime and gone content ------------------------------------------------------------
@pytest.mark.rule("LINK-404-EMPTY")
@pytest.mark.requires("control")
def test_link_to_empty_stored_content_is_404(
    request, api, control, wait, factories, profile
) -> None:
    # The links were handed out before the stored bytes went (records.emptied).
    made = records.emptied(request, api, factories, control)
    made.observed("emptied")
    links = _links(profile, made.read)
    for link in links:
        _assert_refused(_get(api, link, wait), 404)


@pytest.mark.rule("LINK-404-NONE")
@pytest.mark.parametrize("resource", [PERSONS, USERS], ids=["person", "user"])
def test_link_to_deleted_photo_is_404(
    request, api, wait, factories, amws_run, profile, control_or_none, resource: str
) -> None:
    # Stored content with no bytes cannot be made through the API; what a client observes is
    # that a correctly signed link either serves bytes or answers 404, never an empty 200.
    if resource == PERSONS:
        # The group's deleted person (records.deleted), created with a photo whose links (as
        # its read handed them out) were fetched before its delete answered 200.
        gone = records.deleted(request, api, factories, amws_run, profile, control_or_none, PERSON)
        gone.observed("claim")  # created with the photoUuid of a fresh upload
        links = _links(profile, gone.observed("read"))
        for route in media.ROUTES:
            status, size = gone.observed(f"link {route}")
            assert status == 200 and size > 0, route
    else:
        uuid, read = _with_photo(api, factories, resource)
        links = _links(profile, read.json())
        for link in links:
            response = _get(api, link, wait)
            assert response.status_code == 200 and len(response.content) > 0
        assert api.delete(f"{resource}/{uuid}").status_code == 200
    for link in links:
        _assert_refused(_get(api, link, wait), 404)


@pytest.mark.rule("LINK-VALIDITY-30-DAYS", "LINK-412-EXPIRED")
@pytest.mark.requires("control")
def test_link_is_valid_for_30_days_then_412(api, wait, factories, profile, control, restored_clock):
    # doc3 counts the 30 days from the link's generation, not saying whether a target makes
    # its links when the photo is claimed or at each read: a record made right here bounds
    # that moment between the create and the read, whichever the target does.
    before = control.now()
    links = _links(profile, _with_photo(api, factories)[1].json())
    spread = (control.now() - before).total_seconds()
    restored_clock(30 * DAY - 60 - spread)  # under 30 days from the create
    for link in links:
        assert _get(api, link, wait).status_code == 200, link.route
    restored_clock(spread + 120)  # over 30 days from the read
    for link in links:
        _assert_refused(_get(api, link, wait), 412)
    restored_clock(DAY)  # 31 days: still 412, whatever the file name
    for link in links:
        _assert_refused(_get(api, link, wait), 412)
        _assert_refused(_get(api, link, wait, link.altered(filename="renamed.jpg")), 412)
