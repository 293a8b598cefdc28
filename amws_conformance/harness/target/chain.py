"""The chain one exchange of the harness client goes through: the :class:`Call` on its way, the
:class:`Options` a view of the client gives it, and how steps compose (httpx's model: one send
path, behaviour plugged in around it). The steps themselves are in harness/target/steps.py.

A step is a layer around the steps inside it: it may act on the way out, on the answer, or
both, and hands the call on by calling ``inner``. A :class:`Hook` is a step that only reads the
answer, once the steps inside it are done (httpx's response event hooks).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

from amws_conformance import spec
from amws_conformance.harness.target.pool import PoolKey


@dataclass(frozen=True)
class Options:
    """What a view of a client leaves out; the client itself leaves out nothing."""

    unchecked: bool = False  # the global checks (steps.Checks)
    raw: bool = False  # field encryption and decryption (steps.Encryption)
    unpaced: bool = False  # the wait for the modelled bucket (steps.Pace)
    unretried: bool = False  # the retry of a 429 (steps.Retry), its booking as unplanned (Book)
    foreign: bool = False  # the refusal to change a record the run did not create (steps.Guard)


def _is_read(op: spec.Operation) -> bool:
    """A keyed operation a Read permission allows (list, read, search, match, download)."""
    permission = str(op.permission or "")
    return op.keyed and (permission.startswith("Read ") or permission.endswith("- Read"))


@dataclass
class Call:
    """One exchange on its way through the steps: what the caller asked, with which options,
    and what the steps add on the way (the body and headers as sent, the key, the hold)."""

    method: str
    path: str
    options: Options = field(default_factory=Options)
    json: Any = None  # as the caller gave it: the transcript, the ledger and the checks read it
    content: bytes | None = None
    files: Any = None
    params: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    op: spec.Operation | None = field(init=False)
    path_params: dict[str, str] = field(init=False)
    wire_json: Any = field(init=False)  # the body as sent: listed fields encrypted (Encryption)
    wire_headers: dict[str, str] = field(init=False)  # this attempt's, its key's added (Pace)
    key: PoolKey | None = field(default=None, init=False)  # the key of this attempt (Pace)
    # From a create's send until its record is in the ledger: the session's shield (Hold).
    held: ExitStack = field(default_factory=ExitStack, init=False)

    def __post_init__(self) -> None:
        found = spec.match(self.method, urlsplit(self.path).path)
        self.op, self.path_params = found if found else (None, {})
        self.wire_json = self.json
        self.wire_headers = dict(self.headers or {})

    @property
    def named(self) -> bool:
        """Whether the caller gave an Authorization header: it names its own key."""
        return "Authorization" in (self.headers or {})

    @property
    def read(self) -> bool:
        """A read with the client's own key: what a client's ``reads_via`` sends instead."""
        return not self.named and self.op is not None and _is_read(self.op)


Handler = Callable[[Call], httpx.Response]  # a call's way through the steps inside one


class Step(Protocol):
    """A layer around the steps inside it: it hands the call on by calling ``inner``."""

    def __call__(self, call: Call, inner: Handler) -> httpx.Response: ...


def compose(steps: Sequence[Step], send: Handler) -> Handler:
    """``steps`` around ``send`` as one handler, the first step outermost."""
    handler = send
    for step in reversed(steps):
        handler = _around(step, handler)
    return handler


def _around(step: Step, inner: Handler) -> Handler:
    def handle(call: Call) -> httpx.Response:
        return step(call, inner)

    return handle


class Hook:
    """A step that only reads the answer, once the steps inside it are done."""

    def __call__(self, call: Call, inner: Handler) -> httpx.Response:
        response = inner(call)
        self.answered(call, response)
        return response

    def answered(self, call: Call, response: httpx.Response) -> None:
        raise NotImplementedError
