"""The declarative fault kinds act at their seams (the self-check proves each entry is caught)."""

from __future__ import annotations

import uuid

from amws_conformance.reference_server.faults import CATALOGUE


def test_every_declarative_fault_names_real_operations() -> None:
    from amws_conformance import spec

    known = {op.operation_id for op in spec.operations()}
    for fault in CATALOGUE.values():
        assert set(fault.operations) <= known, fault.name
        declarative = fault.unchecked or fault.swap or fault.mutation
        assert (not declarative) == (not fault.operations)


def test_unchecked_field_is_let_through_but_still_required(faulty) -> None:
    with faulty("organisation-name-unchecked").client() as api:
        assert api.post("/api/ws/v1/organisations", json={"name": "O"}).status_code == 201
        assert api.post("/api/ws/v1/organisations", json={}).status_code == 422


def test_swapped_status_changes_status_and_body_code(faulty) -> None:
    with faulty("department-unknown-400").client() as api:
        response = api.get(f"/api/ws/v1/departments/{uuid.uuid4()}")
        other = api.get(f"/api/ws/v1/locations/{uuid.uuid4()}")
    assert response.status_code == 400 and response.json()["code"] == 400
    assert other.status_code == 404
