"""Timestamps in and out (doc1 § Conventions): offsets converted to UTC, no offset read as UTC,
answers in UTC with milliseconds, and unreadable values refused."""

from __future__ import annotations

import re
from typing import Any

import pytest

from amws_conformance.fixtures import Factories
from amws_conformance.suites.rules._conventions import V1, Shared, person_of

UTC_MILLIS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(Z|\+00:?00)$")


# -- timestamps -------------------------------------------------------------------------------
# (create op, collection, field, extra body) for each resource of the timestamp rules
STAMPED = {
    "location": ("/locations", "effectiveDate", lambda f, api: f.location()),
    "person": ("/persons", "activeDate", lambda f, api: f.person()),
    "user": ("/users", "accountActiveDate", lambda f, api: f.user()),
    "credential": (
        "/credentials",
        "activeDate",
        lambda f, api: f.credential(personUuid=person_of(api, f), expiryDate=None),
    ),
}
LOCAL = "2030-01-01T10:00:00.000"


def _stored(api: Any, f: Factories, kind: str, value: str, uuid: str | None = None) -> Any:
    """Write ``value`` into the resource's timestamp field (a create, or an update of ``uuid``)
    and answer (response, stored value)."""
    collection, field, body_of = STAMPED[kind]
    if uuid and kind == "location":  # a partial update: the location may be a shared one
        body = {}
    else:
        body = {k: v for k, v in body_of(f, api).items() if v is not None}
    if uuid:
        answer = api.put(f"{V1}{collection}/{uuid}", json={**body, field: value})
    else:
        answer = api.post(V1 + collection, json={**body, field: value})
        uuid = answer.json().get("uuid")
    if answer.status_code not in (200, 201):
        return answer, None
    return answer, api.get(f"{V1}{collection}/{uuid}").json()[field]


def _record(amws_run: Any, api: Any, f: Factories, kind: str) -> str:
    """A record of the kind whose timestamp the test then updates. For a location it is the
    group's scratch location (``Shared.scratch``: effectiveDate belongs to these tests, which
    write it before reading it); for the others one made here, whose first value is not read."""
    if kind == "location":
        return Shared(amws_run, api, f).scratch()
    collection, field, body_of = STAMPED[kind]
    body = {k: v for k, v in body_of(f, api).items() if v is not None}
    created = api.post(V1 + collection, json={**body, field: LOCAL + "Z"})
    assert created.status_code == 201, created.text
    return str(created.json()["uuid"])


@pytest.mark.rule("CONV-TIMESTAMP-OFFSET-CONVERTED")
@pytest.mark.parametrize("update", [False, True], ids=["create", "update"])
@pytest.mark.parametrize("kind", list(STAMPED))
def test_offset_is_converted_to_utc(amws_run, api, factories, kind: str, update: bool) -> None:
    uuid = _record(amws_run, api, factories, kind) if update else None
    for offset, utc in (
        ("+02:00", "08:00"),
        ("+0200", "08:00"),
        ("-05:30", "15:30"),
        ("-0530", "15:30"),
    ):
        answer, stored = _stored(api, factories, kind, LOCAL + offset, uuid)
        assert answer.status_code in (200, 201), answer.text
        # UTC may be written Z or +00:00 (CONV-TIMESTAMP-UTC-MILLIS): the instant decides.
        in_utc = stored.replace("+00:00", "Z").replace("+0000", "Z") if stored else stored
        assert in_utc == f"2030-01-01T{utc}:00.000Z", f"{LOCAL}{offset} came back as {stored}"


@pytest.mark.rule("CONV-TIMESTAMP-NO-OFFSET-UTC")
@pytest.mark.parametrize("kind", list(STAMPED))
def test_timestamp_without_offset_is_utc(api, factories, kind: str) -> None:
    answer, stored = _stored(api, factories, kind, LOCAL)
    assert answer.status_code == 201, answer.text
    assert stored == LOCAL + "Z"


@pytest.mark.rule("CONV-TIMESTAMP-UTC-MILLIS")
@pytest.mark.parametrize("kind", list(STAMPED))
def test_timestamps_come_back_utc_with_milliseconds(amws_run, api, factories, kind: str) -> None:
    # The rule is about the answers: each value is written (a create each, or for a location
    # an update of the shared scratch location, see ``_record``) and read back.
    uuid = _record(amws_run, api, factories, kind) if kind == "location" else None
    for sent, expected in (
        ("2030-01-01T10:00:00Z", "2030-01-01T10:00:00.000"),
        ("2030-01-01T10:00:00.123456+01:00", "2030-01-01T09:00:00.123"),
        ("2030-01-01T10:00:00.5-01:00", "2030-01-01T11:00:00.500"),
    ):
        _, stored = _stored(api, factories, kind, sent, uuid)
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
    # The last is no real date, yet fits the spec's pattern (which keeps each month's days
    # but no leap years): only a parse of the value refuses it.
    for bad in (
        "tomorrow",
        "2030-13-45T99:00:00.000Z",
        "2030-02-30T10:00:00.000Z",
        "2030-02-29T10:00:00.000Z",
    ):
        if update:
            answer = api.put(f"{V1}{collection}/{uuid}", json={**body, field: bad})
            assert api.get(f"{V1}{collection}/{uuid}").json() == before, "the record changed"
        else:
            answer = api.post(V1 + collection, json={**body, field: bad})
        assert answer.status_code == 422, f"{field}={bad!r} answered {answer.status_code}"
        assert f"@{field}" in answer.json()["reason"]
    if not update and "name" in body:  # nothing was created under the body's unique name
        assert body["name"] not in {r["name"] for r in api.get(V1 + collection).json()}
