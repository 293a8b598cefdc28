"""Roles: name limits, uniqueness, the single default flag, and delete outcomes in a 200 body.

Tests that move the default flag or address the system's administrator role change records the
run did not create: they carry ``requires("destructive")`` and put the default flag back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from amws_conformance.fixtures._limits import length_range
from amws_conformance.suites.rules._conventions import Shared

PATH = "/api/ws/v1/roles"


def _sized(factories, length: int, taken: list[str] | None = None) -> str:
    """A role name of exactly ``length`` characters no role has (``taken``: the names listed)."""
    return factories.sized_name("role", length, taken or ())


def _create(api, factories, **overrides) -> tuple[str, str]:
    body = factories.role(**overrides)
    response = api.post(PATH, json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"], body["name"]


def _roles(api) -> list[dict]:
    response = api.get(PATH)
    assert response.status_code == 200
    return response.json()


def _names(api) -> list[str]:
    return [role["name"] for role in _roles(api)]


def _defaults(api) -> list[str]:
    return [role["uuid"] for role in _roles(api) if role["default"] is True]


def _user(api, factories, **overrides) -> str:
    response = api.post("/api/ws/v1/users", json=factories.user(**overrides))
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def _refusal(response, code: int) -> None:
    assert response.status_code == 200, f"HTTP {response.status_code}: the refusal is not in a body"
    body = response.json()
    assert (body["code"], body["message"]) == (code, "failed"), body


@contextmanager
def _default_restored(api) -> Iterator[dict]:
    """Yield the system's current default role and make it the default again afterwards."""
    defaults = [role for role in _roles(api) if role["default"] is True]
    assert len(defaults) == 1, f"{len(defaults)} roles are marked default"
    original = defaults[0]
    try:
        yield original
    finally:
        restored = api.foreign.put(
            f"{PATH}/{original['uuid']}", json={"name": original["name"], "default": True}
        )
        assert restored.status_code == 200, "could not give the default flag back"
        assert _defaults(api) == [original["uuid"]], "the original default role was not restored"


@pytest.fixture
def held_role(amws_run, api, factories) -> dict:
    """A role of our own and a user holding it, made once per run (``Shared.role`` and
    ``Shared.user``: the population of test_conventions.py reads them too).

    Shared: the tests given it only read or list it, try to delete it (refused while the user
    holds it), or try to give a second role its name (refused); it never changes."""
    shared = Shared(amws_run, api, factories)
    role = shared.role()
    return {**role, "user": shared.user()["uuid"]}


@pytest.fixture(scope="module")
def bare(api, factories) -> dict:
    """A role whose name is as short as a role name may be: ``uuid``, ``name``, ``status`` of
    the create (the length test's shortest accepted name; it asserts on this very create).

    Shared: the tests given it only read it, send it writes that must be refused (a rename to
    a name another role has), or flag it default for as long as the system's default role
    takes the flag back (the flagging test, which leaves it unflagged); it never changes."""
    name = _sized(factories, length_range("createRole", "name")[0], _names(api))
    created = api.post(PATH, json={"name": name, "default": False})
    if created.status_code == 201:
        return {"uuid": created.json()["uuid"], "name": name, "status": 201}
    # A target refusing the boundary fails the length test (it asserts on ``status``), not
    # the other tests sharing the role: they get a role of an ordinary name.
    uuid, ordinary = _create(api, factories)
    return {"uuid": uuid, "name": ordinary, "status": created.status_code}


# -- fields ----------------------------------------------------------------------------------
@pytest.mark.rule("ROLE-FIELD-REQUIRED")
def test_name_is_required(api, factories) -> None:
    for body in ({}, {"default": False}):
        response = api.post(PATH, json=body)
        assert response.status_code == 422, body
        assert "name" in response.json()["reason"]
    assert all(role.get("name") for role in _roles(api)), "a nameless role was stored"

    # default is optional: the role the refused update is sent to is created without it (here,
    # not in a shared fixture: the create must meet the target as this test finds it)
    name = factories.name_for("createRole", "role")
    created = api.post(PATH, json={"name": name})
    assert created.status_code == 201
    uuid = created.json()["uuid"]
    response = api.put(f"{PATH}/{uuid}", json={"default": False})
    assert response.status_code == 422
    assert "name" in response.json()["reason"]
    stored = api.get(f"{PATH}/{uuid}").json()  # one read serves both checks
    assert stored["name"] == name
    assert stored["default"] is False


@pytest.mark.rule("ROLE-FIELD-LENGTH")
def test_name_length_limits(api, factories, bare: dict) -> None:
    low, high = length_range("createRole", "name")
    # The shortest accepted name is the shared bare role's create.
    assert bare["status"] == 201, f"a {low}-character name answered {bare['status']}"
    assert len(bare["name"]) == low
    refused = []
    for length, accepted in ((low - 1, False), (high, True), (high + 1, False)):
        name = _sized(factories, length)
        response = api.post(PATH, json={"name": name, "default": False})
        assert (response.status_code == 201) is accepted, (length, response.status_code)
        if accepted:
            uuid, stored = response.json()["uuid"], name
        else:
            assert response.status_code == 422
            refused.append(name)
    roles = {role["uuid"]: role["name"] for role in _roles(api)}  # one list after the creates
    assert roles.get(bare["uuid"]) == bare["name"], "the shortest name was not stored"
    for name in refused:
        assert name not in roles.values()

    # The updates go to the role just created with the longest name (no role made for them).
    low, high = length_range("updateRole", "name")
    steps = ((low - 1, False), (low, True), (high, True), (high + 1, False))
    for step, (length, accepted) in enumerate(steps):
        name = _sized(factories, length, list(roles.values()))
        response = api.put(f"{PATH}/{uuid}", json={"name": name, "default": False})
        assert (response.status_code == 200) is accepted, (length, response.status_code)
        if accepted:
            stored = name
        else:
            assert response.status_code == 422
        if accepted and step + 1 < len(steps) and not steps[step + 1][1]:
            continue  # the read after the refused update that follows shows this name too
        assert api.get(f"{PATH}/{uuid}").json()["name"] == stored


# -- writes ----------------------------------------------------------------------------------
@pytest.mark.rule("ROLE-WRITE-ACK")
def test_writes_answer_an_acknowledgement(api, factories) -> None:
    body = factories.role()
    created = api.post(PATH, json=body)
    assert created.status_code == 201
    ack = created.json()
    assert ack["message"] == "success"
    uuid = ack["uuid"]
    assert api.get(f"{PATH}/{uuid}").json()["name"] == body["name"]

    renamed = factories.name_for("updateRole", "role")
    updated = api.put(f"{PATH}/{uuid}", json={"name": renamed, "default": False})
    assert updated.status_code == 200
    assert updated.json()["uuid"] == uuid
    assert api.get(f"{PATH}/{uuid}").json()["name"] == renamed


@pytest.mark.rule("ROLE-NAME-UNIQUE")
def test_duplicate_names_conflict(api, factories, held_role: dict, bare: dict) -> None:
    first, first_name = held_role["uuid"], held_role["name"]
    second, second_name = bare["uuid"], bare["name"]
    assert api.post(PATH, json=factories.role(name=first_name)).status_code == 409
    rename = api.put(f"{PATH}/{second}", json={"name": first_name, "default": False})
    assert rename.status_code == 409

    # One list after both refused writes: no second role under the name, both kept theirs.
    roles = {role["uuid"]: role["name"] for role in _roles(api)}
    assert list(roles.values()).count(first_name) == 1, "the duplicate was stored"
    assert roles.get(first) == first_name
    assert roles.get(second) == second_name, "the refused rename was stored"


# -- reads -----------------------------------------------------------------------------------
@pytest.mark.rule("ROLE-SHAPE")
def test_list_and_read_shape(api, held_role: dict) -> None:
    uuid, name = held_role["uuid"], held_role["name"]
    roles = _roles(api)
    assert isinstance(roles, list)
    for role in roles:
        assert set(role) == {"uuid", "name", "default"}, role
        assert isinstance(role["default"], bool)
    assert {"uuid": uuid, "name": name, "default": False} in roles
    assert api.get(f"{PATH}/{uuid}").json() == {"uuid": uuid, "name": name, "default": False}


@pytest.mark.rule("ROLE-SHAPE")
@pytest.mark.requires("roles")
def test_list_holds_the_system_roles(api, profile) -> None:
    listed = {role["uuid"] for role in _roles(api)}
    for kind in ("administrator", "default"):
        assert profile.data["roles"][kind] in listed, f"the {kind} role is not listed"


@pytest.mark.rule("ROLE-NEW-NO-PERMISSIONS")
def test_new_role_carries_no_permissions(api, factories) -> None:
    # A permissions-like field is not part of the body: it must be ignored, not stored.
    body = {**factories.role(), "permissions": ["Write Users", "Read Users"]}
    created = api.post(PATH, json=body)
    assert created.status_code == 201
    uuid = created.json()["uuid"]
    read = api.get(f"{PATH}/{uuid}").json()
    assert read == {"uuid": uuid, "name": body["name"], "default": False}


@pytest.mark.rule("ROLE-NOT-FOUND")
def test_unknown_uuid_answers_http_404(api, factories, ledger) -> None:
    unknown = ledger.fresh_uuid()
    name = factories.name_for("updateRole", "role")
    for response in (
        api.get(f"{PATH}/{unknown}"),
        api.put(f"{PATH}/{unknown}", json={"name": name, "default": False}),
        api.delete(f"{PATH}/{unknown}"),
    ):
        assert response.status_code == 404, response.request.method
        # An integer code; that it repeats the status is our reading (ERR-BODY-CODE-IS-STATUS).
        assert isinstance(response.json()["code"], int)
    assert name not in {role["name"] for role in _roles(api)}


# -- the default flag --------------------------------------------------------------------
@pytest.mark.rule("ROLE-DEFAULT-FLAG")
def test_exactly_one_default_role_is_given_to_new_users(api, factories) -> None:
    defaults = _defaults(api)
    assert len(defaults) == 1, f"{len(defaults)} roles are marked default"
    user = _user(api, factories)
    assert api.get(f"/api/ws/v1/users/{user}").json()["role"] == defaults[0]


@pytest.mark.rule("ROLE-DEFAULT-FLAG")
@pytest.mark.requires("destructive")
def test_flagging_another_role_default_leaves_one_default(api, factories, bare: dict) -> None:
    """Whether the flag moves or the request is refused is the target's choice; either way one
    role, and only one, reads default afterwards.

    The role updated to default is the shared bare role: when the system's default takes the
    flag back it is not default again (checked there), so it is left as it was; a target that
    leaves it flagged anyway gets it unflagged, so no other test sees the flag."""
    try:
        with _default_restored(api):
            api.post(PATH, json=factories.role(default=True))
            assert len(_defaults(api)) == 1, "a default role created beside the default"
            api.put(f"{PATH}/{bare['uuid']}", json={"name": bare["name"], "default": True})
            assert len(_defaults(api)) == 1, "a role updated to default beside the default"
    finally:
        if api.get(f"{PATH}/{bare['uuid']}").json().get("default") is not False:
            api.put(f"{PATH}/{bare['uuid']}", json={"name": bare["name"], "default": False})


@pytest.mark.rule("ROLE-DEFAULT-FLAG-MOVES")
@pytest.mark.requires("destructive")
def test_default_flag_moves_to_the_role_that_takes_it(api, factories) -> None:
    with _default_restored(api) as original:
        created, _ = _create(api, factories, default=True)
        assert _defaults(api) == [created], "creating a default role did not move the flag"
        assert api.get(f"{PATH}/{original['uuid']}").json()["default"] is False
        user = _user(api, factories)
        assert api.get(f"/api/ws/v1/users/{user}").json()["role"] == created

        updated, name = _create(api, factories)
        assert api.put(f"{PATH}/{updated}", json={"name": name, "default": True}).status_code == 200
        assert _defaults(api) == [updated], "updating a role to default did not move the flag"


# -- delete outcomes -------------------------------------------------------------------------
@pytest.mark.rule("ROLE-DELETE-SUCCESS")
def test_unused_role_delete_succeeds(api, factories) -> None:
    uuid, _ = _create(api, factories)
    deleted = api.delete(f"{PATH}/{uuid}")
    assert deleted.status_code == 200
    assert (deleted.json()["code"], deleted.json()["message"]) == (200, "success")
    assert api.get(f"{PATH}/{uuid}").status_code == 404
    assert uuid not in {role["uuid"] for role in _roles(api)}


@pytest.mark.rule("ROLE-DELETE-HAS-ACCOUNTS")
def test_role_with_accounts_is_refused_with_412(api, held_role: dict) -> None:
    uuid, name, user = held_role["uuid"], held_role["name"], held_role["user"]
    _refusal(api.delete(f"{PATH}/{uuid}"), 412)
    assert api.get(f"{PATH}/{uuid}").json() == {"uuid": uuid, "name": name, "default": False}
    assert api.get(f"/api/ws/v1/users/{user}").json()["role"] == uuid


@pytest.mark.rule("ROLE-DELETE-ADMINISTRATOR")
@pytest.mark.requires("roles")
@pytest.mark.requires("destructive")
def test_administrator_role_is_refused_with_417(api, profile) -> None:
    admin = profile.data["roles"]["administrator"]
    before = api.get(f"{PATH}/{admin}").json()
    _refusal(api.foreign.delete(f"{PATH}/{admin}"), 417)
    assert api.get(f"{PATH}/{admin}").json() == before


@pytest.mark.rule("ROLE-DELETE-DEFAULT")
@pytest.mark.requires("destructive")
def test_default_role_is_refused_with_424(api, factories) -> None:
    # Our own role, made the default and held by no account: only the default flag stands in
    # the way of the delete. The system's own default role gets the flag back afterwards.
    with _default_restored(api):
        uuid, name = _create(api, factories, default=True)
        _refusal(api.delete(f"{PATH}/{uuid}"), 424)
        assert api.get(f"{PATH}/{uuid}").json() == {"uuid": uuid, "name": name, "default": True}
