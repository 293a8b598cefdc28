"""Faults of the conventions every resource's records keep.

A system sees only its own records (reads, name lists, references), a delete is hard, and it
drops the references to the deleted record. Each fault overrides one decision of the records'
policy (``RecordPolicy``, or the domain's: ``ReferenceDataPolicy``, ``LocationPolicy``; the
policy seam, ``reference_server/_policy.py``).
"""

from __future__ import annotations

from amws_conformance.reference_server.domain._common import RecordPolicy
from amws_conformance.reference_server.domain.locations import LocationPolicy
from amws_conformance.reference_server.domain.reference_data import ReferenceDataPolicy
from amws_conformance.reference_server.faults._model import overrides


@overrides("cross-system-read", "CONV-SYSTEM-SCOPE-404", "another system's record can be read")
class _CrossSystemRead(RecordPolicy):
    def read_scope(self, system: str) -> str | None:
        return None


@overrides("list-leaks-other-system", "CONV-SYSTEM-SCOPE-LISTS", "name lists include other systems")
class _ListLeaksOtherSystem(ReferenceDataPolicy):
    def list_scope(self, system: str) -> str | None:
        return None


@overrides(
    "location-delete-kept", "CONV-HARD-DELETE", "deleteLocation acknowledges but keeps the record"
)
class _LocationDeleteKept(LocationPolicy):
    def removes_deleted_location(self) -> bool:
        return False


@overrides(
    "delete-keeps-references",
    "CONV-DELETE-DROPS-REFERENCES",
    "persons and users keep pointing at a deleted record",
)
class _DeleteKeepsReferences(RecordPolicy):
    def drops_references(self) -> bool:
        return False


@overrides(
    "reference-checked-across-systems",
    "CONV-REFERENCE-MUST-EXIST",
    "a reference to another system's record is accepted",
)
class _ReferenceCheckedAcrossSystems(RecordPolicy):
    def reference_scope(self, system: str) -> str | None:
        return None
