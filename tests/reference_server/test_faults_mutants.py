"""The spec-derived mutants: every documented constraint is accounted for, and a mutant changes
exactly its constraint at the validation or response seam (the self-check proves each is caught).
"""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from amws_conformance.fixtures._limits import length_range
from amws_conformance.reference_server.faults import CATALOGUE
from amws_conformance.reference_server.faults import _mutants as mutants
from amws_conformance.spec import _constraints

V1 = "/api/ws/v1"


def test_every_constraint_has_a_mutant_or_a_reason() -> None:
    found = mutants.census()
    names = {c.name for c in _constraints.constraints()}
    accounted = set(found.mutants_of) | set(found.covered) | set(found.undecidable)
    accounted |= set(found.equivalent) & names
    assert not found.unassigned, found.unassigned
    assert names == accounted
    # The other entries are single mutants found equivalent; each names its constraint.
    assert all(any(e.startswith(f"{n}-") for n in names) for e in set(found.equivalent) - names)
    assert len(found.faults) >= 1000
    assert all(reason for reason in {**found.covered, **found.equivalent}.values())


def test_a_new_constraint_without_a_rule_is_a_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the test above guards against: a constraint added to the spec that no rule states
    and no mutant changes shows up as unassigned (and fails it)."""
    first = next(c for c in _constraints.constraints() if c.keyword == "maxLength")
    new = replace(first, operation_id="listVehicles", field=("brandNew",))
    monkeypatch.setattr(mutants, "constraints", lambda: (*_constraints.constraints(), new))
    mutants.census.cache_clear()
    try:
        assert new.name in mutants.census().unassigned
    finally:
        monkeypatch.undo()
        mutants.census.cache_clear()


def test_every_mutant_is_in_the_catalogue_with_its_rule() -> None:
    from amws_conformance import spec

    rules = {r.id for r in spec.rules()}
    derived = [f for f in CATALOGUE.values() if f.constraint]
    assert len(derived) == len(mutants.census().faults)
    assert all(f.rule in rules for f in derived)
    assert all(f.mutation is not None or f.swap is not None for f in derived)


def test_a_length_mutant_moves_the_bound_by_one(faulty) -> None:
    above = "createDepartment:body:name:maxLength-above-accepted"
    refused = "createDepartment:body:name:maxLength-bound-refused"
    departments = f"{V1}/departments"
    high = length_range("createDepartment", "name")[1]  # the spec's bound, not a copy of it
    with faulty(above).client() as api:
        assert api.post(departments, json={"name": "a" * (high + 1)}).status_code == 201
        assert api.post(departments, json={"name": "b" * (high + 2)}).status_code == 422
    with faulty(refused).client() as api:
        assert api.post(departments, json={"name": "c" * high}).status_code == 422
        assert api.post(departments, json={"name": "d" * (high - 1)}).status_code == 201
    with faulty().client() as api:  # the correct server, for contrast
        assert api.post(departments, json={"name": "e" * (high + 1)}).status_code == 422
        assert api.post(departments, json={"name": "f" * high}).status_code == 201


def test_an_optional_mutant_and_a_query_mutant(faulty) -> None:
    with faulty("createDepartment:body:name:required-optional").client() as api:
        assert api.post(f"{V1}/departments", json={}).status_code != 422
    with faulty("listVehicles:query:limit:maximum-above-accepted").client() as api:
        assert api.get(f"{V1}/vehicles", params={"limit": 1001}).status_code == 200
        assert api.get(f"{V1}/vehicles", params={"limit": 1002}).status_code == 400


def test_a_status_mutant_answers_its_neighbour_on_its_operation_only(faulty) -> None:
    with faulty("getDepartment:status:404-answered-400").client() as api:
        assert api.get(f"{V1}/departments/{uuid.uuid4()}").status_code == 400
        assert api.get(f"{V1}/organisations/{uuid.uuid4()}").status_code == 404
