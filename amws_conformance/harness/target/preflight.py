"""Before any test: does the profile hold what it promises?

It checks only what the profile states: the target answers at ``base_url``, the ``full`` key
is accepted and may read and write, and each optional key behaves as its permission class
(``readonly`` reads but may not write, ``none`` may do nothing, ``disabled`` is refused,
``other_system`` reads a system of its own). Only an unusable profile stops the run: no answer
at ``base_url``, or ``keys.full`` refused; that is a :class:`PreflightError` whose one line
names the profile field. An optional key that behaves otherwise than its class may be a
profile that gives the wrong key or a target that does not enforce the class: the preflight
cannot tell which, so it names the key and both causes (``Run.key_problems``), and the tests
that need that key read undecided while every other test runs. Anything else it notices on
the way (a create that answers 200, another system's record answering 403) is the target's
deviation from a rule, not the profile's: it is recorded against that rule, as a test's global
check would record it, and the run goes on.

Its requests go through the run's clients like any test's: paced on each key's bucket, and
booked (under ``(preflight)``) in what the run spent.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import httpx

from amws_conformance import spec
from amws_conformance.harness._checks import Violation, check
from amws_conformance.harness.target.client import TargetClient
from amws_conformance.harness.target.profile import KEY_NAMES

if TYPE_CHECKING:
    from amws_conformance.harness._run import Run

_PROBE = "/api/ws/v1/departments"
PREFLIGHT = "(preflight)"
_REFUSED = {401: "refuses the key (401)", 403: "answers 403: a permission is not ticked"}
# Why an optional key may not behave as its class: the profile or the target.
_CAUSES = {
    "readonly": "the profile gives a key with other permissions than every Read and no Write, "
    "or the target does not enforce the permissions (AUTH-PERMISSION-READ-WRITE)",
    "none": "the profile gives a key with a permission ticked, or the target does not enforce "
    "the permissions (AUTH-PERMISSION-READ-WRITE)",
    "disabled": "the profile gives a key that is enabled or not a key at all, or the target "
    "does not refuse disabled keys with 401 (AUTH-DISABLED-KEY-401)",
    "rate_limit": "the profile gives a key without every permission, or the target refuses it",
    "encrypted": "the profile gives a key without every permission, or the target refuses it",
    "other_system": "the profile gives a key without every permission of its own system, or "
    "the target refuses it",
}


# What a read, and a write of the preflight's own record, answer with a key of each class.
_READS = {
    "full": 200,
    "readonly": 200,
    "none": 403,
    "disabled": 401,
    "rate_limit": 200,
    "encrypted": 200,
    "other_system": 200,
}
_WRITES = {"full": 200, "readonly": 403}


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

    def send(
        self, key: str, method: str, path: str, *, via: TargetClient | None = None, **kwargs: object
    ) -> httpx.Response:
        client = via or self.target.client(key)
        assert client is not None
        response = client.unchecked.request(method, path, **kwargs)  # type: ignore[arg-type]
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

    def misbehaves(self, key: str, seen: str, causes: str) -> None:
        """``keys.<key>`` did not behave as its class: its tests will read undecided."""
        self.target.key_problems[key] = f"keys.{key}: {seen}; either {causes}"

    def key_classes(self, probe: str | None) -> None:
        """Each optional key behaves as its name promises."""
        # full was checked first (it stops the run); other_system has checks of its own.
        for key, expected in _READS.items():
            if key not in ("full", "other_system") and self.profile.has_key(key):
                got = self.send(key, "GET", _PROBE).status_code
                if got != expected:
                    self.misbehaves(
                        key,
                        f"a read answered {got}, where a key of this kind gets {expected}",
                        _CAUSES[key],
                    )
        readonly = self.profile.has_key("readonly") and "readonly" not in self.target.key_problems
        if probe and readonly:
            answer = self.send("readonly", "PUT", f"{_PROBE}/{probe}", json={"name": "amws-x"})
            if answer.status_code != _WRITES["readonly"]:
                self.misbehaves(
                    "readonly",
                    f"a write answered {answer.status_code}, where a key without write "
                    f"permissions gets {_WRITES['readonly']}",
                    _CAUSES["readonly"],
                )
        if self.profile.has_key("other_system"):
            self._other_system(probe)

    def pools(self, probe: str | None) -> None:
        """Each further key of a pool behaves as the pool's first: the same answer to a read,
        and, for the full and readonly classes, to a write of the probe record. A key that
        does not is left out of the pool and named; the run goes on with the others (the
        first key stands for its class: it was checked above)."""
        for name in KEY_NAMES:
            client = self.target.client(name) if len(self.profile.pool(name)) > 1 else None
            if client is None or name in self.target.key_problems:
                continue
            odd: list[str] = []
            for key in client.keys.keys[1:]:
                with client.only(key) as member:
                    seen = self._member(name, member, probe)
                if seen is not None:
                    odd.append(key.label)
                    self.target.pool_problems[key.label] = (
                        f"keys.{key.label}: {seen}, unlike keys.{name}[0]; left out of the pool "
                        "(the profile gives a key of another kind, or the target treats this key "
                        "otherwise)"
                    )
            client.keys.drop(odd)

    def _member(self, name: str, member: TargetClient, probe: str | None) -> str | None:
        """What a pool's further key did otherwise than its class, or None."""
        got = self.send(name, "GET", _PROBE, via=member).status_code
        if got != _READS[name]:
            return f"a read answered {got}, not {_READS[name]}"
        if probe is not None and name in _WRITES:
            body = {"name": f"amws-{self.target.run_id}-preflight"}
            got = self.send(name, "PUT", f"{_PROBE}/{probe}", via=member, json=body).status_code
            if got != _WRITES[name]:
                return f"a write of the preflight's record answered {got}, not {_WRITES[name]}"
        return None

    def _other_system(self, probe: str | None) -> None:
        got = self.send("other_system", "GET", _PROBE).status_code
        if got != 200:
            self.misbehaves(
                "other_system",
                f"a read answered {got}, where a full key gets 200",
                _CAUSES["other_system"],
            )
            return
        if probe is None:
            return
        seen = self.send("other_system", "GET", f"{_PROBE}/{probe}").status_code
        if seen == 200:
            # The key may belong to the full key's system, or the target may ignore systems:
            # the preflight cannot tell, and every isolation verdict would rest on the guess.
            self.misbehaves(
                "other_system",
                "it reads the full key's records (200)",
                "the profile gives a key of the full key's own system, or the target ignores "
                "systems (CONV-SYSTEM-SCOPE-404)",
            )
            return
        if seen != 404:
            self.observe(
                "CONV-SYSTEM-SCOPE-404", f"another system's record answered {seen}, not 404"
            )


def run(target: Run) -> None:
    """Check the profile's promises; record the deviations noticed on the way."""
    preflight = _Preflight(target)
    # The first key of each pool stands for its class: the checks send with it alone.
    preflight.session.pinned = True
    probe = None
    try:
        with preflight.session.spend.booked_to(PREFLIGHT):
            try:
                probe = preflight.full_key()
                preflight.key_classes(probe)
                preflight.pools(probe)
            finally:
                if probe is not None:
                    client: TargetClient | None = target.client("full")
                    assert client is not None
                    client.unchecked.request("DELETE", f"{_PROBE}/{probe}")
    finally:
        preflight.session.pinned = False
