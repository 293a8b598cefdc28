"""Image decoding runs off the event loop, within a pixel budget (issue 12).

No timing is asserted (speed is the benchmarks' business, ``python -m benchmarks``, (d)).
Instead the decode step is made to wait for an event that the test sets only after a
concurrent read has answered: with decoding on the event loop the read could not be served
while the decode waits, so the read times out and the test fails instead of passing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from amws_conformance.fixtures.images import png_bytes
from amws_conformance.reference_server.domain import files
from tests.reference_server.conftest import LiveServer

V1 = "/api/ws/v1"
PATIENCE = 20.0  # seconds: generous, so a loaded machine fails nothing that works


class Gate:
    """Wraps an image step: it says when it has started, then waits to be let through."""

    def __init__(self, step: Callable[..., Any]) -> None:
        self.step = step
        self.entered = threading.Event()
        self.released = threading.Event()
        self.on_loop_thread: bool | None = None

    def __call__(self, *args: Any) -> Any:
        self.on_loop_thread = threading.current_thread() is LOOP_THREAD[0]
        self.entered.set()
        if not self.released.wait(PATIENCE * 1.5):
            raise RuntimeError("nobody let the image step through")
        return self.step(*args)


LOOP_THREAD: list[threading.Thread | None] = [None]


@pytest.fixture
def gated(live: LiveServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Gate]]:
    LOOP_THREAD[0] = live._served._thread  # uvicorn's event loop runs in this thread

    def gate(name: str) -> Gate:
        made = Gate(getattr(files, name))
        monkeypatch.setattr(files, name, made)
        return made

    yield gate
    LOOP_THREAD[0] = None


def _in_background(send: Callable[[], httpx.Response]) -> tuple[threading.Thread, list[Any]]:
    answers: list[Any] = []
    thread = threading.Thread(target=lambda: answers.append(send()), daemon=True)
    thread.start()
    return thread, answers


def _read_while_held(live: LiveServer, gate: Gate) -> None:
    assert gate.entered.wait(PATIENCE), "the image step never started"
    try:
        with live.client("full") as other:
            # On the event loop, this read would wait for the held decode: it would time out.
            answer = httpx.get(
                f"{live.base_url}{V1}/departments",
                headers=other.headers,
                timeout=PATIENCE,
            )
        assert answer.status_code == 200
    finally:
        gate.released.set()
    assert gate.on_loop_thread is False


def test_an_upload_is_decoded_off_the_event_loop(live: LiveServer, api, gated) -> None:
    gate = gated("image_format")
    thread, answers = _in_background(
        lambda: api.post(
            f"{V1}/files/upload", files={"file": ("a.png", png_bytes(seed=9101), "image/png")}
        )
    )
    _read_while_held(live, gate)
    thread.join(PATIENCE)
    assert answers and answers[0].status_code == 200, answers


def test_a_claim_renders_off_the_event_loop(live: LiveServer, api, gated) -> None:
    staged = api.post(
        f"{V1}/files/upload", files={"file": ("b.png", png_bytes(seed=9102), "image/png")}
    )
    assert staged.status_code == 200, staged.text
    gate = gated("render")
    thread, answers = _in_background(
        lambda: api.post(
            f"{V1}/persons", json={"firstName": "Held", "photoUuid": staged.json()["uuid"]}
        )
    )
    _read_while_held(live, gate)
    thread.join(PATIENCE)
    assert answers and answers[0].status_code == 201, answers
    person = api.get(f"{V1}/persons/{answers[0].json()['uuid']}").json()
    assert person["hasPhoto"] is True
    photo = api.get(f"{V1}/photos/thumbnail/{person['photoId']}")
    assert photo.status_code == 200 and photo.headers["content-type"] == "image/jpeg"


def test_a_user_claim_renders_off_the_event_loop(live: LiveServer, api, gated, unique) -> None:
    staged = api.post(
        f"{V1}/files/upload", files={"file": ("c.png", png_bytes(seed=9103), "image/png")}
    )
    gate = gated("render")
    body = {"email": f"{unique('held')}@example.com", "photoUuid": staged.json()["uuid"]}
    thread, answers = _in_background(lambda: api.post(f"{V1}/users", json=body))
    _read_while_held(live, gate)
    thread.join(PATIENCE)
    assert answers and answers[0].status_code == 201, answers


def test_a_near_cap_image_holds_the_whole_pixel_budget() -> None:
    """Two near-cap decodes never overlap; a small one waits for a near-cap one too."""
    budget = files.PixelBudget(files.MAX_PIXELS)
    near_cap = 7000 * 7000
    second_in = threading.Event()

    def second() -> None:
        with budget.reserve(near_cap):
            second_in.set()

    with budget.reserve(near_cap):
        thread = threading.Thread(target=second, daemon=True)
        thread.start()
        # Not a speed check: had the budget let it in, it would be in long before this.
        assert not second_in.wait(0.3)
    assert second_in.wait(PATIENCE)
    thread.join(PATIENCE)
    with budget.reserve(2_000_000), budget.reserve(2_000_000):
        pass  # small images share the budget side by side


def test_a_refused_claim_of_an_expired_file_writes_nothing(faulty) -> None:
    """Rendering ahead of the claim only reads: the claim's refusal (422) leaves the store as
    it was, so with the clock moved back the same staged file is claimed after all."""
    live = faulty()
    with live.client() as api, live.control() as control:
        staged = api.post(
            f"{V1}/files/upload", files={"file": ("d.png", png_bytes(seed=9104), "image/png")}
        ).json()["uuid"]
        control.put("/_reference/clock", json={"advance_seconds": files.STAGED_LIFETIME_SECONDS})
        refused = api.post(f"{V1}/persons", json={"firstName": "Late", "photoUuid": staged})
        assert refused.status_code == 422, refused.text
        control.put("/_reference/clock", json={"advance_seconds": -files.STAGED_LIFETIME_SECONDS})
        claimed = api.post(f"{V1}/persons", json={"firstName": "Later", "photoUuid": staged})
        assert claimed.status_code == 201, claimed.text
