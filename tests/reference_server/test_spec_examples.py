"""The request examples of the spec are requests the reference server accepts.

schemathesis sends them in its examples phase and client authors copy them, so an example the
server refuses for anything but a record it does not hold (the examples name departments, hosts
and lists of a deployment that a fresh server does not have) is a defect of the example.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from amws_conformance import spec
from amws_conformance.spec._load import resolve
from tests.reference_server.conftest import LiveServer

JSON = "application/json"
# The 422 messages of a reference to a record the deployment does not hold.
MISSING = ("does not exist", "matches no location")


def _request_examples() -> Iterator[tuple[str, int, Any]]:
    """(operation id, index, body) of the JSON request examples of keyed operations whose path
    names no record (the creates, searches and the match check)."""
    for op in spec.operations():
        body = resolve(op.raw.get("requestBody") or {}).get("content", {}).get(JSON)
        if body is None or op.path_parameters or not op.keyed:
            continue
        found = [body["example"]] if "example" in body else []
        found += resolve(body.get("schema", {})).get("examples", [])
        for i, example in enumerate(found):
            yield op.operation_id, i, example


EXAMPLES = list(_request_examples())


@pytest.fixture(scope="module")
def client() -> Iterator[httpx.Client]:
    with LiveServer() as live, live.client() as api:
        yield api


def test_the_creates_searches_and_match_have_examples() -> None:
    covered = {operation_id for operation_id, _, _ in EXAMPLES}
    assert {"createDepartment", "createPerson", "searchUsers", "matchWatchlists"} <= covered


@pytest.mark.parametrize(
    ("operation_id", "index", "body"), EXAMPLES, ids=[f"{e[0]}-{e[1]}" for e in EXAMPLES]
)
def test_request_example_is_accepted(
    client: httpx.Client, operation_id: str, index: int, body: Any
) -> None:
    op = spec.operation(operation_id)
    answer = client.request(op.method, op.path, json=body)
    if answer.status_code < 300:
        return
    if answer.status_code == 404 and operation_id == "createCredential":
        return  # CRED-HOLDER-NOT-FOUND: the example's holder is not in this deployment
    assert answer.status_code == 422, (answer.status_code, answer.text)
    errors = answer.json()["errors"]
    assert all(message.endswith(MISSING) for message in errors.values()), errors
