"""Every documented request-body constraint, decided at its edges: per operation and rule, the
values exactly at each bound are accepted and the values one step beyond are refused with 422.

This module exists so a small certification plan catches every spec-derived mutant of a
server (a bound moved by one, an exclusive bound made inclusive, an enum value dropped or a
lower-case one added, a pattern relaxed, a required field made optional): the constraints come
from :func:`spec.constraints` (the documents only, never our assumed overlays), and each test
is tagged with the rule :func:`spec.rule_for` finds for them. The per-field suites
(test_persons.py, test_locations.py, …) stay; these tests add the edges they leave out.

Requests are batched: round k sends one body in which every constrained field carries its
k-th edge value (see :mod:`suites.rules._bounds`). A refused round must be a 422 naming every
field; a field it leaves unnamed is sent again alone and judged on that answer, so a target
that reports only its first finding costs more requests but never fails for that alone.
Creates are entered in the run's ledger and removed after the run; an update test makes its
own record (one create) and writes it; nothing is read back (other tests do that).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

import pytest

from amws_conformance import spec
from amws_conformance.spec._constraints import body_schema, parts
from amws_conformance.suites.rules._bodies import Maker
from amws_conformance.suites.rules._bounds import (
    Case,
    Item,
    cases,
    compose,
    describe,
    edges,
    field_syntax,
    in_branch,
    named_in,
    plain_required,
    refusals,
    rounds,
)
from amws_conformance.suites.rules._conventions import NAMED, names_at
from amws_conformance.suites.rules._people import email_of_length

V1 = "/api/ws/v1"
READER = f"{V1}/virtual/"
ACLS = f"{V1}/access-control-lists"
# Update bodies where the collection's create body is not one (the credential's holder and
# reader type are fixed at creation).
# Fields whose valid values may still be refused for the record's state (409, not 422): a
# visit's status moves only along its transitions, a deleted credential takes no other status.
STATEFUL = {("changeInviteStatus", "status"), ("updateCredential", "status")}
UPDATE_BODIES = {"updateCredential": lambda f: {"comments": f.tag("bounds")}}


class _Maker(Maker):
    """Makes each record a test's bodies refer to once per test; its watchlists are disabled,
    so the one-character entries the length tests add match no visitor of another test."""

    def __init__(self, api: Any, factories: Any) -> None:
        super().__init__(api, factories)
        self.made: dict[str, str] = {}

    def new(self, collection: str) -> str:
        if collection not in self.made:
            self.made[collection] = super().new(collection)
        return self.made[collection]

    def create_body(self, create_op: str) -> dict[str, Any]:
        body = super().create_body(create_op)
        return {**body, "enabled": False} if create_op == "createWatchlist" else body


class Target:
    """Where a case's bodies go and what a valid one is (``base()``: a fresh one per round)."""

    def __init__(self, case: Case, api: Any, factories: Any, ledger: Any, profile: Any) -> None:
        self.case, self.api, self.f, self.ledger = case, api, factories, ledger
        self.op = spec.operation(case.op)
        self.reader = self.op.path.startswith(READER)
        self.sent = 0
        maker = self.maker = _Maker(api, factories)
        self.url = maker.path(self.op.path)  # an update's record: made here, once
        self.base: Callable[[], dict[str, Any]]
        if self.reader:
            device = profile.section("virtual_reader")
            code = {"code": ("zz" + secrets.token_hex(12))[:24]} if "code" in self._props() else {}
            self.base = lambda: {"uuid": device["uuid"], "key": device["key"], **code}
        elif case.op in ("searchPersons", "searchUsers", "matchWatchlists"):
            self.base = dict
        elif self.op.method == "POST":
            self.base = lambda: maker.create_body(case.op)
        else:
            fixed = UPDATE_BODIES.get(case.op, lambda f: maker.body(self.op) or {})(factories)
            self.base = lambda: dict(fixed)
        self._taken: list[str] | None = None
        self._lists: list[str] | None = None

    def _props(self) -> set[str]:
        return {p for part in parts(body_schema(self.op)) for p in part.get("properties", {})}

    def accepts(self, status: int, items: list[Item]) -> bool:
        # A reader body that passes its checks is then decided against the device (doc3):
        # 401 or 404 for made-up keys and codes; a status against the record's state (409).
        # Only a 422 says a check of the body refused it.
        if self.reader or any((self.case.op, i.field) in STATEFUL for i in items):
            return status != 422 and status < 500
        return 200 <= status < 300

    def send(self, body: dict[str, Any], items: list[Item]) -> Any:
        self.sent += 1
        quiet = any(i.quiet for i in items)
        sender = self.api.unchecked if quiet else self.api
        return sender.request(self.op.method, self.url, json=body)

    # -- values ----------------------------------------------------------------------------
    def text(self, name: str, length: int) -> str:
        """A valid value of ``length`` characters for the field (unique where names are)."""
        kind = field_syntax(self.case.op, name)
        if kind == "email":
            return str(email_of_length(self.f, length))
        if kind == "text":  # the password: upper, lower, digit and other, then padding
            return ("Aa1!" + str(self.f.tag("pw")).replace("-", "") + "x" * length)[:length]
        if length < 2:  # too short to be unique; only refused values and match criteria
            return "Q" * length
        return str(self.f.sized_name("bd", length, self.taken(name, length)))

    def taken(self, name: str, length: int) -> list[str]:
        """The names a too-short-to-tag name must avoid (a name-only resource's list)."""
        collection = NAMED.get(self.case.op.removeprefix("create").removeprefix("update"))
        if collection is None or name != "name" or length >= len(self.f.tag("bd")):
            return []
        if self._taken is None:
            self._taken = names_at(self.api, collection)
        return self._taken

    def good(self, name: str, kind: str) -> Any:
        if kind == "email":
            return self.f.email()
        if kind == "phone":
            return self.f.phone()
        if kind == "date":
            return "2004-02-29"
        if kind == "text":
            return self.text(name, 12)
        return self.f.instant(days=30 if "xpir" in name else -0.01)

    def lists(self, count: int, beyond: bool) -> list[str] | None:
        """``count`` access control list uuids: the target's (None where it has too few for
        an accepted edge); beyond a bound, made-up ones fill up."""
        if self._lists is None:
            answer = self.api.get(ACLS)
            assert answer.status_code == 200, answer.text
            self._lists = [a["uuid"] for a in answer.json()]
        if beyond:
            return (self._lists + [self.ledger.fresh_uuid() for _ in range(count)])[:count]
        return self._lists[:count] if len(self._lists) >= count else None

    def realise(self, items: list[Item], beyond: bool) -> tuple[list[Item], list[str]]:
        """The items with their list counts made lists; what could not be tried, and why."""
        out, skipped = [], []
        for item in items:
            if isinstance(item.value, int) and "maxItems" in _keywords(self.case, item.field):
                made = self.lists(item.value, beyond)
                if made is None:
                    skipped.append(f"{item.field}: the target has fewer than {item.value} lists")
                    continue
                item = Item(item.field, made, item.named, item.alone)
            out.append(item)
        return out, skipped

    def minimal(self) -> list[dict[str, Any]]:
        """Bodies of only the required fields: one per alternative of a group (a field that is
        one of several), each alternative alone, so an alternative made optional shows."""
        if not any(c.keyword == "required" for c in self.case.found):
            return []
        base = self.base()
        body = {k: base[k] for k in plain_required(self.case.op) if k in base}
        grouped = [
            c.field[0]
            for c in self.case.found
            if c.keyword == "required" and in_branch(self.case.op, c.field[0], "required")
        ]
        if not grouped:
            return [body] if body else []
        return [{**body, name: self.alternative(name, base)} for name in grouped]

    def alternative(self, name: str, base: dict[str, Any]) -> Any:
        """A valid value of a field the base body may lack: a holder made for it."""
        if name in base:
            return base[name]
        if name.endswith("Uuid"):
            return self.maker.new(f"{V1}/{name.removesuffix('Uuid')}s")
        return self.text(name, 8)


def _keywords(case: Case, name: str) -> set[str]:
    return {c.keyword for c in case.found if c.field[0] == name}


def _params() -> list[Any]:
    out = []
    for case in cases():
        marks = [pytest.mark.rule(case.rule)]
        if spec.operation(case.op).path.startswith(READER):
            marks.append(pytest.mark.requires("virtual_reader"))
        out.append(pytest.param(case, marks=marks, id=f"{case.op}-{case.rule}"))
    return out


PARAMS = _params()


def _plan(target: Target, accepted: bool) -> list[list[Item]]:
    found = edges(target.case, target.text, target.good)
    return rounds({f: pair[0 if accepted else 1] for f, pair in found.items()})


@pytest.mark.parametrize("case", PARAMS)
def test_documented_bounds_accepted(
    api: Any, factories: Any, ledger: Any, profile: Any, case: Case
) -> None:
    target = Target(case, api, factories, ledger, profile)
    problems, skipped = [], []
    for planned in _plan(target, accepted=True):
        items, left = target.realise(planned, beyond=False)
        skipped += left
        if not items:
            continue
        answer = target.send(compose(target.base(), items), items)
        if not target.accepts(answer.status_code, items):
            named = named_in(answer, [i.field for i in items])
            problems.append(
                f"[{describe(items)}] answered {answer.status_code}"
                + (f", naming {named}" if named else f": {answer.text[:300]}")
            )
    for minimal in target.minimal():
        fields = [Item(k, v) for k, v in minimal.items()]
        answer = target.send(minimal, fields)
        if not target.accepts(answer.status_code, fields):
            problems.append(
                f"a body of the required fields {sorted(minimal)} answered "
                f"{answer.status_code}: {answer.text[:300]}"
            )
    assert not problems, "values at documented bounds refused:\n" + "\n".join(problems)
    if skipped:
        pytest.skip("edges not tried: " + "; ".join(skipped))


@pytest.mark.parametrize("case", PARAMS)
def test_documented_bounds_refused(
    api: Any, factories: Any, ledger: Any, profile: Any, case: Case
) -> None:
    target = Target(case, api, factories, ledger, profile)
    plan = [target.realise(items, beyond=True)[0] for items in _plan(target, accepted=False)]
    problems = refusals(target.send, target.base, [p for p in plan if p])
    assert not problems, "values beyond documented bounds not refused:\n" + "\n".join(problems)
