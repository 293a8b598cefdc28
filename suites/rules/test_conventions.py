"""Conventions every resource shares (doc1 § Resources and fields / Conventions).

UUID identifiers and path values, timestamps in and out, acknowledgements instead of records,
the URL naming the updated record, hard deletes that drop references, camelCase answers,
and references that must exist. (Unknown request fields: test_versioning.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import spec
from fixtures import Factories

V1 = "/api/ws/v1"
UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
UTC_MILLIS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(Z|\+00:?00)$")
CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")


# -- resources: (collection, create body, update body, GET path of a record) -------------------
def _named(create: str, update: str, kind: str) -> tuple[Callable, Callable]:
    return (lambda f, api: f.named(create, kind)), (lambda f, api: f.named(update, kind))


def _person_of(api: Any, f: Factories) -> str:
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
        lambda f, api: f.credential(personUuid=_person_of(api, f)),
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


def _rule_ops(rule_id: str) -> tuple[str, ...]:
    return next(r for r in spec.rules() if r.id == rule_id).operations


# -- identifiers --------------------------------------------------------------------------------
def _kind(name: str) -> str:
    """The resource kind of an operation suffix or reference field (CostCenter, costCenter)."""
    wanted = name[0].upper() + name[1:]
    return next(k for k in RESOURCES if k.title().replace("_", "") == wanted)


def _list_ops() -> list[spec.Operation]:
    return [o for o in spec.operations() if o.keyed and o.method == "GET" and not o.path_parameters]


@pytest.mark.rule("CONV-UUID-IDENTIFIERS", "CONV-RESPONSE-CONFORMS")
def test_identifiers_are_uuids(api, factories) -> None:
    refs = {f: create(api, factories, _kind(f))[0] for f in PERSON_REFS}
    person = api.post(f"{V1}/persons", json=factories.person(**refs)).json()["uuid"]
    user_refs = {f: refs.get(f) or create(api, factories, _kind(f))[0] for f in USER_REFS}
    user = api.post(f"{V1}/users", json=factories.user(**user_refs)).json()["uuid"]
    documents = [read(api, "person", person), read(api, "user", user)]
    documents += [api.get(op.path).json() for op in _list_ops()]
    for document in documents:
        for name, value in walk(document):
            if name == "uuid" or name.endswith(("Uuid", "Id", "Uuids")) or name in REFERENCES:
                for item in value if isinstance(value, list) else [value]:
                    assert item is None or (isinstance(item, str) and UUID.match(item)), (
                        f"{name}={item!r} is not a UUID"
                    )
    assert {f: documents[0][f] for f in refs} == refs
    assert {f: documents[1][f] for f in user_refs} == user_refs
    # An internal (numeric) identifier is never accepted where a UUID is expected.
    for value in (12345, "12345"):
        answer = api.post(f"{V1}/persons", json=factories.person(department=value))
        assert answer.status_code == 422 and "@department" in answer.json()["reason"]


PERSON_REFS = ("department", "organisation", "group", "costCenter", "location")
USER_REFS = ("department", "organisation", "group", "location", "role")
REFERENCES = (*PERSON_REFS, "role", "hostUser", "visitReason")


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
    return RESOURCES[_kind(op.operation_id.removeprefix("update"))][2](factories, api)


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


# -- timestamps -------------------------------------------------------------------------------
# (create op, collection, field, extra body) for each resource of the timestamp rules
STAMPED = {
    "location": ("/locations", "effectiveDate", lambda f, api: f.location()),
    "person": ("/persons", "activeDate", lambda f, api: f.person()),
    "user": ("/users", "accountActiveDate", lambda f, api: f.user()),
    "credential": (
        "/credentials",
        "activeDate",
        lambda f, api: f.credential(personUuid=_person_of(api, f), expiryDate=None),
    ),
}
LOCAL = "2030-01-01T10:00:00.000"


def _stored(api: Any, f: Factories, kind: str, value: str, uuid: str | None = None) -> Any:
    """Write ``value`` into the resource's timestamp field (a create, or an update of ``uuid``)
    and answer (response, stored value)."""
    collection, field, body_of = STAMPED[kind]
    body = {k: v for k, v in body_of(f, api).items() if v is not None}
    if uuid:
        answer = api.put(f"{V1}{collection}/{uuid}", json={**body, field: value})
    else:
        answer = api.post(V1 + collection, json={**body, field: value})
        uuid = answer.json().get("uuid")
    if answer.status_code not in (200, 201):
        return answer, None
    return answer, api.get(f"{V1}{collection}/{uuid}").json()[field]


@pytest.mark.rule("CONV-TIMESTAMP-OFFSET-CONVERTED")
@pytest.mark.parametrize("update", [False, True], ids=["create", "update"])
@pytest.mark.parametrize("kind", list(STAMPED))
def test_offset_is_converted_to_utc(api, factories, kind: str, update: bool) -> None:
    uuid = _stored(api, factories, kind, LOCAL + "Z")[0].json()["uuid"] if update else None
    for offset, utc in (
        ("+02:00", "08:00"),
        ("+0200", "08:00"),
        ("-05:30", "15:30"),
        ("-0530", "15:30"),
    ):
        answer, stored = _stored(api, factories, kind, LOCAL + offset, uuid)
        assert answer.status_code in (200, 201), answer.text
        assert stored == f"2030-01-01T{utc}:00.000Z", f"{LOCAL}{offset} came back as {stored}"


@pytest.mark.rule("CONV-TIMESTAMP-NO-OFFSET-UTC")
@pytest.mark.parametrize("kind", list(STAMPED))
def test_timestamp_without_offset_is_utc(api, factories, kind: str) -> None:
    answer, stored = _stored(api, factories, kind, LOCAL)
    assert answer.status_code == 201, answer.text
    assert stored == LOCAL + "Z"


@pytest.mark.rule("CONV-TIMESTAMP-UTC-MILLIS")
@pytest.mark.parametrize("kind", list(STAMPED))
def test_timestamps_come_back_utc_with_milliseconds(api, factories, kind: str) -> None:
    for sent, expected in (
        ("2030-01-01T10:00:00Z", "2030-01-01T10:00:00.000"),
        ("2030-01-01T10:00:00.123456+01:00", "2030-01-01T09:00:00.123"),
        ("2030-01-01T10:00:00.5-01:00", "2030-01-01T11:00:00.500"),
    ):
        _, stored = _stored(api, factories, kind, sent)
        assert stored is not None and UTC_MILLIS.match(stored), f"{sent} came back as {stored}"
        assert stored[:23] == expected, f"{sent} came back as {stored}"


@pytest.mark.rule("CONV-TIMESTAMP-UNPARSABLE-422")
@pytest.mark.parametrize("update", [False, True], ids=["create", "update"])
@pytest.mark.parametrize("kind", list(STAMPED))
def test_unparsable_timestamp_answers_422(api, factories, kind: str, update: bool) -> None:
    collection, field, body_of = STAMPED[kind]
    body = {k: v for k, v in body_of(factories, api).items() if v is not None}
    uuid = api.post(V1 + collection, json=body).json()["uuid"] if update else None
    before = api.get(f"{V1}{collection}/{uuid}").json() if update else None
    for bad in ("tomorrow", "2030-13-45T99:00:00.000Z", "2030-02-30T10:00:00.000Z"):
        if update:
            answer = api.put(f"{V1}{collection}/{uuid}", json={**body, field: bad})
            assert api.get(f"{V1}{collection}/{uuid}").json() == before, "the record changed"
        else:
            answer = api.post(V1 + collection, json={**body, field: bad})
        assert answer.status_code == 422, f"{field}={bad!r} answered {answer.status_code}"
        assert f"@{field}" in answer.json()["reason"]
    if not update and "name" in body:  # nothing was created under the body's unique name
        assert body["name"] not in {r["name"] for r in api.get(V1 + collection).json()}


# -- acknowledgements, body uuid, hard deletes, dropped references ----------------------------
def _suffixes(rule_id: str, verb: str) -> list[str]:
    return [op[len(verb) :] for op in _rule_ops(rule_id) if op.startswith(verb)]


def _assert_ack(answer: Any, uuid: str | None, record_fields: set[str]) -> str:
    body = answer.json()
    assert isinstance(body.get("code"), int) and body.get("message") == "success", body
    assert UUID.match(str(body.get("uuid"))) and uuid in (None, body["uuid"]), body
    leaked = (record_fields - {"uuid", "code", "message"}) & set(body)
    assert not leaked, f"the acknowledgement carries record fields {sorted(leaked)}"
    return body["uuid"]


@pytest.mark.rule("CONV-WRITE-ACKNOWLEDGEMENT")
@pytest.mark.parametrize("suffix", _suffixes("CONV-WRITE-ACKNOWLEDGEMENT", "create"))
def test_write_answers_acknowledgement(api, factories, ledger, suffix: str) -> None:
    kind = _kind(suffix)
    collection, body_of, update_of = RESOURCES[kind]
    created = api.post(V1 + collection, json=body_of(factories, api))
    assert created.status_code == 201
    fields = set(read(api, kind, created.json()["uuid"]))
    uuid = _assert_ack(created, None, fields)
    updated = api.put(f"{V1}{collection}/{uuid}", json=update_of(factories, api))
    assert updated.status_code == 200
    _assert_ack(updated, uuid, fields)
    if suffix in _suffixes("CONV-WRITE-ACKNOWLEDGEMENT", "delete"):
        deleted = api.delete(f"{V1}{collection}/{uuid}")
        assert deleted.status_code == 200
        _assert_ack(deleted, uuid, fields)
        ledger.forget(uuid)


@pytest.mark.rule("CONV-UPDATE-BODY-UUID-IGNORED")
@pytest.mark.parametrize("suffix", _suffixes("CONV-UPDATE-BODY-UUID-IGNORED", "update"))
def test_update_ignores_uuid_in_body(api, factories, suffix: str) -> None:
    if suffix == "WatchlistEntry":
        watchlist, _ = create(api, factories, "watchlist")
        collection = f"{V1}/watchlists/{watchlist}/entries"
        first, second = (
            api.post(collection, json=factories.watchlist_entry()).json()["uuid"] for _ in "ab"
        )
        change = factories.watchlist_entry()
    else:
        kind = _kind(suffix)
        collection = V1 + RESOURCES[kind][0]
        first, second = create(api, factories, kind)[0], create(api, factories, kind)[0]
        change = RESOURCES[kind][2](factories, api)
    untouched = api.get(f"{collection}/{second}").json()
    answer = api.put(f"{collection}/{first}", json={**change, "uuid": second})
    assert answer.status_code == 200, answer.text
    stored = api.get(f"{collection}/{first}").json()
    assert stored["uuid"] == first
    field = next(iter(change))
    assert stored[field] == change[field], "the URL record did not take the update"
    assert api.get(f"{collection}/{second}").json() == untouched, "the body's record changed"


@pytest.mark.rule("CONV-HARD-DELETE")
@pytest.mark.parametrize("suffix", _suffixes("CONV-HARD-DELETE", "delete"))
def test_delete_is_hard(api, factories, ledger, suffix: str) -> None:
    kind = _kind(suffix)
    uuid, _ = create(api, factories, kind)
    collection = V1 + RESOURCES[kind][0]
    answer = api.delete(f"{collection}/{uuid}")
    assert answer.status_code == 200 and answer.json().get("code") == 200, answer.text
    ledger.forget(uuid)
    assert api.get(f"{collection}/{uuid}").status_code == 404
    assert uuid not in {r["uuid"] for r in api.get(collection).json()}


@pytest.mark.rule("CONV-DELETE-DROPS-REFERENCES")
@pytest.mark.parametrize("suffix", _suffixes("CONV-DELETE-DROPS-REFERENCES", "delete"))
def test_delete_drops_references(api, factories, ledger, suffix: str) -> None:
    field = suffix[0].lower() + suffix[1:]
    target, _ = create(api, factories, _kind(field))
    person = api.post(f"{V1}/persons", json=factories.person(**{field: target})).json()["uuid"]
    holders = [("person", person)]
    if field in USER_REFS:  # users carry no cost center (doc2)
        user = api.post(f"{V1}/users", json=factories.user(**{field: target})).json()["uuid"]
        holders.append(("user", user))
    for kind, uuid in holders:
        assert read(api, kind, uuid)[field] == target
    answer = api.delete(f"{V1}{RESOURCES[_kind(field)][0]}/{target}")
    assert answer.status_code == 200, "the delete was refused because of references"
    ledger.forget(target)
    for kind, uuid in holders:
        assert read(api, kind, uuid).get(field) is None, f"the {kind} still points at it"


# -- camelCase, references ---------------------------------------------------------------
@pytest.mark.rule("CONV-CAMELCASE-RESPONSES")
def test_response_fields_are_camel_case(api, factories, ledger) -> None:
    documents = []
    for kind in RESOURCES:
        uuid, _ = create(api, factories, kind)
        documents.append(read(api, kind, uuid))
    documents += [api.get(op.path).json() for op in spec.operations()
                  if op.keyed and op.method == "GET" and not op.path_parameters]  # fmt: skip
    host = create(api, factories, "user")[0]
    invite = api.post(f"{V1}/invites", json=factories.invite(host)).json()
    documents += [invite, api.get(f"{V1}/invites/{invite['registrationId']}").json()]
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
        for op in _rule_ops("CONV-REFERENCE-MUST-EXIST")
        for field in REFERENCE_FIELDS[op.removeprefix("create").removeprefix("update")]
    ]


def _foreign(client: Any, factories: Factories, field: str) -> str:
    """A record of the reference's kind that exists, but in the other system."""
    if field == "accessControlListUuids":
        return client.get(f"{V1}/access-control-lists").json()[0]["uuid"]
    kind = {"hostUser": "user", "visitReason": "visit_reason"}.get(field) or _kind(field)
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
