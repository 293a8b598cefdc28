"""Before any test: each declared key must do what its name says.

Its requests go through the run's clients like any test's: paced on each key's bucket, and
booked (under ``(preflight)``) in what the run spent.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness._run import Run

_PROBE = "/api/ws/v1/departments"
PREFLIGHT = "(preflight)"


class PreflightError(Exception):
    """A key does not behave as its profile name promises; the message names it."""


def _status(run: Run, key: str, method: str, path: str, json: Any = None) -> int:
    client = run.client(key)
    assert client is not None
    return client.request(method, path, json=json, checks=False).status_code


def run(target: Run) -> None:
    """Probe every configured key with reads (and one write/delete of our own record)."""
    profile, session = target.start(), target.session
    assert session is not None
    expectations = {
        "readonly": 200,
        "none": 403,
        "disabled": 401,
        "rate_limit": 200,
        "encrypted": 200,
    }
    full = target.client("full")
    assert full is not None
    with session.spend.booked_to(PREFLIGHT):
        listed = full.request("GET", _PROBE, checks=False)
        if listed.status_code != 200:
            raise PreflightError(f"keys.full cannot read ({_PROBE} answered {listed.status_code})")
        name = f"amws-{target.run_id}-preflight-{uuid.uuid4().hex[:6]}"
        created = full.request("POST", _PROBE, json={"name": name}, checks=False)
        if created.status_code != 201:
            raise PreflightError(
                f"keys.full cannot write ({_PROBE} answered {created.status_code})"
            )
        probe = created.json()["uuid"]
        try:
            for key, status in expectations.items():
                if not profile.has_key(key):
                    continue
                got = _status(target, key, "GET", _PROBE)
                if got != status:
                    raise PreflightError(f"keys.{key} answered {got} to a read, expected {status}")
            if profile.has_key("readonly"):
                got = _status(
                    target, "readonly", "PUT", f"{_PROBE}/{probe}", json={"name": name + "-x"}
                )
                if got != 403:
                    raise PreflightError(f"keys.readonly answered {got} to a write, expected 403")
            if profile.has_key("other_system"):
                got = _status(target, "other_system", "GET", f"{_PROBE}/{probe}")
                if got != 404:
                    raise PreflightError(
                        "keys.other_system sees the full key's records "
                        f"(answered {got}, expected 404)"
                    )
        finally:
            full.request("DELETE", f"{_PROBE}/{probe}", checks=False)
