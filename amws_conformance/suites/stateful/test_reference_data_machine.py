"""Departments, groups and locations driven as a state machine against a model.

The model holds every record the machine made (uuid -> kind, name, and a location's fields,
live or deleted) and the people (persons and users) that point at them. Each step makes one
API call and then reads back what it touched:

* names are unique per resource: a create or rename onto a name another record of the SAME
  resource holds answers 409 and changes nothing; the same name in another resource, the
  record's own name, or the name of a deleted record is free;
* a location PUT changes only the fields it carries;
* a delete answers 200 and leaves 404 behind (read, rename and delete again), and the list no
  longer holds the record;
* a person or user that pointed at a deleted record still exists with that reference empty; a
  new one pointing at a deleted record is refused with 422.

Names differing only in letter case: the rules compare names as written and do not say whether
"Sales" and "sales" clash, so the machine never sends such a pair.
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

SETTINGS = machine_settings(steps=14)
KINDS = ("department", "group", "location")
PATHS = {
    "department": f"{API}/departments",
    "group": f"{API}/groups",
    "location": f"{API}/locations",
    "person": f"{API}/persons",
    "user": f"{API}/users",
}
# Location fields a partial PUT may carry besides its name.
LOCATION_FIELDS = ("type", "city", "address", "keyContactNumber", "comments", "country")
COMPARED = (
    "name",
    "type",
    "city",
    "address",
    "keyContactNumber",
    "latitude",
    "longitude",
    "comments",
    "country",
)


class ReferenceDataMachine(RuleBasedStateMachine):
    records = Bundle("records")  # departments, groups and locations, live or deleted
    live_records = records.filter(lambda ref: not ref.gone)
    live_locations = records.filter(lambda ref: not ref.gone and ref.kind == "location")
    deleted_records = records.filter(lambda ref: ref.gone)

    def __init__(self, api: Any, factories: Any, run_id: str) -> None:
        super().__init__()
        self.call = Calls(api, run_id)
        self.f = factories
        self.live: dict[str, dict[str, Any]] = {}  # uuid -> the record's compared fields
        self.deleted: set[str] = set()
        self.names: dict[str, str] = {}  # uuid -> current (or last) name, live or deleted
        self.people: dict[str, dict[str, Any]] = {}  # uuid -> {kind, department, group, location}
        self.refs: dict[str, Ref] = {}

    def _any(self, kind: str | None = None, gone: bool = False) -> bool:
        return any(r.gone == gone and kind in (None, r.kind) for r in self.refs.values())

    # -- the model's questions ------------------------------------------------------------
    def _holder_of(self, kind: str, name: str) -> str | None:
        """The live record of ``kind`` holding ``name``, if any."""
        return next(
            (u for u, r in self.live.items() if r["kind"] == kind and r["name"] == name), None
        )

    def _fresh_name(self, kind: str) -> str:
        return self.f.name_for(f"create{kind.capitalize()}", kind[:4])

    def _body(self, kind: str, name: str) -> dict[str, Any]:
        return self.f.location(name=name) if kind == "location" else {"name": name}

    # -- reading back -----------------------------------------------------------------------
    def _check(self, ref: Ref) -> None:
        path = f"{PATHS[ref.kind]}/{ref.uuid}"
        if ref.uuid in self.deleted:
            self.call("GET", path, expect=404)
            return
        read, model = self.call.read(path), self.live[ref.uuid]
        if ref.kind == "location":
            shown = {field: read.get(field) for field in COMPARED}
            expected = {field: model.get(field) for field in COMPARED}
        else:
            shown, expected = read, {"uuid": ref.uuid, "name": model["name"]}
        assert shown == expected, self.call.show(f"{ref.label} reads {shown}, model: {expected}")

    def _check_list(self, kind: str) -> None:
        """The list holds every live record of the kind under its name, and no deleted one."""
        listed = {item["uuid"]: item["name"] for item in self.call.read(PATHS[kind])}
        ours = {u: n for u, n in listed.items() if u in self.live or u in self.deleted}
        expected = {u: r["name"] for u, r in self.live.items() if r["kind"] == kind}
        assert ours == expected, self.call.show(f"the {kind} list holds {ours}, model: {expected}")

    def _check_person(self, uuid: str) -> None:
        model = self.people[uuid]
        read = self.call.read(f"{PATHS[model['kind']]}/{uuid}")
        shown = {field: read.get(field) for field in KINDS}
        expected = {field: model[field] for field in KINDS}
        assert shown == expected, self.call.show(
            f"{model['kind']} points at {shown}, model: {expected}"
        )

    # -- steps ----------------------------------------------------------------------------
    def _create(self, kind: str, name: str) -> Ref | None:
        body = self._body(kind, name)
        clash = self._holder_of(kind, name)
        response = self.call("POST", PATHS[kind], json=body, expect=409 if clash else 201)
        if clash:
            self._check_list(kind)  # still exactly one record carries the name
            return None
        ref = self.call.ref(kind, response.json()["uuid"])
        self.refs[ref.uuid] = ref
        self.live[ref.uuid] = {"kind": kind, **{f: body.get(f) for f in COMPARED}}
        self.names[ref.uuid] = name
        self._check(ref)
        self._check_list(kind)
        return ref

    @initialize(target=records)
    def start_with_people_pointing_at_records(self) -> Any:
        made = [self._create(kind, self._fresh_name(kind)) for kind in KINDS]
        links = {ref.kind: ref.uuid for ref in made if ref is not None}
        for kind in ("person", "user"):
            self._person(kind, links)
        return multiple(*[ref for ref in made if ref is not None])

    @rule(target=records, kind=st.sampled_from(KINDS))
    def create(self, kind: str) -> Any:
        ref = self._create(kind, self._fresh_name(kind))
        return ref if ref is not None else multiple()

    @rule(target=records, existing=records, other=st.integers(0, len(KINDS) - 2))
    def create_with_the_name_of(self, existing: Ref, other: int) -> Any:
        """The name in the same resource: 409 while a live record holds it (201 once it was
        deleted); the name in another resource: 201."""
        name = self.names[existing.uuid]
        others = [k for k in KINDS if k != existing.kind]
        made = [self._create(kind, name) for kind in (existing.kind, others[other])]
        return multiple(*[ref for ref in made if ref is not None])

    @precondition(lambda self: self._any())
    @rule(record=live_records, to=records | st.none())
    def rename(self, record: Ref, to: Ref | None) -> None:
        """To a fresh name, or to the name of another record (of any resource, live or
        deleted) or its own: 409 only when another live record of the resource holds it."""
        name = self._fresh_name(record.kind) if to is None else self.names[to.uuid]
        holder = self._holder_of(record.kind, name)
        expected = 409 if holder not in (None, record.uuid) else 200
        path = f"{PATHS[record.kind]}/{record.uuid}"
        self.call("PUT", path, json={"name": name}, expect=expected)
        if expected == 200:
            self.live[record.uuid]["name"] = self.names[record.uuid] = name
        self._check(record)
        if to is not None and to.uuid != record.uuid:
            self._check(to)

    @precondition(lambda self: self._any("location"))
    @rule(
        record=live_locations,
        fields=st.sets(st.sampled_from(LOCATION_FIELDS), min_size=1, max_size=3),
    )
    def update_location_partially(self, record: Ref, fields: set[str]) -> None:
        """A PUT carrying only ``fields``: the fields left out keep their values."""
        f = self.f
        values = {
            "type": lambda: f.random.choice(enum_values("updateLocation", "type")),
            "city": lambda: f.fake.city()[:100].ljust(2, "x"),
            "address": lambda: f.fake.street_address()[:100].ljust(2, "x"),
            "keyContactNumber": f.phone,
            "comments": lambda: f.tag("note"),
            "country": lambda: f.fake.country()[:100],
        }
        body = {field: values[field]() for field in sorted(fields)}
        self.call("PUT", f"{PATHS['location']}/{record.uuid}", json=body, expect=200)
        self.live[record.uuid].update(body)
        self._check(record)

    @precondition(lambda self: self._any())
    @rule(record=live_records)
    def delete(self, record: Ref) -> None:
        self.call("DELETE", f"{PATHS[record.kind]}/{record.uuid}", expect=200)
        del self.live[record.uuid]
        self.deleted.add(record.uuid)
        record.gone = True
        self._check(record)
        self._check_list(record.kind)
        for uuid, model in self.people.items():
            if model[record.kind] == record.uuid:
                model[record.kind] = None  # the person stays; the reference reads empty
                self._check_person(uuid)

    @precondition(lambda self: self._any(gone=True))
    @rule(record=deleted_records)
    def read_rename_and_delete_a_deleted_record(self, record: Ref) -> None:
        path = f"{PATHS[record.kind]}/{record.uuid}"
        self.call("GET", path, expect=404)
        self.call("PUT", path, json={"name": self._fresh_name(record.kind)}, expect=404)
        self.call("DELETE", path, expect=404)

    def _person(self, kind: str, links: dict[str, str]) -> None:
        body = (self.f.person if kind == "person" else self.f.user)(**links)
        dangling = any(uuid in self.deleted for uuid in links.values())
        response = self.call("POST", PATHS[kind], json=body, expect=422 if dangling else 201)
        if dangling:
            return
        ref = self.call.ref(kind, response.json()["uuid"])
        self.people[ref.uuid] = {"kind": kind, **{k: links.get(k) for k in KINDS}}
        self._check_person(ref.uuid)

    @rule(kind=st.sampled_from(["person", "user"]), pointing_at=st.lists(records, max_size=3))
    def create_person_or_user_pointing_at(self, kind: str, pointing_at: list[Ref]) -> None:
        """Refused with 422 when one of the references names a deleted record."""
        self._person(kind, {ref.kind: ref.uuid for ref in pointing_at})


@pytest.mark.rule(
    "DEPT-NAME-UNIQUE",
    "DEPT-LIST-SHAPE",
    "DEPT-DELETE-HARD",
    "DEPT-DELETE-UNLINKS",
    "DEPT-NOT-FOUND",
    "GRP-NAME-UNIQUE",
    "GRP-READ",
    "GRP-UPDATE-RENAMES",
    "GRP-DELETE-HARD",
    "GRP-DELETE-UNLINKS",
    "GRP-NOT-FOUND",
    "LOC-NAME-UNIQUE",
    "LOC-UPDATE-PARTIAL",
    "LOC-LIST-SHAPE",
    "LOC-DELETE-HARD",
    "LOC-NOT-FOUND",
    "CONV-HARD-DELETE",
    "CONV-DELETE-DROPS-REFERENCES",
    "CONV-REFERENCE-MUST-EXIST",
    "PERS-FIELD-REFERENCE",
    "USER-FIELD-REFERENCE",
)
def test_reference_data_follows_its_model(api, factories, run_id, amws_run, example_budget) -> None:
    run_state_machine_as_test(
        lambda: ReferenceDataMachine(api, factories, run_id),
        settings=for_run(SETTINGS, amws_run, example_budget),
    )
