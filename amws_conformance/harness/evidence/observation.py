"""What the harness saw of one phase of a test: the one typed record a test report carries.

The plugin makes it when pytest makes a phase's report (``pytest_runtest_makereport``) and
attaches it; it travels with the report, unchanged, through pytest-xdist to the controller,
where the report's collector reads it back with :meth:`Observation.of`. It is the only entry
the harness adds to ``report.user_properties`` (as a plain mapping under :data:`PROPERTY`,
since a worker's report crosses to the controller as plain data), so no field rides as a
string-tagged tuple of its own.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Protocol

PROPERTY = "amws"


class _Report(Protocol):
    """What this module needs of a pytest test report."""

    user_properties: list[tuple[str, object]]


@dataclass
class Observation:
    """One phase of one test, as the harness observed it."""

    rules: list[str]  # the test's rule marks (the controller of an xdist run collects nothing)
    # Of a failed phase: the rules its assertion names, why nothing was learnt of the test's
    # rules (verdicts.UNANSWERED: the target gave no answer), the last exchanges (redacted).
    violated: list[str] = field(default_factory=list)
    cause: str | None = None
    transcript: list[dict[str, Any]] | None = None  # None: kept only for a failure
    # Operations of assumed shape the phase reached, itself or through a shared set-up it used.
    assumed_operations: list[str] = field(default_factory=list)
    # The expectations entry that covers this failure (it then reads as an expected failure).
    expected: str | None = None

    def attach(self, report: _Report) -> None:
        """Put this record on ``report``, in place of one attached before."""
        kept = [entry for entry in report.user_properties if entry[0] != PROPERTY]
        report.user_properties[:] = [*kept, (PROPERTY, asdict(self))]

    @classmethod
    def of(cls, report: _Report) -> Observation:
        """The record on ``report``; an empty one for a report the harness did not make (a
        collection error, a phase of another plugin's making)."""
        known = {f.name for f in fields(cls)}
        for name, value in report.user_properties:
            if name == PROPERTY and isinstance(value, dict):
                return cls(**{k: v for k, v in value.items() if k in known})
        return cls(rules=[])
