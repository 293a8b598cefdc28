"""What the credential suites share (rules/test_credential_lifecycle.py and
hardware/test_controller_credentials.py): issuing, writing and reading credentials, windows
placed on the target's clock, and what the controllers hold (control plane)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from harness import ControlPlane

CREDENTIALS = "/api/ws/v1/credentials"
DAY = 86400  # seconds


def text(moment: datetime) -> str:
    """An instant in the request format, UTC with milliseconds."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def window(now: datetime, start: float, end: float) -> dict[str, str]:
    """activeDate and expiryDate ``start`` and ``end`` seconds from ``now``."""
    return {
        "activeDate": text(now + timedelta(seconds=start)),
        "expiryDate": text(now + timedelta(seconds=end)),
    }


def holder(api: Any, factories: Any) -> str:
    """A new person to hold credentials: its uuid."""
    person = api.post("/api/ws/v1/persons", json=factories.person())
    assert person.status_code == 201, person.text
    return person.json()["uuid"]


def issue(api: Any, factories: Any, person: str | None = None, **overrides: Any) -> str:
    """A credential of ``person`` (a fresh person where None); an override given as None is
    left out of the body."""
    body = factories.credential(personUuid=person or holder(api, factories), **overrides)
    response = api.post(CREDENTIALS, json={k: v for k, v in body.items() if v is not None})
    assert response.status_code == 201, (response.status_code, response.text)
    return response.json()["uuid"]


def read(api: Any, uuid: str) -> dict[str, Any]:
    response = api.get(f"{CREDENTIALS}/{uuid}")
    assert response.status_code == 200, response.text
    return response.json()


def status(api: Any, uuid: str) -> str:
    return read(api, uuid)["status"]


def put(api: Any, uuid: str, body: dict[str, Any]) -> None:
    response = api.put(f"{CREDENTIALS}/{uuid}", json=body)
    assert response.status_code == 200, (response.status_code, response.text)


def lists(api: Any, needed: int) -> list[str]:
    """The target's access control lists; the test skips where it has fewer than ``needed``."""
    found = [a["uuid"] for a in api.get("/api/ws/v1/access-control-lists").json()]
    if len(found) < needed:
        pytest.skip(f"not configured: the target has fewer than {needed} access control lists")
    return found


def held(control: ControlPlane) -> dict[str, dict[str, Any]]:
    """Every credential any controller holds now, by uuid."""
    controllers = control.controller_credentials()
    return {c["uuid"]: c for controller in controllers for c in controller["credentials"]}
