"""The rate_limit key's token bucket driven as a state machine against the control-plane clock.

The model is the bucket of doc1 § Limits: capacity C and refill R per minute from the profile,
costs from each operation's x-rate-cost. Because the target's clock also runs in real time
while the machine talks to it, the model keeps an interval [low, high] of the units left:
``low`` ignores real time, ``high`` adds the refill of all the real time that may have passed
(measured around each request). Advancing the control-plane clock by t seconds adds t * R / 60
to both, up to C. A call of cost c must be served when c <= low and refused with 429 when
c > high (a few units of margin on each side); in between either answer is right, and the answer
narrows the interval. A 429 charges nothing, and its Retry-After (whole seconds) is never shorter
than the model's least wait for the units missing.

Every run starts from a full bucket: the clock is moved on by the bucket's whole refill time.
"""

from __future__ import annotations

import math
import re
import time
from typing import Any

import pytest
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule, run_state_machine_as_test

from amws_conformance import spec
from amws_conformance.fixtures import jpeg_bytes
from amws_conformance.harness.target.profile import DOCUMENTED_BUCKET
from amws_conformance.suites.rules import _media as media
from amws_conformance.suites.stateful._machine import API, Calls, for_run, machine_settings

SETTINGS = machine_settings(steps=12)
MARGIN = 3.0  # units: clock granularity and rounding between the model and the target
CLOCK = "/_reference/clock"
ADVANCES = (1, 3, 10, 30, 75, 150)  # seconds the clock may be moved on by in one step
# Operations the machine spends with: calls whose cost the limits table states (a list or read
# 30, a photo download 50, a staged-file delete 10) and that change nothing outside the run's
# records. Staged files are a pool made at setup, too few to drain the bucket with.
OPERATIONS = ("listDepartments", "getDepartment", "downloadPhoto", "deleteFile")
DRAINING = ("listDepartments", "getDepartment", "downloadPhoto")
STAGED_FILES = 24
pytestmark = [pytest.mark.rate_limit, pytest.mark.requires("rate_limit")]


def _cost(op_id: str) -> int:
    return int(spec.operation(op_id).rate_cost or 0)


class BucketMachine(RuleBasedStateMachine):
    def __init__(self, rate: Any, control: Any, run_id: str, setup: dict[str, Any]) -> None:
        super().__init__()
        self.call = Calls(rate.unpaced, run_id)  # the machine drains the bucket on purpose
        self.control = control
        self.setup = setup  # capacity, refill, records the operations address
        for name in ("department", "photo"):
            self.call.labels[setup[name].lower()] = f"setup {name}"
        self.staged = setup[
            "staged"
        ]  # shared by every run of the machine: served deletes use it up
        self.capacity, self.refill = setup["capacity"], setup["refill"]
        self.low = self.high = 0.0
        self.since = time.monotonic()  # earliest moment the interval may describe

    # -- the model -------------------------------------------------------------------------
    def _per_second(self) -> float:
        return self.refill / 60

    def _advance(self, seconds: float) -> None:
        moved = self.control.put(CLOCK, json={"advance_seconds": seconds})
        assert moved.status_code == 200, "the control plane did not move the clock"
        self.low = min(self.capacity, self.low + seconds * self._per_second())
        self.high = min(self.capacity, self.high + seconds * self._per_second())

    def _request(self, op_id: str) -> tuple[str, str, Any]:
        s = self.setup
        return {
            "listDepartments": ("GET", f"{API}/departments", None),
            "getDepartment": ("GET", f"{API}/departments/{s['department']}", None),
            "downloadPhoto": ("GET", f"{API}/photos/photo/{s['photo']}", None),
            "deleteFile": ("DELETE", f"{API}/files/{self.staged[0] if self.staged else ''}", None),
        }[op_id]

    def _spend(self, op_id: str, quiet: bool = False) -> bool:
        """One call of the operation, judged by the model; whether it was served."""
        cost = _cost(op_id)
        method, path, body = self._request(op_id)
        started = time.monotonic()
        response = self.call(method, path, json=body, quiet=quiet)
        ended = time.monotonic()
        # Real time adds at most this much, and nothing is ever below ``low``.
        high = min(self.capacity, self.high + (ended - self.since) * self._per_second())
        status = response.status_code
        where = f"{op_id} (cost {cost}) with {self.low:.0f}..{high:.0f} units left"
        if status == 429:
            assert cost > self.low - MARGIN, f"429 for {where}: the cost fits"
            advised = response.headers.get("retry-after")
            assert advised is not None and re.fullmatch(r"[0-9]+", advised), (
                f"429 for {where} carries Retry-After {advised!r}, not whole seconds"
            )
            missing = min(cost, self.capacity) - high - MARGIN
            least = max(0.0, missing / self._per_second())
            assert int(advised) >= math.floor(least), (
                f"Retry-After {advised} s for {where}: the units need at least {least:.1f} s"
            )
            self.high = min(high, cost)  # it did not fit; a refusal takes nothing
        else:
            assert status < 300, f"{op_id} answered {status}"
            assert cost <= high + MARGIN, f"{where} was served: the cost does not fit"
            self.low = max(self.low, cost) - cost
            self.high = max(0.0, high - cost)
            if op_id == "deleteFile":
                self.staged.pop(0)
        self.low = min(self.low, self.high)  # a margin case: the target's answer decides
        self.since = started
        return status != 429

    # -- steps ---------------------------------------------------------------------------------
    @initialize()
    def start_from_a_full_bucket(self) -> None:
        seconds = math.ceil(self.capacity / self._per_second()) + 1
        note(f"clock +{seconds} s (a whole refill)")
        self._advance(seconds)
        self.low = self.high = float(self.capacity)
        self.since = time.monotonic()

    @rule(operation=st.sampled_from(OPERATIONS), times=st.integers(1, 6))
    def spend(self, operation: str, times: int) -> None:
        for _ in range(times):
            if operation == "deleteFile" and not self.staged:
                return  # the pool is used up; the other operations go on
            self._spend(operation)

    @rule(operation=st.sampled_from(DRAINING))
    def spend_until_refused(self, operation: str) -> None:
        """Calls until the first 429 (at most what a full bucket and some refill allow)."""
        cost = _cost(operation)
        limit = math.ceil((self.capacity + 10 * self._per_second()) / cost) + 2
        served, outcome = 0, "then an answer the model refutes"
        try:
            while served < limit:
                if not self._spend(operation, quiet=True):
                    outcome = "then 429"
                    break
                served += 1
            else:
                outcome = "and no 429"
        finally:
            note(
                f"{operation} x{served} served, {outcome}"
                f" (model: {self.low:.0f}..{self.high:.0f} units left)"
            )

    @rule(seconds=st.sampled_from(ADVANCES))
    def advance_the_clock(self, seconds: int) -> None:
        note(f"clock +{seconds} s")
        self._advance(seconds)


@pytest.fixture
def setup(api, factories, profile) -> dict[str, Any]:
    """The documented bucket of the rate_limit key and records of the run its calls address
    (made with the full key)."""
    size = profile.bucket("rate_limit")
    if size != DOCUMENTED_BUCKET:
        pytest.skip(
            "not configured: the profile gives rate_limit a bucket other than the documented one"
        )

    def made(path: str, body: dict[str, Any]) -> str:
        response = api.post(f"{API}/{path}", json=body)
        assert response.status_code == 201, f"setup {path}: {response.text}"
        return response.json().get("registrationId") or response.json()["uuid"]

    def staged(index: int) -> str:
        image = jpeg_bytes(factories.random.randrange(1 << 30) + index, (32, 32))
        answer = api.post(f"{API}/files/upload", files={"file": ("rate.jpg", image, "image/jpeg")})
        assert answer.status_code == 200, f"setup upload: {answer.text}"
        return answer.json()["uuid"]

    upload = staged(-1)
    person = made("persons", factories.person(photoUuid=upload))
    # The photo's identifier wherever the read shows it (its field's name is ours).
    photo = media.photo_id(api.get(f"{API}/persons/{person}").json(), person, upload)
    return {
        "capacity": size["capacity"],
        "refill": size["refill_per_minute"],
        "department": made("departments", factories.named("createDepartment", "rate")),
        "photo": photo,
        "staged": [staged(i) for i in range(STAGED_FILES)],
    }


@pytest.mark.requires("control")
@pytest.mark.rule(
    "RATE-BUCKET-2000",
    "RATE-REFILL-800-PER-MINUTE",
    "RATE-RETRY-AFTER-HEADER",
    "RATE-RETRY-AFTER-LOWER-BOUND",
    "RATE-COST-LIST-READ-DELETE-STATUS-30",
    "RATE-COST-PHOTO-DOWNLOAD-50",
    "RATE-COST-STATUS-READ-FILE-DELETE-10",
)
def test_the_bucket_follows_its_model(
    client, control, run_id, setup, amws_run, example_budget
) -> None:
    rate = client("rate_limit")
    try:
        run_state_machine_as_test(
            lambda: BucketMachine(rate, control, run_id, setup),
            settings=for_run(SETTINGS, amws_run, example_budget),
        )
    finally:  # later tests of the key find it full again
        control.put(CLOCK, json={"advance_seconds": setup["capacity"] * 60 / setup["refill"] + 1})
