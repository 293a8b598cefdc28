"""What the convention suites share: the resources they create, read and walk.

Each resource: (collection, create body, update body); ``kind_of`` maps an operation suffix or
a reference field (CostCenter, costCenter) to its resource.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import spec
from fixtures import Factories

V1 = "/api/ws/v1"
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _named(create: str, update: str, kind: str) -> tuple[Callable, Callable]:
    return (lambda f, api: f.named(create, kind)), (lambda f, api: f.named(update, kind))


def person_of(api: Any, f: Factories) -> str:
    return api.post(f"{V1}/persons", json=f.person()).json()["uuid"]


RESOURCES: dict[str, tuple[str, Callable, Callable]] = {
    "department": ("/departments", *_named("createDepartment", "updateDepartment", "dept")),
    "organisation": ("/organisations", *_named("createOrganisation", "updateOrganisation", "org")),
    "cost_center": ("/cost-centers", *_named("createCostCenter", "updateCostCenter", "cc")),
    "visit_reason": ("/visit-reason", *_named("createVisitReason", "updateVisitReason", "vr")),
    "group": ("/groups", *_named("createGroup", "updateGroup", "grp")),
    "location": ("/locations", lambda f, api: f.location(), lambda f, api: f.location()),
    "role": ("/roles", lambda f, api: f.role(), lambda f, api: f.role()),
    "person": ("/persons", lambda f, api: f.person(), lambda f, api: f.person()),
    "user": ("/users", lambda f, api: f.user(), lambda f, api: f.user()),
    "credential": (
        "/credentials",
        lambda f, api: f.credential(personUuid=person_of(api, f)),
        lambda f, api: {"comments": f.tag("changed")},
    ),
    "watchlist": ("/watchlists", lambda f, api: f.watchlist(), lambda f, api: f.watchlist()),
}


def create(api: Any, factories: Factories, kind: str) -> tuple[str, dict[str, Any]]:
    collection, body_of, _ = RESOURCES[kind]
    body = body_of(factories, api)
    response = api.post(V1 + collection, json=body)
    assert response.status_code == 201, f"creating a {kind}: {response.text}"
    return response.json()["uuid"], body


def read(api: Any, kind: str, uuid: str) -> dict[str, Any]:
    response = api.get(f"{V1}{RESOURCES[kind][0]}/{uuid}")
    assert response.status_code == 200, response.text
    return response.json()


def walk(node: Any) -> Iterator[tuple[str, Any]]:
    """Every (field name, value) pair of a JSON document."""
    if isinstance(node, dict):
        for name, value in node.items():
            yield name, value
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def rule_ops(rule_id: str) -> tuple[str, ...]:
    return next(r for r in spec.rules() if r.id == rule_id).operations


def kind_of(name: str) -> str:
    """The resource kind of an operation suffix or reference field (CostCenter, costCenter)."""
    wanted = name[0].upper() + name[1:]
    return next(k for k in RESOURCES if k.title().replace("_", "") == wanted)


PERSON_REFS = ("department", "organisation", "group", "costCenter", "location")
USER_REFS = ("department", "organisation", "group", "location", "role")
REFERENCES = (*PERSON_REFS, "role", "hostUser", "visitReason")
