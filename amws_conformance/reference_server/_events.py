"""Domain events and the bus one server carries them on.

The domain says what happened; the parts that follow it (the door controllers, the webhook
dispatcher) subscribe when they are installed (``extensions.install``) and act on it. The
domain therefore imports neither the hardware nor the webhooks, and nothing is written onto
the server object to reach them.

- :class:`CredentialsChanged` — a credential was issued, written, revoked or unlinked, or a
  holder the controllers' phonebooks name went away. Published by ``domain.credentials`` and
  by the steps of ``domain.persons``, ``domain.users``, ``domain.invites`` and
  ``domain.visits`` that touch credentials or holders; ``hardware.controllers`` syncs the
  system's controllers.
- :class:`VisitChanged` — a visit reached a status (``domain.visits.move``, the one place a
  visit moves) or a registration was denied (``domain.invites``). ``webhooks.dispatcher``
  queues the event for the integration.
- :class:`ClockMoved` — the control plane moved the server clock. ``hardware.controllers``
  re-derives what it holds (validity windows open and close with the clock).

Delivery is synchronous, in the order of subscription, inside the publisher's call: a
credential write and the sync of the controllers share one request and one store transaction,
as they did when the domain called the hardware directly. A handler's exception reaches the
publisher (a handler that must never fail its publisher, the webhook dispatcher, catches its
own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar


@dataclass(frozen=True)
class Event:
    """Base of the events: a frozen record of what happened, in one system or server-wide."""


@dataclass(frozen=True)
class CredentialsChanged(Event):
    """What the controllers of ``system`` hold may have changed (credentials or holders)."""

    system: str


@dataclass(frozen=True)
class VisitChanged(Event):
    """A visit of ``system`` reached ``status``; ``visit`` is the invitation as stored then."""

    system: str
    status: str
    visit: Mapping[str, Any]


@dataclass(frozen=True)
class ClockMoved(Event):
    """The server clock was set or advanced: what depends on it is re-derived."""


E = TypeVar("E", bound=Event)


class EventBus:
    """Typed publish/subscribe for one server: handlers of an event type, in subscription order."""

    def __init__(self) -> None:
        self._handlers: dict[type[Event], list[Callable[[Any], None]]] = {}

    def subscribe(self, kind: type[E], handler: Callable[[E], None]) -> None:
        """Call ``handler`` with every ``kind`` event published from now on."""
        self._handlers.setdefault(kind, []).append(handler)

    def publish(self, event: Event) -> None:
        """Hand ``event`` to the handlers of its exact type, one after the other, now."""
        for handler in tuple(self._handlers.get(type(event), ())):
            handler(event)
