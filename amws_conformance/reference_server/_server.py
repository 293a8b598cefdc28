"""What handlers, policies and installed parts see of the running server (``_state.Server``).

They are written against this view, not the state class, so that none of them imports the
module that imports them all (the state composes the fault catalogue, which composes the
domain): a type-only import is an import circle too. ``_state.Server`` satisfies it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from amws_conformance import spec
from amws_conformance.reference_server._api_key import ApiKey
from amws_conformance.reference_server._events import EventBus
from amws_conformance.reference_server._mutation import Mutation
from amws_conformance.reference_server.clock import Clock
from amws_conformance.reference_server.rate_bucket import BucketSize, RateBuckets
from amws_conformance.reference_server.store import Store

T = TypeVar("T")


class Worker(Protocol):
    """A background worker run with the ASGI lifespan."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


# What the parts (hardware, virtual readers, webhooks) register when they are installed:
# a step of provisioning, and an addition to the target profile.
Provisioner = Callable[["ServerView"], None]
ProfileExtender = Callable[["ServerView", dict[str, Any]], None]


class DeclaredDeviations(Protocol):
    """The active faults' declarative deviations, read at the validation and response seams.

    ``faults._model.Faults`` is the one kind; behavioural faults reach the domain only
    through ``ServerView.policy``.
    """

    def unchecked_fields(self, operation_id: str) -> set[str]: ...

    def optional_fields(self, operation_id: str) -> set[str]: ...

    def mutations(self, operation_id: str) -> tuple[Mutation, ...]: ...

    def swapped_status(self, operation_id: str, status: int) -> int: ...


class ServerView(Protocol):
    """The running server's state and services, as the domain and its parts use them."""

    store: Store
    clock: Clock
    control_token: str
    documented_buckets: bool
    pools: dict[str, int]
    buckets: RateBuckets
    fault_memory: dict[str, dict[str, Any]]
    events: EventBus
    provisioners: list[Provisioner]
    profile_extenders: list[ProfileExtender]

    @property
    def faults(self) -> DeclaredDeviations: ...

    def policy(self, policy: type[T]) -> T:
        """The domain policy in force now (``policy`` with the active faults' overrides)."""
        ...

    def throttle(self, name: str) -> spec.Throttle: ...

    def part(self, kind: type[T], make: Callable[[], T]) -> T: ...

    def add_background(self, worker: Worker) -> None: ...

    def key_bucket(self, record: dict[str, Any]) -> BucketSize: ...

    @property
    def settings(self) -> dict[str, Any]: ...

    def setting(self, name: str) -> Any: ...

    def update_settings(self, changes: dict[str, Any]) -> dict[str, Any]: ...

    def key_by_value(self, value: str) -> ApiKey | None: ...

    def systems(self) -> list[str]: ...
