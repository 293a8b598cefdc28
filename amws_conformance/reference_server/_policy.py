"""The policy seam: decisions inside one domain step, and the faults that override them.

Design note (the pattern for moving a domain module's faults out of its code):

- A domain module that has decisions a fault must be able to bend declares one ``Policy``
  subclass, e.g. ``CredentialPolicy``. Each method is one decision inside a step (how a status
  is derived, which fields a PUT writes, whether a deleted record is kept) and returns the
  correct answer. Methods are named after what they decide, never after a fault.
- The domain asks ``server.policy(CredentialPolicy)`` for the policy in force and calls its
  methods. It never asks whether a fault is on.
- A fault's behaviour is a small subclass of that policy overriding one decision, registered
  in its fault module with ``@overrides(name, rule, does)``. It calls ``super()`` for the
  correct answer and bends it, so it states only its deviation. A fault whose deviation spans
  a write and a later read (names frozen at issue) overrides the two decisions involved, and
  keeps what links them in its memory.
- Faults compose by Python's method resolution order: the policy in force is a class built
  from the active overrides followed by the domain's policy, so each override's ``super()``
  reaches the next active one and finally the correct decision. Two faults on one decision
  stack; faults on different decisions do not meet.
- Faults switch at run time (``Faults.switch``): ``Server.policy`` builds the class from the
  faults active at that call. Built classes are cached by their set of overrides, so a
  switch costs one class per new combination and nothing per call.
- State a fault needs between calls (names frozen at issue, which credentials a PUT left
  stuck) lives in ``Policy.memory``, kept on the server under the fault's own key; the domain
  records hold only what the correct server stores.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from amws_conformance.reference_server._server import ServerView

P = TypeVar("P", bound="Policy")


class Policy:
    """Base of the domain policies: the correct decisions of one domain module."""

    def __init__(self, server: ServerView) -> None:
        self.server = server

    def memory(self, key: str) -> dict[str, Any]:
        """A fault's own state on this server (created empty), kept across calls and switches.

        Only overrides use it: the correct decisions read the store and the clock.
        """
        return self.server.fault_memory.setdefault(key, {})


def overridden_decisions(override: type[Policy]) -> tuple[str, ...]:
    """The decisions ``override`` bends; TypeError unless it is a well-formed override.

    Checked when a fault registers, so a misspelt decision name fails at import instead of
    leaving the fault silently inert.
    """
    bases = override.__bases__
    if len(bases) != 1 or not issubclass(bases[0], Policy) or bases[0] is Policy:
        raise TypeError(f"{override.__name__} must subclass exactly one domain policy")
    base = bases[0]
    decisions = tuple(
        name
        for name, value in vars(override).items()
        if not name.startswith("_") and inspect.isfunction(value)
    )
    unknown = [d for d in decisions if not inspect.isfunction(getattr(base, d, None))]
    if not decisions or unknown:
        raise TypeError(
            f"{override.__name__} must override decisions of {base.__name__} only, "
            f"found {list(decisions)}"
        )
    return decisions


def domain_policy(override: type[Policy]) -> type[Policy]:
    """The domain policy an override bends (its only base)."""
    return override.__bases__[0]


# Classes built so far, by (domain policy, active overrides): one per combination ever active.
_COMPOSED: dict[tuple[type[Policy], tuple[type[Policy], ...]], type[Policy]] = {}


def compose(policy: type[P], overrides: tuple[type[P], ...]) -> type[P]:
    """``policy`` with ``overrides`` in front, the first outermost (``policy`` when none)."""
    if not overrides:
        return policy
    key: tuple[type[Policy], tuple[type[Policy], ...]] = (policy, overrides)
    composed = _COMPOSED.get(key)
    if composed is None:
        # setdefault: two threads building the same combination end up sharing one class.
        composed = _COMPOSED.setdefault(key, type(policy.__name__, (*overrides, policy), {}))
    return cast("type[P]", composed)
