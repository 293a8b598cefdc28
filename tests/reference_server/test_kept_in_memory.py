"""What the reference server keeps in memory between requests never outlives what it was read from.

The store keeps meta values and small lists, the server its API keys by value and the policy in
force, and routing answers literal paths from a table (issue 15). Each is checked here against
the write, rollback or switch that must make it read again, and against the answer it replaces.
"""

from __future__ import annotations

import re

import pytest

from amws_conformance import spec
from amws_conformance.reference_server import build_server
from amws_conformance.reference_server._errors import ApiError
from amws_conformance.reference_server._pipeline import RequestPolicy
from amws_conformance.reference_server._routing import match
from amws_conformance.reference_server.store import Store


class _Undone(Exception):
    """Raised inside a transaction to roll it back."""


def test_a_listed_record_changed_by_its_reader_is_not_changed_in_the_next_list() -> None:
    store = Store()
    store.insert("department", "s", {"name": "Finance", "tags": ["a"]})
    first = store.all("department", "s")
    first[0]["name"] = "changed"
    first[0]["tags"].append("b")
    first.append({"name": "extra"})
    again = store.all("department", "s")
    assert [(r["name"], r["tags"]) for r in again] == [("Finance", ["a"])]


@pytest.mark.parametrize("write", ["insert", "replace", "delete"])
def test_a_list_read_after_a_write_of_its_kind_shows_the_write(write: str) -> None:
    store = Store()
    kept = store.insert("department", "s", {"name": "Finance"})
    assert [r["name"] for r in store.all("department", "s")] == ["Finance"]
    if write == "insert":
        store.insert("department", "s", {"name": "Sales"})
        expected = ["Finance", "Sales"]
    elif write == "replace":
        store.replace("department", kept, {"name": "Accounts"})
        expected = ["Accounts"]
    else:
        store.delete("department", kept)
        expected = []
    assert [r["name"] for r in store.all("department", "s")] == expected
    assert [r["name"] for r in store.all("department")] == expected


def test_a_list_read_inside_a_rolled_back_transaction_is_not_served_after_it() -> None:
    store = Store()
    store.insert("department", "s", {"name": "Finance"})
    with pytest.raises(_Undone), store.transaction():
        store.insert("department", "s", {"name": "Sales"})
        assert len(store.all("department", "s")) == 2
        raise _Undone
    assert [r["name"] for r in store.all("department", "s")] == ["Finance"]


def test_a_meta_value_set_inside_a_rolled_back_transaction_is_not_served_after_it() -> None:
    store = Store()
    store.set_meta("settings", "before")
    with pytest.raises(_Undone), store.transaction():
        store.set_meta("settings", "inside")
        assert store.meta("settings") == "inside"
        raise _Undone
    assert store.meta("settings") == "before"


def test_the_version_of_a_kind_changes_with_each_write_and_undo_of_it_only() -> None:
    store = Store()
    before = store.version("department")
    store.insert("person", "s", {"name": "Ada"})
    assert store.version("department") == before
    store.insert("department", "s", {"name": "Finance"})
    written = store.version("department")
    assert written != before
    with pytest.raises(_Undone), store.transaction():
        store.insert("department", "s", {"name": "Sales"})
        raise _Undone
    assert store.version("department") not in (before, written)


def test_an_api_key_written_after_a_lookup_is_found_and_a_changed_one_read_again() -> None:
    server = build_server()
    system = server.systems()[0]
    full = next(r for r in server.store.all("apikey", system) if r["name"] == "full")
    assert server.key_by_value(full["value"]) is not None  # the index is built
    new_value = "n" * len(full["value"])
    assert server.key_by_value(new_value) is None
    server.store.insert(
        "apikey", system, {**full, "name": "late", "value": new_value}, unique={"value": new_value}
    )
    found = server.key_by_value(new_value)
    assert found is not None and found.name == "late"
    server.store.replace("apikey", full["uuid"], {**full, "enabled": False})
    again = server.key_by_value(full["value"])
    assert again is not None and not again.enabled


def test_a_key_uuid_sent_as_a_key_value_authenticates_as_nothing() -> None:
    server = build_server()
    record = server.store.all("apikey", server.systems()[0])[0]
    assert server.key_by_value(record["uuid"]) is None


def test_the_policy_in_force_follows_a_switch_of_the_faults() -> None:
    server = build_server()
    correct = server.policy(RequestPolicy)
    assert not correct.path_checked_first()
    server.faults.switch(["path-checked-before-key"])
    assert server.policy(RequestPolicy).path_checked_first()
    server.faults.switch([])
    assert server.policy(RequestPolicy) is correct


def _outcome(method: str, path: str) -> object:
    try:
        op, params = match(method, path)
    except ApiError as error:
        return error.status, error.headers.get("Allow")
    return op.operation_id, params


def _expected(method: str, path: str) -> object:
    found = spec.match(method, path)
    if found is not None:
        return found[0].operation_id, found[1]
    allowed = spec.allowed_methods(path)
    return (405, ", ".join(sorted(allowed))) if allowed else (404, None)


def test_routing_answers_every_documented_path_as_the_spec_routes_it() -> None:
    uuid = "3fa85f64-5717-4562-b3fc-2c963f66afa6"
    paths = {op.path for op in spec.operations()}
    concrete = {re.sub(r"\{[^}]+\}", uuid, p) for p in paths}
    emptied = {re.sub(r"\{[^}]+\}", "", p) for p in paths}
    cases = [
        (method, path)
        for path in sorted(paths | concrete | emptied | {p + "/" for p in concrete})
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH")
    ]
    assert [_outcome(m, p) for m, p in cases] == [_expected(m, p) for m, p in cases]
