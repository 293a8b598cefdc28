"""Conventions every resource shares (doc1 § Resources and fields / Conventions): UUID
identifiers and path values, camelCase answers, and references that must exist.

Timestamps: test_conventions_timestamps.py; acknowledgements, the URL naming the updated record,
hard deletes and dropped references: test_conventions_writes.py; unknown request fields:
test_versioning.py.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from amws_conformance import spec
from amws_conformance.fixtures import Factories
from amws_conformance.suites.rules._conventions import (
    NAMED,
    PERSON_REFS,
    REFERENCES,
    RESOURCES,
    USER_REFS,
    UUID,
    V1,
    Shared,
    create,
    kind_of,
    read,
    rule_ops,
    walk,
)

CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")
# Field names that hold an identifier: a bare id or uuid, or one ending in Id(s) or Uuid(s).
IDENTIFIER = re.compile(r"^(id|uuid)$|(Id|ID|Ids|Uuid|Uuids)$")


# -- transport ----------------------------------------------------------------------------------
def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@pytest.mark.rule("CONV-HTTPS-ONLY")
def test_target_is_published_over_https(profile) -> None:
    parts = urlsplit(profile.base_url)
    assert parts.scheme == "https" or (
        parts.scheme == "http" and _loopback(parts.hostname or "")
    ), f"base_url {profile.base_url} is not https and not a loopback address"


# -- identifiers --------------------------------------------------------------------------------
def _list_ops() -> list[spec.Operation]:
    return [o for o in spec.operations() if o.keyed and o.method == "GET" and not o.path_parameters]


@pytest.fixture
def population(amws_run, api, factories) -> dict[str, Any]:
    """One record of every kind the convention tests walk (read them with ``_answers``).

    ``made``: kind -> uuid, the person and the user referencing every kind they can hold
    (``person_refs``, ``user_refs``), the credential held by that person.

    Made once per run: every record but the person and its credential is one the group's
    other modules share (``Shared``: the longest-named records of the name-only resources, the
    two-field location, the role and the user holding it, the watchlist), none of which any
    test changes. Shared: the camelCase and the identifier tests only read these records."""
    shared = Shared(amws_run, api, factories)
    named = {s: shared.named(s, "longest")["uuid"] for s in NAMED}
    location, user = shared.location()["uuid"], shared.user()
    watchlist = shared.watchlist()["uuid"]

    def make() -> dict[str, Any]:
        refs = {f: named.get(f[0].upper() + f[1:]) or location for f in PERSON_REFS}
        person = api.post(f"{V1}/persons", json=factories.person(**refs))
        assert person.status_code == 201, person.text
        made = {kind_of(s): uuid for s, uuid in named.items()}
        made |= {"location": location, "role": user["refs"]["role"], "user": user["uuid"]}
        made |= {"watchlist": watchlist, "person": person.json()["uuid"]}
        body = factories.credential(personUuid=made["person"])
        answer = api.post(f"{V1}/credentials", json=body)
        assert answer.status_code == 201, answer.text
        made["credential"] = answer.json()["uuid"]
        assert set(made) == set(RESOURCES), "a kind of record is missing"
        return {"made": made, "person_refs": refs, "user_refs": user["refs"]}

    populated: dict[str, Any] = amws_run.shared("ref:population", make)
    return populated


def _answers(api: Any, population: dict[str, Any]) -> list[Any]:
    """The read of the population's person, then of its user, then the answer of every list
    operation: asked by the test itself (after all records were made), so they show the
    target as that test meets it, and a bad answer fails the test."""
    made = population["made"]
    people = [read(api, "person", made["person"]), read(api, "user", made["user"])]
    return [*people, *(api.get(op.path).json() for op in _list_ops())]


@pytest.mark.rule("CONV-UUID-IDENTIFIERS", "CONV-RESPONSE-CONFORMS")
def test_identifiers_are_uuids(api, factories, population: dict[str, Any]) -> None:
    refs, user_refs = population["person_refs"], population["user_refs"]
    documents = _answers(api, population)
    for document in documents:
        for name, value in walk(document):
            if IDENTIFIER.search(name) or name in REFERENCES:
                for item in value if isinstance(value, list) else [value]:
                    assert item is None or (isinstance(item, str) and UUID.fullmatch(item)), (
                        f"{name}={item!r} is not a UUID"
                    )
    assert {f: documents[0][f] for f in refs} == refs
    assert {f: documents[1][f] for f in user_refs} == user_refs
    # An internal (numeric) identifier is never accepted where a UUID is expected.
    for value in (12345, "12345"):
        answer = api.post(f"{V1}/persons", json=factories.person(department=value))
        assert answer.status_code == 422 and "@department" in answer.json()["reason"]


# -- every keyed operation with a UUID path parameter: a non-UUID value is 422 ------------------
OTHER_BODIES: dict[str, Callable[[Factories], Any]] = {
    "createWatchlistEntry": lambda f: f.watchlist_entry(),
    "updateWatchlistEntry": lambda f: f.watchlist_entry(),
    "updateInvite": lambda f: {"firstName": "Changed"},
    "changeInviteStatus": lambda f: {"status": "VISIT_CANCELLED"},
}


def valid_body(op: spec.Operation, factories: Factories, api: Any) -> Any:
    """A valid JSON body for the operation (None when it takes none)."""
    if "application/json" not in (spec.resolve(op.raw.get("requestBody")) or {}).get("content", {}):
        return None
    if op.operation_id in OTHER_BODIES:
        return OTHER_BODIES[op.operation_id](factories)
    return RESOURCES[kind_of(op.operation_id.removeprefix("update"))][2](factories, api)


def _uuid_params(op: spec.Operation) -> list[str]:
    return [
        p["name"]
        for p in op.parameters()
        if p.get("in") == "path" and spec.resolve(p.get("schema", {})).get("format") == "uuid"
    ]


def _bad_path_params() -> list[Any]:
    return [
        pytest.param(op, name, id=f"{op.operation_id}-{name}")
        for op in spec.operations()
        if op.keyed
        for name in _uuid_params(op)
    ]


@pytest.mark.rule("CONV-UUID-PATH-422")
@pytest.mark.parametrize(("op", "param"), _bad_path_params())
def test_non_uuid_path_value_answers_422(api, factories, ledger, op, param) -> None:
    body = valid_body(op, factories, api)
    for bad in (factories.bad_uuid(), "12345"):
        values = {name: ledger.fresh_uuid() for name in _uuid_params(op)} | {param: bad}
        path = op.path
        for name, value in values.items():
            path = path.replace("{" + name + "}", value)
        answer = api.request(op.method, path, json=body)
        assert answer.status_code == 422, f"{op.method} {path} answered {answer.status_code}"


# -- camelCase, references ---------------------------------------------------------------
@pytest.mark.rule("CONV-CAMELCASE-RESPONSES")
def test_response_fields_are_camel_case(
    amws_run, api, factories, ledger, population: dict[str, Any]
) -> None:
    made = population["made"]
    documents = _answers(api, population)
    documents += [
        read(api, kind, made[kind]) for kind in RESOURCES if kind not in ("person", "user")
    ]
    # The invitation (hosted by the population's user) is shared with the 451 test of
    # test_errors.py, which only sends it updates that must be refused: its create answer
    # and a read of it.
    invite = Shared(amws_run, api, factories).invite()
    documents += [invite["created"], api.get(f"{V1}/invites/{invite['registrationId']}").json()]
    documents.append(api.get(f"{V1}/persons/{ledger.fresh_uuid()}").json())
    documents.append(api.post(f"{V1}/departments", json={"name": ""}).json())
    for document in documents:
        for name, _ in walk(document):
            assert CAMEL.match(name), f"response field {name!r} is not camelCase"


# Reference fields per operation of CONV-REFERENCE-MUST-EXIST (credential holders are 404, not
# 422, per the credential rules; only the access control lists fall under this one).
REFERENCE_FIELDS = {
    "Person": PERSON_REFS,
    "User": USER_REFS,
    "Invite": ("hostUser", "visitReason", "location"),
    "Credential": ("accessControlListUuids",),
}


def _reference_params() -> list[Any]:
    return [
        pytest.param(op, field, id=f"{op}-{field}")
        for op in rule_ops("CONV-REFERENCE-MUST-EXIST")
        for field in REFERENCE_FIELDS[op.removeprefix("create").removeprefix("update")]
    ]


def _foreign(client: Any, factories: Factories, field: str) -> str:
    """A record of the reference's kind that exists, but in the other system."""
    if field == "accessControlListUuids":
        return client.get(f"{V1}/access-control-lists").json()[0]["uuid"]
    kind = {"hostUser": "user", "visitReason": "visit_reason"}.get(field) or kind_of(field)
    return create(client, factories, kind)[0]


@pytest.mark.rule("CONV-REFERENCE-MUST-EXIST")
@pytest.mark.parametrize(("op_id", "field"), _reference_params())
def test_reference_must_exist(api, client, profile, factories, ledger, op_id, field) -> None:
    resource = op_id.removeprefix("create").removeprefix("update")
    collection = {"Invite": "/invites"}.get(resource, RESOURCES.get(resource.lower(), [""])[0])
    host = create(api, factories, "user")[0] if resource == "Invite" else ""
    person = create(api, factories, "person")[0] if resource == "Credential" else ""
    bodies = {
        "Person": factories.person,
        "User": factories.user,
        "Invite": lambda: factories.invite(host),
        "Credential": lambda: factories.credential(personUuid=person),
    }
    leftovers = {  # what a wrongly accepted create would have left behind
        "Person": lambda body: api.post(f"{V1}/persons/search", json={"email": body["email"]}),
        "User": lambda body: api.post(f"{V1}/users/search", json={"email": body["email"]}),
        "Invite": lambda body: api.get(f"{V1}/users/{host}/registrations"),
        "Credential": lambda body: api.get(f"{V1}/credentials/by-person/{person}"),
    }
    missing = [ledger.fresh_uuid()]
    if profile.has_key("other_system"):
        missing.append(_foreign(client("other_system"), factories, field))
    for value in missing:
        bad = {field: [value] if field.endswith("Uuids") else value}
        body = bodies[resource]()
        if op_id.startswith("update"):
            created = api.post(V1 + collection, json=body).json()
            uuid = created.get("uuid") or created["registrationId"]
            before = api.get(f"{V1}{collection}/{uuid}").json()
            answer = api.put(f"{V1}{collection}/{uuid}", json={**body, **bad})
            assert api.get(f"{V1}{collection}/{uuid}").json() == before, "the record changed"
        else:
            answer = api.post(V1 + collection, json={**body, **bad})
            found = leftovers[resource](body).json()
            rows = found["entries"] if isinstance(found, dict) else found
            assert rows == [], "a record was created despite the missing reference"
        assert answer.status_code == 422, f"{field} naming no record answered {answer.status_code}"
        assert f"@{field}" in answer.json()["reason"]
