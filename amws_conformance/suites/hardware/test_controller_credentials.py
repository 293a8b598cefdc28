"""What the simulated controllers hold: exactly the ACTIVE credentials, kept in step with every
status change, window change and list assignment, and with the clock (VALID turns ACTIVE when
the window opens, ACTIVE turns EXPIRED when it closes).

Only the reference server's control plane shows the controllers, so every test needs
``control``; time is moved with the control plane's clock, by minutes.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from amws_conformance.suites import _credentials as cred
from amws_conformance.suites._credentials import CREDENTIALS, DAY

pytestmark = pytest.mark.requires("control")


@pytest.fixture
def holder(request: pytest.FixtureRequest, api: Any, factories: Any) -> str:
    """The run's holder of credentials (suites/_credentials.py): no test here reads, changes or
    deletes the holder, and what the controllers hold is checked per credential, so a person
    per credential would only add a create and a cleanup delete."""
    return cred.run_holder(request, api, factories)


# -- only ACTIVE credentials -------------------------------------------------------------
@pytest.mark.rule("CRED-HARDWARE-ACTIVE-ONLY")
def test_controllers_hold_exactly_the_active_credentials(api, factories, holder, control) -> None:
    now = control.now()
    made = {
        "ACTIVE": cred.issue(api, factories, holder, **cred.window(now, -DAY, 30 * DAY)),
        "VALID": cred.issue(api, factories, holder, **cred.window(now, 5 * DAY, 30 * DAY)),
        "EXPIRED": cred.issue(api, factories, holder, **cred.window(now, -30 * DAY, -DAY)),
        "DISABLED": cred.issue(api, factories, holder, **cred.window(now, -DAY, 30 * DAY)),
        "DELETED": cred.issue(api, factories, holder, **cred.window(now, -DAY, 30 * DAY)),
    }
    for status in ("LOST", "STOLEN", "DESTROYED"):
        made[status] = cred.issue(
            api, factories, holder, status=status, **cred.window(now, -DAY, 30 * DAY)
        )
    cred.put(api, made["DISABLED"], {"status": "DISABLED"})
    assert api.delete(f"{CREDENTIALS}/{made['DELETED']}").status_code == 200
    held = cred.held(control)
    for status, uuid in made.items():
        assert cred.status(api, uuid) == status
        assert (uuid in held) is (status == "ACTIVE"), status
    assert held[made["ACTIVE"]]["status"] == "ACTIVE"


@pytest.mark.rule("CRED-ENABLED-FLAG")
def test_credential_created_disabled_is_not_on_the_controllers(
    request, api, factories, holder, control
) -> None:
    # The run's plain credential was made with enabled true and its window open now
    # (suites/_credentials.py); this one differs from it in the flag only.
    enabled = cred.pair(request, api, factories).plain
    assert enabled.body["enabled"] is True
    open_now = {k: enabled.body[k] for k in ("activeDate", "expiryDate")}
    disabled = cred.issue(api, factories, holder, enabled=False, **open_now)
    held = cred.held(control)
    assert enabled.uuid in held  # the same credential with enabled true is live
    assert disabled not in held


@pytest.mark.rule("CRED-HARDWARE-ACTIVE-ONLY", "CRED-WRITE-PUSHED", "CRED-PUT-STATUS-OTHER")
def test_every_status_change_is_pushed(api, factories, holder, control) -> None:
    uuid = cred.issue(api, factories, holder)
    steps = [("DISABLED", False), ("ACTIVE", True), ("LOST", False), ("ACTIVE", True)]
    steps += [("STOLEN", False), ("ACTIVE", True), ("DELETED", False)]
    for status, on_hardware in steps:
        cred.put(api, uuid, {"status": status})
        assert (uuid in cred.held(control)) is on_hardware, status
        assert cred.status(api, uuid) == status


@pytest.mark.rule("CRED-HARDWARE-ACTIVE-ONLY", "CRED-WRITE-PUSHED", "CRED-PUT-FIELDS")
def test_every_window_change_is_pushed(api, factories, holder, control) -> None:
    now = control.now()
    uuid = cred.issue(api, factories, holder, **cred.window(now, -DAY, 30 * DAY))
    assert uuid in cred.held(control)
    cred.put(api, uuid, {"expiryDate": cred.text(now - timedelta(hours=1))})  # closed: EXPIRED
    assert uuid not in cred.held(control)
    cred.put(api, uuid, cred.window(now, 2 * DAY, 30 * DAY))  # not open yet: VALID
    assert uuid not in cred.held(control)
    window = cred.window(now, -2 * DAY, 20 * DAY)
    cred.put(api, uuid, window)  # open again: ACTIVE, with the new window
    held = cred.held(control)[uuid]
    assert cred.instant(held["activeDate"]) == cred.instant(window["activeDate"])
    assert cred.instant(held["expiryDate"]) == cred.instant(window["expiryDate"])


# -- the clock ---------------------------------------------------------------------------
@pytest.mark.rule("CRED-VALID-TO-ACTIVE", "CRED-HARDWARE-ACTIVE-ONLY")
def test_valid_credential_is_pushed_when_its_window_opens(
    api, factories, holder, control, restored_clock
) -> None:
    uuid = cred.issue(api, factories, holder, **cred.window(control.now(), 60, 2 * DAY))
    assert uuid not in cred.held(control)
    restored_clock(120)
    assert cred.held(control)[uuid]["status"] == "ACTIVE"
    assert cred.status(api, uuid) == "ACTIVE"


@pytest.mark.rule("CRED-ACTIVE-TO-EXPIRED", "CRED-HARDWARE-ACTIVE-ONLY")
def test_expired_credential_is_withdrawn_when_its_window_closes(
    api, factories, holder, control, restored_clock
) -> None:
    uuid = cred.issue(api, factories, holder, **cred.window(control.now(), -DAY, 60))
    assert uuid in cred.held(control)
    restored_clock(120)
    assert uuid not in cred.held(control)
    assert cred.status(api, uuid) == "EXPIRED"


# -- list assignment ---------------------------------------------------------------------
@pytest.mark.rule("CRED-PUT-ACL-REPLACE", "CRED-PUT-ACL-EMPTY", "CRED-PUT-ACL-OMITTED")
def test_list_assignment_on_the_controllers(api, factories, holder, control) -> None:
    first, second = cred.lists(api, 2)[:2]
    uuid = cred.issue(api, factories, holder, accessControlListUuids=[first])
    assert cred.held(control)[uuid]["accessControlListUuids"] == [first]
    cred.put(api, uuid, {"accessControlListUuids": [second]})
    assert cred.held(control)[uuid]["accessControlListUuids"] == [second]
    cred.put(api, uuid, {"comments": "lists left out"})
    assert cred.held(control)[uuid]["accessControlListUuids"] == [second]
    cred.put(api, uuid, {"accessControlListUuids": []})
    held = cred.held(control)[uuid]
    assert held["accessControlListUuids"] == []
    assert held["points"] == []  # it opens nothing
