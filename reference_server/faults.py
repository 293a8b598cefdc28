"""The fault catalogue: named, documented deviations from one rule each.

``amws-reference serve --fault NAME`` switches a fault on. Faults act at a few seams —
request validation, the store, the clock, response shaping — and, where a rule lives in
one domain step only, at that step through ``Faults.on``. The self-check starts the server
with each fault and expects the tests of the fault's rule to fail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Fault:
    name: str
    rule: str
    does: str


CATALOGUE: dict[str, Fault] = {}


def _fault(name: str, rule: str, does: str) -> None:
    CATALOGUE[name] = Fault(name, rule, does)


# Conventions and errors
_fault("echo-rejected-value", "ERR-NO-ECHO", "422 reasons quote the rejected value")
_fault(
    "timestamps-keep-offset", "CONV-TIME-UTC", "timestamps are returned with +02:00 instead of UTC"
)
_fault("no-milliseconds", "CONV-TIME-MILLIS", "timestamps are returned without milliseconds")
_fault("bad-uuid-404", "CONV-UUID-PATH-422", "a non-UUID path value answers 404 instead of 422")
_fault("malformed-json-500", "ERR-400-BODY", "an unreadable JSON body answers 500 instead of 400")
_fault(
    "unknown-field-rejected", "CONV-UNKNOWN-FIELDS", "an unknown request field is answered with 422"
)
_fault(
    "write-returns-record",
    "CONV-ACK",
    "writes answer with the stored record instead of the acknowledgement",
)
# Authentication, permissions, isolation
_fault("bearer-not-stripped", "AUTH-BEARER", "a Bearer-prefixed key is not recognised")
_fault("short-header-accepted", "AUTH-HEADER-LENGTH", "the header length check is skipped")
_fault("disabled-key-accepted", "AUTH-DISABLED-KEY", "a disabled key authenticates")
_fault("readonly-can-write", "AUTH-PERMISSION-403", "write permissions are not checked")
_fault("cross-system-read", "CONV-SYSTEM-ISOLATION", "records of another system are readable")
# Rate limits
_fault("no-retry-after", "RATE-RETRY-AFTER", "429 answers carry no Retry-After header")
_fault("bucket-never-refills", "RATE-REFILL", "the bucket does not refill over time")
_fault("failed-auth-free", "RATE-COST-FAILED-AUTH", "failed authentications charge nothing")
# Reference data
_fault(
    "department-name-unchecked", "DEPT-FIELD-LENGTH", "department names skip their length limits"
)
_fault("duplicate-names-allowed", "DEPT-NAME-UNIQUE", "reference-data names are not unique")
_fault(
    "location-put-replaces", "LOC-PUT-PARTIAL", "location PUT clears the fields it was not given"
)
_fault("admin-role-deletable", "ROLE-DELETE-ADMIN-417", "the administrator role can be deleted")
_fault(
    "role-delete-http-status",
    "ROLE-DELETE-HTTP-200",
    "role refusals use the HTTP status instead of a 200 body",
)
_fault(
    "plates-keep-spaces",
    "VEH-PLATE-NORMALISED",
    "vehicle plates are returned as stored, with spaces",
)


class Faults:
    """The faults switched on for one server."""

    def __init__(self, names: Iterable[str] = ()) -> None:
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
