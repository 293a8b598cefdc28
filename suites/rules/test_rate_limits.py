"""Token buckets, costs, Retry-After: provoked on purpose with the profile's ``rate_limit`` key.

Every test starts from a full bucket (the key's bucket is shared by all tests of a run): the
``full_bucket`` fixture moves the server clock on by the bucket's whole refill time through the
control plane, or waits that long in real time where there is none (hence ``slow``).

Costs are never literals: each comes from the operation's ``x-rate-cost`` and the bucket from
the profile. A burst of one operation runs until the first 429; with ``k`` calls answered, cost
``c``, capacity ``C`` and the refill ``R`` that real time allowed during the burst, a conforming
target gives ``floor(C / c) <= k <= floor((C + R) / c)`` (doc1: "plus whatever refills meanwhile").
"""

from __future__ import annotations

import math
import re
import secrets
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

import spec
from fixtures import jpeg_bytes
from harness._profile import DOCUMENTED_BUCKET

API = "/api/ws/v1"
DEPTS = f"{API}/departments"
FAILED_AUTH_COST = spec.rate_limit().failed_authentication_cost  # no operation carries it
SLACK_SECONDS = 15  # refill allowance when sizing a burst (how long one may take)
TRIGGER = "triggerAccessControlPoint"
pytestmark = [
    pytest.mark.rate_limit,
    pytest.mark.slow,
    pytest.mark.requires("rate_limit"),
]
Send = Callable[[int], httpx.Response]


def _cost(op_id: str) -> int:
    return int(spec.operation(op_id).rate_cost or 0)


@pytest.fixture(scope="module")
def bucket(profile) -> tuple[int, int]:
    """(capacity, refill per minute) the profile says the target enforces for rate_limit."""
    size = profile.bucket("rate_limit")
    return size["capacity"], size["refill_per_minute"]


@pytest.fixture
def rate(client, wait, bucket) -> Any:
    """The rate_limit key's client, its bucket full again (refilled for its whole refill time)."""
    capacity, refill = bucket
    wait(math.ceil(capacity * 60 / refill) + 1)
    return client("rate_limit")


@pytest.fixture(autouse=True)
def tidy(api, ledger) -> Iterator[None]:
    """Records the rate_limit key created are deleted at once with the full key: left to the
    run's cleanup, they would be deleted with the (exhausted) rate_limit key itself."""
    yield
    for entry in reversed(ledger.pending):
        if entry.key == "rate_limit" and entry.delete_path:
            api.request("DELETE", entry.delete_path, checks=False)
            ledger.forget(entry.uuid)


def _call(caller: Any, method: str, path: str, **kwargs: Any) -> httpx.Response:
    return caller.request(method, path, pace=False, retry_429=False, **kwargs)


def burst(send: Send, limit: int) -> tuple[int, float, httpx.Response | None]:
    """Call until the first 429 (or ``limit`` successes): (successes, seconds, the 429)."""
    start = time.monotonic()
    for index in range(limit):
        response = send(index)
        if response.status_code == 429:
            return index, time.monotonic() - start, response
        assert response.status_code < 300, f"call {index} answered {response.status_code}"
    return limit, time.monotonic() - start, None


def _limit(capacity: int, refill: int, cost: int) -> int:
    return (capacity + SLACK_SECONDS * refill // 60) // cost + 2


def _window(capacity: int, refill: int, cost: int, seconds: float) -> tuple[int, int]:
    return capacity // cost, math.floor((capacity + seconds * refill / 60) / cost)


def _assert_retry_after(response: httpx.Response) -> int:
    value = response.headers.get("retry-after")
    assert value is not None, "a 429 without Retry-After"
    assert re.fullmatch(r"[0-9]+", value), f"Retry-After {value!r} is not whole seconds"
    return int(value)


# -- what each cost case calls, and the records it needs (made with the full key) -------------
def _photo(api: Any, factories: Any) -> str:
    image = jpeg_bytes(factories.random.randrange(1 << 30), (48, 48))
    staged = api.post(f"{API}/files/upload", files={"file": ("rate.jpg", image, "image/jpeg")})
    person = api.post(f"{API}/persons", json=factories.person(photoUuid=staged.json()["uuid"]))
    return api.get(f"{API}/persons/{person.json()['uuid']}").json()["photoId"]


def _made(api: Any, path: str, body: dict[str, Any]) -> str:
    response = api.post(path, json=body)
    assert response.status_code == 201, f"setup {path}: {response.status_code}"
    return response.json().get("registrationId") or response.json()["uuid"]


def _sender(op_id: str, rate: Any, api: Any, factories: Any, limit: int, profile: Any) -> Send:
    """One call of the operation per index, each addressing records the run made for it."""
    f = factories
    if op_id == "listDepartments":
        return lambda i: _call(rate, "GET", DEPTS)
    if op_id in ("deleteDepartment", "updateDepartment"):
        many = op_id == "deleteDepartment"
        made = [
            _made(api, DEPTS, f.named("createDepartment", "rate"))
            for _ in range(limit if many else 1)
        ]
        if many:
            return lambda i: _call(rate, "DELETE", f"{DEPTS}/{made[i]}")
        return lambda i: _call(rate, "PUT", f"{DEPTS}/{made[0]}", json=f.named(op_id, "rate"))
    if op_id in ("getInviteStatus", "createInvite"):
        host = _made(api, f"{API}/users", f.user())
        if op_id == "createInvite":
            return lambda i: _call(rate, "POST", f"{API}/invites", json=f.invite(host))
        invite = _made(api, f"{API}/invites", f.invite(host))
        return lambda i: _call(rate, "GET", f"{API}/invites/{invite}/status")
    if op_id in ("downloadPhoto", "downloadThumbnail"):
        photo, rendition = _photo(api, f), op_id.removeprefix("download").lower()
        return lambda i: _call(rate, "GET", f"{API}/photos/{rendition}/{photo}")
    if op_id == "enableUser":  # disable and enable by turns, so every call changes the state
        user = _made(api, f"{API}/users", f.user())
        return lambda i: _call(rate, "PUT", f"{API}/users/{user}/{('disable', 'enable')[i % 2]}")
    if op_id == "deleteFile":
        seed = f.random.randrange(1 << 30)
        staged = [
            api.post(
                f"{API}/files/upload",
                files={"file": (f"rate{i}.jpg", jpeg_bytes(seed + i, (32, 32)), "image/jpeg")},
            ).json()["uuid"]
            for i in range(limit)
        ]
        return lambda i: _call(rate, "DELETE", f"{API}/files/{staged[i]}")
    if op_id == "uploadFile":
        seed = f.random.randrange(1 << 30)
        images = [jpeg_bytes(seed + i, (32, 32)) for i in range(limit)]
        files = [{"file": (f"rate{i}.jpg", image, "image/jpeg")} for i, image in enumerate(images)]
        return lambda i: _call(rate, "POST", f"{API}/files/upload", files=files[i])
    if op_id in ("createCredential", "updateCredential"):
        person = _made(api, f"{API}/persons", f.person())
        if op_id == "createCredential":
            body = f.credential
            return lambda i: _call(rate, "POST", f"{API}/credentials", json=body(personUuid=person))
        card = _made(api, f"{API}/credentials", f.credential(personUuid=person))
        path = f"{API}/credentials/{card}"
        return lambda i: _call(rate, "PUT", path, json={"comments": f.tag("rate")})
    if op_id == "deleteCredential":
        person = _made(api, f"{API}/persons", f.person())
        cards = [
            _made(api, f"{API}/credentials", f.credential(personUuid=person)) for _ in range(limit)
        ]
        return lambda i: _call(rate, "DELETE", f"{API}/credentials/{cards[i]}")
    if op_id == TRIGGER:
        reader = (profile.section("virtual_reader") or {}).get("access_control_point")
        points = [p["uuid"] for p in api.get(f"{API}/access-control-points").json()]
        point = next((p for p in points if p != reader), points[0])
        return lambda i: _call(rate, "GET", f"{API}/access-control-points/trigger/{point}")
    raise AssertionError(f"no cost case for {op_id}")


def _exact_rules(op_id: str) -> list[str]:
    """The cost rules naming the operation whose statement gives its exact cost."""
    return [
        r.id
        for r in spec.rules()
        if r.id.startswith("RATE-COST-") and op_id in r.operations and "ABOVE" not in r.id
    ]


EXACT_CASES = [
    "listDepartments",
    "deleteDepartment",
    "getInviteStatus",
    "deleteFile",
    "enableUser",
    "downloadPhoto",
    "downloadThumbnail",
    "uploadFile",
    "createInvite",
    "updateDepartment",
    "updateCredential",
    "deleteCredential",
    TRIGGER,
]


def _exact_params() -> list[Any]:
    params = []
    for op_id in EXACT_CASES:
        marks = [pytest.mark.rule(*_exact_rules(op_id))]
        if op_id == TRIGGER:
            marks.append(pytest.mark.physical)  # every answered trigger fires the relay
        params.append(pytest.param(op_id, marks=marks, id=op_id))
    return params


@pytest.mark.parametrize("op_id", _exact_params())
def test_each_call_costs_its_documented_units(rate, api, factories, profile, bucket, op_id) -> None:
    capacity, refill = bucket
    cost = _cost(op_id)
    limit = _limit(capacity, refill, cost)
    send = _sender(op_id, rate, api, factories, limit, profile)
    answered, seconds, refused = burst(send, limit)
    low, high = _window(capacity, refill, cost, seconds)
    assert refused is not None, f"no 429 after {answered} calls of cost {cost}"
    assert low <= answered <= high, f"{answered} calls of cost {cost} fit, expected {low}..{high}"


def _floor_of(op_id: str) -> int:
    """The cost the operation must exceed, from the spec."""
    if op_id == TRIGGER:
        return _cost("listAccessControlPoints")
    return _cost("getCredential")


@pytest.mark.parametrize(
    "op_id",
    [
        pytest.param(
            "createCredential", marks=pytest.mark.rule("RATE-COST-CREDENTIAL-WRITE-ABOVE-READ")
        ),
        pytest.param(
            TRIGGER,
            marks=[pytest.mark.rule("RATE-COST-TRIGGER-ABOVE-READS"), pytest.mark.physical],
        ),
    ],
)
def test_costs_more_than_the_reads(rate, api, factories, profile, bucket, op_id) -> None:
    """With k calls answered from a full bucket, the cost is above capacity / (k + 1)."""
    capacity, refill = bucket
    floor = _floor_of(op_id)
    limit = _limit(capacity, refill, floor + 1)
    answered, _, refused = burst(_sender(op_id, rate, api, factories, limit, profile), limit)
    assert refused is not None, f"no 429 after {answered} calls"
    assert capacity / (answered + 1) >= floor, f"{answered} calls fit: not above {floor} units"


# -- the bucket itself ---------------------------------------------------------------------------
def _documented_only(bucket: tuple[int, int]) -> None:
    documented = (DOCUMENTED_BUCKET["capacity"], DOCUMENTED_BUCKET["refill_per_minute"])
    if bucket != documented:
        pytest.skip(
            "not configured: the profile gives rate_limit a bucket other than the documented one"
        )


def _lists(rate: Any) -> Send:
    return lambda i: _call(rate, "GET", DEPTS)


def _exhaust(rate: Any, api: Any, factories: Any, bucket: tuple[int, int]) -> None:
    """Empty the bucket quickly (the dearest call that changes nothing outside the run), then
    to under the cheapest call's cost, so a list call stays refused for a while."""
    capacity, refill = bucket
    for op_id in ("updateCredential", "getInviteStatus"):
        send = _sender(op_id, rate, api, factories, 0, None)
        assert burst(send, _limit(capacity, refill, _cost(op_id)))[2] is not None, op_id


@pytest.mark.rule("RATE-BUCKET-2000")
def test_a_full_bucket_holds_its_capacity_and_no_more(rate, api, factories, bucket) -> None:
    _documented_only(bucket)
    capacity, refill = bucket
    cost = _cost("listDepartments")
    answered, seconds, refused = burst(_lists(rate), _limit(capacity, refill, cost))
    low, high = _window(capacity, refill, cost, seconds)
    assert refused is not None and low <= answered <= high, (answered, low, high)


@pytest.mark.rule("RATE-REFILL-800-PER-MINUTE")
def test_an_empty_bucket_refills_at_its_rate_up_to_capacity(
    rate, api, factories, bucket, wait
) -> None:
    _documented_only(bucket)
    capacity, refill = bucket
    cost = _cost("listDepartments")
    send = _lists(rate)
    assert burst(send, _limit(capacity, refill, cost))[2] is not None, "never exhausted"
    started = time.monotonic()  # left after the 429: under one call's cost
    wait(60)
    answered, _, refused = burst(send, _limit(capacity, refill, cost))
    seconds = time.monotonic() - started
    assert refused is not None
    low, high = refill // cost, math.floor((cost + refill + seconds * refill / 60) / cost)
    assert low <= answered <= high, f"one minute refilled {answered} calls, expected {low}..{high}"
    # A pause a minute longer than a whole refill fills the bucket to capacity, not beyond it.
    wait(math.ceil(capacity * 60 / refill) + 60)
    answered, seconds, refused = burst(send, _limit(capacity, refill, cost))
    assert refused is not None
    assert answered <= _window(capacity, refill, cost, seconds)[1], "the bucket grew past capacity"


@pytest.mark.rule("RATE-PER-KEY-BUCKET")
def test_an_exhausted_key_does_not_slow_another_key(rate, api, bucket) -> None:
    capacity, refill = bucket
    cost = _cost("listDepartments")
    assert burst(_lists(rate), _limit(capacity, refill, cost))[2] is not None, "never exhausted"
    # Just after that 429 the rate_limit key's bucket holds less than one list call: a bucket
    # the full key shared would refuse this call as well.
    assert _call(api, "GET", DEPTS).status_code == 200, "the full key is served meanwhile"


@pytest.mark.rule("AUTH-BEARER-PREFIX")
def test_the_bearer_form_shares_the_keys_bucket(rate, api, factories, profile, bucket) -> None:
    _exhaust(rate, api, factories, bucket)
    bearer = {"Authorization": f"Bearer {profile.key('rate_limit')}"}
    assert _call(rate, "GET", DEPTS, headers=bearer).status_code == 429


@pytest.mark.rule("RATE-COST-FAILED-AUTH-400", "RATE-RETRY-AFTER-HEADER")
def test_failed_authentications_cost_400_units(client, profile) -> None:
    """A fresh, unknown key value of valid length: its own full bucket pays 400 a failure."""
    size = (profile.data.get("rate_limits") or {}).get("default") or DOCUMENTED_BUCKET
    capacity, refill = size["capacity"], size["refill_per_minute"]
    caller, value = client("missing"), {"Authorization": secrets.token_hex(32)}
    answers: list[int] = []

    def send(index: int) -> httpx.Response:
        response = _call(caller, "GET", DEPTS, headers=value)
        answers.append(response.status_code)
        return response if response.status_code == 429 else httpx.Response(200)

    answered, seconds, refused = burst(send, _limit(capacity, refill, FAILED_AUTH_COST))
    assert set(answers[:answered]) == {401}
    low, high = _window(capacity, refill, FAILED_AUTH_COST, seconds)
    assert refused is not None, f"{answered} failed authentications and no 429"
    assert low <= answered <= high, f"{answered} failures fit, expected {low}..{high}"
    _assert_retry_after(refused)


# -- Retry-After ---------------------------------------------------------------------------------
def _drained_then_expensive(rate: Any, api: Any, factories: Any, bucket: Any) -> tuple[Send, Any]:
    """Exhaust with cheaper reads, and return a dearer call the bucket cannot fit for seconds."""
    capacity, refill = bucket
    assert burst(_lists(rate), _limit(capacity, refill, _cost("listDepartments")))[2] is not None
    dear = _sender("updateCredential", rate, api, factories, 0, None)
    return dear, dear(0)


@pytest.mark.rule("RATE-RETRY-AFTER-HEADER", "RATE-RETRY-AFTER-LOWER-BOUND")
def test_retry_after_is_whole_seconds_and_enough(rate, api, factories, bucket, wait) -> None:
    dear, refused = _drained_then_expensive(rate, api, factories, bucket)
    assert refused.status_code == 429
    seconds = _assert_retry_after(refused)
    wait(seconds)
    assert dear(1).status_code == 200, f"still refused after waiting Retry-After ({seconds} s)"


@pytest.mark.rule("RATE-BACKOFF-DOUBLING", "RATE-RETRY-AFTER-HEADER")
def test_exhausted_key_keeps_getting_429_with_retry_after(
    rate, api, factories, bucket, wait
) -> None:
    """The doubling rule binds clients; what it needs of the target is that every repeat while
    the bucket is short is again a 429 with a Retry-After, and that a client following the
    guidance (wait Retry-After, then double) gets through."""
    dear, refused = _drained_then_expensive(rate, api, factories, bucket)
    for attempt in range(3):
        assert refused.status_code == 429, f"immediate repeat {attempt} was served"
        delay = _assert_retry_after(refused)
        refused = dear(attempt)
    for _ in range(4):
        wait(delay)
        answer = dear(9)
        if answer.status_code != 429:
            break
        delay = max(2 * delay, _assert_retry_after(answer))
    assert answer.status_code == 200, "a client that backs off as advised never got through"
