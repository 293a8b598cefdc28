"""Finding persons (PERS-SEARCH- rules): the required body, paging ranges, criterion lengths,
case-insensitive contains matching on every criterion, the conjunction of criteria, the hidden
identity number and the answer's shape. And that a deleted person is found nowhere afterwards
(PERS-DELETE- rules): not by GET or search, not as a credential's holder (the credentials stay,
unassigned), not in a hardware phonebook, and no QR code in its name.

Every person a test searches for carries a run-tagged token no other record has, so the tests
hold on a system full of other people. Ranges and lengths are read from the spec.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fixtures._limits import body_schema, field_schema

PERSONS = "/api/ws/v1/persons"
SEARCH = f"{PERSONS}/search"
CREDENTIALS = "/api/ws/v1/credentials"
DAY = timedelta(days=1)
SCHEMA = body_schema("searchPersons")
CRITERIA = [f for f in SCHEMA["properties"] if f not in ("start", "limit")]
# search criterion -> the person field it is matched on
MATCHED_ON = {"mobileNumber": "mobile", "identityNr": "identityNumber"}
ROW_FIELDS = {"uuid", "firstName", "lastName", "email", "mobile"}
ENVELOPE = {"entries", "startIndex", "countReturned", "totalCount"}


# -- helpers -----------------------------------------------------------------------------
def _limit_range() -> tuple[int, int]:
    limit = field_schema("searchPersons", "limit")
    return int(limit["minimum"]), int(limit["maximum"])


def _token(factories: Any) -> str:
    """A run-unique text that ends in a delimiter, so no other token contains it (a long run
    id is shortened with a digest, so the names built on it stay within their limits)."""
    tag = factories.tag("srch").replace("-", "")
    if len(tag) > 24:
        tag = tag[:12] + hashlib.sha256(tag.encode()).hexdigest()[:10]
    return tag + "Q"


def _digits(factories: Any, count: int) -> str:
    return "".join(str(factories.random.randrange(10)) for _ in range(count))


def _person(api: Any, factories: Any, token: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    """A person whose every searchable field carries ``token`` (mobile: its own digits)."""
    searchable = {
        "firstName": f"Fn{token}Ab",
        "lastName": f"Roosevelt{token}Cd",
        "email": f"em.{token}.x@example.com".lower(),
        "mobile": f"+27{_digits(factories, 9)}",
        "identityNumber": f"Id{token}E{_digits(factories, 8)}f",
    }
    body = factories.person(**{**searchable, **fields})
    response = api.post(PERSONS, json=body)
    assert response.status_code == 201, response.text
    return response.json()["uuid"], body


def _created(api: Any, factories: Any) -> str:
    response = api.post(PERSONS, json=factories.person())
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def _credential(api: Any, factories: Any, amws_run: Any, person: str, **extra: Any) -> str:
    """A credential the person holds, open now on the target's clock."""
    now = datetime.fromtimestamp(amws_run.target_clock(), UTC)
    window = {"activeDate": _iso(now - timedelta(hours=1)), "expiryDate": _iso(now + 30 * DAY)}
    response = api.post(
        CREDENTIALS, json=factories.credential(personUuid=person, **window, **extra)
    )
    assert response.status_code == 201, response.text
    return response.json()["uuid"]


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _hardware(control: Any) -> list[dict[str, Any]]:
    """What each controller holds now (control plane)."""
    inside = control.base_url.path.rstrip("/").endswith("/_reference")
    response = control.get(("" if inside else "/_reference") + "/hardware/credentials")
    assert response.status_code == 200, response.text
    return response.json()


def _search(api: Any, **body: Any) -> dict[str, Any]:
    response = api.post(SEARCH, json=body)
    assert response.status_code == 200, (body, response.status_code, response.text)
    return response.json()


def _uuids(page: dict[str, Any]) -> list[str]:
    return [row["uuid"] for row in page["entries"]]


# -- body and paging ---------------------------------------------------------------------
@pytest.mark.rule("PERS-SEARCH-BODY-REQUIRED")
def test_search_needs_a_json_body(api) -> None:
    assert api.post(SEARCH).status_code == 400, "a search without a body was answered"
    for broken in (b"{", b"not json", b'{"lastName": '):
        response = api.post(SEARCH, content=broken, headers={"Content-Type": "application/json"})
        assert response.status_code == 400, (broken, response.status_code)
    assert api.post(SEARCH, json={}).status_code == 200


@pytest.mark.rule("PERS-SEARCH-PAGING")
def test_paging_defaults_and_ranges(api, factories) -> None:
    low, high = _limit_range()
    token = _token(factories)
    mine = [_person(api, factories, token)[0] for _ in range(2)]
    page = _search(api, lastName=token)
    assert page["startIndex"] == 0, "start does not default to 0"
    assert sorted(_uuids(page)) == sorted(mine)
    everyone = _search(api)
    default = int(field_schema("searchPersons", "limit")["default"])
    assert everyone["countReturned"] == min(everyone["totalCount"], default)

    for limit in (low, high):
        assert sorted(_uuids(_search(api, lastName=token, limit=limit))) == sorted(mine)
    for bad in ({"start": -1}, {"limit": low - 1}, {"limit": high + 1}, {"limit": 0}):
        response = api.post(SEARCH, json={"lastName": token, **bad})
        assert response.status_code == 422, (bad, response.status_code)


@pytest.mark.rule("PERS-SEARCH-CRITERIA-LENGTH")
@pytest.mark.parametrize("criterion", CRITERIA)
def test_criteria_are_length_limited(api, criterion: str) -> None:
    high = field_schema("searchPersons", criterion)["maxLength"]
    assert api.post(SEARCH, json={criterion: "9" * high}).status_code == 200
    response = api.post(SEARCH, json={criterion: "9" * (high + 1)})
    assert response.status_code == 422, response.status_code
    assert criterion in response.json()["reason"]


# -- matching ----------------------------------------------------------------------------
@pytest.mark.rule("PERS-SEARCH-CONTAINS")
@pytest.mark.parametrize("criterion", CRITERIA)
def test_criterion_is_a_case_insensitive_contains(api, factories, criterion: str) -> None:
    field = MATCHED_ON.get(criterion, criterion)
    token = _token(factories)
    wanted, body = _person(api, factories, token)
    other, _ = _person(api, factories, _token(factories))
    value = body[field]
    # A piece from inside the value, in the opposite letter case.
    piece = value[3:-1].swapcase() if field != "mobile" else value[4:-1]
    page = _search(api, **{criterion: piece})
    found = _uuids(page)
    assert wanted in found, f"{criterion}={piece!r} did not find {value!r}"
    assert other not in found, f"{criterion}={piece!r} also found a person without it"
    if field in ROW_FIELDS:
        for row in page["entries"]:
            assert piece.casefold() in (row[field] or "").casefold(), row
    if field == "lastName":  # the documented example: "OOS" finds "Roosevelt"
        assert wanted in _uuids(_search(api, lastName="OOS", email=body["email"]))


@pytest.mark.rule("PERS-SEARCH-ALL-FIELDS")
def test_every_given_criterion_must_match(api, factories) -> None:
    token = _token(factories)
    first, body = _person(api, factories, token)
    second, _ = _person(api, factories, token, firstName=f"Other{token}Gh")
    assert sorted(_uuids(_search(api, lastName=token))) == sorted([first, second])
    both = _search(api, lastName=token, firstName=body["firstName"])
    assert _uuids(both) == [first], "a person matching only one of two criteria was returned"
    assert _search(api, lastName=token, email="no-such-address-" + token)["entries"] == []
    three = _search(api, lastName=token, identityNr=body["identityNumber"], mobileNumber="+27")
    assert _uuids(three) == [first]


@pytest.mark.rule("PERS-SEARCH-IDENTITY-NOT-RETURNED")
def test_identity_number_is_searchable_but_not_shown(api, factories) -> None:
    token = _token(factories)
    uuid, body = _person(api, factories, token)
    page = _search(api, identityNr=body["identityNumber"])
    assert _uuids(page) == [uuid], "the identity number did not find its person"
    for row in [*page["entries"], *_search(api, lastName=token)["entries"]]:
        assert not {"identityNumber", "identityNr"} & set(row), row
        assert body["identityNumber"] not in {str(v) for v in row.values()}, row


# -- the answer --------------------------------------------------------------------------
@pytest.mark.rule("PERS-SEARCH-RESPONSE")
def test_answer_shape_and_counts(api, factories) -> None:
    token = _token(factories)
    made = dict(_person(api, factories, token) for _ in range(3))
    page = _search(api, lastName=token)
    assert set(page) == ENVELOPE, set(page)
    assert (page["startIndex"], page["countReturned"], page["totalCount"]) == (0, 3, 3)
    for row in page["entries"]:
        assert set(row) == ROW_FIELDS, set(row)
        sent = made[row["uuid"]]
        assert {f: row[f] for f in ROW_FIELDS - {"uuid"}} == {
            f: sent[f] for f in ROW_FIELDS - {"uuid"}
        }
    low, _ = _limit_range()
    seen = []
    for start in (0, 1, 2, 3, 5):
        part = _search(api, lastName=token, start=start, limit=low)
        assert part["startIndex"] == start
        assert part["totalCount"] == 3
        assert part["countReturned"] == len(part["entries"]) == max(0, 3 - start)
        if start in (0,):
            seen = _uuids(part)
        else:
            assert _uuids(part) == seen[start:], "pages do not follow one order"


@pytest.mark.rule("PERS-SEARCH-RESPONSE")
@pytest.mark.slow
def test_stepping_start_by_limit_visits_every_match_once(api, factories) -> None:
    low, _ = _limit_range()
    token = _token(factories)
    made = {_person(api, factories, token)[0] for _ in range(low + 1)}
    visited: list[str] = []
    start = 0
    while True:
        page = _search(api, lastName=token, start=start, limit=low)
        assert page["totalCount"] == low + 1
        assert page["countReturned"] == len(page["entries"]) <= low
        visited += _uuids(page)
        if not page["entries"]:
            break
        start += low
    assert len(visited) == len(set(visited)), "a match was returned twice"
    assert set(visited) == made


# -- delete: the person is found nowhere afterwards ---------------------------------------
@pytest.mark.rule("PERS-DELETE-HARD")
def test_deleted_person_is_gone(api, factories) -> None:
    token = _token(factories)
    uuid, body = _person(api, factories, token)
    assert _uuids(_search(api, lastName=token)) == [uuid]
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    assert api.get(f"{PERSONS}/{uuid}").status_code == 404
    for criterion in CRITERIA:
        field = MATCHED_ON.get(criterion, criterion)
        assert uuid not in _uuids(_search(api, **{criterion: body[field]})), criterion


@pytest.mark.rule("PERS-DELETE-UNLINKS-CREDENTIALS")
def test_delete_keeps_credentials_unassigned(api, factories, amws_run) -> None:
    uuid = _created(api, factories)
    held = [_credential(api, factories, amws_run, uuid) for _ in range(2)]
    for credential in held:
        assert api.get(f"{CREDENTIALS}/{credential}").json()["holderUuid"] == uuid
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    for credential in held:
        response = api.get(f"{CREDENTIALS}/{credential}")
        assert response.status_code == 200, "the credential did not survive its holder"
        assert response.json()["holderUuid"] is None
        assert response.json()["status"] != "DELETED"


@pytest.mark.rule("PERS-DELETE-PHONEBOOK")
@pytest.mark.requires("control")
def test_delete_withdraws_the_person_from_phonebooks(api, factories, amws_run, control) -> None:
    uuid = _created(api, factories)
    _credential(api, factories, amws_run, uuid)
    listed = [c for c in _hardware(control) if uuid in {p["uuid"] for p in c["phonebook"]}]
    assert listed, "a person holding an ACTIVE credential is in no phonebook (precondition)"
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    for controller in _hardware(control):
        assert uuid not in {p["uuid"] for p in controller["phonebook"]}, controller["controller"]


@pytest.mark.rule("PERS-DELETE-QR-CODE")
def test_delete_leaves_no_qr_code_of_the_person(api, factories, amws_run, profile) -> None:
    """The person's QR code is observable as a QR_CODE credential issued in its name: after the
    delete, nothing on the API, a reader or (with a control plane) a controller is in its name."""
    uuid = _created(api, factories)
    reader = profile.section("virtual_reader") or {}
    lists = [reader["access_control_list"]] if reader.get("access_control_list") else []
    qr = _credential(
        api, factories, amws_run, uuid, readerType="QR_CODE", accessControlListUuids=lists
    )
    assert api.delete(f"{PERSONS}/{uuid}").status_code == 200
    assert api.get(f"{CREDENTIALS}/{qr}").json()["holderUuid"] is None
    assert api.get(f"{CREDENTIALS}/by-person/{uuid}").status_code == 404
    if reader.get("uuid"):
        body = {"uuid": reader["uuid"], "key": reader["key"]}
        listed = api.post("/api/ws/v1/virtual/qr-code-reader/list", json=body)
        assert listed.status_code == 200, listed.text
        assert uuid not in {e.get("holderUuid") for e in listed.json()}
    control = amws_run.control()
    if control is not None:
        with control:
            for controller in _hardware(control):
                holders = {c.get("holderUuid") for c in controller["credentials"]}
                assert uuid not in holders, "a controller still holds a code in the person's name"
