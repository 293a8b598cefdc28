"""Name-only resources: departments, organisations, cost centers, visit reasons and groups.

Every test is parametrised over the five resources; each parameter carries the rule of its own
resource (DEPT-, ORG-, COSTC-, VREASON-, GRP-). Limits come from the spec, never from here.
"""

from __future__ import annotations

from typing import Any

import pytest

from amws_conformance.fixtures._limits import length_range
from amws_conformance.suites.rules._conventions import Shared, names_at

# (single, plural path, rule prefix)
RESOURCES = [
    ("Department", "/api/ws/v1/departments", "DEPT"),
    ("Organisation", "/api/ws/v1/organisations", "ORG"),
    ("CostCenter", "/api/ws/v1/cost-centers", "COSTC"),
    ("VisitReason", "/api/ws/v1/visit-reason", "VREASON"),
    ("Group", "/api/ws/v1/groups", "GRP"),
]
# Groups (doc2) name some of their rules differently.
GROUP_RULES = {
    "LIST-SHAPE": "GRP-READ",
    "WRITE-ACK": "GRP-UPDATE-RENAMES",
}


def _params(suffix: str) -> list:
    params = []
    for single, path, prefix in RESOURCES:
        rule = GROUP_RULES.get(suffix, f"GRP-{suffix}") if prefix == "GRP" else f"{prefix}-{suffix}"
        params.append(pytest.param(single, path, marks=pytest.mark.rule(rule), id=single))
    return params


def _create(api, factories, single: str, path: str) -> tuple[str, str]:
    name = factories.name_for(f"create{single}", single.lower())
    response = api.post(path, json={"name": name})
    assert response.status_code == 201, response.text
    return response.json()["uuid"], name


def _names(api, path: str) -> list[str]:
    response = api.get(path)
    assert response.status_code == 200
    return [item["name"] for item in response.json()]


Existing = list[dict[str, Any]]


@pytest.fixture
def existing(amws_run, api, factories, single: str) -> Existing:
    """Two records of the resource, made once per run (``Shared.named``): the one with the
    longest name its create accepts, then the one with the shortest (``uuid``, ``name``,
    ``status`` of the create each).

    Shared: the tests given them only read them or send them writes that must be refused
    (a missing name, a duplicate name), so on a conforming target they never change; the
    length test asserts on their creates. A test that renames or deletes a record makes its
    own."""
    shared = Shared(amws_run, api, factories)
    return [shared.named(single, "longest"), shared.named(single, "shortest")]


# -- required and length ----------------------------------------------------------------
@pytest.mark.parametrize(("single", "path"), _params("FIELD-REQUIRED"))
def test_name_is_required(api, existing: Existing, single: str, path: str) -> None:
    uuid, name = existing[0]["uuid"], existing[0]["name"]
    for body in ({}, {"name": None}):
        response = api.post(path, json=body)
        assert response.status_code == 422, (body, response.status_code)
        assert "name" in response.json()["reason"]
        response = api.put(f"{path}/{uuid}", json=body)
        assert response.status_code == 422, (body, response.status_code)
        assert "name" in response.json()["reason"]
    # One list shows both: no nameless record was stored, and the record kept its name.
    listed = api.get(path)
    assert listed.status_code == 200
    assert None not in [item["name"] for item in listed.json()], "a nameless record was stored"
    assert {"uuid": uuid, "name": name} in listed.json(), "a refused update changed the name"


@pytest.mark.parametrize(("single", "path"), _params("FIELD-LENGTH"))
def test_name_length_limits_on_create(
    api, factories, existing: Existing, single: str, path: str
) -> None:
    low, high = length_range(f"create{single}", "name")
    # The accepted boundaries are the shared records' creates: longest and shortest name.
    longest, shortest = existing
    for made, length in ((shortest, low), (longest, high)):
        assert made["status"] == 201, f"a {length}-character name answered {made['status']}"
        assert len(made["name"]) == length
    refused = {}
    for length in (low - 1, high + 1):
        name = factories.sized_name(single.lower(), length)
        response = api.post(path, json={"name": name})
        assert response.status_code == 422, (length, response.status_code)
        assert "name" in response.json()["reason"]
        refused[length] = name
    # One list after all creates: both boundary names stored, every refused name absent.
    items = api.get(path).json()
    stored = {item["uuid"]: item["name"] for item in items}
    for made in existing:
        assert stored.get(made["uuid"]) == made["name"], len(made["name"])
    names = [item["name"] for item in items]
    for length, name in refused.items():
        assert name not in names, f"a {length}-character name was stored"


@pytest.mark.parametrize(("single", "path"), _params("FIELD-LENGTH"))
def test_name_length_limits_on_update(api, factories, single: str, path: str) -> None:
    low, high = length_range(f"update{single}", "name")
    uuid, stored = _create(api, factories, single, path)
    # The shortest name is too short to carry the run tag: one the target does not hold yet.
    taken = names_at(api, path.removeprefix("/api/ws/v1"))
    steps = ((low - 1, False), (low, True), (high, True), (high + 1, False))
    for step, (length, accepted) in enumerate(steps):
        name = factories.sized_name(single.lower(), length, taken)
        response = api.put(f"{path}/{uuid}", json={"name": name})
        assert (response.status_code == 200) is accepted, (length, response.status_code)
        if accepted:
            stored = name
        else:
            assert response.status_code == 422
            assert "name" in response.json()["reason"]
        if accepted and step + 1 < len(steps) and not steps[step + 1][1]:
            continue  # the read after the refused update that follows shows this name too
        assert api.get(f"{path}/{uuid}").json()["name"] == stored, length


# -- acknowledgements -------------------------------------------------------------------
@pytest.mark.parametrize(("single", "path"), _params("WRITE-ACK"))
def test_writes_answer_an_acknowledgement(api, factories, single: str, path: str) -> None:
    name = factories.name_for(f"create{single}", single.lower())
    created = api.post(path, json={"name": name})
    assert created.status_code == 201
    ack = created.json()
    uuid = ack["uuid"]
    assert "name" not in ack, "the create answer carries the record"
    if single != "Group":  # doc1's resources say the message is `success`
        assert ack["message"] == "success"
    assert api.get(f"{path}/{uuid}").json() == {"uuid": uuid, "name": name}

    renamed = factories.name_for(f"update{single}", single.lower())
    updated = api.put(f"{path}/{uuid}", json={"name": renamed})
    assert updated.status_code == 200
    ack = updated.json()
    assert ack["uuid"] == uuid
    assert "name" not in ack, "the update answer carries the record"
    if single != "Group":
        assert ack["message"] == "success"
    assert api.get(f"{path}/{uuid}").json() == {"uuid": uuid, "name": renamed}


# -- uniqueness -------------------------------------------------------------------------
@pytest.mark.parametrize(("single", "path"), _params("NAME-UNIQUE"))
def test_duplicate_names_conflict(api, existing: Existing, single: str, path: str) -> None:
    (first, first_name), (second, second_name) = ((e["uuid"], e["name"]) for e in existing)

    duplicate = api.post(path, json={"name": first_name})
    assert duplicate.status_code == 409
    rename = api.put(f"{path}/{second}", json={"name": first_name})
    assert rename.status_code == 409

    # One list after both refused writes: no second record under the name, both kept theirs.
    items = api.get(path).json()
    assert [item["name"] for item in items].count(first_name) == 1, "the duplicate was stored"
    assert {"uuid": first, "name": first_name} in items
    assert {"uuid": second, "name": second_name} in items, "the refused rename was stored"


# -- not found --------------------------------------------------------------------------
@pytest.mark.parametrize(("single", "path"), _params("NOT-FOUND"))
def test_unknown_uuid_answers_404(api, factories, ledger, single: str, path: str) -> None:
    unknown = ledger.fresh_uuid()
    name = factories.name_for(f"update{single}", single.lower())
    assert api.get(f"{path}/{unknown}").status_code == 404
    assert api.put(f"{path}/{unknown}", json={"name": name}).status_code == 404
    assert api.delete(f"{path}/{unknown}").status_code == 404
    assert name not in _names(api, path), "the PUT to an unknown UUID created a record"


# -- list and read shape ----------------------------------------------------------------
@pytest.mark.parametrize(("single", "path"), _params("LIST-SHAPE"))
def test_list_is_a_plain_array_of_uuid_and_name(
    api, existing: Existing, single: str, path: str
) -> None:
    mine = {e["uuid"]: e["name"] for e in existing}
    listed = api.get(path)
    assert listed.status_code == 200
    items = listed.json()
    assert isinstance(items, list), "the list is not a plain array"
    assert all(set(item) == {"uuid", "name"} for item in items), "items carry other fields"
    for uuid, name in mine.items():
        assert {"uuid": uuid, "name": name} in items

    # Not paged: paging parameters (undocumented here) do not cut the list down.
    paged = api.unchecked.get(path, params={"start": 1, "limit": 1})
    if paged.status_code == 200:
        assert isinstance(paged.json(), list)
        assert set(mine) <= {item["uuid"] for item in paged.json()}

    uuid, name = next(iter(mine.items()))
    read = api.get(f"{path}/{uuid}")
    assert read.status_code == 200
    assert read.json() == {"uuid": uuid, "name": name}


@pytest.mark.rule("GRP-READ")
def test_group_carries_no_permissions(api, factories) -> None:
    name = factories.name_for("createGroup", "group")
    # A permissions field is not part of a group; it is ignored like any unknown field.
    created = api.post("/api/ws/v1/groups", json={"name": name, "permissions": ["Write Users"]})
    assert created.status_code == 201
    uuid = created.json()["uuid"]
    assert api.get(f"/api/ws/v1/groups/{uuid}").json() == {"uuid": uuid, "name": name}


# -- delete -----------------------------------------------------------------------------
@pytest.mark.parametrize(("single", "path"), _params("DELETE-HARD"))
def test_delete_is_hard(api, factories, single: str, path: str) -> None:
    uuid, name = _create(api, factories, single, path)
    deleted = api.delete(f"{path}/{uuid}")
    assert deleted.status_code == 200
    assert deleted.json()["uuid"] == uuid
    assert api.get(f"{path}/{uuid}").status_code == 404
    listed = api.get(path).json()
    assert uuid not in {item["uuid"] for item in listed}
    assert name not in {item["name"] for item in listed}


# (single, path, person/user field, holders, rule)
UNLINKS = [
    (
        "Department",
        "/api/ws/v1/departments",
        "department",
        ("person", "user"),
        "DEPT-DELETE-UNLINKS",
    ),
    (
        "Organisation",
        "/api/ws/v1/organisations",
        "organisation",
        ("person", "user"),
        "CONV-DELETE-DROPS-REFERENCES",
    ),
    (
        "CostCenter",
        "/api/ws/v1/cost-centers",
        "costCenter",
        ("person",),
        "CONV-DELETE-DROPS-REFERENCES",
    ),
    ("Group", "/api/ws/v1/groups", "group", ("person", "user"), "GRP-DELETE-UNLINKS"),
]


Holders = dict[str, Any]


@pytest.fixture
def holders(amws_run, api, factories) -> Holders:
    """One record of each UNLINKS resource (and a location), and a person and a user that
    reference all of them, made once per run (``Shared.holders``; why sharing them is safe is
    said there: each test deletes only its own field's record and reads only that field)."""
    return Shared(amws_run, api, factories).holders()


@pytest.mark.parametrize(
    ("single", "path", "field", "kinds"),
    [pytest.param(*u[:4], marks=pytest.mark.rule(u[4]), id=u[0]) for u in UNLINKS],
)
def test_delete_unlinks_people(api, holders: Holders, single, path, field, kinds) -> None:
    uuid = holders["refs"][field]
    people = [holders["paths"][holder] for holder in kinds]  # their links checked on creation
    assert api.delete(f"{path}/{uuid}").status_code == 200
    for person_path in people:
        read = api.get(person_path)
        assert read.status_code == 200, f"{person_path} did not survive the delete"
        assert read.json().get(field) is None, f"{person_path} still carries the deleted {field}"


# -- visit reasons ----------------------------------------------------------------------
@pytest.mark.rule("VREASON-DELETE-KEEPS-TEXT", "VREASON-DELETE-HARD")
def test_visit_reason_delete_keeps_visits(api, factories, holders: Holders) -> None:
    path = "/api/ws/v1/visit-reason"
    reason, name = _create(api, factories, "VisitReason", path)
    host_uuid = holders["user"]  # only hosts the invitations; none of its fields is read
    invite = api.post("/api/ws/v1/invites", json=factories.invite(host_uuid, visitReason=reason))
    assert invite.status_code == 201, invite.text
    registration = invite.json()["registrationId"]
    before = api.get(f"/api/ws/v1/invites/{registration}").json()
    assert before["visitReason"] == reason

    assert api.delete(f"{path}/{reason}").status_code == 200

    after = api.get(f"/api/ws/v1/invites/{registration}")
    assert after.status_code == 200, "the visit recorded with the reason is gone"
    kept = after.json()
    for field in ("registrationId", "firstName", "lastName", "hostUser", "activation", "expiry"):
        assert kept[field] == before[field], field
    assert name not in _names(api, path), "the deleted reason is still offered"

    refused = api.post("/api/ws/v1/invites", json=factories.invite(host_uuid, visitReason=reason))
    assert refused.status_code == 422
    assert "visitReason" in refused.json()["reason"]
