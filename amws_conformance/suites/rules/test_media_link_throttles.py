"""Signed media links: the per-address throttle of the two storage routes.

doc3 says signed links are throttled per requesting address and gives no figure. The
normative rule is judged against the allowance the profile declares (``throttles.signed_links``)
and, without one, probed to a bound; our own figure (the spec's ``x-throttles``) is checked by
the assumed rule beside it. Kept apart from test_media_links.py for the module's size.
"""

from __future__ import annotations

import ipaddress
import random
import socket
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from amws_conformance import spec
from amws_conformance.suites.rules import _media as media
from amws_conformance.suites.rules import _people_records as records
from amws_conformance.suites.rules._media import Link

LINK_WINDOW = spec.throttle("signed-link-per-address").window_seconds


def _allowance() -> int:
    """Signed-link requests one address may make per window (the spec's assumed figure)."""
    return spec.throttle("signed-link-per-address").requests


@pytest.fixture
def pictured(request, api: Any, factories: Any) -> tuple[str, dict[str, Any]]:
    """(uuid, read) of the group's person with a photo (records.pictured): these tests only
    fetch its links."""
    made = records.pictured(request, api, factories)
    return made.uuid, made.read


def _links(profile: Any, read: dict[str, Any]) -> tuple[Link, Link]:
    """The (file, thumbnail) links of a read, found by their documented shape (_media)."""
    links = media.of_record(profile, read)
    return links["file"], links["thumbnail"]


# -- throttling -------------------------------------------------------------------------------
def _loopback(profile: Any) -> bool:
    try:
        host = socket.gethostbyname(urlsplit(profile.base_url).hostname or "")
        return ipaddress.ip_address(host).is_loopback
    except (OSError, ValueError):
        return False


def _browser(fresh_address: bool) -> httpx.Client:
    """A plain client (no key), leaving from a fresh loopback address when asked."""
    address = ".".join(["127", *(str(random.randrange(1, 255)) for _ in range(3))])
    transport = httpx.HTTPTransport(local_address=address) if fresh_address else None
    return httpx.Client(transport=transport, timeout=30)


# How many link requests the normative check sends at most where the profile declares no
# allowance: the documents give no figure (LINK-RATE-ALLOWANCE is ours), so the probe goes to
# four times our figure, and a target that stays under it is left undecided, not failed.
PROBE_FACTOR = 4


@pytest.mark.rule("LINK-429-PER-ADDRESS")
@pytest.mark.slow
@pytest.mark.rate_limit
def test_links_are_throttled_per_address(api, control_or_none, profile, pictured) -> None:
    declared = profile.throttle("signed_links")
    if declared is not None:  # the target's own figure: its 429 is due once it is used up
        _throttled(control_or_none, profile, pictured, declared.requests, False, declared)
        return
    bound = PROBE_FACTOR * _allowance()
    _throttled(control_or_none, profile, pictured, bound, exact=False, probing=True)


@pytest.mark.rule("LINK-RATE-ALLOWANCE")
@pytest.mark.slow
@pytest.mark.rate_limit
def test_link_allowance_is_our_figure(api, control_or_none, profile, pictured) -> None:
    _throttled(control_or_none, profile, pictured, _allowance(), exact=True)


def _throttled(
    control_or_none: Any,
    profile: Any,
    pictured: tuple[str, dict[str, Any]],
    allowance: int,
    exact: bool,
    declared: spec.Throttle | None = None,
    probing: bool = False,
) -> None:
    """Requests from one address until a 429 (at most ``allowance`` + 1); with ``exact`` the
    429 must come right after ``allowance`` requests where the count can start fresh. When
    ``probing`` (no declared figure), no 429 within the bound leaves the rule undecided; with a
    ``declared`` figure, requests that outlasted its window leave it undecided too (the window,
    not the target, let them through)."""
    photo, thumbnail = _links(profile, pictured[1])
    # On a loopback target each client can leave from its own address, which starts with a
    # whole allowance; elsewhere the run's own address is used (made fresh by the clock, if any).
    loopback = _loopback(profile)
    if not loopback and control_or_none is not None:
        control_or_none.advance(LINK_WINDOW + 1)
    exact = exact and (loopback or control_or_none is not None)
    # Different links, names and keys: the count is per address, not per link or per key.
    keys = [None, "k" * 64, profile.key("full")]
    statuses: list[int] = []
    started = time.monotonic()
    with _browser(loopback) as browser:
        for i in range(allowance + 1):
            link = (photo, thumbnail)[i % 2]
            url = link.altered(filename=f"n{i}.jpg") if i % 3 == 0 else link.url
            header = keys[i % len(keys)]
            response = browser.get(url, headers={"Authorization": header} if header else {})
            statuses.append(response.status_code)
            if response.status_code != 200:
                break
    took = time.monotonic() - started
    try:
        if probing and statuses[-1] == 200:
            pytest.skip(
                f"undecided: no 429 within {len(statuses)} signed-link requests from one "
                f"address (our probe: {PROBE_FACTOR} times our assumed figure); the documents "
                "give no figure for the allowance: declare throttles.signed_links in the profile"
            )
        if statuses[-1] == 200 and declared is not None and took >= declared.window_seconds:
            pytest.skip(
                f"undecided: the {len(statuses)} signed-link requests took {took:.1f} s, longer "
                f"than the declared window of {declared.window_seconds:g} s "
                "(throttles.signed_links)"
            )
        assert statuses[-1] == 429, f"{len(statuses)} link requests from one address, no 429"
        assert response.headers.get("retry-after", "").isdigit()
        assert int(response.headers["retry-after"]) >= 1
        assert set(statuses[:-1]) <= {200}, statuses
        if exact:
            assert len(statuses) == allowance + 1, f"429 after {len(statuses) - 1} requests"
        if loopback:
            with _browser(True) as elsewhere:
                assert elsewhere.get(photo.url).status_code == 200, "another address was throttled"
    finally:
        if not loopback and control_or_none is not None:
            control_or_none.advance(LINK_WINDOW + 1)  # the run's own address may fetch again
