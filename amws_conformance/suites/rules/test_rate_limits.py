"""Token buckets, costs, Retry-After: provoked on purpose with the profile's ``rate_limit`` key.

Every test starts from a full bucket (the key's bucket is shared by all tests of a run): the
``full_bucket`` fixture moves the server clock on by the bucket's whole refill time through the
control plane, or waits that long in real time where there is none (hence ``slow``). A drain
costs a whole bucket (and, without a control plane, its refill time), so one drain serves every
rule that can be read off it: a drained key's 429 also decides Retry-After, the per-key bucket
and that a 429 is temporary; one burst prices every call of one cost class.

Costs are never literals: each comes from the operation's ``x-rate-cost`` and the bucket from
the profile. A burst of one operation runs until the first 429; with ``k`` calls answered, cost
``c``, capacity ``C`` and the refill ``R`` that real time allowed during the burst, a conforming
target gives ``floor(C / c) <= k <= floor((C + R) / c)`` (doc1: "plus whatever refills meanwhile").
A burst of several operations (``_assert_fits``) generalises it call by call: with ``S`` the
documented units of the calls answered before a call of cost ``c``, an answered call needs
``S + c <= C + R`` and a refused one ``S + c > C``. Where the burst ends on a refused call of cost
``e`` after ``n`` calls of an operation, a wrong cost ``x`` of that operation alone moves ``S`` by
``n * (x - c)`` and shows once that exceeds ``e`` upwards or ``e + R`` downwards: the operation's
cost is pinned to within ``(e + R) / n`` units. A cost ``x`` is "above ``f``" (a read's price) when
some refused call would have fitted had ``x`` cost ``f``: ``L / (k + 1) >= f`` for ``k`` calls
answered from a bucket known to hold at least ``L``.
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

from amws_conformance import spec
from amws_conformance.fixtures import jpeg_bytes
from amws_conformance.harness.plan.forecast import Bucket, drain_requests, undrainable
from amws_conformance.harness.target.profile import DOCUMENTED_BUCKET
from amws_conformance.suites.rules._invites import shared_host
from amws_conformance.suites.rules._run_shared import shared_photo, shared_pictured

API = "/api/ws/v1"
DEPTS = f"{API}/departments"
INVITES = f"{API}/invites"
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
            api.unchecked.request("DELETE", entry.delete_path)
            ledger.forget(entry.uuid)


def _call(caller: Any, method: str, path: str, **kwargs: Any) -> httpx.Response:
    return caller.unpaced.request(method, path, **kwargs)


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
    """How many calls of ``cost`` a burst makes at most; a burst too long to end in reasonable
    time on the declared bucket is not attempted (skipped as not configured, with the figures)."""
    declared = Bucket(capacity, refill)
    reason = undrainable(declared, cost, SLACK_SECONDS)
    if reason is not None:
        pytest.skip(reason)
    return drain_requests(declared, cost, SLACK_SECONDS)


def _window(capacity: int, refill: int, cost: int, seconds: float) -> tuple[int, int]:
    return capacity // cost, math.floor((capacity + seconds * refill / 60) / cost)


def _assert_retry_after(response: httpx.Response) -> int:
    value = response.headers.get("retry-after")
    assert value is not None, "a 429 without Retry-After"
    assert re.fullmatch(r"[0-9]+", value), f"Retry-After {value!r} is not whole seconds"
    return int(value)


# -- what each cost case calls, and the records it needs (made with the full key) -------------
def _made(api: Any, path: str, body: dict[str, Any]) -> str:
    response = api.post(path, json=body)
    assert response.status_code == 201, f"setup {path}: {response.status_code}"
    return response.json().get("registrationId") or response.json()["uuid"]


def _sender(op_id: str, rate: Any, api: Any, factories: Any, limit: int, profile: Any) -> Send:
    """One call of the operation per index, each addressing records the run made for it."""
    f = factories
    if op_id in ("deleteDepartment", "updateDepartment"):
        many = op_id == "deleteDepartment"
        made = [
            _made(api, DEPTS, f.named("createDepartment", "rate"))
            for _ in range(limit if many else 1)
        ]
        if many:
            return lambda i: _call(rate, "DELETE", f"{DEPTS}/{made[i]}")
        return lambda i: _call(rate, "PUT", f"{DEPTS}/{made[0]}", json=f.named(op_id, "rate"))
    if op_id == "getInviteStatus":
        host = _made(api, f"{API}/users", f.user())
        invite = _made(api, f"{API}/invites", f.invite(host))
        return lambda i: _call(rate, "GET", f"{API}/invites/{invite}/status")
    if op_id == "enableUser":  # disable and enable by turns, so every call changes the state
        user = _made(api, f"{API}/users", f.user())
        return lambda i: _call(rate, "PUT", f"{API}/users/{user}/{('disable', 'enable')[i % 2]}")
    if op_id == "updateCredential":
        person = _made(api, f"{API}/persons", f.person())
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


# listDepartments is priced by the drain of test_a_drained_key_is_refused_until_it_refills, and
# the staged-file, photo and invitation calls by test_media_and_invitation_calls_cost_their_units.
EXACT_CASES = [
    "deleteDepartment",
    "getInviteStatus",
    "enableUser",
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


# -- above a read's price ----------------------------------------------------------------------
@pytest.mark.rule("RATE-COST-TRIGGER-ABOVE-READS", "ACP-TRIGGER-COST-HIGHER")
@pytest.mark.physical
@pytest.mark.parametrize("op_id", [TRIGGER])
def test_costs_more_than_the_reads(rate, api, factories, profile, bucket, op_id) -> None:
    """With k calls answered from a full bucket, the cost is above capacity / (k + 1). (Credential
    writes are shown above a read on the drain of test_a_drained_key_is_refused_until_it_refills)"""
    capacity, refill = bucket
    floor = _cost("listAccessControlPoints")
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


@pytest.mark.rule("RATE-REFILL-800-PER-MINUTE", "RATE-BUCKET-2000")
def test_an_empty_bucket_refills_at_its_rate_up_to_capacity(
    rate, api, factories, bucket, wait
) -> None:
    _documented_only(bucket)
    capacity, refill = bucket
    cost = _cost("listDepartments")
    send = _lists(rate)
    # The bucket has had no spending for a whole refill (``rate``) and a minute more: a bucket
    # that grew past its capacity would show it now. A full bucket pays for its capacity, no more.
    wait(60)
    answered, seconds, refused = burst(send, _limit(capacity, refill, cost))
    low, high = _window(capacity, refill, cost, seconds)
    assert refused is not None, "never exhausted"
    assert answered <= high, f"{answered} calls of {cost} fit: the bucket grew past {capacity}"
    assert low <= answered, f"{answered} calls of {cost} fit a full bucket, expected {low}..{high}"
    started = time.monotonic()  # left after the 429: under one call's cost
    wait(60)
    answered, _, refused = burst(send, _limit(capacity, refill, cost))
    seconds = time.monotonic() - started
    assert refused is not None
    low, high = refill // cost, math.floor((cost + refill + seconds * refill / 60) / cost)
    assert low <= answered <= high, f"one minute refilled {answered} calls, expected {low}..{high}"


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


# -- one drain, read every way: the list price, Retry-After, the per-key bucket, the temporary 429
ABOVE_READ_CALLS = 6  # a credential write at a read's price would fit this many calls more


@pytest.mark.rule(
    "RATE-COST-LIST-READ-DELETE-STATUS-30",
    "RATE-RETRY-AFTER-HEADER",
    "RATE-PER-KEY-BUCKET",
    "ERR-429-TEMPORARY",
    "RATE-BACKOFF-DOUBLING",
    "RATE-RETRY-AFTER-LOWER-BOUND",
    "RATE-COST-CREDENTIAL-WRITE-ABOVE-READ",
)
def test_a_drained_key_is_refused_until_it_refills(
    rate, api, factories, bucket, wait, amws_run
) -> None:
    """A list burst from a full bucket prices a list call; its 429 and a refused create then show
    Retry-After (whole seconds, every time, enough), the other key served meanwhile, the refused
    create without effect and through once the client waited as advised; a partial refill of
    known size then shows a credential create dearer than a read."""
    capacity, refill = bucket
    cost = _cost("listDepartments")
    answered, seconds, refused = burst(_lists(rate), _limit(capacity, refill, cost))
    low, high = _window(capacity, refill, cost, seconds)
    assert refused is not None, f"no 429 after {answered} calls of cost {cost}"
    assert low <= answered <= high, f"{answered} calls of cost {cost} fit, expected {low}..{high}"
    _assert_retry_after(refused)
    # Under one list call's units are left: a create (dearer) is refused for a while, every
    # immediate repeat again with a Retry-After.
    body = factories.named("createDepartment", "rl")

    def create() -> httpx.Response:
        return _call(rate, "POST", DEPTS, json=body)

    for attempt in range(3):
        repeat = create()
        assert repeat.status_code == 429, f"immediate repeat {attempt} was served"
        delay = _assert_retry_after(repeat)
    # Meanwhile the full key is served (a bucket it shared would refuse it as well), and it
    # sees that none of the refused creates had an effect.
    listed = _call(api, "GET", DEPTS)
    assert listed.status_code == 200, "the full key is not served while the other key is refused"
    assert body["name"] not in {r["name"] for r in listed.json()}, "a request answered 429 acted"
    # After exactly Retry-After the identical request fits (the lower bound); a client that
    # backs off as advised, doubling on each further 429, gets through (temporary, doubling).
    waited = [delay]
    wait(delay)
    answer = create()
    first_try = answer.status_code
    for _ in range(4):
        if answer.status_code != 429:
            break
        delay = max(2 * delay, _assert_retry_after(answer))
        waited.append(delay)
        wait(delay)
        answer = create()
    assert answer.status_code == 201, f"a client that backed off {waited} s never got through"
    assert first_try == 201, f"still refused after waiting Retry-After ({waited[0]} s)"
    # The bucket now holds at least what refills in the wait below (it is never negative): a
    # credential create at a read's price would fit more than ABOVE_READ_CALLS of them.
    floor = _cost("getCredential")
    seconds = math.ceil((ABOVE_READ_CALLS + 1) * floor * 60 / refill)
    known = seconds * refill / 60
    # The run's shared person with a photo holds the credentials (tidy deletes them at once).
    person = shared_pictured(amws_run, api, factories)["person"]
    wait(seconds)
    send = lambda i: _call(  # noqa: E731
        rate, "POST", f"{API}/credentials", json=factories.credential(personUuid=person)
    )
    answered, _, refused = burst(send, ABOVE_READ_CALLS + 2)
    assert refused is not None, f"{answered} credential creates fitted {known:.0f} units"
    assert known / (answered + 1) >= floor, f"{answered} creates fit: not above {floor} units"


# -- one burst prices the staged-file, photo and invitation calls -------------------------------
FIFTY = ("uploadFile", "downloadPhoto", "downloadThumbnail", "createInvite")
TAIL_DELETES = 15  # staged-file deletes that end the burst: they pin its every call's cost


def _assert_fits(
    log: list[tuple[str, int, bool]], capacity: int, refill: int, seconds: float
) -> None:
    """Call by call (see the module docstring): what was answered fits the bucket and what
    refilled meanwhile, and what was refused would not have fitted the bucket alone."""
    room = capacity + seconds * refill / 60
    spent = 0
    for index, (op_id, cost, answered) in enumerate(log):
        if answered:
            spent += cost
            assert spent <= room, f"call {index} ({op_id}) answered at {spent} of {room:.0f} units"
        else:
            assert spent + cost > capacity, f"call {index} ({op_id}) refused at {spent} units"
    assert log and not log[-1][2], f"no 429 after {len(log)} calls"


@pytest.mark.rule(
    "RATE-COST-PHOTO-UPLOAD-50",
    "RATE-COST-PHOTO-DOWNLOAD-50",
    "RATE-COST-INVITE-WRITE-50",
    "RATE-COST-STATUS-READ-FILE-DELETE-10",
    "FILE-RATE-COST",
    "PHOTO-RATE-COST",
)
def test_media_and_invitation_calls_cost_their_units(rate, api, factories, bucket, amws_run):
    """Uploads, photo and thumbnail downloads and invitation creates by turns (about
    ``(C - 150) / 200`` of each, 9 or 10 in the documented bucket), then staged-file deletes until
    the 429: the deletes (of files the burst uploaded, then of files staged for it) end the burst
    at 10 units, which pins each operation's cost to within ``(10 + R) / n`` of its ``n`` calls;
    the 15 deletes themselves are pinned to within ``(10 + R) / 15``."""
    capacity, refill = bucket
    costs = {op_id: _cost(op_id) for op_id in (*FIFTY, "deleteFile")}
    _limit(capacity, refill, costs["deleteFile"])  # a bucket too large to drain: not attempted
    seed = factories.random.randrange(1 << 30)

    def image(index: int) -> dict[str, Any]:
        return {"file": (f"rate{index}.jpg", jpeg_bytes(seed + index, (32, 32)), "image/jpeg")}

    # A photo and a host other suites share: the burst only downloads the one and names the
    # other as the invitations' host.
    photo = shared_photo(amws_run, api, factories)
    host = shared_host(amws_run, api, factories)["uuid"]
    # The calls before the deletes, by turns; they leave TAIL_DELETES deletes' worth or more.
    turns = (capacity - TAIL_DELETES * costs["deleteFile"]) // max(costs[o] for o in FIFTY)
    plan = [FIFTY[i % len(FIFTY)] for i in range(turns)]
    left = capacity - sum(costs[o] for o in plan)
    limit = (left + SLACK_SECONDS * refill // 60) // costs["deleteFile"] + 2
    # Files to delete: the burst's own uploads first, then these, then more the burst stages.
    # Staged ahead: as many as the deletes the bucket pays for after the calls by turns (what
    # refilled meanwhile pays for a few more, staged on demand: a spare left undeleted is a
    # write of the full key that observed nothing).
    spare = [
        _made_file(api, image(-1 - i))
        for i in range(max(0, left // costs["deleteFile"] - plan.count("uploadFile")))
    ]
    staged: list[str] = []
    calls = {
        "uploadFile": lambda i: _call(rate, "POST", f"{API}/files/upload", files=image(i)),
        "downloadPhoto": lambda i: _call(rate, "GET", f"{API}/photos/photo/{photo}"),
        "downloadThumbnail": lambda i: _call(rate, "GET", f"{API}/photos/thumbnail/{photo}"),
        "createInvite": lambda i: _call(
            rate, "POST", f"{API}/invites", json=factories.invite(host)
        ),
    }
    log: list[tuple[str, int, bool]] = []
    started = time.monotonic()
    for index, op_id in enumerate(plan):
        response = calls[op_id](index)
        log.append((op_id, costs[op_id], response.status_code != 429))
        if response.status_code == 429:
            break
        assert response.status_code < 300, f"{op_id} answered {response.status_code}"
        if op_id == "uploadFile":
            staged.append(response.json()["uuid"])
    for index in range(limit):
        if index < len(staged):
            target = staged[index]
        elif index - len(staged) < len(spare):
            target = spare[index - len(staged)]
        else:
            # What refilled meanwhile pays for more deletes than were staged: the burst stages
            # their files itself (a logged 50-unit call of its own key, never paced). A paced
            # upload of another key would wait for that key's refill inside the burst, and
            # this bucket would refill meanwhile (as on a target enforcing the documented
            # bucket on every key, where the full key is drained by then).
            response = calls["uploadFile"](-1000 - index)
            log.append(("uploadFile", costs["uploadFile"], response.status_code != 429))
            if response.status_code == 429:
                break
            assert response.status_code == 200, f"uploadFile answered {response.status_code}"
            target = response.json()["uuid"]
        response = _call(rate, "DELETE", f"{API}/files/{target}")
        log.append(("deleteFile", costs["deleteFile"], response.status_code != 429))
        if response.status_code == 429:
            break
        assert response.status_code == 200, f"deleteFile answered {response.status_code}"
    seconds = time.monotonic() - started
    _assert_fits(log, capacity, refill, seconds)
    _assert_retry_after(response)
    answered = {o: sum(1 for op, _, ok in log if op == o and ok) for o in costs}
    assert min(answered.values()) > 0, f"a call of every kind is answered: {answered}"


def _made_file(api: Any, files: dict[str, Any]) -> str:
    response = api.post(f"{API}/files/upload", files=files)
    assert response.status_code == 200, f"setup upload: {response.status_code}"
    return response.json()["uuid"]
