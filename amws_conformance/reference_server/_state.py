"""Everything one running reference server holds, passed to every handler as ``call.server``.

Handlers, policies and parts see it through ``_server.ServerView``; only the application,
the CLI, the control plane and the provisioning build or hold the class itself.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from amws_conformance import spec
from amws_conformance.reference_server._api_key import ApiKey
from amws_conformance.reference_server._events import EventBus
from amws_conformance.reference_server._policy import Policy, compose
from amws_conformance.reference_server._server import ProfileExtender, Provisioner, Worker
from amws_conformance.reference_server._trails import record_audit, record_relay  # noqa: F401  (moved; re-exported)
from amws_conformance.reference_server.bucket_policy import BucketPolicy
from amws_conformance.reference_server.clock import Clock
from amws_conformance.reference_server.faults._model import Faults
from amws_conformance.reference_server.rate_bucket import DOCUMENTED, BucketSize, RateBuckets
from amws_conformance.reference_server.store import Store

DEFAULT_SETTINGS: dict[str, Any] = {
    # Administrator settings the documents leave to the admin screens.
    "restrict_to_localhost": False,
    "location_name_tolerant": False,
    "mandatory_visitor_fields": ["firstName"],
}

T = TypeVar("T")


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
    # ``serve --throttle NAME=REQUESTS[/SECONDS]``: the allowances of the throttles whose
    # figures the documents leave open (x-throttles names); the spec's figures by default.
    # A deployment setting, as a real system's administrator would set it.
    throttles: dict[str, spec.Throttle] = field(default_factory=dict)
    # ``serve --key-pool CLASS=N``: keys per class the profile lists (a pool); one otherwise.
    pools: dict[str, int] = field(default_factory=dict)
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
        # Asked on every request, so kept (a policy holds nothing but the server, and
        # ``Policy.memory`` lives here): one per policy and set of active faults.
        self._policies: dict[tuple[type, frozenset[str]], Any] = {}
        # The API keys by value and by UUID, while no key record changes (``Store.version``).
        self._keys: tuple[dict[str, ApiKey], dict[str, ApiKey]] = ({}, {})
        self._keys_version = -1
        # Meta values parsed from JSON, with the text they were parsed from.
        self._parsed: dict[str, tuple[str | None, Any]] = {}

    def policy(self, policy: type[T]) -> T:
        """The domain policy in force now: ``policy`` with the active faults' overrides."""
        # Typed as ``ServerView`` states it (any class in, that class out): the view cannot
        # name ``Policy`` without importing the module that imports it. Only policies come.
        domain = cast("type[Policy]", policy)
        faults = self.faults
        key = (domain, faults.active)
        found = self._policies.get(key)
        if found is None:
            found = compose(domain, faults.overrides_of(domain))(self)
            self._policies[key] = found
        return cast("T", found)

    def throttle(self, name: str) -> spec.Throttle:
        """The allowance of the throttle ``name`` (an x-throttles name) this server enforces."""
        return self.throttles.get(name) or spec.throttle(name)

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
        key = self._key_index()[1].get(name)
        if key is None:
            return DOCUMENTED
        return DOCUMENTED if self.documented_buckets else key.bucket

    def key_bucket(self, record: dict[str, Any]) -> BucketSize:
        """The bucket a stored API key pays from (the profile states the same)."""
        if self.documented_buckets:
            return DOCUMENTED
        return BucketSize(**record.get("bucket", DOCUMENTED.__dict__))

    # -- administrator settings (persisted) ---------------------------------------------
    @property
    def settings(self) -> dict[str, Any]:
        return {**DEFAULT_SETTINGS, **(self._meta_json("settings") or {})}

    def setting(self, name: str) -> Any:
        """One administrator setting (``settings[name]`` without copying them all)."""
        stored = self._meta_json("settings") or {}
        return stored[name] if name in stored else DEFAULT_SETTINGS[name]

    def _meta_json(self, name: str) -> Any:
        """A meta value's JSON, parsed once per text stored (asked on every request)."""
        stored = self.store.meta(name)
        seen = self._parsed.get(name)
        if seen is None or seen[0] != stored:
            seen = (stored, json.loads(stored) if stored else None)
            self._parsed[name] = seen
        return seen[1]

    def update_settings(self, changes: dict[str, Any]) -> dict[str, Any]:
        merged = {**self.settings, **changes}
        self.store.set_meta("settings", json.dumps(merged))
        return merged

    def key_by_value(self, value: str) -> ApiKey | None:
        """The API key whose value this is exactly (``None`` when there is none)."""
        return self._key_index()[0].get(value)

    def _key_index(self) -> tuple[dict[str, ApiKey], dict[str, ApiKey]]:
        """Every stored API key by its value and by its UUID, read again after a key write.

        Keys are few (the provisioned ones) and asked for on every request; an unknown value
        is not remembered, so values sent at random cannot grow the index.
        """
        store = self.store
        if self._keys_version != store.version("apikey"):
            with store.transaction():  # one consistent read, and no key write meanwhile
                version = store.version("apikey")
                by_value: dict[str, ApiKey] = {}
                by_uuid: dict[str, ApiKey] = {}
                for system in self.systems():
                    for record in store.all("apikey", system):
                        key = ApiKey.from_record(record, system)
                        by_value.setdefault(key.value, key)  # the first system's, as before
                        by_uuid[key.uuid] = key
            self._keys, self._keys_version = (by_value, by_uuid), version
        return self._keys

    def systems(self) -> list[str]:
        return list(self._meta_json("systems") or [])
