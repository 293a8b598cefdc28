"""One conformance run: the target, its clients, the ledger, and what the report needs."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

import httpx
import pytest

from amws_conformance import spec
from amws_conformance.harness.evidence.curl import profile_variables
from amws_conformance.harness.lifecycle.interrupts import Interrupts
from amws_conformance.harness.lifecycle.journal import SUFFIX, Entry, Journal
from amws_conformance.harness.lifecycle.ledger import Ledger
from amws_conformance.harness.plan.forecast import MAX_REAL_TIME_WAIT_SECONDS
from amws_conformance.harness.plan.spend import FAILED_AUTH, SETUP
from amws_conformance.harness.target.client import TargetClient
from amws_conformance.harness.target.control import ControlPlane
from amws_conformance.harness.target.embedded import EmbeddedServer
from amws_conformance.harness.target.health import DEFAULT_REQUEST_SECONDS, Health
from amws_conformance.harness.target.pacing import Pacer
from amws_conformance.harness.target.pool import KeyPool, PoolKey, key_class, label
from amws_conformance.harness.target.profile import KEY_NAMES, Profile, load
from amws_conformance.harness.target.session import Session

T = TypeVar("T")
BAD_HEADERS = {
    # Deliberately failing ways to authenticate, each with its own pacing (400 units a try).
    "missing": None,
    "short": "k" * 32,
    "long": "k" * 300,
}


DEFAULT_LATENCY = 0.005  # seconds per request until the preflight measures the target's


def _workers() -> int:
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)


@dataclass
class Run:
    """Lazily starts the embedded server, and owns every client of the run."""

    target: str | None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    allow_physical: bool = False
    seed: int = 0
    skip_preflight: bool = False
    # Extra arguments of the embedded reference server's ``serve`` command (the self-check
    # starts it with faults switched on).
    server_args: tuple[str, ...] = ()
    # What the target runs as beside its ordinary self right now: the names of the deliberate
    # breakages the self-check switched on, empty in an ordinary run. Shared values are made
    # once per variant (:meth:`shared`), and the state machines do not shrink under one.
    variant: tuple[str, ...] = ()
    profile: Profile | None = None
    session: Session | None = None
    cleanup_problems: list[str] = field(default_factory=list)
    # Optional keys the preflight saw behave otherwise than their class (key name -> what it
    # saw, with both possible causes): the tests that need such a key read undecided.
    key_problems: dict[str, str] = field(default_factory=dict)
    # Further keys of a pool the preflight left out (label -> what it saw): a note, the run
    # decides every rule with the keys that behave.
    pool_problems: dict[str, str] = field(default_factory=dict)
    _embedded: EmbeddedServer | None = None
    _clients: dict[str, TargetClient] = field(default_factory=dict)
    _pacers: dict[str, Pacer] = field(default_factory=dict)
    _shared: dict[tuple[str, tuple[str, ...]], Any] = field(default_factory=dict)
    started: bool = False
    _clock_client: ControlPlane | Literal[False] | None = None  # False: the target has none
    latency: float = DEFAULT_LATENCY  # seconds per request, measured on the preflight
    request_seconds: float = DEFAULT_REQUEST_SECONDS  # the longest one request may take
    # Told, with the bucket's name, before the client pauses for a bucket's refill.
    on_wait: Callable[[str, float], None] | None = None
    # Where a run against a target of its own writes its ledger through (None: nowhere).
    state_dir: Path | None = None
    interrupts: Interrupts | None = None

    def load_profile(self) -> Profile | None:
        """Validate an explicit profile early (a bad one stops the run before any test)."""
        if self.target is not None and self.profile is None:
            self.profile = load(self.target)
        return self.profile

    def start(self) -> Profile:
        if self.started:
            assert self.profile is not None
            return self.profile
        if self.target is None:
            self._embedded = EmbeddedServer(self.server_args)
            self.profile = self._embedded.start()
        profile = self.load_profile()
        assert profile is not None
        self.session = Session(
            base_url=profile.base_url,
            ledger=Ledger(self._journal(profile)),
            secrets=profile.secrets(),
            variables=profile_variables(profile),
            health=Health(request_seconds=self.request_seconds),
        )
        if self.interrupts is not None:
            self.session.shield = self.interrupts.deferred
        self.started = True
        return profile

    def _journal(self, profile: Profile) -> Journal | None:
        """The run's ledger file, for a target that outlives the run (not the embedded one)."""
        if self.target is None or self.state_dir is None:
            return None
        return Journal(
            self.state_dir / f"{self.run_id}{SUFFIX}",
            {
                "run_id": self.run_id,
                "profile": str(Path(self.target).resolve()),
                "name": profile.name,
                "base_url": profile.base_url,
                "started": datetime.now(UTC).isoformat(timespec="seconds"),
            },
        )

    @property
    def ledger_file(self) -> Path | None:
        """The run's ledger file while it exists (the cleanup left records behind)."""
        journal = self.session.ledger.journal if self.session else None
        return journal.path if journal is not None and journal.path.exists() else None

    @property
    def physical_allowed(self) -> bool:
        return self.allow_physical or bool(self.profile and self.profile.physical_allowed)

    def _pacer(self, bucket: str, size: dict[str, int]) -> Pacer:
        if bucket not in self._pacers:
            notify = self.on_wait

            def waiting(seconds: float) -> None:
                if notify is not None:
                    notify(bucket, seconds)

            self._pacers[bucket] = Pacer(
                size["capacity"], size["refill_per_minute"], share=_workers(), on_wait=waiting
            )
        return self._pacers[bucket]

    def client(self, name: str) -> TargetClient | None:
        """The client of a key, or of a deliberately bad header; ``None`` if not configured."""
        profile = self.start()
        assert self.session is not None
        if name in self._clients:
            return self._clients[name]
        if name in BAD_HEADERS:
            pacer = self._pacer(FAILED_AUTH, profile.unauthenticated_bucket())
            keys = KeyPool([PoolKey(name, BAD_HEADERS[name], pacer)])
            client = TargetClient(self.session, name, keys, failing=True, bucket=FAILED_AUTH)
        else:
            values = profile.pool(name)
            if not values:
                return None
            session = self.session
            labels = [label(name, index, len(values)) for index in range(len(values))]
            # The rate_limit key's tests drain it on purpose: never paced.
            paced = name != "rate_limit"
            keys = KeyPool(
                [
                    PoolKey(tag, value, self._pacer(tag, profile.bucket(name)) if paced else None)
                    for tag, value in zip(labels, values, strict=True)
                ],
                pinned=lambda: session.pinned,
            )
            encryption = profile.data["keys"][name] if name == "encrypted" else None
            client = TargetClient(
                self.session, name, keys, failing=name == "disabled", encryption=encryption
            )
        self._clients[name] = client
        return client

    def writer(self) -> TargetClient:
        """The ``full`` key's client for tests that make and inspect their own records: its
        reads go through the ``readonly`` key where the profile has one. Both keys see the
        same system, and each has its own bucket, so a run's reads and writes drain two
        buckets side by side instead of one. ``client("full")`` stays the full key alone."""
        if "writer" not in self._clients:
            full = self.client("full")
            assert full is not None and self.session is not None
            writer = TargetClient(self.session, "full", full.keys)
            # A readonly key that does not behave as one is never used for the reads.
            readonly = None if "readonly" in self.key_problems else self.client("readonly")
            writer.reads_via = readonly
            self._clients["writer"] = writer
        return self._clients["writer"]

    def control(self) -> ControlPlane | None:
        """A new client of the control plane (the caller closes it); ``None`` without one."""
        profile = self.start()
        control = profile.section("control")
        if not control:
            return None
        # Based at the server root: full paths (/_reference/clock) work as the architecture
        # lists them, and the typed methods add the prefix themselves.
        root = control["url"].rstrip("/").removesuffix("/_reference")
        return ControlPlane(
            base_url=root,
            headers={"Authorization": f"Bearer {control['token']}"},
            timeout=30,
        )

    def target_clock(self) -> float:
        """Seconds since the epoch on the target's clock (the control plane's, else ours).

        The receiver judges signature timestamps by it, so a test that moves the reference
        server's clock does not make its deliveries look stale.
        """
        if self._clock_client is None:
            self._clock_client = self.control() or False
        if self._clock_client is False:
            return time.time()
        return self._clock_client.now().timestamp()

    def shared(self, name: str, make: Callable[[], T]) -> T:
        """A value made once per run and shared by the tests that ask for it (records several
        tests only read), booked as the set-up ``name`` (see :meth:`sharing`).

        Each :attr:`variant` of the target gets a value of its own, made while it is on (under
        the self-check's fault matrix, each fault), so a fault in a write path meets the
        records its tests read. A test that fails drops
        the values it used (:meth:`drop_shared_of`): the next test that asks gets a fresh one,
        so a record a faulty target spoiled fails one test, not every test sharing it."""
        key = (name, self.variant)
        if key not in self._shared:
            with self.sharing(name):
                self._shared[key] = make()
        else:
            self.sharing_used(name)
        return cast(T, self._shared[key])  # the dict holds each name's T, made by make()

    def forget_shared(self, name: str) -> None:
        """Forget the shared value ``name`` (of the variant on now): a test that changed the
        record outside its own rule hands the next one a fresh record without failing for it."""
        self._shared.pop((name, self.variant), None)

    def drop_shared_of(self, test: str) -> None:
        """Forget the shared values ``test`` used (it failed); their records stay in the ledger
        and are cleaned up with the run's."""
        assert self.session is not None
        used = {u.removeprefix(SETUP) for u in self.session.spend.uses.get(test, ())}
        for key in [k for k in self._shared if k[0] in used]:
            del self._shared[key]

    @contextmanager
    def sharing(self, name: str) -> Iterator[None]:
        """Book what the block spends (making a value several tests share, however they cache
        it) to the set-up ``name``, and record that the current test uses it: a plan that
        keeps any one of those tests knows it pays for the set-up once."""
        assert self.session is not None
        self.sharing_used(name)
        with self.session.spend.booked_to(f"{SETUP}{name}"):
            yield

    def sharing_used(self, name: str) -> None:
        """The current test uses the shared set-up ``name`` (made earlier)."""
        assert self.session is not None
        self.session.spend.used(self.session.current_test, f"{SETUP}{name}")

    def pass_time(self, seconds: float) -> None:
        """Let ``seconds`` pass on the target: its clock moves where it has a control plane,
        else the run sleeps that long in real time (the forecast counts those)."""
        if self._clock_client is None:
            self._clock_client = self.control() or False
        if self._clock_client is False:
            if seconds > MAX_REAL_TIME_WAIT_SECONDS:
                # No run goes on without end: a wait that long is not attempted.
                pytest.skip(
                    f"not configured: the test needs {seconds:,.0f} s to pass on a target "
                    f"without a control plane, over the bound of "
                    f"{MAX_REAL_TIME_WAIT_SECONDS:,.0f} s (the profile's declared bucket sets it)"
                )
            time.sleep(seconds)
        else:
            self._clock_client.advance(seconds)
        if self.session is not None:
            self.session.spend.passed(self.session.booking, seconds)

    def tokens_now(self) -> dict[str, float]:
        """What each paced bucket holds now, as the client's model sees it: a pool's keys
        together, as the forecast models a pool (one bucket of their summed size)."""
        held: dict[str, float] = {}
        for name, pacer in self._pacers.items():
            if name in self.pool_problems:
                continue  # left out of its pool: never spent from
            held[key_class(name)] = held.get(key_class(name), 0.0) + pacer.available()
        return held

    def pending_cleanup(self) -> dict[str, int]:
        """Units per bucket the cleanup of what the run made so far will spend."""
        spent: dict[str, int] = {}
        if self.session is None:
            return spent
        for entry in self.session.ledger.pending:
            found = spec.match("DELETE", entry.delete_path or "")
            if found:
                spent[entry.key] = spent.get(entry.key, 0) + int(found[0].rate_cost or 0)
        return spent

    def waited_seconds(self) -> dict[str, float]:
        """Seconds each bucket's pacer held requests back."""
        return {name: round(pacer.waited, 1) for name, pacer in self._pacers.items()}

    @contextmanager
    def cleanup_client(self, entry: Entry) -> Iterator[TargetClient]:
        client = self.client(entry.key) or self.client("full")
        assert client is not None
        yield client

    def cleanup(self) -> None:
        """Delete what the run created (newest first); idempotent."""
        if self.session is None:
            return

        session = self.session

        def send(entry: Entry) -> httpx.Response:
            # Booked to the test that created the record: its removal is part of its cost.
            with session.spend.booked_to(entry.test), self.cleanup_client(entry) as client:
                return client.foreign.unchecked.request("DELETE", entry.delete_path or "")

        session.observing = False
        health = session.health
        interrupts = self.interrupts
        self.cleanup_problems += session.ledger.cleanup(
            send,
            unreachable=lambda: health.down and health.failures > 0,
            hardware_only=lambda: interrupts is not None and interrupts.hardware_only,
        )

    def stop(self) -> None:
        try:
            self.cleanup()
        finally:
            journal = self.session.ledger.journal if self.session else None
            if journal is not None:
                # The file stays while anything is left: it is what a sweep removes.
                journal.close(empty=not self.cleanup_problems)
            for client in self._clients.values():
                client.close()
            self._clients.clear()
            if self._clock_client:
                self._clock_client.close()
            self._clock_client = None
            if self._embedded is not None:
                self._embedded.stop()
                self._embedded = None

    def pool_sizes(self) -> dict[str, int]:
        """Keys per class the run spends from: the profile's, less those the preflight left
        out of a pool."""
        profile = self.profile
        if profile is None:
            return {}
        return {
            name: len(profile.pool(name)) - sum(key_class(p) == name for p in self.pool_problems)
            for name in KEY_NAMES
            if profile.has_key(name)
        }

    def describe(self) -> dict[str, Any]:
        profile = self.profile
        return {
            "name": profile.name if profile else None,
            "base_url": profile.base_url if profile else None,
            "embedded": self.target is None,
            "run_id": self.run_id,
            # Optional keys that did not behave as their class in the preflight.
            "key_problems": dict(self.key_problems),
            # Keys per class the run spent from, and the further keys of a pool left out.
            "keys": self.pool_sizes(),
            "pool_problems": dict(self.pool_problems),
        }
