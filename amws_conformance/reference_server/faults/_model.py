"""What a fault is, the catalogue they register in, and the set switched on for one server."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import cast

from amws_conformance.reference_server._mutation import REMOVED, Mutation
from amws_conformance.reference_server._policy import P, Policy, domain_policy, overridden_decisions


@dataclass(frozen=True)
class Fault:
    name: str
    rule: str
    does: str
    # Declarative faults, applied by the seams without a line of domain code:
    operations: tuple[str, ...] = ()  # the operations they touch
    unchecked: str | None = None  # validation seam: this body field's rules are not enforced
    swap: tuple[int, int] | None = None  # response seam: answer the second status for the first
    optional: bool = False  # with unchecked: a missing value is not refused either
    # Policy seam: a subclass of a domain policy overriding one decision (see _policy.py).
    policy: type[Policy] | None = None
    # Validation seam: a documented constraint changed on ``operations`` (spec-derived mutants).
    mutation: Mutation | None = None
    # The contract constraint the fault is derived from (``spec.constraints()``), if any.
    constraint: str | None = None
    # It stores what the server cannot read back, so every later read of those records fails:
    # the self-check gives it a server of its own, lest it hide the faults tested after it.
    lasting: bool = False

    @property
    def seam(self) -> str:
        """Where the fault plugs in, as ``amws-reference faults`` lists it."""
        seams = []
        if self.unchecked:
            kind = "optional" if self.optional else "unchecked"
            seams.append(f"validation: {kind} {self.unchecked}")
        if self.mutation is not None:
            m = self.mutation
            value = "removed" if m.value == REMOVED else repr(m.value)
            if isinstance(m.value, list):
                value = f"[{len(m.value)} values]"
            seams.append(f"validation: {m.where} {'.'.join(m.field)} {m.keyword} {value}")
        if self.swap:
            seams.append(f"response: {self.swap[0]} answered {self.swap[1]}")
        if self.policy is not None:
            decisions = ", ".join(overridden_decisions(self.policy))
            seams.append(f"policy: {domain_policy(self.policy).__name__}.{decisions}")
        return "; ".join(seams) or "none"


CATALOGUE: dict[str, Fault] = {}


def unchecked(name: str, rule: str, field: str, *operations: str) -> None:
    does = f"{field} is not validated on {', '.join(operations)}"
    CATALOGUE[name] = Fault(name, rule, does, operations=operations, unchecked=field)


def optional(name: str, rule: str, field: str, *operations: str) -> None:
    does = f"{field} is not required on {', '.join(operations)}"
    CATALOGUE[name] = Fault(name, rule, does, operations=operations, unchecked=field, optional=True)


def swap(name: str, rule: str, statuses: tuple[int, int], *operations: str) -> None:
    does = f"{', '.join(operations)} answer {statuses[1]} where {statuses[0]} is due"
    CATALOGUE[name] = Fault(name, rule, does, operations=operations, swap=statuses)


def overrides(
    name: str, rule: str, does: str, *, lasting: bool = False
) -> Callable[[type[P]], type[P]]:
    """Register the decorated policy override as the behaviour of fault ``name``."""

    def register(override: type[P]) -> type[P]:
        overridden_decisions(override)  # refuses a malformed override at import
        CATALOGUE[name] = Fault(name, rule, does, policy=override, lasting=lasting)
        return override

    return register


# The statuses most declarative swaps exchange.
NOT_FOUND = (404, 400)
DUPLICATE = (409, 422)


class Faults:
    """The faults switched on for one server."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        names = tuple(names)
        unknown = [n for n in names if n not in CATALOGUE]
        if unknown:
            raise ValueError(f"unknown fault: {', '.join(unknown)}")
        self._active = frozenset(names)
        self._overrides: dict[tuple[type[Policy], frozenset[str]], tuple[type[Policy], ...]] = {}
        self._mutations: dict[tuple[str, str, frozenset[str]], tuple[Mutation, ...]] = {}

    def switch(self, names: Iterable[str]) -> None:
        """Replace the active faults (the control plane's ``PUT /_reference/faults``)."""
        names = tuple(names)
        unknown = [n for n in names if n not in CATALOGUE]
        if unknown:
            raise ValueError(f"unknown fault: {', '.join(unknown)}")
        self._active = frozenset(names)

    @property
    def active(self) -> frozenset[str]:
        return self._active

    def overrides_of(self, policy: type[P]) -> tuple[type[P], ...]:
        """The active faults' overrides of ``policy``, in catalogue order (the first outermost)."""
        # Keyed by the active set too: a switch racing a request can never serve stale overrides.
        key = (policy, self._active)
        found = self._overrides.get(key)
        if found is None:
            found = tuple(
                fault.policy
                for name, fault in CATALOGUE.items()
                if name in key[1]
                and fault.policy is not None
                and domain_policy(fault.policy) is policy
            )
            self._overrides[key] = found
        # Each override's only base is ``policy``, which the filter above checked.
        return cast("tuple[type[P], ...]", found)

    def unchecked_fields(self, operation_id: str) -> set[str]:
        """Body fields whose validation the active faults switch off for this operation."""
        return {
            fault.unchecked
            for fault in (CATALOGUE[n] for n in self._active)
            if fault.unchecked and operation_id in fault.operations
        }

    def optional_fields(self, operation_id: str) -> set[str]:
        """Required body fields the active faults let a request leave out."""
        # An optional fault always names its field (``optional`` above).
        return {
            fault.unchecked
            for fault in (CATALOGUE[n] for n in self._active)
            if fault.optional and fault.unchecked and operation_id in fault.operations
        }

    def mutations(self, operation_id: str) -> tuple[Mutation, ...]:
        """The active mutations of this operation's request checks, in catalogue order."""
        key = ("mutations", operation_id, self._active)
        found = self._mutations.get(key)
        if found is None:
            found = tuple(
                fault.mutation
                for name, fault in CATALOGUE.items()
                if name in self._active
                and fault.mutation is not None
                and operation_id in fault.operations
            )
            self._mutations[key] = found
        return found

    def swapped_status(self, operation_id: str, status: int) -> int:
        """The status an active fault answers instead of ``status`` (itself when none)."""
        for name in self._active:
            fault = CATALOGUE[name]
            if fault.swap and fault.swap[0] == status and operation_id in fault.operations:
                return fault.swap[1]
        return status
