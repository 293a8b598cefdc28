"""What the simulated controllers hold: exactly the ACTIVE credentials, kept in step with every
status change, window change and list assignment, and with the clock (VALID turns ACTIVE when
the window opens, ACTIVE turns EXPIRED when it closes).

Only the reference server's control plane shows the controllers, so every test needs
``control``; time is moved with the control plane's clock, by minutes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

CREDENTIALS = "/api/ws/v1/credentials"

pytestmark = pytest.mark.requires("control")


# -- helpers -----------------------------------------------------------------------------
def _path(control: Any, tail: str) -> str:
    """A control-plane path, whether the profile's control url ends in /_reference or not."""
    base = control.base_url.path.rstrip("/")
    return tail if base.endswith("/_reference") else f"/_reference/{tail}"


def _held(control: Any) -> dict[str, dict[str, Any]]:
    """Every credential any controller holds now, by uuid."""
    response = control.get(_path(control, "hardware/credentials"))
    assert response.status_code == 200, response.text
    return {c["uuid"]: c for controller in response.json() for c in controller["credentials"]}


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _text(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _now(control: Any) -> datetime:
    response = control.get(_path(control, "clock"))
    assert response.status_code == 200, response.text
    return _instant(response.json()["now"])


def _advance(control: Any, seconds: int) -> None:
    response = control.put(_path(control, "clock"), json={"advance_seconds": seconds})
    assert response.status_code == 200, response.text


def _window(now: datetime, start: float, end: float) -> dict[str, str]:
    """activeDate and expiryDate ``start`` and ``end`` seconds from ``now``."""
    return {
        "activeDate": _text(now + timedelta(seconds=start)),
        "expiryDate": _text(now + timedelta(seconds=end)),
    }


def _issue(api: Any, factories: Any, **overrides: Any) -> str:
    person = api.post("/api/ws/v1/persons", json=factories.person())
    assert person.status_code == 201, person.text
    body = factories.credential(personUuid=person.json()["uuid"], **overrides)
    response = api.post(CREDENTIALS, json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def _put(api: Any, uuid: str, body: dict[str, Any]) -> None:
    response = api.put(f"{CREDENTIALS}/{uuid}", json=body)
    assert response.status_code == 200, (response.status_code, response.text)


def _status(api: Any, uuid: str) -> str:
    response = api.get(f"{CREDENTIALS}/{uuid}")
    assert response.status_code == 200, response.text
    return response.json()["status"]


def _lists(api: Any, needed: int) -> list[str]:
    lists = [a["uuid"] for a in api.get("/api/ws/v1/access-control-lists").json()]
    if len(lists) < needed:
        pytest.skip(f"not configured: the target has fewer than {needed} access control lists")
    return lists


DAY = 86400


# -- only ACTIVE credentials -------------------------------------------------------------
@pytest.mark.rule("CRED-HARDWARE-ACTIVE-ONLY")
def test_controllers_hold_exactly_the_active_credentials(api, factories, control) -> None:
    now = _now(control)
    made = {
        "ACTIVE": _issue(api, factories, **_window(now, -DAY, 30 * DAY)),
        "VALID": _issue(api, factories, **_window(now, 5 * DAY, 30 * DAY)),
        "EXPIRED": _issue(api, factories, **_window(now, -30 * DAY, -DAY)),
        "DISABLED": _issue(api, factories, **_window(now, -DAY, 30 * DAY)),
        "DELETED": _issue(api, factories, **_window(now, -DAY, 30 * DAY)),
    }
    for status in ("LOST", "STOLEN", "DESTROYED"):
        made[status] = _issue(api, factories, status=status, **_window(now, -DAY, 30 * DAY))
    _put(api, made["DISABLED"], {"status": "DISABLED"})
    assert api.delete(f"{CREDENTIALS}/{made['DELETED']}").status_code == 200
    held = _held(control)
    for status, uuid in made.items():
        assert _status(api, uuid) == status
        assert (uuid in held) is (status == "ACTIVE"), status
    assert held[made["ACTIVE"]]["status"] == "ACTIVE"


@pytest.mark.rule("CRED-HARDWARE-ACTIVE-ONLY", "CRED-WRITE-PUSHED", "CRED-PUT-STATUS-OTHER")
def test_every_status_change_is_pushed(api, factories, control) -> None:
    uuid = _issue(api, factories)
    steps = [("DISABLED", False), ("ACTIVE", True), ("LOST", False), ("ACTIVE", True)]
    steps += [("STOLEN", False), ("ACTIVE", True), ("DELETED", False)]
    for status, on_hardware in steps:
        _put(api, uuid, {"status": status})
        assert (uuid in _held(control)) is on_hardware, status
        assert _status(api, uuid) == status


@pytest.mark.rule("CRED-HARDWARE-ACTIVE-ONLY", "CRED-WRITE-PUSHED", "CRED-PUT-FIELDS")
def test_every_window_change_is_pushed(api, factories, control) -> None:
    now = _now(control)
    uuid = _issue(api, factories, **_window(now, -DAY, 30 * DAY))
    assert uuid in _held(control)
    _put(api, uuid, {"expiryDate": _text(now - timedelta(hours=1))})  # closed: EXPIRED
    assert uuid not in _held(control)
    _put(api, uuid, _window(now, 2 * DAY, 30 * DAY))  # not open yet: VALID
    assert uuid not in _held(control)
    window = _window(now, -2 * DAY, 20 * DAY)
    _put(api, uuid, window)  # open again: ACTIVE, with the new window
    held = _held(control)[uuid]
    assert _instant(held["activeDate"]) == _instant(window["activeDate"])
    assert _instant(held["expiryDate"]) == _instant(window["expiryDate"])


# -- the clock ---------------------------------------------------------------------------
@pytest.mark.rule("CRED-VALID-TO-ACTIVE", "CRED-HARDWARE-ACTIVE-ONLY")
def test_valid_credential_is_pushed_when_its_window_opens(api, factories, control) -> None:
    uuid = _issue(api, factories, **_window(_now(control), 60, 2 * DAY))
    assert uuid not in _held(control)
    _advance(control, 120)
    assert _held(control)[uuid]["status"] == "ACTIVE"
    assert _status(api, uuid) == "ACTIVE"


@pytest.mark.rule("CRED-ACTIVE-TO-EXPIRED", "CRED-HARDWARE-ACTIVE-ONLY")
def test_expired_credential_is_withdrawn_when_its_window_closes(api, factories, control) -> None:
    uuid = _issue(api, factories, **_window(_now(control), -DAY, 60))
    assert uuid in _held(control)
    _advance(control, 120)
    assert uuid not in _held(control)
    assert _status(api, uuid) == "EXPIRED"


# -- list assignment ---------------------------------------------------------------------
@pytest.mark.rule("CRED-PUT-ACL-REPLACE", "CRED-PUT-ACL-EMPTY", "CRED-PUT-ACL-OMITTED")
def test_list_assignment_on_the_controllers(api, factories, control) -> None:
    first, second = _lists(api, 2)[:2]
    uuid = _issue(api, factories, accessControlListUuids=[first])
    assert _held(control)[uuid]["accessControlListUuids"] == [first]
    _put(api, uuid, {"accessControlListUuids": [second]})
    assert _held(control)[uuid]["accessControlListUuids"] == [second]
    _put(api, uuid, {"comments": "lists left out"})
    assert _held(control)[uuid]["accessControlListUuids"] == [second]
    _put(api, uuid, {"accessControlListUuids": []})
    held = _held(control)[uuid]
    assert held["accessControlListUuids"] == []
    assert held["points"] == []  # it opens nothing
