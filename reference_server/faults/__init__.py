"""The fault catalogue: named, documented deviations from one rule each.

``amws-reference serve --fault NAME`` switches a fault on. A fault is declarative — a body
field left unchecked or optional (validation seam), a status answered for another (response
seam) — or an override of one decision of a policy (``reference_server/_policy.py``): the
request pipeline's, the rate buckets', or a domain module's. No correct code asks whether a
fault is on. The self-check starts the server with each fault and expects the tests of the
fault's rule to fail. Each area registers its faults in its own module; importing this
package loads them all.
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
