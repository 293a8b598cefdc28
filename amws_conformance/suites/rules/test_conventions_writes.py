"""Writes (doc1 § Conventions): acknowledgements instead of records, the URL naming the updated
record, hard deletes, and deletes that drop the references to the deleted record."""

from __future__ import annotations

from typing import Any

import pytest

from amws_conformance.suites.rules._conventions import (
    NAMED,
    RESOURCES,
    USER_REFS,
    UUID,
    V1,
    Shared,
    create,
    kind_of,
    read,
    rule_ops,
)


# -- acknowledgements, body uuid, hard deletes, dropped references ----------------------------
def _suffixes(rule_id: str, verb: str) -> list[str]:
    return [op[len(verb) :] for op in rule_ops(rule_id) if op.startswith(verb)]


def _assert_ack(answer: Any, uuid: str | None, record_fields: set[str]) -> str:
    body = answer.json()
    assert isinstance(body.get("code"), int) and body.get("message") == "success", body
    assert UUID.fullmatch(str(body.get("uuid"))) and uuid in (None, body["uuid"]), body
    leaked = (record_fields - {"uuid", "code", "message"}) & set(body)
    assert not leaked, f"the acknowledgement carries record fields {sorted(leaked)}"
    return body["uuid"]


@pytest.mark.rule("CONV-WRITE-ACKNOWLEDGEMENT")
@pytest.mark.parametrize("suffix", _suffixes("CONV-WRITE-ACKNOWLEDGEMENT", "create"))
def test_write_answers_acknowledgement(api, factories, ledger, suffix: str) -> None:
    kind = kind_of(suffix)
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


@pytest.mark.rule("CONV-ACK-CODE-IS-STATUS")
def test_acknowledgement_code_repeats_the_status(api, factories, ledger) -> None:
    collection = V1 + RESOURCES["department"][0]
    created = api.post(collection, json=factories.named("createDepartment", "dept"))
    assert (created.status_code, created.json().get("code")) == (201, 201), created.text
    uuid = created.json()["uuid"]
    for answer in (
        api.put(f"{collection}/{uuid}", json=factories.named("updateDepartment", "dept")),
        api.delete(f"{collection}/{uuid}"),
    ):
        assert (answer.status_code, answer.json().get("code")) == (200, 200), answer.text
    ledger.forget(uuid)


@pytest.mark.rule("CONV-UPDATE-BODY-UUID-IGNORED")
@pytest.mark.parametrize("suffix", _suffixes("CONV-UPDATE-BODY-UUID-IGNORED", "update"))
def test_update_ignores_uuid_in_body(amws_run, api, factories, suffix: str) -> None:
    shared = Shared(amws_run, api, factories)
    if suffix in NAMED:
        # The record named in the body is the group's shared one with the longest name
        # (``Shared.named``): on a conforming target this update leaves it as it was.
        collection = V1 + NAMED[suffix]
        first = create(api, factories, kind_of(suffix))[0]
        second = shared.named(suffix, "longest")["uuid"]
        change = RESOURCES[kind_of(suffix)][2](factories, api)
    elif suffix == "Location":
        # Both are the group's shared locations: the update goes to the scratch location, whose
        # every field its owners write before reading (``Shared.scratch``), and names the
        # two-field location, which a conforming target leaves as it was (``Shared.location``).
        collection = V1 + RESOURCES["location"][0]
        first, second = shared.scratch(), shared.location()["uuid"]
        change = RESOURCES["location"][2](factories, api)
    elif suffix == "WatchlistEntry":
        watchlist, _ = create(api, factories, "watchlist")
        collection = f"{V1}/watchlists/{watchlist}/entries"
        first, second = (
            api.post(collection, json=factories.watchlist_entry()).json()["uuid"] for _ in "ab"
        )
        change = factories.watchlist_entry()
    else:
        kind = kind_of(suffix)
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
    kind = kind_of(suffix)
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
    target, _ = create(api, factories, kind_of(field))
    person = api.post(f"{V1}/persons", json=factories.person(**{field: target})).json()["uuid"]
    holders = [("person", person)]
    if field in USER_REFS:  # users carry no cost center (doc2)
        user = api.post(f"{V1}/users", json=factories.user(**{field: target})).json()["uuid"]
        holders.append(("user", user))
    for kind, uuid in holders:
        assert read(api, kind, uuid)[field] == target
    answer = api.delete(f"{V1}{RESOURCES[kind_of(field)][0]}/{target}")
    assert answer.status_code == 200, "the delete was refused because of references"
    ledger.forget(target)
    for kind, uuid in holders:
        assert read(api, kind, uuid).get(field) is None, f"the {kind} still points at it"
