"""Credential windows driven as a state machine against the control-plane clock.

The model holds each credential the machine issued: its window, or the status a PUT or DELETE
gave it, and how far the machine has moved the target's clock. After every step it reads each
credential back and looks at what the controllers hold:

* with no explicit status, a credential reads VALID before its window opens, ACTIVE inside it
  and EXPIRED once it has closed, whether the window came from the create, from a later PUT
  (also one that revives an EXPIRED credential) or from the clock moving on;
* a PUT with status DISABLED and a DELETE leave it DISABLED or DELETED, still readable;
* the controllers hold exactly the machine's ACTIVE credentials, none of the others.

Window edges sit half an hour off the whole hours counted from the run's first clock reading,
and the clock moves by whole hours, so the seconds of real time a run takes never leave a
credential on an edge where either status would be right.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from amws_conformance.suites._credentials import held, text
from amws_conformance.suites.stateful._machine import API, Calls, Ref, for_run, machine_settings

SETTINGS = machine_settings(steps=12)
CREDENTIALS = f"{API}/credentials"
MOST = 5  # credentials one run issues at most
HOUR = timedelta(hours=1)
STARTS = st.integers(-3, 3)  # the window opens this many hours (and a half) from now
LENGTHS = st.integers(1, 5)  # and stays open this many hours
ADVANCES = st.sampled_from((1, 2, 5, 24))  # hours the clock moves on in one step


class CredentialWindowMachine(RuleBasedStateMachine):
    credentials = Bundle("credentials")

    def __init__(self, api: Any, control: Any, advance: Any, factories: Any, setup: Any) -> None:
        super().__init__()
        self.call = Calls(api, setup["run_id"])
        self.call.labels[setup["person"].lower()] = "holder"
        self.control, self.advance, self.f = control, advance, factories
        self.person = setup["person"]
        self.now: datetime = control.now()  # the model's clock: the target's, less real time
        self.windows: dict[str, tuple[datetime, datetime]] = {}
        self.fixed: dict[str, str] = {}  # credential uuid -> DISABLED or DELETED
        self.refs: dict[str, Ref] = {}

    # -- the model -------------------------------------------------------------------------
    def _window(self, start: int, length: int) -> dict[str, str]:
        opens = self.now + start * HOUR + HOUR / 2
        self._last = (opens, opens + length * HOUR)
        return {"activeDate": text(self._last[0]), "expiryDate": text(self._last[1])}

    def expected(self, uuid: str) -> str:
        if uuid in self.fixed:
            return self.fixed[uuid]
        opens, closes = self.windows[uuid]
        return "VALID" if self.now < opens else "ACTIVE" if self.now < closes else "EXPIRED"

    # -- steps ---------------------------------------------------------------------------------
    @initialize()
    def note_the_clock(self) -> None:
        note(f"target clock at {text(self.now)}; windows are placed from it")

    @precondition(lambda self: len(self.refs) < MOST)
    @rule(target=credentials, start=STARTS, length=LENGTHS)
    def issue(self, start: int, length: int) -> Ref:
        body = {**self.f.credential(personUuid=self.person), **self._window(start, length)}
        ref = self.call.created("credential", CREDENTIALS, body)
        self.refs[ref.uuid], self.windows[ref.uuid] = ref, self._last
        return ref

    @rule(credential=credentials, start=STARTS, length=LENGTHS)
    def move_the_window(self, credential: Ref, start: int, length: int) -> None:
        path = f"{CREDENTIALS}/{credential.uuid}"
        self.call("PUT", path, json=self._window(start, length), expect=200)
        self.windows[credential.uuid] = self._last

    @rule(credential=consumes(credentials))
    def disable(self, credential: Ref) -> None:
        path = f"{CREDENTIALS}/{credential.uuid}"
        self.call("PUT", path, json={"status": "DISABLED"}, expect=200)
        self.fixed[credential.uuid] = "DISABLED"

    @rule(credential=consumes(credentials))
    def delete(self, credential: Ref) -> None:
        self.call("DELETE", f"{CREDENTIALS}/{credential.uuid}", expect=200)
        self.fixed[credential.uuid] = "DELETED"

    @rule(hours=ADVANCES)
    def let_time_pass(self, hours: int) -> None:
        note(f"clock +{hours} h")
        self.advance(hours * 3600)
        self.now += hours * HOUR

    # -- what must hold after every step -----------------------------------------------------
    @invariant()
    def statuses_follow_the_windows(self) -> None:
        for uuid, ref in self.refs.items():
            read = self.call("GET", f"{CREDENTIALS}/{uuid}", expect=200, quiet=True).json()
            assert read["status"] == self.expected(uuid), (
                f"{ref.label} reads {read['status']}, the model expects {self.expected(uuid)} "
                f"(clock moved to {text(self.now)})"
            )

    @invariant()
    def controllers_hold_exactly_the_active_ones(self) -> None:
        if not self.refs:
            return
        holding = set(held(self.control)) & set(self.refs)
        active = {u for u in self.refs if self.expected(u) == "ACTIVE"}
        assert holding == active, (
            f"controllers hold {sorted(self.refs[u].label for u in holding)}, the model's ACTIVE "
            f"ones are {sorted(self.refs[u].label for u in active)}"
        )


@pytest.fixture
def setup(api, factories, run_id) -> dict[str, Any]:
    person = api.post(f"{API}/persons", json=factories.person())
    assert person.status_code == 201, f"setup person: {person.text}"
    return {"person": person.json()["uuid"], "run_id": run_id}


@pytest.mark.requires("control")
@pytest.mark.rule(
    "CRED-STATUS-DEFAULT",
    "CRED-VALID-TO-ACTIVE",
    "CRED-ACTIVE-TO-EXPIRED",
    "CRED-HARDWARE-ACTIVE-ONLY",
    "CRED-PUT-FIELDS",
    "CRED-PUT-STATUS-DISABLED",
    "CRED-PUT-STATUS-DELETED",
    "CRED-EXPIRED-EXTEND",
    "CRED-DELETE-HARDWARE",
)
def test_credential_windows_follow_the_clock(
    api, control, restored_clock, factories, setup, amws_run, example_budget
) -> None:
    run_state_machine_as_test(
        lambda: CredentialWindowMachine(api, control, restored_clock, factories, setup),
        settings=for_run(SETTINGS, amws_run, example_budget),
    )
