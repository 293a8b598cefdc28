"""What a fault is, the catalogue they register in, and the set switched on for one server."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


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


CATALOGUE: dict[str, Fault] = {}


def fault(name: str, rule: str, does: str) -> None:
    CATALOGUE[name] = Fault(name, rule, does)


def unchecked(name: str, rule: str, field: str, *operations: str) -> None:
    does = f"{field} is not validated on {', '.join(operations)}"
    CATALOGUE[name] = Fault(name, rule, does, operations=operations, unchecked=field)


def optional(name: str, rule: str, field: str, *operations: str) -> None:
    does = f"{field} is not required on {', '.join(operations)}"
    CATALOGUE[name] = Fault(name, rule, does, operations=operations, unchecked=field, optional=True)


def swap(name: str, rule: str, statuses: tuple[int, int], *operations: str) -> None:
    does = f"{', '.join(operations)} answer {statuses[1]} where {statuses[0]} is due"
    CATALOGUE[name] = Fault(name, rule, does, operations=operations, swap=statuses)


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

    def switch(self, names: Iterable[str]) -> None:
        """Replace the active faults (the control plane's ``PUT /_reference/faults``)."""
        names = tuple(names)
        unknown = [n for n in names if n not in CATALOGUE]
        if unknown:
            raise ValueError(f"unknown fault: {', '.join(unknown)}")
        self._active = frozenset(names)

    def on(self, name: str) -> bool:
        if name not in CATALOGUE:
            raise KeyError(name)
        return name in self._active

    @property
    def active(self) -> frozenset[str]:
        return self._active

    def unchecked_fields(self, operation_id: str) -> set[str]:
        """Body fields whose validation the active faults switch off for this operation."""
        return {
            CATALOGUE[n].unchecked
            for n in self._active
            if CATALOGUE[n].unchecked and operation_id in CATALOGUE[n].operations
        }

    def optional_fields(self, operation_id: str) -> set[str]:
        """Required body fields the active faults let a request leave out."""
        return {
            CATALOGUE[n].unchecked
            for n in self._active
            if CATALOGUE[n].optional and operation_id in CATALOGUE[n].operations
        }

    def swapped_status(self, operation_id: str, status: int) -> int:
        """The status an active fault answers instead of ``status`` (itself when none)."""
        for name in self._active:
            fault = CATALOGUE[name]
            if fault.swap and fault.swap[0] == status and operation_id in fault.operations:
                return fault.swap[1]
        return status
