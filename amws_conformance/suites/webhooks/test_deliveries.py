"""Outbound webhook events (HOOK- rules): one POST per visit event, to the URL of its status,
with JSON headers, the optional header, an HMAC-SHA256 signature and encrypted fields.

Events are provoked through the API (create, update, status changes, cancel, a 451 refusal and,
where physical actions are allowed, virtual-reader grants) and read from the run's receiver
(``webhooks``). Only creation is documented (createInvite, whose event pairs with the Visit
Created URL); update, cancel and status changes are operations of assumed shape (x-assumed), and
a test that reaches one never decides a normative rule. So every normative rule here also has a
test that sees VISIT_CREATED deliveries only and calls no such operation, in its body or through
its fixtures. The receiver verifies signatures itself, so every delivery seen here was
verified; the signature test still recomputes it with hmac/hashlib so it checks the target.
Changing the integration is only possible through the control plane: those tests save the
settings they need and then put back what the profile says was configured.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import re
import secrets
import socket
import time
import uuid as uuidlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from amws_conformance import spec
from amws_conformance.fixtures.timestamps import utc_millis
from amws_conformance.harness.target.crypto import decrypt_text
from amws_conformance.harness.target.receiver import Receiver
from amws_conformance.suites.rules._invites import shared_host

INVITES = "/api/ws/v1/invites"
NEVER_SENT = {"VISITOR_ON_SITE", "VISITOR_IN_PARKING", "VISITOR_HOSTED"}
# The control plane's URL settings pair with the statuses by name (HOOK-URL-PAIRING).
_STATUSES = spec.openapi()["components"]["schemas"]["VisitDTO"]["properties"]["status"]["enum"]
URL_SETTINGS = {status.lower(): status for status in _STATUSES if status not in NEVER_SENT}
SIGNATURE, TIMESTAMP = "x-service-hmac-sha256", "x-service-hmac-timestamp"
READER_WINDOW = 1 + max(
    spec.throttle(name).window_seconds
    for name in ("reader-per-device", "reader-auth-failures-per-address")
)
Match = Callable[[dict[str, Any]], bool]

pytestmark = [pytest.mark.webhooks, pytest.mark.requires("webhooks")]


# -- provoking events ----------------------------------------------------------------------
class Visits:
    """Creates visits and moves them; each method returns the matcher of its deliveries."""

    def __init__(self, api: Any, factories: Any, amws_run: Any) -> None:
        self.api, self.factories, self.run = api, factories, amws_run
        self.offset = amws_run.target_clock() - time.time()  # the target's clock against ours
        # What this helper made, so that deliveries seen earlier can be told apart as ours.
        self.registrations: set[str] = set()
        self.refused: set[str] = set()

    @property
    def host(self) -> dict[str, Any]:
        """The run's shared host (``_invites.shared_host``: the body sent, with its uuid).
        Asked for on each use, so every test that names it is booked as using it; no test
        here reads the host's invitations, only its details in a visit's payload."""
        return shared_host(self.run, self.api, self.factories)

    def at(self, hours: float) -> str:
        moment = datetime.fromtimestamp(time.time() + self.offset, UTC) + timedelta(hours=hours)
        return utc_millis(moment)

    def create(self, **fields: Any) -> tuple[dict[str, Any], dict[str, Any], Match]:
        sent = {**self.factories.invite(self.host["uuid"]), "activation": self.at(-1)}
        sent = {**sent, "expiry": self.at(8), **fields}
        created = self.api.post(INVITES, json=sent)
        assert created.status_code == 201, created.text
        registration = created.json()["registrationId"]
        self.registrations.add(registration)
        return sent, created.json(), lambda d: d["payload"].get("visitId") == registration

    def move(self, visit: dict[str, Any], status: str) -> None:
        path = f"{INVITES}/{visit['registrationId']}/status"
        moved = self.api.put(path, json={"status": status})
        assert moved.status_code == 200, moved.text

    def provoke(self, status: str) -> Match:
        """One visit whose last event has ``status``."""
        if status == "VISIT_DENIED":
            return self.denied()
        _, visit, match = self.create()
        registration = visit["registrationId"]
        if status == "VISIT_UPDATED":
            changed = self.api.put(f"{INVITES}/{registration}", json={"comments": "moved"})
            assert changed.status_code == 200, changed.text
        elif status == "VISIT_CANCELLED":
            cancelled = self.api.delete(f"{INVITES}/{registration}")
            assert cancelled.status_code == 200, cancelled.text
        elif status != "VISIT_CREATED":
            if status == "VISITOR_CHECK_OUT":
                self.move(visit, "VISITOR_CHECK_IN")
            self.move(visit, status)
        return match

    def denied(self) -> Match:
        """A registration refused with 451 (its visitor is on an enabled watchlist)."""
        listed = self.api.post("/api/ws/v1/watchlists", json=self.factories.watchlist())
        assert listed.status_code == 201, listed.text
        number = self.factories.tag("wid")
        entry = {"identityNumber": number, "reason": "conformance run"}
        added = self.api.post(f"/api/ws/v1/watchlists/{listed.json()['uuid']}/entries", json=entry)
        assert added.status_code == 201, added.text
        sent = {**self.factories.invite(self.host["uuid"]), "identityNumber": number}
        sent.update(activation=self.at(-1), expiry=self.at(8))
        refused = self.api.post(INVITES, json=sent)
        assert refused.status_code == 451, refused.text
        self.refused.add(sent["lastName"])
        return lambda d: (d["payload"].get("visitor") or {}).get("lastName") == sent["lastName"]

    def made(self, delivery: dict[str, Any]) -> bool:
        """Whether a delivery is about a visit this helper created or had refused."""
        payload = delivery["payload"]
        return (
            payload.get("visitId") in self.registrations
            or (payload.get("visitor") or {}).get("lastName") in self.refused
        )


@pytest.fixture(scope="module")
def visits(api: Any, factories: Any, amws_run: Any) -> Visits:
    return Visits(api, factories, amws_run)


def one(webhooks: Any, status: str, match: Match, timeout: float = 10) -> dict[str, Any]:
    return webhooks.wait_for(status, where=match, timeout=timeout)


def settings_of(profile: Any) -> dict[str, Any]:
    return profile.section("webhooks") or {}


def recompute(key: str, path: str, stamp: str, body: str) -> str:
    text = (path + stamp + body).encode("utf-8")
    return base64.b64encode(hmac.new(key.encode("utf-8"), text, hashlib.sha256).digest()).decode()


def validate_visit(payload: dict[str, Any]) -> None:
    schema = spec.openapi()["components"]["schemas"]["VisitDTO"]
    errors = [e.message for e in spec.validator_for(schema).iter_errors(payload)]
    assert errors == [], errors


def check_headers(delivery: dict[str, Any], profile: Any) -> None:
    """Accept and Content-Type declare UTF-8 JSON; the profile's optional header is there."""
    headers = delivery["headers"]
    accepted = [m.split(";")[0].strip().lower() for m in headers["accept"].split(",")]
    assert "application/json" in accepted, headers["accept"]
    media, *params = [
        p.strip().lower().replace('"', "") for p in headers["content-type"].split(";")
    ]
    assert media == "application/json", headers["content-type"]
    assert "charset=utf-8" in params, headers["content-type"]
    extra = settings_of(profile).get("header")
    if extra:
        assert headers.get(extra["name"].lower()) == extra["value"], delivery["path"]


def check_signature(delivery: dict[str, Any], key: str) -> None:
    """Both signature headers are there, and the signature is recomputed from the key."""
    headers = delivery["headers"]
    assert SIGNATURE in headers and TIMESTAMP in headers, sorted(headers)
    expected = recompute(key, delivery["path"], headers[TIMESTAMP], delivery["body"])
    assert hmac.compare_digest(headers[SIGNATURE], expected), delivery["status"]


def check_visit_payload(
    payload: dict[str, Any], visit: dict[str, Any], status: str, host: dict[str, Any]
) -> None:
    """A VisitDTO of ``visit`` with ``status``, its visitor and ``host``; extra fields pass."""
    validate_visit(payload)
    assert (payload["visitId"], payload["status"]) == (visit["registrationId"], status)
    assert payload["visitor"]["uuid32"] == payload["visitor"]["uuid"].replace("-", "")
    assert payload["host"]["uuid"] == host["uuid"]
    assert payload["host"]["uuid32"] == host["uuid"].replace("-", "")
    # Fields a later version may add, at the top and inside visitor and host, are accepted.
    extended = {**payload, "addedLater": {"any": 1}}
    extended["visitor"] = {**payload["visitor"], "addedLater": "x"}
    extended["host"] = {**payload["host"], "addedLater": None}
    validate_visit(extended)


@pytest.fixture
def created(amws_run: Any, webhooks: Any, visits: Visits) -> dict[str, Any]:
    """One invitation and its VISIT_CREATED delivery, made once per run, for the tests that
    only look at what arrived (headers, signature, timestamp, payload): reading a delivery
    changes nothing, and no test moves that visit. The visitor's first name is not ASCII, so
    the signed text's UTF-8 bytes differ from its characters. ``offset`` is the target's clock
    against ours when it was sent (other tests may move that clock later)."""

    def make() -> dict[str, Any]:
        offset = amws_run.target_clock() - time.time()
        sent, visit, match = visits.create(firstName="Zoë Ångström-Łukasz")
        delivery = one(webhooks, "VISIT_CREATED", match)
        return {"sent": sent, "visit": visit, "delivery": delivery, "offset": offset}

    return amws_run.shared("hooks:visit-created", make)


# -- one POST per event, to its own URL ----------------------------------------------------
@pytest.mark.rule("HOOK-VISIT-CREATED", "HOOK-POST-PER-EVENT")
def test_an_invitation_is_posted_once_as_visit_created(webhooks, visits) -> None:
    # Creation only, and no assumed rule beside them: this test decides both rules.
    refused = len(webhooks.rejections())
    match = visits.create()[2]
    delivery = one(webhooks, "VISIT_CREATED", match)
    assert delivery["payload"]["status"] == "VISIT_CREATED"
    # Room for a second POST of the event; one the receiver refused (as a replay) counts too.
    assert webhooks.quiet_for(None, lambda d: match(d) and d is not delivery, seconds=1.5)
    assert [d["status"] for d in webhooks.deliveries() if match(d)] == ["VISIT_CREATED"]
    assert webhooks.rejections()[refused:] == []


@pytest.mark.rule("HOOK-VISIT-CREATED", "HOOK-POST-PER-EVENT", "HOOK-2XX-ENDS-DELIVERY")
def test_creating_an_invitation_posts_one_visit_created(webhooks, visits) -> None:
    match = visits.create()[2]
    delivery = one(webhooks, "VISIT_CREATED", match)
    assert delivery["payload"]["status"] == "VISIT_CREATED"
    # The receiver answered 200: no retry, no second POST of the same event.
    assert webhooks.quiet_for(None, lambda d: match(d) and d is not delivery, seconds=1.5)
    assert [d["status"] for d in webhooks.deliveries() if match(d)] == ["VISIT_CREATED"]


@pytest.mark.rule(
    "HOOK-URL-PAIRING",
    "HOOK-POST-PER-EVENT",
    "HOOK-PAYLOAD-SHAPE",
    "HOOK-NO-ONSITE-PARKING-HOSTED",
    "HOOK-HEADERS-JSON",
    "HOOK-OPTIONAL-HEADER",
)
def test_every_status_is_posted_once_to_a_url_of_its_own(webhooks, visits, profile) -> None:
    matches = {status: visits.provoke(status) for status in URL_SETTINGS.values()}
    paths = {}
    for status, match in matches.items():
        delivery = one(webhooks, status, match)
        validate_visit(delivery["payload"])
        check_headers(delivery, profile)
        paths[status] = delivery["path"]
    assert len(set(paths.values())) == len(paths), paths
    webhooks.quiet_for(None, lambda d: False, seconds=1.5)  # room for duplicates or retries
    for status, match in matches.items():
        mine = [(d["status"], d["path"]) for d in webhooks.deliveries() if match(d)]
        assert len(mine) == len(set(mine)), f"an event of the {status} visit came twice: {mine}"
        assert [p for s, p in mine if s == status] == [paths[status]], (status, mine)
    assert not [d for d in webhooks.deliveries() if d["status"] in NEVER_SENT]


@pytest.mark.physical
@pytest.mark.requires("virtual_reader")
@pytest.mark.rule("HOOK-URL-PAIRING", "READER-VISIT-CHECK-IN", "READER-VISIT-STATUS-AS-PHYSICAL")
def test_reader_grants_check_the_visitor_in_and_out(
    webhooks, visits, api, profile, control_or_none
) -> None:
    device = profile.section("virtual_reader")
    if control_or_none is not None:
        # Reader requests of earlier tests (the contract suite's random ones) may have tripped
        # this address's reader throttles, and the client would wait their window out in real
        # time; where the target's clock moves, the window passes at once.
        control_or_none.advance(READER_WINDOW)
    by_api = {
        s: one(webhooks, s, visits.provoke(s)) for s in ("VISITOR_CHECK_IN", "VISITOR_CHECK_OUT")
    }
    _, visit, match = visits.create()
    for status in ("VISITOR_CHECK_IN", "VISITOR_CHECK_OUT"):
        body = {"uuid": device["uuid"], "key": device["key"], "code": visit["accessCode"]}
        granted = api.post("/api/ws/v1/virtual/reader", json=body)
        assert granted.status_code == 200, granted.text
        delivery = one(webhooks, status, match)
        assert delivery["path"] == by_api[status]["path"]


# -- headers, signature, timestamp -----------------------------------------------------------
@pytest.mark.rule("HOOK-HEADERS-JSON", "HOOK-OPTIONAL-HEADER")
def test_visit_created_declares_utf8_json_and_carries_the_configured_header(
    created, profile
) -> None:
    # Creation only: no operation of assumed shape, so this test decides both rules.
    delivery = created["delivery"]
    check_headers(delivery, profile)
    # The receiver read the body as UTF-8 JSON; the non-ASCII name came through intact.
    assert delivery["payload"]["visitor"]["firstName"] == created["sent"]["firstName"]


@pytest.mark.rule("HOOK-HEADERS-JSON", "HOOK-OPTIONAL-HEADER")
def test_posts_declare_utf8_json_and_carry_the_configured_header(webhooks, visits, profile) -> None:
    sent, visit, match = visits.create(firstName="Zoë Ångström-Łukasz")
    first = one(webhooks, "VISIT_CREATED", match)
    visits.move(visit, "VISIT_NO_SHOW")
    for delivery in (first, one(webhooks, "VISIT_NO_SHOW", match)):
        check_headers(delivery, profile)
        # The receiver read the body as UTF-8 JSON; the non-ASCII name came through intact.
        assert delivery["payload"]["visitor"]["firstName"] == sent["firstName"]


@pytest.mark.rule("HOOK-HMAC-SIGNATURE", "HOOK-HMAC-HEADERS-WHEN-KEY")
def test_visit_created_is_signed_over_path_timestamp_and_body(request, profile) -> None:
    key = settings_of(profile).get("hmac_key")
    if not key:
        pytest.skip("not configured: the profile's webhooks section has no hmac_key")
    # Creation only (no operation of assumed shape); the non-ASCII name makes the signed text's
    # UTF-8 bytes differ from its characters. (Asked for after the skip: a target without a
    # key makes no invitation for it.)
    check_signature(request.getfixturevalue("created")["delivery"], key)


@pytest.mark.rule("HOOK-HMAC-SIGNATURE", "HOOK-HMAC-HEADERS-WHEN-KEY")
def test_signature_is_hmac_sha256_over_path_timestamp_and_body(webhooks, visits, profile) -> None:
    key = settings_of(profile).get("hmac_key")
    if not key:
        pytest.skip("not configured: the profile's webhooks section has no hmac_key")
    _, visit, match = visits.create()
    visits.move(visit, "VISITOR_CHECK_IN")
    for status in ("VISIT_CREATED", "VISITOR_CHECK_IN"):
        check_signature(one(webhooks, status, match), key)


@pytest.mark.rule("HOOK-HMAC-TIMESTAMP")
def test_timestamp_is_epoch_milliseconds_of_the_sending_time(request, profile) -> None:
    if not settings_of(profile).get("hmac_key"):
        pytest.skip("not configured: the profile's webhooks section has no hmac_key")
    created = request.getfixturevalue("created")  # after the skip, as above
    delivery, offset = created["delivery"], created["offset"]  # the target's clock against ours
    stamp = delivery["headers"][TIMESTAMP]
    assert re.fullmatch(r"[1-9][0-9]*", stamp), stamp
    sent_at = (delivery["received_at"] + offset) * 1000
    assert abs(int(stamp) - sent_at) < 30_000, (stamp, sent_at)


# -- encryption and payload --------------------------------------------------------------------
def encrypted_names(fields: list[str] | None) -> set[str]:
    """The payload names an encryption list covers ("mobile" also names mobileNumber)."""
    names = set(fields or spec.openapi()["x-default-encrypted-fields"])
    return names | {"mobileNumber"} if "mobile" in names else names


def leaves(node: Any, where: str = "") -> Iterator[tuple[str, str, Any]]:
    """(location, field name, value) of every non-object value of a payload."""
    for name, value in node.items():
        if isinstance(value, dict):
            yield from leaves(value, f"{where}{name}.")
        else:
            yield f"{where}{name}", name, value


def plain_values(visits: Visits, sent: dict[str, Any], visit: dict[str, Any], reason: str) -> dict:
    return {
        "reason": reason,
        "accessCode": visit["accessCode"],
        "visitor.email": sent["email"],
        "visitor.mobileNumber": sent["mobile"],
        "visitor.identityNumber": sent["identityNumber"],
        "visitor.firstName": sent["firstName"],
        "visitor.lastName": sent["lastName"],
        "visitId": visit["registrationId"],
        "host.email": visits.host["email"],
        "host.mobileNumber": visits.host["mobile"],
    }


@pytest.fixture(scope="module")
def reason(visits: Visits) -> tuple[str, str]:
    """A visit reason (uuid, name as read) for the encryption tests' visits. Shared: a visit
    only names it, which changes nothing on it, and its name is encrypted or not when each
    visit's event is sent, under the settings of that moment."""
    made = visits.api.post(
        "/api/ws/v1/visit-reason", json=visits.factories.named("createVisitReason", "vr")
    )
    assert made.status_code == 201, made.text
    read = visits.api.get(f"/api/ws/v1/visit-reason/{made.json()['uuid']}")
    assert read.status_code == 200, read.text
    return made.json()["uuid"], read.json()["name"]


def encrypted_visit(
    visits: Visits, webhooks: Any, reason: tuple[str, str]
) -> tuple[dict, dict, dict]:
    """A visit with a value in every default-encrypted field: (raw body, plain values of the
    fields checked, decrypted payload)."""
    sent, visit, match = visits.create(
        identityNumber=visits.factories.tag("id"), visitReason=reason[0]
    )
    delivery = one(webhooks, "VISIT_CREATED", match)
    return (
        json.loads(delivery["body"]),
        plain_values(visits, sent, visit, reason[1]),
        delivery["payload"],
    )


def check_encryption(raw: dict, plain: dict, names: set[str], secret: str, iv: str) -> None:
    for where, name, value in leaves(raw):
        if where not in plain:
            continue
        if name in names:
            assert value != plain[where], f"{where} arrived in clear"
            assert decrypt_text(value, secret, iv) == plain[where], where
        else:
            assert value == plain[where], f"{where} should be in clear"


@pytest.mark.rule("HOOK-ENCRYPTION-FIELDS", "HOOK-ENCRYPTION-DEFAULT-LIST")
def test_listed_fields_arrive_as_base64_aes_256_cbc(webhooks, visits, profile, reason) -> None:
    encryption = settings_of(profile).get("encryption") or {}
    if not (encryption.get("secret") and encryption.get("iv")):
        pytest.skip("not configured: the profile's webhooks section has no encryption")
    raw, plain, payload = encrypted_visit(visits, webhooks, reason)
    names = encrypted_names(encryption.get("fields"))
    check_encryption(raw, plain, names, encryption["secret"], encryption["iv"])
    assert {w: v for w, _, v in leaves(payload) if w in plain} == plain


@pytest.mark.rule("HOOK-PAYLOAD-SHAPE", "HOOK-EXTRA-FIELDS")
def test_visit_created_payload_is_a_visit_dto_with_visitor_and_host(created, visits) -> None:
    # Creation only: no operation of assumed shape, so this test decides both rules.
    payload = created["delivery"]["payload"]
    check_visit_payload(payload, created["visit"], "VISIT_CREATED", visits.host)


@pytest.mark.rule("HOOK-PAYLOAD-SHAPE", "HOOK-EXTRA-FIELDS")
def test_payload_is_a_visit_dto_with_visitor_and_host(webhooks, visits) -> None:
    _, visit, match = visits.create()
    visits.move(visit, "VISITOR_CHECK_IN")
    payload = one(webhooks, "VISITOR_CHECK_IN", match)["payload"]
    check_visit_payload(payload, visit, "VISITOR_CHECK_IN", visits.host)


@pytest.mark.rule("HOOK-RECEIVER-VERIFY")
def test_receiver_refuses_stale_or_forged_signatures(webhooks, profile, amws_run) -> None:
    settings = settings_of(profile)
    if not settings.get("hmac_key"):
        pytest.skip("not configured: the profile's webhooks section has no hmac_key")
    body = json.dumps({"status": "VISIT_CREATED", "visitId": str(uuidlib.uuid4())})
    path = "/amws-receiver-check"
    extra = settings.get("header")
    now_ms = int(amws_run.target_clock() * 1000)

    def post(stamp: int, signature: str | None = None) -> int:
        headers = {"Content-Type": "application/json; charset=utf-8", TIMESTAMP: str(stamp)}
        headers[SIGNATURE] = signature or recompute(settings["hmac_key"], path, str(stamp), body)
        if extra:
            headers[extra["name"]] = extra["value"]
        return httpx.post(
            f"http://{settings['listen']}{path}", content=body, headers=headers
        ).status_code

    refused = len(webhooks.rejections())
    assert post(now_ms - 6 * 60_000) == 401  # correctly signed, but older than 5 minutes
    assert post(now_ms, base64.b64encode(secrets.token_bytes(32)).decode()) == 401
    assert len(webhooks.rejections()) == refused + 2
    assert post(now_ms) == 200


@pytest.mark.slow
@pytest.mark.rule("HOOK-RETRY")
def test_failed_delivery_is_tried_three_more_times_then_dropped(webhooks, visits) -> None:
    # Every delivery fails while this test watches; only this visit's attempts are counted,
    # because events of earlier tests may still be on their way.
    webhooks.inbox.fail_when = lambda payload: True
    try:
        match = visits.create()[2]
        deadline = time.monotonic() + 15
        times: list[float] = []
        while time.monotonic() < deadline and len(times) < 5:
            times = [f["answered_at"] for f in webhooks.failures() if match(f)]
            if len(times) == 4 and time.monotonic() - times[-1] > 3:
                break  # three seconds with no fifth attempt
            time.sleep(0.02)
    finally:
        webhooks.inbox.fail_when = None
    gaps = [round(b - a, 1) for a, b in itertools.pairwise(times)]
    assert len(times) == 4, f"attempts at gaps {gaps}"
    for gap, expected in zip(gaps, (1, 2, 4), strict=True):
        assert expected - 0.5 <= gap <= expected + 1.5, gaps
    assert not [d for d in webhooks.deliveries() if match(d)]


# -- the integration's settings (control plane) --------------------------------------------
def _control_path(control: httpx.Client) -> str:
    base = control.base_url.path.rstrip("/")
    return (
        "/webhook-integration"
        if base.endswith("/_reference")
        else "/_reference/webhook-integration"
    )


@pytest.fixture(scope="module")
def original(webhooks, visits, profile, control) -> dict[str, Any]:
    """The integration as the profile describes it, with the event URLs seen in use.

    A URL is taken from a delivery of this module's visits that the run's receiver already
    holds; only a status not seen yet is provoked, and provoking most statuses takes operations
    of assumed shape, which then count against the test this fixture is set up for. In a whole
    run the earlier tests have seen every status, so the control-plane tests reach none.
    """
    settings = settings_of(profile)
    # A control plane that shows the integration saved (the reference server's does) spares
    # provoking the statuses not seen yet, and with it the operations of assumed shape that
    # would count against the tests using this fixture (whichever tests a plan keeps).
    shown = control.get(_control_path(control))
    if shown.status_code == 200 and set(URL_SETTINGS) <= set(shown.json().get("urls") or {}):
        return shown.json()
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(settings["public_url"]))
    # Deliveries of the run's receiver all came with the URLs the profile configured: the tests
    # that change them point them at the spare receiver.
    seen = {d["status"]: d["path"] for d in webhooks.deliveries() if visits.made(d)}
    urls = {}
    for setting, status in URL_SETTINGS.items():
        path = seen.get(status) or one(webhooks, status, visits.provoke(status))["path"]
        urls[setting] = origin + path
    encryption = settings.get("encryption")
    return {
        "enabled": True,
        "hmac_key": settings.get("hmac_key"),
        "encryption": {"fields": [], **encryption} if encryption else None,
        "header": settings.get("header"),
        "urls": urls,
    }


@contextmanager
def configured(control: httpx.Client, original: dict[str, Any], **changes: Any) -> Iterator[dict]:
    """The integration saved with ``changes`` for the block, then exactly as before."""
    saved = control.put(_control_path(control), json={**original, **changes})
    assert saved.status_code == 200, saved.text
    try:
        yield saved.json()
    finally:
        restored = control.put(_control_path(control), json=original)
        assert restored.status_code == 200, restored.text


@pytest.fixture(scope="module")
def spare(profile, amws_run) -> Iterator[tuple[Receiver, str]]:
    """A second, non-verifying receiver beside the run's one: (receiver, its base URL)."""
    settings = settings_of(profile)
    host = settings["listen"].rpartition(":")[0]
    if urlsplit(settings["public_url"]).netloc != settings["listen"]:
        pytest.skip("not configured: the receiver is reached through an address of its own")
    with socket.socket() as probe:
        probe.bind((host, 0))
        port = probe.getsockname()[1]
    receiver = Receiver({"listen": f"{host}:{port}"}, now=amws_run.target_clock).start()
    yield receiver, f"http://{host}:{port}"
    receiver.stop()


def spare_urls(base: str) -> dict[str, str]:
    return {setting: f"{base}/amws/{setting}" for setting in URL_SETTINGS}


@pytest.mark.requires("control")
@pytest.mark.rule("HOOK-URL-PAIRING")
def test_each_status_is_posted_to_the_url_of_its_name(control, original, spare, visits) -> None:
    receiver, base = spare
    with configured(control, original, urls=spare_urls(base)):
        matches = {status: visits.provoke(status) for status in URL_SETTINGS.values()}
        for setting, status in URL_SETTINGS.items():
            assert one(receiver, status, matches[status])["path"] == f"/amws/{setting}"


@pytest.mark.requires("control")
@pytest.mark.rule("HOOK-ENABLED-FLAG")
def test_creation_while_disabled_is_never_posted(control, original, webhooks, visits) -> None:
    # Creation only: no operation of assumed shape (``original`` reuses URLs seen earlier).
    with configured(control, original, enabled=False):
        early = visits.create()[2]
        assert webhooks.quiet_for(None, early, seconds=1.5)
    # Saved as enabled again: the next creation is sent, the one made while disabled never is.
    late = visits.create()[2]
    one(webhooks, "VISIT_CREATED", late)
    assert webhooks.quiet_for(None, early, seconds=1.5)


@pytest.mark.requires("control")
@pytest.mark.rule("HOOK-ENABLED-FLAG")
def test_disabled_integration_sends_nothing_and_never_later(control, original, webhooks, visits):
    with configured(control, original, enabled=False):
        _, visit, match = visits.create()
        changed = visits.api.put(f"{INVITES}/{visit['registrationId']}", json={"comments": "x"})
        assert changed.status_code == 200, changed.text
        assert webhooks.quiet_for(None, match, seconds=1.5)
    # Enabled again: the earlier events stay unsent, the next one is sent.
    visits.move(visit, "VISIT_NO_SHOW")
    one(webhooks, "VISIT_NO_SHOW", match)
    assert [d["status"] for d in webhooks.deliveries() if match(d)] == ["VISIT_NO_SHOW"]


@pytest.mark.requires("control")
@pytest.mark.rule("HOOK-HMAC-HEADERS-WHEN-KEY", "HOOK-OPTIONAL-HEADER")
def test_signature_and_extra_header_only_when_configured(control, original, spare, visits):
    receiver, base = spare
    key, header = secrets.token_hex(32), {"name": "X-Amws-Check", "value": secrets.token_hex(8)}
    with configured(control, original, urls=spare_urls(base), hmac_key=key, header=header):
        signed = one(receiver, "VISIT_CREATED", visits.create()[2])["headers"]
    with configured(control, original, urls=spare_urls(base), hmac_key=None, header=None):
        plain = one(receiver, "VISIT_CREATED", visits.create()[2])["headers"]
    assert SIGNATURE in signed and TIMESTAMP in signed
    assert signed.get("x-amws-check") == header["value"]
    assert SIGNATURE not in plain and TIMESTAMP not in plain
    assert "x-amws-check" not in plain


@pytest.mark.requires("control")
@pytest.mark.rule("HOOK-ENCRYPTION-FIELDS", "HOOK-ENCRYPTION-OVERRIDE")
def test_only_the_override_fields_are_encrypted_and_nothing_without_an_iv(
    control, original, spare, visits, reason
) -> None:
    # Never the default list (its content is assumed): an override list of two top-level
    # fields, which doc3 names as examples, then a secret without an IV.
    receiver, base = spare
    secret, iv, listed = secrets.token_hex(32), secrets.token_hex(16), ["reason", "accessCode"]
    for with_iv, names in ((iv, set(listed)), (None, set())):
        encryption = {"secret": secret, "iv": with_iv, "fields": listed}
        with configured(control, original, urls=spare_urls(base), encryption=encryption):
            raw, plain, _ = encrypted_visit(visits, receiver, reason)
        check_encryption(raw, plain, names, secret, iv)


@pytest.mark.requires("control")
@pytest.mark.rule(
    "HOOK-ENCRYPTION-OVERRIDE", "HOOK-ENCRYPTION-DEFAULT-LIST", "HOOK-ENCRYPTION-FIELDS"
)
def test_override_list_replaces_the_default_list(control, original, spare, visits, reason) -> None:
    receiver, base = spare
    secret, iv = secrets.token_hex(32), secrets.token_hex(16)
    # Override; default; no IV: nothing. With the list of the test above, each field doc3 names
    # as an example (reason, accessCode, email) is both listed and left out of a list once, so
    # a field outside the list that arrives encrypted is seen whichever it is.
    cases = [["firstName", "email"], [], None]
    for fields in cases:
        encryption = {
            "secret": secret,
            "iv": iv if fields is not None else None,
            "fields": fields or [],
        }
        with configured(control, original, urls=spare_urls(base), encryption=encryption):
            raw, plain, _ = encrypted_visit(visits, receiver, reason)
        names = set() if fields is None else encrypted_names(fields)
        check_encryption(raw, plain, names, secret, iv)


@pytest.mark.requires("control")
@pytest.mark.rule("HOOK-CONFIG-SECRET-FORMATS")
def test_integration_refuses_malformed_secrets(control, original) -> None:
    secret, iv = secrets.token_hex(32), secrets.token_hex(16)
    refused = [
        {"hmac_key": "k" * 15},
        {"hmac_key": "k" * 129},
        {"hmac_key": "tab\there-is-not-printable"},
        {"encryption": {"secret": secret[:-1], "iv": iv}},
        {"encryption": {"secret": "g" * 64, "iv": iv}},
        {"encryption": {"secret": secret, "iv": iv + "00"}},
    ]
    accepted = [
        {"hmac_key": "k" * 16},
        {"hmac_key": "~" * 128},
        {"hmac_key": secrets.token_hex(32), "encryption": {"secret": secret, "iv": iv}},
    ]
    path = _control_path(control)
    try:
        for change in refused:
            answer = control.put(path, json={**original, **change})
            assert 400 <= answer.status_code < 500, (change, answer.status_code)
        for change in accepted:
            answer = control.put(path, json={**original, **change})
            assert answer.status_code == 200, (change, answer.text)
    finally:
        restored = control.put(path, json=original)
        assert restored.status_code == 200, restored.text
