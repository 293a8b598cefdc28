"""Invitations driven through the visit lifecycle as a state machine against a model.

The model holds each invitation's status, the comment last stored on it and whether the visit
was checked in or out. Steps ask for every status move (also the ones the lifecycle refuses and
the values it does not take), update, repeat an update unchanged, and withdraw. The model says:

* a new invitation is VISIT_CREATED; an update of a visit not yet arrived makes it VISIT_UPDATED,
  of a checked-in visit keeps its status, of an ended visit answers 409; repeating the stored
  values answers 425 and moves nothing;
* before arrival a visit may be checked in, marked no-show, cancelled or denied; a checked-in
  visit may only be checked out; an ended visit takes no move (409); a status outside the five
  movable ones answers 422;
* the status read agrees with the invitation read, which shows arrivedAt once checked in and
  leftAt once checked out; a withdrawn invitation reads 404.

Most of these rules are assumed (the documents name the operations but not their shapes), so
this machine informs certification rather than deciding it, except INV-UPDATE-IDENTICAL-425.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from amws_conformance.suites.rules._invites import INVITES, InviteCalls, new_host
from amws_conformance.suites.stateful._machine import Calls, Ref, for_run, machine_settings

SETTINGS = machine_settings(steps=12)
MOST = 4  # invitations one run registers at most
PRE_ARRIVAL = frozenset({"VISIT_CREATED", "VISIT_UPDATED"})
MOVES = {  # the moves changeInviteStatus makes, from each status that has any
    "VISIT_CREATED": {"VISITOR_CHECK_IN", "VISIT_NO_SHOW", "VISIT_CANCELLED", "VISIT_DENIED"},
    "VISIT_UPDATED": {"VISITOR_CHECK_IN", "VISIT_NO_SHOW", "VISIT_CANCELLED", "VISIT_DENIED"},
    "VISITOR_CHECK_IN": {"VISITOR_CHECK_OUT"},
}
MOVABLE = sorted(MOVES["VISIT_CREATED"] | MOVES["VISITOR_CHECK_IN"])
NOT_MOVABLE = ["VISIT_CREATED", "VISIT_UPDATED", "VISITOR_ON_SITE"]


class VisitMachine(RuleBasedStateMachine):
    invites = Bundle("invites")

    def __init__(self, api: Any, calls: InviteCalls, run_id: str) -> None:
        super().__init__()
        self.call, self.invites_api = Calls(api, run_id), calls
        self.call.labels[calls.host.lower()] = "host"
        self.status: dict[str, str] = {}
        self.comments: dict[str, str] = {}
        self.arrived: set[str] = set()
        self.left: set[str] = set()
        self.refs: dict[str, Ref] = {}
        self.withdrawn: list[Ref] = []

    def _path(self, ref: Ref, tail: str = "") -> str:
        return f"{INVITES}/{ref.uuid}{tail}"

    # -- steps ---------------------------------------------------------------------------------
    @precondition(lambda self: len(self.refs) < MOST)
    @rule(target=invites)
    def register(self) -> Ref:
        body = self.invites_api.body(comments="registered")
        ref = self.call.created("invite", INVITES, body)
        self.refs[ref.uuid], self.status[ref.uuid] = ref, "VISIT_CREATED"
        self.comments[ref.uuid] = "registered"
        return ref

    @rule(invite=invites, status=st.sampled_from(MOVABLE + NOT_MOVABLE))
    def ask_for_a_move(self, invite: Ref, status: str) -> None:
        now = self.status[invite.uuid]
        allowed = MOVES.get(now, set())
        expected = 422 if status in NOT_MOVABLE else 200 if status in allowed else 409
        self.call("PUT", self._path(invite, "/status"), json={"status": status}, expect=expected)
        if expected == 200:
            self.status[invite.uuid] = status
            self.arrived |= {invite.uuid} if status == "VISITOR_CHECK_IN" else set()
            self.left |= {invite.uuid} if status == "VISITOR_CHECK_OUT" else set()

    @rule(invite=invites, text=st.sampled_from(("moved to noon", "bring ID", "parking B")))
    def update(self, invite: Ref, text: str) -> None:
        self._update(invite, text)

    @rule(invite=invites)
    def repeat_the_stored_comment(self, invite: Ref) -> None:
        self._update(invite, self.comments[invite.uuid])

    def _update(self, invite: Ref, text: str) -> None:
        now = self.status[invite.uuid]
        ended = now not in PRE_ARRIVAL and now != "VISITOR_CHECK_IN"
        same = self.comments[invite.uuid] == text
        expected = 409 if ended else 425 if same else 200
        self.call("PUT", self._path(invite), json={"comments": text}, expect=expected)
        if expected == 200:
            self.comments[invite.uuid] = text
            if now in PRE_ARRIVAL:
                self.status[invite.uuid] = "VISIT_UPDATED"

    @rule(invite=consumes(invites))
    def withdraw(self, invite: Ref) -> None:
        self.call("DELETE", self._path(invite), expect=200)
        del self.refs[invite.uuid]
        self.withdrawn.append(invite)

    # -- what must hold after every step -----------------------------------------------------
    @invariant()
    def reads_agree_with_the_model(self) -> None:
        for uuid, ref in self.refs.items():
            status = self.call("GET", self._path(ref, "/status"), expect=200, quiet=True).json()
            record = self.call("GET", self._path(ref), expect=200, quiet=True).json()
            expected = self.status[uuid]
            assert (status["status"], record["status"]) == (expected, expected), (
                f"{ref.label}: status read {status['status']}, invitation read "
                f"{record['status']}, the model expects {expected}"
            )
            assert bool(record.get("arrivedAt")) == (uuid in self.arrived), (
                f"{ref.label}: arrivedAt is {record.get('arrivedAt')!r}"
            )
            assert bool(record.get("leftAt")) == (uuid in self.left), (
                f"{ref.label}: leftAt is {record.get('leftAt')!r}"
            )

    @invariant()
    def withdrawn_invitations_are_gone(self) -> None:
        for ref in self.withdrawn:
            self.call("GET", self._path(ref), expect=404, quiet=True)


@pytest.mark.rule(
    "VISIT-CREATED",
    "VISIT-UPDATED",
    "VISIT-CHECK-IN",
    "VISIT-CHECK-OUT",
    "VISIT-NO-SHOW",
    "VISIT-CANCELLED",
    "VISIT-DENIED",
    "VISIT-TERMINAL-STATES",
    "INV-STATUS-READ",
    "INV-STATUS-CHANGE-409",
    "INV-STATUS-CHANGE-422",
    "INV-UPDATE-200",
    "INV-UPDATE-CLOSED-409",
    "INV-UPDATE-IDENTICAL-425",
    "INV-DELETE-WITHDRAWS",
    "INV-DELETE-ENDED",
)
def test_visits_follow_their_lifecycle(
    api, factories, control_or_none, run_id, amws_run, example_budget
) -> None:
    calls = InviteCalls(api, factories, new_host(api, factories), control_or_none)
    run_state_machine_as_test(
        lambda: VisitMachine(api, calls, run_id),
        settings=for_run(SETTINGS, amws_run, example_budget),
    )
