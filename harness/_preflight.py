"""Before any test: each declared key must do what its name says."""

from __future__ import annotations

import uuid

import httpx

from harness._profile import Profile

_PROBE = "/api/ws/v1/departments"


class PreflightError(Exception):
    """A key does not behave as its profile name promises; the message names it."""


def _client(profile: Profile, name: str) -> httpx.Client:
    return httpx.Client(
        base_url=profile.base_url, headers={"Authorization": profile.key(name) or ""}, timeout=30
    )


def run(profile: Profile, run_id: str) -> None:
    """Probe every configured key with reads (and one write/delete of our own record)."""
    expectations = {
        "readonly": 200,
        "none": 403,
        "disabled": 401,
        "rate_limit": 200,
        "encrypted": 200,
    }
    with _client(profile, "full") as full:
        listed = full.get(_PROBE)
        if listed.status_code != 200:
            raise PreflightError(f"keys.full cannot read ({_PROBE} answered {listed.status_code})")
        name = f"amws-{run_id}-preflight-{uuid.uuid4().hex[:6]}"
        created = full.post(_PROBE, json={"name": name})
        if created.status_code != 201:
            raise PreflightError(
                f"keys.full cannot write ({_PROBE} answered {created.status_code})"
            )
        probe = created.json()["uuid"]
        try:
            for key, status in expectations.items():
                if not profile.has_key(key):
                    continue
                with _client(profile, key) as client:
                    got = client.get(_PROBE).status_code
                if got != status:
                    raise PreflightError(f"keys.{key} answered {got} to a read, expected {status}")
            if profile.has_key("readonly"):
                with _client(profile, "readonly") as client:
                    got = client.put(f"{_PROBE}/{probe}", json={"name": name + "-x"}).status_code
                if got != 403:
                    raise PreflightError(f"keys.readonly answered {got} to a write, expected 403")
            if profile.has_key("other_system"):
                with _client(profile, "other_system") as client:
                    got = client.get(f"{_PROBE}/{probe}").status_code
                if got != 404:
                    raise PreflightError(
                        "keys.other_system sees the full key's records "
                        f"(answered {got}, expected 404)"
                    )
        finally:
            full.delete(f"{_PROBE}/{probe}")
