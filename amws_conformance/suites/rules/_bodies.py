"""Valid request bodies for any operation, and the records they and the operation's path refer
to: what the generated tests (errors, bounds, query bounds) send so that only the part under
test can be wrong."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from amws_conformance import spec
from amws_conformance.fixtures import Factories

V1 = "/api/ws/v1"

# Valid create bodies; ``new(collection)`` makes a record the body refers to.
CREATE_BODIES: dict[str, Callable[[Factories, Callable[[str], str]], dict[str, Any]]] = {
    "createLocation": lambda f, new: f.location(),
    "createRole": lambda f, new: f.role(),
    "createPerson": lambda f, new: f.person(),
    "createUser": lambda f, new: f.user(),
    "createWatchlist": lambda f, new: f.watchlist(),
    "createWatchlistEntry": lambda f, new: f.watchlist_entry(),
    "createCredential": lambda f, new: f.credential(personUuid=new("/persons")),
    "createInvite": lambda f, new: f.invite(new("/users")),
}
STATUS_CHANGE = {"status": "VISIT_CANCELLED"}


def takes_json(op: spec.Operation) -> bool:
    body = spec.resolve(op.raw.get("requestBody")) or {}
    return "application/json" in body.get("content", {})


class Maker:
    """Creates (with the full key) the records an operation's path or body needs."""

    def __init__(self, api: Any, factories: Factories) -> None:
        self.api, self.f = api, factories

    def create_body(self, create_op: str) -> dict[str, Any]:
        make = CREATE_BODIES.get(create_op)
        if make is None:  # the name-only resources
            return self.f.named(create_op, "rec")
        return make(self.f, lambda collection: self.new(V1 + collection))

    def new(self, collection: str) -> str:
        found = spec.match("POST", collection)
        assert found, f"the spec has no create operation at {collection}"
        response = self.api.post(collection, json=self.create_body(found[0].operation_id))
        assert response.status_code == 201, f"creating at {collection}: {response.text}"
        return response.json().get("uuid") or response.json()["registrationId"]

    def path(self, template: str) -> str:
        """The template with every parameter naming a record made for it."""
        done: list[str] = []
        for part in template.split("/"):
            done.append(self.new("/".join(done)) if part.startswith("{") else part)
        return "/".join(done)

    def body(self, op: spec.Operation) -> dict[str, Any] | None:
        """A valid body for the operation: its own create body, or its collection's."""
        if not takes_json(op):
            return None
        if op.operation_id == "changeInviteStatus":
            return STATUS_CHANGE
        collection = op.path if op.method == "POST" else op.path.rsplit("/", 1)[0]
        return self.create_body(spec.match("POST", collection)[0].operation_id)
