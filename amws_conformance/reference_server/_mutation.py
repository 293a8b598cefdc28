"""What a spec-derived mutant changes in the request checks: the data the validation seam reads.

Kept apart from the fault catalogue so that the seam (``_validation.py``) and the catalogue
(``faults/``) both import it and neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# A mutation's ``value`` that takes the keyword out of the schema.
REMOVED = "<removed>"


@dataclass(frozen=True)
class Mutation:
    """One documented constraint changed, as the validation seam applies it: ``keyword`` of
    ``field`` (a path of property names, ``[]`` for an array's items) in the operation's JSON
    body or query parameter set to ``value`` (or taken out, :data:`REMOVED`); ``required`` takes
    the field out of its parent's required list."""

    where: str  # "body" or "query"
    field: tuple[str, ...]
    keyword: str
    value: Any = REMOVED
    # Keywords taken out of the field's schema together with ``keyword`` (a pattern and the
    # format that says the same thing are relaxed as one).
    also_removed: tuple[str, ...] = ()
