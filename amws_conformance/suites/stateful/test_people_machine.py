"""Persons, users and their credentials driven as a state machine against a model.

The model holds the holders (persons and users, with the fields the machine wrote and, for
users, the enabled flag), the credentials (identifier, holder, assigned lists, deleted or not)
and every identifier ever issued. After each step the machine reads back what the step touched:

* a PUT of a person or user rebuilds it from the body alone: every field left out reads empty
  (a user's username is generated anew and its role falls back to the default one);
* disabling a disabled user or enabling an enabled one answers 409 (assumed rule);
* a credential's identifier is unique and stays reserved after the credential is deleted;
* a credential PUT with accessControlListUuids leaves exactly those lists, one without them
  leaves the lists alone;
* a deleted credential stays readable with status DELETED;
* deleting a holder leaves its credentials readable, not DELETED, with holderUuid null, and
  issuing a credential for the deleted holder answers 404.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from amws_conformance.fixtures._limits import enum_values
from amws_conformance.suites.stateful._machine import API, Calls, Ref, for_run, machine_settings

SETTINGS = machine_settings(steps=15)
PATHS = {"person": f"{API}/persons", "user": f"{API}/users", "credential": f"{API}/credentials"}
PERSON_OPTIONAL = (
    "lastName",
    "email",
    "mobile",
    "personType",
    "dateOfBirth",
    "identityNumber",
    "comments",
    "department",
)
USER_OPTIONAL = ("username", "firstName", "lastName", "mobile", "comments", "department", "role")
ACL_SLOTS = 3  # a credential's lists are drawn from the first three lists of the system
HOLDER_TYPE = {"person": "PERSONNEL", "user": "USER"}
EMPTY = (None, "")


def _live(*kinds: str) -> Any:
    return lambda ref: not ref.gone and ref.kind in kinds


class PeopleMachine(RuleBasedStateMachine):
    # Persons, users and credentials, live or deleted (a credential delete is soft).
    records = Bundle("records")
    credentials = records.filter(lambda ref: ref.kind == "credential")

    def __init__(self, api: Any, factories: Any, run_id: str, setup: dict[str, Any]) -> None:
        super().__init__()
        self.call = Calls(api, run_id)
        self.f = factories
        self.setup = setup  # department, role (run-made), default_role, acls (the system's)
        for name in ("department", "role"):
            self.call.labels[setup[name].lower()] = f"setup {name}"
        for number, acl in enumerate(setup["acls"], 1):
            self.call.labels[acl.lower()] = f"list {number}"
        self.people: dict[str, dict[str, Any]] = {}  # holder uuid -> the fields as they read
        self.enabled: dict[str, bool] = {}  # user uuid -> enabled
        self.refs: dict[str, Ref] = {}
        self.cards: dict[str, dict[str, Any]] = {}  # credential uuid -> identifier, holder, acls
        self.reserved: dict[str, str] = {}  # identifier -> the credential that took it

    def _any(self, kind: str | None = None, gone: bool = False) -> bool:
        return any(r.gone == gone and kind in (None, r.kind) for r in self.refs.values())

    # -- values ----------------------------------------------------------------------------
    def _value(self, field: str) -> Any:
        f = self.f
        return {
            "lastName": lambda: f"{f.fake.last_name()[:30]} {f.tag('p')}"[:50],
            "email": f.email,
            "mobile": f.phone,
            "personType": lambda: f.random.choice(enum_values("updatePerson", "personType")),
            "dateOfBirth": lambda: f.fake.date_of_birth(minimum_age=18).isoformat(),
            "identityNumber": lambda: f.tag("id")[:50],
            "comments": lambda: f.tag("note"),
            "department": lambda: self.setup["department"],
            "username": lambda: f.tag("u")[:50],
            "firstName": lambda: f.fake.first_name()[:50],
            "role": lambda: self.setup["role"],
        }[field]()

    def _acls(self, slots: set[int] | None) -> list[str] | None:
        known = self.setup["acls"]
        if slots is None:
            return None
        return sorted({known[i % len(known)] for i in slots}) if known else []

    # -- reading back ----------------------------------------------------------------------
    def _check_holder(self, ref: Ref) -> None:
        path = f"{PATHS[ref.kind]}/{ref.uuid}"
        if ref.gone:
            self.call("GET", path, expect=404)
            return
        read, model = self.call.read(path), self.people[ref.uuid]
        for field, value in model.items():
            shown = read.get(field)
            if value is None:
                assert shown in EMPTY, self.call.show(
                    f"{ref.label} {field} reads {shown!r}, not empty"
                )
            elif field == "username" and callable(value):
                assert value(shown), self.call.show(
                    f"{ref.label} username {shown!r} was not regenerated"
                )
            else:
                assert shown == value, self.call.show(
                    f"{ref.label} {field} reads {shown!r}, model: {value!r}"
                )
        if ref.kind == "user":
            assert read.get("enabled") is self.enabled[ref.uuid], f"{ref.label} enabled"
            assert read.get("password") in EMPTY, f"{ref.label} discloses its password"
            if callable(model.get("username")):  # from now on the generated name is the model's
                model["username"] = read["username"]

    def _check_card(self, ref: Ref) -> None:
        card = self.cards[ref.uuid]
        read = self.call.read(f"{PATHS['credential']}/{ref.uuid}")
        shown = {
            "uniqueIdentifier": read.get("uniqueIdentifier"),
            "holderUuid": read.get("holderUuid"),
            "deleted": read.get("status") == "DELETED",
            "accessControlListUuids": sorted(read.get("accessControlListUuids") or []),
        }
        expected = {
            "uniqueIdentifier": card["identifier"],
            "holderUuid": card["holder"],
            "deleted": ref.gone,
            "accessControlListUuids": card["acls"],
        }
        assert shown == expected, self.call.show(f"{ref.label} reads {shown}, model: {expected}")
        if card["holder"] is not None:
            assert read.get("type") == HOLDER_TYPE[card["kind"]], f"{ref.label} type"

    def _check_held(self, holder: Ref) -> None:
        """The holder's credential list: every card it holds (a user's in every status)."""
        held = {u for u, c in self.cards.items() if c["holder"] == holder.uuid}
        live = {u for u in held if not self.refs[u].gone}
        path = f"{PATHS['credential']}/by-{holder.kind}/{holder.uuid}"
        listed = {item["uuid"] for item in self.call.read(path)}
        if holder.kind == "user":
            assert listed == held, self.call.show(f"by-user lists {listed}, model: {held}")
        else:  # whether a person's list shows DELETED cards is not stated
            assert live <= listed <= held, self.call.show(
                f"by-person lists {listed}, model: {held}"
            )
        for uuid in held:
            self._check_card(self.refs[uuid])

    # -- holders ---------------------------------------------------------------------------
    def _created(self, kind: str, body: dict[str, Any]) -> Ref:
        ref = self.call.created(kind, PATHS[kind], body)
        self.refs[ref.uuid] = ref
        return ref

    @rule(target=records, kind=st.sampled_from(["person", "user"]), with_role=st.booleans())
    def create(self, kind: str, with_role: bool = False) -> Ref:
        """A user created without role reads the default one."""
        make = self.f.person if kind == "person" else self.f.user
        body = make(department=self.setup["department"])
        if kind == "user" and with_role:
            body["role"] = self.setup["role"]
        ref = self._created(kind, body)
        if kind == "person":
            self.people[ref.uuid] = {f: body.get(f) for f in ("firstName", *PERSON_OPTIONAL)}
        else:
            model = {f: body.get(f) for f in ("email", *USER_OPTIONAL)}
            self.people[ref.uuid] = model | {"role": body.get("role", self.setup["default_role"])}
            self.enabled[ref.uuid] = True
        self._check_holder(ref)
        return ref

    @precondition(lambda self: self._any("person") or self._any("user"))
    @rule(
        holder=records.filter(_live("person", "user")),
        sent=st.sets(st.sampled_from(sorted({*PERSON_OPTIONAL, *USER_OPTIONAL})), max_size=5),
    )
    def replace(self, holder: Ref, sent: set[str]) -> None:
        """PUT of a person (firstName and the ``sent`` person fields) or a user (email, its
        enabled flag and the ``sent`` user fields): every field left out reads empty; a
        user's username left out is generated anew and its role is the default one."""
        if holder.kind == "person":
            body = {"firstName": self._value("firstName")}
            body |= {f: self._value(f) for f in sorted(sent & set(PERSON_OPTIONAL))}
            model = {f: body.get(f) for f in ("firstName", *PERSON_OPTIONAL)}
        else:
            body = {"email": self.f.email(), "enabled": self.enabled[holder.uuid]}
            body |= {f: self._value(f) for f in sorted(sent & set(USER_OPTIONAL))}
            before = self.people[holder.uuid]["username"]
            model = {f: body.get(f) for f in ("email", *USER_OPTIONAL)}
            if "username" not in body:
                model["username"] = lambda shown: bool(shown) and shown != before
            model["role"] = body.get("role", self.setup["default_role"])
        self.call("PUT", f"{PATHS[holder.kind]}/{holder.uuid}", json=body, expect=200)
        self.people[holder.uuid] = model
        self._check_holder(holder)

    @precondition(lambda self: self._any("user"))
    @rule(user=records.filter(_live("user")), enable=st.booleans())
    def enable_or_disable_user(self, user: Ref, enable: bool) -> None:
        """409 when the user is in that state already; its credentials stay as they were."""
        action = "enable" if enable else "disable"
        already = self.enabled[user.uuid] is enable
        self.call("PUT", f"{PATHS['user']}/{user.uuid}/{action}", expect=409 if already else 200)
        self.enabled[user.uuid] = enable
        self._check_holder(user)
        self._check_held(user)

    @precondition(lambda self: self._any("person") or self._any("user"))
    @rule(holder=records.filter(_live("person", "user")))
    def delete_holder(self, holder: Ref) -> None:
        """The credentials survive, not DELETED, with holderUuid null; a credential can no
        longer be issued to it (404)."""
        self.call("DELETE", f"{PATHS[holder.kind]}/{holder.uuid}", expect=200)
        holder.gone = True
        self._check_holder(holder)
        for uuid, card in self.cards.items():
            if card["holder"] == holder.uuid:
                card["holder"] = None
                self._check_card(self.refs[uuid])
        self._issue(holder, [], self.f.tag("card"))  # 404: the holder is no more

    # -- credentials -------------------------------------------------------------------------
    def _issue(self, holder: Ref, lists: list[str], identifier: str) -> Ref | None:
        body = self.f.credential(
            uniqueIdentifier=identifier,
            accessControlListUuids=lists,
            **{f"{holder.kind}Uuid": holder.uuid},
        )
        expected = 404 if holder.gone else 409 if identifier in self.reserved else 201
        response = self.call("POST", PATHS["credential"], json=body, expect=expected)
        if expected != 201:
            if identifier in self.reserved:  # the credential holding it keeps it
                self._check_card(self.refs[self.reserved[identifier]])
            return None
        ref = self.call.ref("credential", response.json()["uuid"])
        self.refs[ref.uuid], self.reserved[identifier] = ref, ref.uuid
        self.cards[ref.uuid] = {
            "identifier": identifier,
            "holder": holder.uuid,
            "kind": holder.kind,
            "acls": lists,
        }
        self._check_held(holder)
        return ref

    @initialize(target=records)
    def start_with_a_person_and_a_user_holding_a_credential(self) -> Any:
        # The user holds the run's role, so a replace without role must reset it.
        person, user = self.create("person"), self.create("user", with_role=True)
        cards = [self._issue(h, self._acls({0}) or [], self.f.tag("card")) for h in (person, user)]
        return multiple(person, user, *[c for c in cards if c is not None])

    @precondition(lambda self: self._any("person") or self._any("user"))
    @rule(
        target=records,
        holder=records.filter(lambda ref: ref.kind != "credential"),
        acls=st.sets(st.integers(0, ACL_SLOTS - 1)),
        identifier_of=credentials | st.none(),
    )
    def issue_credential(self, holder: Ref, acls: set[int], identifier_of: Ref | None) -> Any:
        """201; 409 with the identifier of another credential (deleted or not); 404 for a
        deleted holder (then with a fresh identifier, so only the holder is wrong)."""
        reuse = identifier_of is not None and not holder.gone
        identifier = self.cards[identifier_of.uuid]["identifier"] if reuse else self.f.tag("card")
        ref = self._issue(holder, self._acls(acls) or [], identifier)
        return ref if ref is not None else multiple()

    @precondition(lambda self: self._any("credential"))
    @rule(
        card=records.filter(_live("credential")),
        acls=st.sets(st.integers(0, ACL_SLOTS - 1)) | st.none(),
    )
    def update_credential_lists(self, card: Ref, acls: set[int] | None) -> None:
        """With accessControlListUuids: exactly those lists; without: the lists stay."""
        lists = self._acls(acls)
        body: dict[str, Any] = {"comments": self.f.tag("note")}
        if lists is not None:
            body["accessControlListUuids"] = lists
            self.cards[card.uuid]["acls"] = lists
        self.call("PUT", f"{PATHS['credential']}/{card.uuid}", json=body, expect=200)
        self._check_card(card)

    @precondition(lambda self: self._any("credential"))
    @rule(card=records.filter(_live("credential")))
    def delete_credential(self, card: Ref) -> None:
        """Soft: the card reads DELETED; its identifier stays reserved."""
        self.call("DELETE", f"{PATHS['credential']}/{card.uuid}", expect=200)
        card.gone = True
        holder = self.cards[card.uuid]["holder"]
        if holder is not None:
            self._check_held(self.refs[holder])
        else:
            self._check_card(card)
        # The identifier is still taken: issuing it again (to any live holder) answers 409.
        someone = next(
            (r for r in self.refs.values() if r.kind != "credential" and not r.gone), None
        )
        if someone is not None:
            self._issue(someone, [], self.cards[card.uuid]["identifier"])


@pytest.fixture
def setup(api, factories) -> dict[str, Any]:
    """Records the machine points at: a department and a role of the run, the default role
    and the system's access control lists (read-only: only their UUIDs are sent)."""
    department = api.post(f"{API}/departments", json=factories.named("createDepartment", "dep"))
    role = api.post(f"{API}/roles", json=factories.role())
    assert department.status_code == 201 and role.status_code == 201
    roles = api.get(f"{API}/roles").json()
    acls = api.get(f"{API}/access-control-lists").json()
    return {
        "department": department.json()["uuid"],
        "role": role.json()["uuid"],
        "default_role": next(r["uuid"] for r in roles if r.get("default")),
        "acls": [a["uuid"] for a in acls[:ACL_SLOTS]],
    }


@pytest.mark.rule(
    "PERS-PUT-FULL-REPLACEMENT",
    "PERS-DELETE-HARD",
    "PERS-DELETE-UNLINKS-CREDENTIALS",
    "USER-PUT-FULL-REPLACEMENT",
    "USER-PUT-ROLE-RESET",
    "USER-PUT-USERNAME-REGENERATED",
    "USER-ROLE-DEFAULT",
    "USER-PASSWORD-NEVER-RETURNED",
    "USER-DISABLE",
    "USER-ENABLE",
    "USER-ENABLE-DISABLE-CONFLICT",
    "USER-DELETE-HARD",
    "USER-DELETE-UNLINKS-CREDENTIALS",
    "CRED-IDENTIFIER-UNIQUE",
    "CRED-IDENTIFIER-RESERVED",
    "CRED-HOLDER-NOT-FOUND",
    "CRED-TYPE-DERIVED",
    "CRED-PUT-ACL-REPLACE",
    "CRED-PUT-ACL-EMPTY",
    "CRED-PUT-ACL-OMITTED",
    "CRED-DELETE-SOFT",
    "CRED-BY-PERSON",
    "CRED-BY-USER",
    "ACL-USABLE-ON-CREDENTIALS",
)
def test_people_and_credentials_follow_their_model(
    api, factories, run_id, setup, amws_run, example_budget
) -> None:
    run_state_machine_as_test(
        lambda: PeopleMachine(api, factories, run_id, setup),
        settings=for_run(SETTINGS, amws_run, example_budget),
    )
