"""Bodies and requests no careful service stores or chokes on (assumed rules; informative).

The documents say a missing or unreadable JSON body gets 400 and every failure carries
``{code, reason}``; they are silent on JSON the parsers of many languages read but cannot give
back (NaN, lone surrogates, numbers thousands of digits long, nesting thousands deep), on the
media type of a body, on text holding NUL, on a paging start beyond 32 bits and on requests
refused before any operation sees them. These tests ask of a target no more than a careful
reading: such input is refused with a 4xx error body, or, where that is possible, kept and
given back exactly; never a 5xx, and the system's reads keep answering.

Each test sends one request per class of value, on one resource, and every record a create
makes anyway goes into the run's ledger like any other.
"""

from __future__ import annotations

import json
import uuid as uuidlib
from typing import Any

import httpx
import pytest

V1 = "/api/ws/v1"
JSON = {"Content-Type": "application/json"}
LARGEST_START = 2**31 - 1


def refused_with_error_body(answer: httpx.Response) -> bool:
    """Whether the answer is a refusal with the documented failure body (a 4xx whose JSON body
    has an integer code and a non-empty reason). A 5xx fails the test outright."""
    assert answer.status_code < 500, f"answered {answer.status_code}: {answer.text[:200]}"
    if answer.status_code < 400:
        return False
    try:
        body = answer.json()
    except ValueError:
        pytest.fail(f"a {answer.status_code} without a JSON body: {answer.text[:200]!r}")
    assert isinstance(body, dict), body
    assert isinstance(body.get("code"), int) and not isinstance(body["code"], bool), body
    assert isinstance(body.get("reason"), str) and body["reason"], body
    return True


def _raw(body: dict[str, Any], field: str, raw: str) -> bytes:
    """``body`` as JSON text with ``field``'s value written as ``raw``, text that no JSON
    encoder writes (that is the point of these tests)."""
    marker = f"raw-{uuidlib.uuid4().hex}"
    return json.dumps({**body, field: marker}).replace(f'"{marker}"', raw).encode("utf-8")


# -- media type -------------------------------------------------------------------------------
@pytest.mark.rule("CONV-JSON-MEDIA-TYPE")
def test_a_json_body_declared_otherwise_is_refused(api, factories) -> None:
    departments = f"{V1}/departments"
    names = []
    for declared in ({"Content-Type": "text/plain"}, {}):
        body = factories.named("createDepartment", "mt")
        names.append(body["name"])
        answer = api.unchecked.post(
            departments, content=json.dumps(body).encode(), headers=declared
        )
        what = declared.get("Content-Type", "no Content-Type")
        assert refused_with_error_body(answer), f"a JSON body sent as {what} was accepted"
    listed = api.get(departments)
    assert listed.status_code == 200, listed.text
    assert not {d.get("name") for d in listed.json()} & set(names), "a refused body was stored"


# -- unreadable JSON text -----------------------------------------------------------------------
def _unreadable(factories) -> list[tuple[str, bytes]]:
    location = factories.location()
    deep = "[" * 10_000 + "]" * 10_000
    return [
        ("UTF-16 text", json.dumps(factories.location()).encode("utf-16")),
        ("latitude NaN", _raw(location, "latitude", "NaN")),
        ("longitude -Infinity", _raw(factories.location(), "longitude", "-Infinity")),
        ("latitude of 4,301 digits", _raw(factories.location(), "latitude", "9" * 4301)),
        ("comments nested 10,000 deep", _raw(factories.location(), "comments", deep)),
    ]


@pytest.mark.rule("CONV-JSON-READABLE")
def test_unreadable_json_is_refused_never_a_5xx(api, factories) -> None:
    locations = f"{V1}/locations"
    for label, content in _unreadable(factories):
        answer = api.unchecked.post(locations, content=content, headers=JSON)
        assert refused_with_error_body(answer), f"{label}: accepted with {answer.status_code}"
    listed = api.get(locations)
    assert listed.status_code == 200, f"the locations no longer read: {listed.status_code}"


# -- text that is no Unicode, and text holding NUL ----------------------------------------------
def _kept_or_refused(api, factories, first_name_raw: str, expected: str) -> None:
    """Create a person whose first name is ``first_name_raw`` (JSON text); a refusal must carry
    the error body, a success must read back ``expected``; either way the record's read (if
    any) and a search that meets it answer 200."""
    person = factories.person()
    answer = api.unchecked.post(
        f"{V1}/persons", content=_raw(person, "firstName", first_name_raw), headers=JSON
    )
    if not refused_with_error_body(answer):
        uuid = answer.json()["uuid"]
        read = api.unchecked.get(f"{V1}/persons/{uuid}")
        assert read.status_code == 200, f"the stored person no longer reads: {read.status_code}"
        assert read.json().get("firstName") == expected, "the name was not kept as sent"
    found = api.unchecked.post(f"{V1}/persons/search", json={"lastName": person["lastName"]})
    assert found.status_code == 200, f"a search meeting the person answered {found.status_code}"


@pytest.mark.rule("CONV-TEXT-FAITHFUL")
def test_a_lone_surrogate_is_refused_or_kept_and_reads_keep_answering(api, factories) -> None:
    _kept_or_refused(api, factories, '"Ann\\ud800e"', "Ann\ud800e")


@pytest.mark.rule("CONV-TEXT-NUL")
def test_nul_in_text_is_refused_or_kept_whole(api, factories) -> None:
    _kept_or_refused(api, factories, '"Ann\\u0000e"', "Ann\x00e")


# -- paging start beyond 32 bits ----------------------------------------------------------------
@pytest.mark.rule("PAGE-START-BOUNDED")
def test_a_start_beyond_32_bits_is_refused_or_an_empty_page(api) -> None:
    for label, answer in (
        (
            "search body 1e308",
            api.unchecked.post(f"{V1}/persons/search", json={"start": 1e308}),
        ),
        (
            "vehicles query",
            api.unchecked.get(f"{V1}/vehicles", params={"start": LARGEST_START + 1}),
        ),
    ):
        if refused_with_error_body(answer):
            continue
        page = answer.json()
        sent = 1e308 if label.startswith("search") else LARGEST_START + 1
        assert page.get("entries") == [], f"{label}: a page of records beyond any record"
        assert page.get("startIndex") == sent, f"{label}: startIndex is not the start sent"


# -- requests refused before any operation ------------------------------------------------------
@pytest.mark.rule("ERR-BODY-HTTP-LAYER")
@pytest.mark.parametrize("where", ["header", "url"])
def test_a_request_refused_for_its_size_carries_the_error_body(api, where: str) -> None:
    path = f"{V1}/departments"
    if where == "header":
        answer = api.raw.unchecked.get(path, headers={"X-Amws-Padding": "a" * 100_000})
    else:  # 60,000 characters of query: within what the client sends, past most servers' limits
        answer = api.raw.unchecked.get(f"{path}?padding={'a' * 60_000}")
    # Served normally is fine; refused, the refusal must carry the error body.
    refused_with_error_body(answer)
