"""The fault catalogue: named, documented deviations from one rule each.

``amws-reference serve --fault NAME`` switches a fault on. Faults act at a few seams —
request validation, the store, the clock, response shaping — and, where a rule lives in
one domain step only, at the policy seam: an override of one decision of the domain's policy
(``reference_server/_policy.py``; credentials and users so far). Modules not yet converted still ask
``Faults.on`` inside their steps. The self-check starts the server
with each fault and expects the tests of the fault's rule to fail. Each area registers its
faults in its own module; importing this package loads them all.
"""

from reference_server.faults import (  # noqa: F401  (each module registers its faults)
    _conventions,
    _credentials,
    _media,
    _people,
    _reader_and_webhooks,
    _reference_data,
    _visits,
    _watchlists,
)
from reference_server.faults._model import CATALOGUE, Fault, Faults

__all__ = ["CATALOGUE", "Fault", "Faults"]
