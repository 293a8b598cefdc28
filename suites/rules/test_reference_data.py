"""Name-only resources: departments, organisations, cost centers, visit reasons and groups."""

from __future__ import annotations

import pytest

from fixtures._limits import length_range

# (single, plural path, rule prefix)
RESOURCES = [
    ("Department", "/api/ws/v1/departments", "DEPT"),
    ("Organisation", "/api/ws/v1/organisations", "ORG"),
    ("CostCenter", "/api/ws/v1/cost-centers", "COSTC"),
    ("VisitReason", "/api/ws/v1/visit-reason", "VREASON"),
    ("Group", "/api/ws/v1/groups", "GRP"),
]


def _params(suffix: str) -> list:
    return [
        pytest.param(single, path, marks=pytest.mark.rule(f"{prefix}-{suffix}"), id=single)
        for single, path, prefix in RESOURCES
    ]


@pytest.mark.parametrize(("single", "path"), _params("FIELD-LENGTH"))
def test_name_length_limits(api, factories, single: str, path: str) -> None:
    low, high = length_range(f"create{single}", "name")
    base = factories.name_for(f"create{single}", single.lower())
    for length, accepted in ((low - 1, False), (low, True), (high, True), (high + 1, False)):
        name = (base + "x" * high)[:length] if length >= len(base) else "y" * length
        response = api.post(path, json={"name": name})
        assert (response.status_code == 201) is accepted, (length, response.status_code)
        if not accepted:
            assert response.status_code == 422
            assert "name" in response.json()["reason"]
