"""Name-only resources: departments, organisations, cost centers, visit reasons and groups.

Every test is parametrised over the five resources; each parameter carries the rule of its own
resource (DEPT-, ORG-, COSTC-, VREASON-, GRP-). Limits come from the spec, never from here.
"""

from __future__ import annotations

import string

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


def _short(factories, length: int) -> str:
    """A random name of exactly ``length`` characters (too short to carry the run tag)."""
    alphabet = string.ascii_lowercase + string.digits
    return "".join(factories.random.choice(alphabet) for _ in range(length))


def _sized(factories, single: str, length: int) -> str:
    """A name of exactly ``length`` characters, run-tagged when there is room."""
    base = factories.name_for(f"create{single}", single.lower())
    if length < len(base):
        return _short(factories, length)
    return (base + "x" * length)[:length]


def _create(api, factories, single: str, path: str) -> tuple[str, str]:
    name = factories.name_for(f"create{single}", single.lower())
    response = api.post(path, json={"name": name})
    assert response.status_code == 201, response.text
    return response.json()["uuid"], name


def _names(api, path: str) -> list[str]:
    response = api.get(path)
    assert response.status_code == 200
    return [item["name"] for item in response.json()]


# -- required and length ----------------------------------------------------------------
@pytest.mark.parametrize(("single", "path"), _params("FIELD-REQUIRED"))
def test_name_is_required(api, factories, single: str, path: str) -> None:
    for body in ({}, {"name": None}):
        response = api.post(path, json=body)
        assert response.status_code == 422, (body, response.status_code)
        assert "name" in response.json()["reason"]
    assert None not in _names(api, path), "a nameless record was stored"

    uuid, name = _create(api, factories, single, path)
    for body in ({}, {"name": None}):
        response = api.put(f"{path}/{uuid}", json=body)
        assert response.status_code == 422, (body, response.status_code)
        assert "name" in response.json()["reason"]
    assert api.get(f"{path}/{uuid}").json()["name"] == name


@pytest.mark.parametrize(("single", "path"), _params("FIELD-LENGTH"))
def test_name_length_limits_on_create(api, factories, single: str, path: str) -> None:
    low, high = length_range(f"create{single}", "name")
    for length, accepted in ((low - 1, False), (low, True), (high, True), (high + 1, False)):
        name = _sized(factories, single, length)
        response = api.post(path, json={"name": name})
        assert (response.status_code == 201) is accepted, (length, response.status_code)
        if not accepted:
            assert response.status_code == 422
            assert "name" in response.json()["reason"]
            assert name not in _names(api, path), f"a {length}-character name was stored"


@pytest.mark.parametrize(("single", "path"), _params("FIELD-LENGTH"))
def test_name_length_limits_on_update(api, factories, single: str, path: str) -> None:
    low, high = length_range(f"update{single}", "name")
    uuid, stored = _create(api, factories, single, path)
    for length, accepted in ((low - 1, False), (low, True), (high, True), (high + 1, False)):
        name = _sized(factories, single, length)
        response = api.put(f"{path}/{uuid}", json={"name": name})
        assert (response.status_code == 200) is accepted, (length, response.status_code)
        if accepted:
            stored = name
        else:
            assert response.status_code == 422
            assert "name" in response.json()["reason"]
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
def test_duplicate_names_conflict(api, factories, single: str, path: str) -> None:
    first, first_name = _create(api, factories, single, path)
    second, second_name = _create(api, factories, single, path)

    duplicate = api.post(path, json={"name": first_name})
    assert duplicate.status_code == 409
    assert _names(api, path).count(first_name) == 1, "the duplicate was stored"

    rename = api.put(f"{path}/{second}", json={"name": first_name})
    assert rename.status_code == 409
    assert api.get(f"{path}/{first}").json()["name"] == first_name
    assert api.get(f"{path}/{second}").json()["name"] == second_name


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
def test_list_is_a_plain_array_of_uuid_and_name(api, factories, single: str, path: str) -> None:
    mine = dict([_create(api, factories, single, path) for _ in range(2)])
    listed = api.get(path)
    assert listed.status_code == 200
    items = listed.json()
    assert isinstance(items, list), "the list is not a plain array"
    assert all(set(item) == {"uuid", "name"} for item in items), "items carry other fields"
    for uuid, name in mine.items():
        assert {"uuid": uuid, "name": name} in items

    # Not paged: paging parameters (undocumented here) do not cut the list down.
    paged = api.get(path, params={"start": 1, "limit": 1}, checks=False)
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


@pytest.mark.parametrize(
    ("single", "path", "field", "holders"),
    [pytest.param(*u[:4], marks=pytest.mark.rule(u[4]), id=u[0]) for u in UNLINKS],
)
def test_delete_unlinks_people(api, factories, single, path, field, holders) -> None:
    uuid, _ = _create(api, factories, single, path)
    people = []
    for holder in holders:
        make = factories.person if holder == "person" else factories.user
        created = api.post(f"/api/ws/v1/{holder}s", json=make(**{field: uuid}))
        assert created.status_code == 201, created.text
        person_path = f"/api/ws/v1/{holder}s/{created.json()['uuid']}"
        assert api.get(person_path).json().get(field) == uuid
        people.append(person_path)

    assert api.delete(f"{path}/{uuid}").status_code == 200
    for person_path in people:
        read = api.get(person_path)
        assert read.status_code == 200, f"{person_path} did not survive the delete"
        assert read.json().get(field) is None, f"{person_path} still carries the deleted {field}"


# -- visit reasons ----------------------------------------------------------------------
@pytest.mark.rule("VREASON-DELETE-KEEPS-TEXT", "VREASON-DELETE-HARD")
def test_visit_reason_delete_keeps_visits(api, factories) -> None:
    path = "/api/ws/v1/visit-reason"
    reason, name = _create(api, factories, "VisitReason", path)
    host = api.post("/api/ws/v1/users", json=factories.user())
    assert host.status_code == 201, host.text
    host_uuid = host.json()["uuid"]
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
