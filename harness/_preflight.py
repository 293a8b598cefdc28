"""Before any test: does the profile hold what it promises?

It checks only what the profile states: the target answers at ``base_url``, the ``full`` key
is accepted and may read and write, and each optional key behaves as its permission class
(``readonly`` reads but may not write, ``none`` may do nothing, ``disabled`` is refused,
``other_system`` reads a system of its own). A promise broken is a :class:`PreflightError`
whose one line names the profile field. Anything else it notices on the way (a create that
answers 200, another system's record answering 403) is the target's deviation from a rule,
not the profile's: it is recorded against that rule, as a test's global check would record
it, and the run goes on.

Its requests go through the run's clients like any test's: paced on each key's bucket, and
booked (under ``(preflight)``) in what the run spent.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import httpx

import spec
from harness._checks import Violation, check

if TYPE_CHECKING:
    from harness._client import TargetClient
    from harness._run import Run

_PROBE = "/api/ws/v1/departments"
PREFLIGHT = "(preflight)"
_REFUSED = {401: "refuses the key (401)", 403: "answers 403: a permission is not ticked"}


class PreflightError(Exception):
    """The profile does not hold what it promises; the message names the field."""


class _Preflight:
    """One preflight: its requests, and what it observed of the target's rules."""

    def __init__(self, target: Run) -> None:
        self.target = target
        self.profile = target.start()
        assert target.session is not None
        self.session = target.session

    def observe(self, rule: str, message: str) -> None:
        """A deviation of the target from ``rule``: reported against it, never a stop."""
        self.session.violations.append((PREFLIGHT, Violation(rule, f"preflight: {message}")))

    def send(self, key: str, method: str, path: str, **kwargs: object) -> httpx.Response:
        client = self.target.client(key)
        assert client is not None
        response = client.request(method, path, checks=False, **kwargs)  # type: ignore[arg-type]
        found = spec.match(method, path)
        if found is not None:
            body = kwargs.get("json")
            for violation in check(found[0], body, response):
                self.observe(violation.rule, f"{key}: {violation}")
        return response

    def full_key(self) -> str | None:
        """The full key reads and writes; the uuid of the record it made (None if none)."""
        listed = self.send("full", "GET", _PROBE)
        if listed.status_code == 404:
            raise PreflightError(
                f"profile field base_url: GET {self.profile.base_url}{_PROBE} answered 404; "
                "base_url is everything before /api/ws/v1"
            )
        if listed.status_code in _REFUSED:
            raise PreflightError(
                f"profile field keys.full: the target {_REFUSED[listed.status_code]}"
            )
        name = f"amws-{self.target.run_id}-preflight-{uuid.uuid4().hex[:6]}"
        created = self.send("full", "POST", _PROBE, json={"name": name})
        if created.status_code in _REFUSED:
            raise PreflightError(
                f"profile field keys.full: a write {_REFUSED[created.status_code]}"
            )
        if created.status_code != 201:
            self.observe(
                "DEPT-WRITE-ACK", f"createDepartment answered {created.status_code}, not 201"
            )
        made = self.session.ledger.pending
        return made[-1].uuid if made and made[-1].label == "createDepartment" else None

    def key_classes(self, probe: str | None) -> None:
        """Each optional key behaves as its name promises."""
        reads = {"readonly": 200, "none": 403, "disabled": 401, "rate_limit": 200, "encrypted": 200}
        for key, expected in reads.items():
            if self.profile.has_key(key):
                got = self.send(key, "GET", _PROBE).status_code
                if got != expected:
                    raise PreflightError(
                        f"profile field keys.{key}: a read answered {got}, where a key of this "
                        f"kind gets {expected}"
                    )
        if probe and self.profile.has_key("readonly"):
            answer = self.send("readonly", "PUT", f"{_PROBE}/{probe}", json={"name": "amws-x"})
            if answer.status_code != 403:
                raise PreflightError(
                    f"profile field keys.readonly: a write answered {answer.status_code}, where a "
                    "key without write permissions gets 403"
                )
        if self.profile.has_key("other_system"):
            self._other_system(probe)

    def _other_system(self, probe: str | None) -> None:
        got = self.send("other_system", "GET", _PROBE).status_code
        if got != 200:
            raise PreflightError(
                f"profile field keys.other_system: a read answered {got}, where a full key gets 200"
            )
        if probe is None:
            return
        seen = self.send("other_system", "GET", f"{_PROBE}/{probe}").status_code
        if seen == 200:
            # The key may belong to the full key's system, or the target may ignore systems:
            # the preflight cannot tell, and every isolation verdict would rest on the guess.
            raise PreflightError(
                "profile field keys.other_system: it reads the full key's records (200); "
                "give a key of another system (or the target ignores systems, "
                "CONV-SYSTEM-SCOPE-404)"
            )
        if seen != 404:
            self.observe(
                "CONV-SYSTEM-SCOPE-404", f"another system's record answered {seen}, not 404"
            )


def run(target: Run) -> None:
    """Check the profile's promises; record the deviations noticed on the way."""
    preflight = _Preflight(target)
    with preflight.session.spend.booked_to(PREFLIGHT):
        probe = preflight.full_key()
        try:
            preflight.key_classes(probe)
        finally:
            if probe is not None:
                client: TargetClient | None = target.client("full")
                assert client is not None
                client.request("DELETE", f"{_PROBE}/{probe}", checks=False)
