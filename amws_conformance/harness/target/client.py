"""The HTTP client tests use: one per key, paced, guarded, checked and recorded, and its views.

Every exchange of a :class:`TargetClient` takes one way: :meth:`TargetClient.send` hands it to
the client's chain of steps (harness/target/steps.py), composed once, in a fixed order, around
the one send: the guard (no change to a record the run did not create), the global checks, the
ledger, the transcript, field encryption, the 429 retry, pacing, spend, and the send within the
per-request deadline. A client whose reads go through another key (``reads_via``) hands its reads
to that client's chain, with the same options.

A test that needs a step left out asks for a view of the client by name: ``client.unchecked``
(no global checks), ``client.raw`` (no field encryption or decryption), ``client.unretried``
(a 429 is the answer), ``client.unpaced`` (no pacing and no 429 retry) and ``client.foreign``
(may change records the run did not create). Views compose (``client.raw.unchecked``) and are
light: a view holds its client and its options, and shares the client's connection, session
and keys.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, replace
from typing import Any, Final

import httpx

from amws_conformance.harness.target import steps
from amws_conformance.harness.target.chain import Call, Options, compose
from amws_conformance.harness.target.pacing import Pacer
from amws_conformance.harness.target.pool import KeyPool, PoolKey
from amws_conformance.harness.target.session import Session


class BaseClient(ABC):
    """What a client and each of its views offer: :meth:`request`, its shortcuts, and the
    named views."""

    __slots__ = ()

    @property
    @abstractmethod
    def client(self) -> TargetClient:
        """The client that sends: this one, or the one this view is of."""

    @property
    @abstractmethod
    def options(self) -> Options:
        """The steps this view leaves out (a client: none)."""

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        content: bytes | None = None,
        files: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request through the client's steps, but those this view leaves out."""
        call = Call(
            method,
            path,
            self.options,
            json=json,
            content=content,
            files=files,
            params=params,
            headers=headers,
        )
        return self.client.send(call)

    # -- shortcuts --------------------------------------------------------------------
    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", path, **kwargs)

    # -- the named views ----------------------------------------------------------------
    @property
    def unchecked(self) -> ClientView:
        """Without the global checks: for answers the test judges itself, or that no documented
        answer fits (a path or a status the documents do not have)."""
        return self._view(unchecked=True)

    @property
    def raw(self) -> ClientView:
        """Without field encryption and decryption: the body goes out as given, the answer comes
        back as sent (the encryption tests see the ciphertext)."""
        return self._view(raw=True)

    @property
    def unretried(self) -> ClientView:
        """Paced, but a 429 is the answer, not waited out and sent again: for tests that wait
        in their own way (a throttle's window, the control-plane clock)."""
        return self._view(unretried=True)

    @property
    def unpaced(self) -> ClientView:
        """Neither paced on the modelled bucket nor retried on a 429: for tests that drain a
        bucket on purpose and read each answer."""
        return self._view(unpaced=True, unretried=True)

    @property
    def foreign(self) -> ClientView:
        """Allowed to change records the run did not create: the cleanup, which removes the
        ledger's records by the paths it wrote."""
        return self._view(foreign=True)

    def _view(self, **leave_out: bool) -> ClientView:
        return ClientView(self.client, replace(self.options, **leave_out))


class TargetClient(BaseClient):
    """Talks to the target with one way of authenticating (a key, or a deliberate bad header)."""

    def __init__(
        self,
        session: Session,
        name: str,
        keys: KeyPool,
        *,
        failing: bool = False,
        encryption: dict[str, Any] | None = None,
        timeout: float = 30.0,
        bucket: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        # Final: the client's steps are composed with them.
        self.session: Final = session
        self.name: Final = name
        self.keys: Final = keys  # one key, or a pool: each request goes with the one it picks
        self.bucket: Final = bucket or name  # where the target charges this client's requests
        # Where this client's reads go instead (the readonly key: its own bucket drains beside
        # this one's); None: it sends them itself.
        self.reads_via: TargetClient | None = None
        self.failing: Final = failing
        self.encryption: Final = encryption
        self._transport = transport  # None: the network; a test's stand-in target otherwise
        self._http = httpx.Client(base_url=session.base_url, timeout=timeout, transport=transport)
        # Composed once, outermost first (steps.py says what each does and why it sits there).
        self._chain = compose(
            [
                steps.Guard(session),
                steps.Checks(session),
                steps.Hold(),
                steps.Register(session, name),
                steps.Record(session),
                steps.Encryption(encryption),
                steps.Retry(),
                steps.Pace(session, keys, failing),
                steps.Book(session, self.bucket, failing),
            ],
            steps.Send(session, self._http),
        )

    @property
    def client(self) -> TargetClient:
        return self

    @property
    def options(self) -> Options:
        return Options()

    @property
    def header(self) -> str | None:
        """The Authorization value of the class's first key (a test naming one key uses it)."""
        return self.keys.first.header

    @property
    def pacer(self) -> Pacer | None:
        """The first key's pacer: what a request sent with :attr:`header` is paced on."""
        return self.keys.first.pacer

    def close(self) -> None:
        self._http.close()

    @contextmanager
    def only(self, key: PoolKey) -> Iterator[TargetClient]:
        """This client with ``key`` alone (the preflight tries each key of a pool)."""
        alone = TargetClient(
            self.session,
            self.name,
            KeyPool([key]),
            failing=self.failing,
            encryption=self.encryption,
            bucket=self.bucket,
            transport=self._transport,
        )
        try:
            yield alone
        finally:
            alone.close()

    def send(self, call: Call) -> httpx.Response:
        """The one way out: a read goes to :attr:`reads_via` where there is one (with the
        call's options), everything else through this client's steps."""
        if self.reads_via is not None and call.read:
            return self.reads_via.send(call)
        return self._chain(call)


class ClientView(BaseClient):
    """A client with some of its steps left out, e.g. ``api.unchecked``: it sends with the
    client's connection, session and keys, and holds nothing else."""

    __slots__ = ("_client", "_options")

    def __init__(self, client: TargetClient, options: Options) -> None:
        self._client, self._options = client, options

    def __repr__(self) -> str:
        left_out = [name for name, on in asdict(self._options).items() if on]
        return f"<{self._client.name} client, {' '.join(left_out)}>"

    @property
    def client(self) -> TargetClient:
        return self._client

    @property
    def options(self) -> Options:
        return self._options

    @property
    def session(self) -> Session:
        return self._client.session

    @property
    def name(self) -> str:
        return self._client.name

    @property
    def header(self) -> str | None:
        return self._client.header

    @contextmanager
    def only(self, key: PoolKey) -> Iterator[ClientView]:
        """The client with ``key`` alone, seen through this view."""
        with self._client.only(key) as alone:
            yield ClientView(alone, self._options)
