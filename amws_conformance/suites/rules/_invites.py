"""The invitation calls the invitation and visit-lifecycle suites share.

Instants are taken from the target's clock (the control plane's when there is one), so a run
whose clock was moved still builds windows that are open, past or future as intended.

Bodies come in two spellings. ``body`` uses the camelCase names (firstName, lastName,
identityNumber ...), which are our choice (INV-FIELD-SPELLINGS, assumed). ``documented`` uses the
request names doc1 shows (first_name, last_name, identity_number, alternative_number,
visit_type): tests that decide a normative rule send those, so that they rely on nothing the
documents leave open.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any, Self

import httpx

from amws_conformance.fixtures.timestamps import parsed as instant  # noqa: F401 (the modules of its group read it here)
from amws_conformance.fixtures.timestamps import utc_millis as iso
from amws_conformance.harness import ControlPlane, Run

INVITES = "/api/ws/v1/invites"
WATCHLISTS = "/api/ws/v1/watchlists"
# Our camelCase request names -> the request names doc1 shows.
DOCUMENTED_SPELLINGS = {
    "firstName": "first_name", "lastName": "last_name", "identityNumber": "identity_number",
    "alternativeNumber": "alternative_number", "visitType": "visit_type",
}  # fmt: skip


def documented(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the visitor fields under the request names doc1 shows."""
    return {DOCUMENTED_SPELLINGS.get(k, k): v for k, v in body.items()}


def new_host(api: Any, factories: Any) -> str:
    """A user of its own to host invitations."""
    created = api.post("/api/ws/v1/users", json=factories.user())
    assert created.status_code == 201, created.text
    return created.json()["uuid"]


def shared_host(run: Run, api: Any, factories: Any) -> dict[str, Any]:
    """The user (the body sent, with its uuid) that hosts the invitations of every test that
    only needs someone to name as host, in this module and others: naming a host changes
    nothing on the user. No test that uses it reads the host's own invitations or
    registrations (the host-view tests keep hosts of their own), nor changes the user."""

    def make() -> dict[str, Any]:
        body = factories.user()
        created = api.post("/api/ws/v1/users", json=body)
        assert created.status_code == 201, created.text
        return {**body, "uuid": created.json()["uuid"]}

    return run.shared("visits:host", make)


class InviteCalls:
    """The invitation calls of the tests, bound to the run's client, factories and a host."""

    def __init__(self, api: Any, factories: Any, host: str, control: ControlPlane | None):
        self.api, self.factories, self.host, self.control = api, factories, host, control

    @property
    def unchecked(self) -> Self:
        """These calls sent with the client's ``unchecked`` view (no global checks)."""
        calls = copy.copy(self)
        calls.api = self.api.unchecked
        return calls

    def now(self) -> datetime:
        """The target's now: its control-plane clock where it has one, else the wall clock."""
        return datetime.now(UTC) if self.control is None else self.control.now()

    def body(
        self, start_h: float = -1, hours: float = 8, host: str | None = None, **fields: Any
    ) -> dict[str, Any]:
        """A valid body (of ``host``, else the bound host) whose window starts ``start_h``
        hours from now and lasts ``hours``; a field given as None is left out."""
        start = self.now() + timedelta(hours=start_h)
        window = {"activation": iso(start), "expiry": iso(start + timedelta(hours=hours))}
        made = self.factories.invite(host or self.host, **window)
        return {k: v for k, v in {**made, **fields}.items() if v is not None}

    def documented(self, **fields: Any) -> dict[str, Any]:
        """``body(**fields)`` spelt with the request names doc1 shows (see the module doc)."""
        return documented(self.body(**fields))

    def post(self, sent: dict[str, Any] | None = None, **fields: Any) -> httpx.Response:
        return self.api.post(INVITES, json=sent if sent is not None else self.body(**fields))

    def create(self, sent: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
        """Create an invitation (``sent``, else a body of ``fields``); the answer."""
        response = self.post(sent, **fields)
        assert response.status_code == 201, response.text
        return response.json()

    def new(self, **fields: Any) -> str:
        return self.create(**fields)["registrationId"]

    def read(self, registration: str) -> dict[str, Any]:
        response = self.api.get(f"{INVITES}/{registration}")
        assert response.status_code == 200, response.text
        return response.json()

    def status(self, registration: str) -> str:
        response = self.api.get(f"{INVITES}/{registration}/status")
        assert response.status_code == 200, response.text
        assert response.json()["registrationId"] == registration
        return response.json()["status"]

    def put(self, registration: str, **fields: Any) -> httpx.Response:
        return self.api.put(f"{INVITES}/{registration}", json=fields)

    def move(self, registration: str, status: str) -> httpx.Response:
        return self.api.put(f"{INVITES}/{registration}/status", json={"status": status})

    def cancel(self, registration: str) -> httpx.Response:
        return self.api.delete(f"{INVITES}/{registration}")

    def watchlist(self, enabled: bool = True, **entry: Any) -> str:
        """A watchlist of its own holding one entry (fields as doc2 names them)."""
        made = self.api.post(WATCHLISTS, json=self.factories.watchlist(enabled=enabled))
        assert made.status_code == 201, made.text
        added = self.api.post(f"{WATCHLISTS}/{made.json()['uuid']}/entries", json=entry)
        assert added.status_code == 201, added.text
        return made.json()["uuid"]

    def last_names(self, **params: Any) -> list[str]:
        """The lastName of every list entry (a documented entry field), walked page by page."""
        return [e["lastName"] for e in self.entries(**params)]

    def entries(self, **params: Any) -> list[dict[str, Any]]:
        """Every invitation list entry, walked page by page."""
        query = {k: v for k, v in params.items() if v is not None}
        found: list[dict[str, Any]] = []
        while True:
            page = self.api.get(INVITES, params={**query, "start": len(found), "limit": 1000})
            found += page.json()["entries"]
            if not page.json()["entries"] or len(found) >= page.json()["totalCount"]:
                return found


# The windows the run's shared invitations are sent with: (activation, expiry) as (hours,
# seconds) after a whole minute a day ahead. The first is off the minute at both ends, the
# second on it; test_invites' rounding test asserts what each is stored as.
SHARED_WINDOWS = (((0, 30.5), (8, 10)), ((1, 0), (9, 0)), ((2, 0), (10, 0)))


def run_invitations(run: Run, inv: InviteCalls) -> list[dict[str, Any]]:
    """Three invitations made once per run, each for a visitor of its own (a run-tagged
    identity number), sent with the request names doc1 shows and the windows of
    :data:`SHARED_WINDOWS` from ``minute``: per invitation the body ``sent``, the ``status``,
    the ``created`` answer (each user asserts the 201 itself) and that ``minute``.

    Tests of several modules only read them: the create answer and the read, the rounding of
    the stored windows, the list walk and the visitor filter (test_invites), and the
    watchlist visitors (test_watchlist_match, whose entries name the first two visitors'
    identity numbers, so the watchlists catch those visitors: nothing else creates, updates or
    checks in an invitation for them). No test updates, moves or cancels one of them."""

    def make() -> list[dict[str, Any]]:
        minute = (inv.now() + timedelta(days=1)).replace(second=0, microsecond=0)
        made = []
        for window in SHARED_WINDOWS:
            start, end = (minute + timedelta(hours=h, seconds=s) for h, s in window)
            sent = inv.documented(
                identityNumber=inv.factories.tag("id"), activation=iso(start), expiry=iso(end)
            )
            response = inv.post(sent)
            made.append(
                {
                    "sent": sent,
                    "status": response.status_code,
                    "created": response.json(),
                    "minute": minute,
                }
            )
        return made

    return run.shared("visits:invitations", make)
