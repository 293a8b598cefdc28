"""The five name-only resources (departments, organisations, cost centers, visit reasons, groups).

Every test runs once per resource. Name length limits come from the spec's request schemas,
so the tests follow the contract instead of keeping a second copy of the numbers.
"""

from __future__ import annotations

import secrets
import string
import uuid as uuidlib
from collections.abc import Callable
from dataclasses import dataclass

import httpx
import pytest

from amws_conformance import spec
from tests.reference_server.conftest import LiveServer

BASE = "/api/ws/v1"


@dataclass(frozen=True)
class Resource:
    single: str  # operationId suffix, e.g. "Department"
    path: str

    def __str__(self) -> str:
        return self.single

    def item(self, uuid: str) -> str:
        return f"{self.path}/{uuid}"

    def name_limits(self, operation: str) -> tuple[int, int]:
        """(minLength, maxLength) of ``name`` in the request body of ``operation``."""
        body = spec._load.resolve(spec.operation(f"{operation}{self.single}").raw["requestBody"])
        schema = spec._load.resolve(body["content"]["application/json"]["schema"])
        name = spec._load.resolve(schema["properties"]["name"])
        return name["minLength"], name["maxLength"]


RESOURCES = [
    Resource("Department", f"{BASE}/departments"),
    Resource("Organisation", f"{BASE}/organisations"),
    Resource("CostCenter", f"{BASE}/cost-centers"),
    Resource("VisitReason", f"{BASE}/visit-reason"),
    Resource("Group", f"{BASE}/groups"),
]

Unique = Callable[[str], str]


@pytest.fixture(params=RESOURCES, ids=str)
def res(request: pytest.FixtureRequest) -> Resource:
    return request.param


def sized(unique: Unique, length: int) -> str:
    """A name of exactly ``length`` characters, distinct from other tests' names."""
    base = unique("n").replace("-", "")
    if length >= len(base):
        return base + "x" * (length - len(base))
    # Short names cannot carry a long random part; the tests delete them again at once.
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))


def create(api: httpx.Client, res: Resource, name: str) -> str:
    response = api.post(res.path, json={"name": name})
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def names(api: httpx.Client, res: Resource) -> list[str]:
    response = api.get(res.path)
    assert response.status_code == 200
    return [entry["name"] for entry in response.json()]


def stored_name(api: httpx.Client, res: Resource, uuid: str) -> str:
    response = api.get(res.item(uuid))
    assert response.status_code == 200
    return response.json()["name"]


def assert_names_field(response: httpx.Response) -> None:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["code"] == 422
    assert set(body["errors"]) == {"name"}
    assert "@name" in body["reason"]


def test_create_answers_acknowledgement_and_get_shows_name(
    api: httpx.Client, res: Resource, unique: Unique
) -> None:
    name = unique("create")
    response = api.post(res.path, json={"name": name})
    assert response.status_code == 201
    ack = response.json()
    assert set(ack) == {"code", "message", "uuid"}
    assert ack["code"] == 201 and ack["message"] == "success"
    assert str(uuidlib.UUID(ack["uuid"])) == ack["uuid"]
    assert api.get(res.item(ack["uuid"])).json() == {"uuid": ack["uuid"], "name": name}


def test_update_renames_and_answers_acknowledgement(
    api: httpx.Client, res: Resource, unique: Unique
) -> None:
    uuid = create(api, res, unique("before"))
    renamed = unique("after")
    response = api.put(res.item(uuid), json={"name": renamed})
    assert response.status_code == 200
    assert response.json() == {"code": 200, "message": "success", "uuid": uuid}
    assert api.get(res.item(uuid)).json() == {"uuid": uuid, "name": renamed}


def test_name_length_bounds_on_create_come_from_the_spec(
    api: httpx.Client, res: Resource, unique: Unique
) -> None:
    low, high = res.name_limits("create")
    for length in (low, high):
        name = sized(unique, length)
        uuid = create(api, res, name)
        assert stored_name(api, res, uuid) == name
        assert api.delete(res.item(uuid)).status_code == 200
    for length in (low - 1, high + 1):
        name = sized(unique, length)
        assert_names_field(api.post(res.path, json={"name": name}))
        assert name not in names(api, res)


def test_name_length_bounds_on_update_come_from_the_spec(
    api: httpx.Client, res: Resource, unique: Unique
) -> None:
    low, high = res.name_limits("update")
    original = unique("len")
    uuid = create(api, res, original)
    for length in (low - 1, high + 1):
        assert_names_field(api.put(res.item(uuid), json={"name": sized(unique, length)}))
        assert stored_name(api, res, uuid) == original
    for length in (low, high):
        name = sized(unique, length)
        assert api.put(res.item(uuid), json={"name": name}).status_code == 200
        assert stored_name(api, res, uuid) == name
    api.delete(res.item(uuid))


def test_missing_or_null_name_is_422_and_changes_nothing(
    api: httpx.Client, res: Resource, unique: Unique
) -> None:
    before = api.get(res.path).json()
    for body in ({}, {"name": None}):
        assert_names_field(api.post(res.path, json=body))
    assert api.get(res.path).json() == before
    original = unique("keep")
    uuid = create(api, res, original)
    for body in ({}, {"name": None}):
        assert_names_field(api.put(res.item(uuid), json=body))
    assert stored_name(api, res, uuid) == original


def test_duplicate_name_on_create_is_409_case_insensitively(
    api: httpx.Client, res: Resource, unique: Unique
) -> None:
    name = unique("dup")
    create(api, res, name)
    for again in (name, name.upper()):
        response = api.post(res.path, json={"name": again})
        assert response.status_code == 409
        assert response.json()["code"] == 409
    assert [n for n in names(api, res) if n.casefold() == name.casefold()] == [name]


def test_rename_to_another_records_name_is_409_case_insensitively(
    api: httpx.Client, res: Resource, unique: Unique
) -> None:
    first, second = unique("a"), unique("b")
    first_uuid, second_uuid = create(api, res, first), create(api, res, second)
    for taken in (first, first.upper()):
        response = api.put(res.item(second_uuid), json={"name": taken})
        assert response.status_code == 409
    assert stored_name(api, res, first_uuid) == first
    assert stored_name(api, res, second_uuid) == second


def test_rename_to_own_name_is_not_a_conflict(
    api: httpx.Client, res: Resource, unique: Unique
) -> None:
    name = unique("own")
    uuid = create(api, res, name)
    assert api.put(res.item(uuid), json={"name": name}).status_code == 200
    assert api.put(res.item(uuid), json={"name": name.upper()}).status_code == 200
    assert stored_name(api, res, uuid) == name.upper()


def test_list_is_plain_unpaged_array_of_uuid_and_name(
    live: LiveServer, api: httpx.Client, res: Resource, unique: Unique
) -> None:
    created = {create(api, res, unique("list")): None for _ in range(3)}
    # Paging parameters mean nothing here: the whole list comes back regardless.
    response = api.get(res.path, params={"start": 2, "limit": 1})
    assert response.status_code == 200
    listing = response.json()
    assert isinstance(listing, list)
    assert all(set(entry) == {"uuid", "name"} for entry in listing)
    assert set(created) <= {entry["uuid"] for entry in listing}
    with live.client("other_system") as other:
        assert not set(created) & {entry["uuid"] for entry in other.get(res.path).json()}


def test_unknown_uuid_is_404_on_get_update_and_delete(api: httpx.Client, res: Resource) -> None:
    before = api.get(res.path).json()
    missing = res.item(str(uuidlib.uuid4()))
    for response in (
        api.get(missing),
        api.put(missing, json={"name": "valid name"}),
        api.delete(missing),
    ):
        assert response.status_code == 404
        assert set(response.json()) == {"code", "reason"}
    assert api.get(res.path).json() == before


def test_delete_is_hard_and_frees_the_name(
    api: httpx.Client, res: Resource, unique: Unique
) -> None:
    name = unique("gone")
    uuid = create(api, res, name)
    response = api.delete(res.item(uuid))
    assert response.status_code == 200
    assert response.json() == {"code": 200, "message": "success", "uuid": uuid}
    assert api.get(res.item(uuid)).status_code == 404
    assert uuid not in {entry["uuid"] for entry in api.get(res.path).json()}
    assert api.delete(res.item(uuid)).status_code == 404
    assert create(api, res, name) != uuid


@pytest.mark.parametrize("prefix", ["/api/ws/v2", "/api/ws", "/api/v1", ""])
def test_resource_paths_outside_v1_are_not_served(
    api: httpx.Client, res: Resource, unique: Unique, prefix: str
) -> None:
    suffix = res.path.removeprefix(BASE)
    name = unique("ver")
    assert api.get(f"{prefix}{suffix}").status_code == 404
    assert api.post(f"{prefix}{suffix}", json={"name": name}).status_code == 404
    assert name not in names(api, res)
