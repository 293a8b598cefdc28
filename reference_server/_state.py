"""Everything one running reference server holds, passed to every handler as ``call.server``."""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from reference_server._events import EventBus
from reference_server._policy import P, compose
from reference_server._trails import record_audit, record_relay  # noqa: F401  (moved; re-exported)
from reference_server.clock import Clock
from reference_server.faults._model import Faults
from reference_server.rate_bucket import DOCUMENTED, BucketPolicy, BucketSize, RateBuckets
from reference_server.store import Store

DEFAULT_SETTINGS: dict[str, Any] = {
    # Administrator settings the documents leave to the admin screens.
    "restrict_to_localhost": False,
    "location_name_tolerant": False,
    "mandatory_visitor_fields": ["firstName"],
}

T = TypeVar("T")
# What the parts (hardware, virtual readers, webhooks) register when they are installed:
# a step of provisioning, and an addition to the target profile.
Provisioner = Callable[["Server"], None]
ProfileExtender = Callable[["Server", dict[str, Any]], None]


class Worker(Protocol):
    """A background worker run with the ASGI lifespan."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


@dataclass
class ApiKey:
    uuid: str
    name: str
    value: str
    system: str
    permissions: frozenset[str]
    enabled: bool
    encryption: dict[str, Any] | None = None
    bucket: BucketSize = DOCUMENTED

    @classmethod
    def from_record(cls, record: dict[str, Any], system: str) -> ApiKey:
        return cls(
            uuid=record["uuid"],
            name=record["name"],
            value=record["value"],
            system=system,
            permissions=frozenset(record["permissions"]),
            enabled=record["enabled"],
            encryption=record.get("encryption"),
            bucket=BucketSize(**record.get("bucket", DOCUMENTED.__dict__)),
        )


@dataclass
class Server:
    store: Store
    faults: Faults = field(default_factory=Faults)
    clock: Clock = field(default_factory=Clock)
    control_token: str = field(default_factory=lambda: secrets.token_hex(24))
    unauthenticated_bucket: BucketSize = DOCUMENTED
    # ``serve --documented-buckets``: every key pays from the documented bucket whatever its
    # stored record says, so a local run is paced like a staging system. A runtime setting,
    # not a migration: a database provisioned without it keeps its raised quotas on disk.
    documented_buckets: bool = False
    buckets: RateBuckets = field(init=False)
    # State the policy overrides of active faults keep between calls, by the fault's own key
    # (see ``Policy.memory``); the correct server never reads it.
    fault_memory: dict[str, dict[str, Any]] = field(default_factory=dict, init=False)
    # Domain events (``_events.py``): the domain publishes, the installed parts subscribe.
    events: EventBus = field(default_factory=EventBus, init=False)
    # Later parts (hardware, virtual readers, webhooks) extend provisioning and the profile.
    provisioners: list[Provisioner] = field(default_factory=list, init=False)
    profile_extenders: list[ProfileExtender] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.buckets = RateBuckets(self.clock.timestamp, self._bucket_size)
        self._background: list[Worker] = []
        # One object of each kind a part keeps per server (``part``).
        self._parts: dict[type, object] = {}

    def policy(self, policy: type[P]) -> P:
        """The domain policy in force now: ``policy`` with the active faults' overrides."""
        return compose(policy, self.faults.overrides_of(policy))(self)

    def part(self, kind: type[T], make: Callable[[], T]) -> T:
        """This server's one ``kind`` (a dispatcher, a throttle), made by ``make`` at first ask."""
        found = self._parts.get(kind)
        if found is None:
            # setdefault: two threads making it at once end up sharing the first one stored.
            found = self._parts.setdefault(kind, make())
        return cast("T", found)

    def add_background(self, worker: Worker) -> None:
        """Register a worker with ``start()`` and ``stop()`` run with the ASGI lifespan."""
        self._background.append(worker)

    def start_background(self) -> None:
        for worker in self._background:
            worker.start()

    def stop_background(self) -> None:
        for worker in reversed(self._background):
            worker.stop()

    def _bucket_size(self, name: str) -> BucketSize:
        return self.policy(BucketPolicy).size(self._configured_bucket(name))

    def _configured_bucket(self, name: str) -> BucketSize:
        if name.startswith("anon:key:"):
            return DOCUMENTED
        if name.startswith("anon:"):
            return self.unauthenticated_bucket
        record = self.store.get("apikey", name)
        if record is None:
            return DOCUMENTED
        return self.key_bucket(record)

    def key_bucket(self, record: dict[str, Any]) -> BucketSize:
        """The bucket a stored API key pays from (the profile states the same)."""
        if self.documented_buckets:
            return DOCUMENTED
        return BucketSize(**record.get("bucket", DOCUMENTED.__dict__))

    # -- administrator settings (persisted) ---------------------------------------------
    @property
    def settings(self) -> dict[str, Any]:
        stored = self.store.meta("settings")
        return {**DEFAULT_SETTINGS, **(json.loads(stored) if stored else {})}

    def update_settings(self, changes: dict[str, Any]) -> dict[str, Any]:
        merged = {**self.settings, **changes}
        self.store.set_meta("settings", json.dumps(merged))
        return merged

    def key_by_value(self, value: str) -> ApiKey | None:
        for system in self.systems():
            found = self.store.find_unique("apikey", system, "value", value)
            if found:
                record = self.store.get("apikey", found)
                if record is not None and record["value"] == value:
                    return ApiKey.from_record(record, system)
        return None

    def systems(self) -> list[str]:
        stored = self.store.meta("systems")
        return json.loads(stored) if stored else []
