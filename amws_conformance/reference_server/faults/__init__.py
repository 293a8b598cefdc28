"""The fault catalogue: named, documented deviations from one rule each.

``amws-reference serve --fault NAME`` switches a fault on. A fault is declarative — a body
field left unchecked or optional (validation seam), a status answered for another (response
seam) — or an override of one decision of a policy (``reference_server/_policy.py``): the
request pipeline's, the rate buckets', or a domain module's. No correct code asks whether a
fault is on. The self-check starts the server with each fault and expects the tests of the
fault's rule to fail.

Each resource or concern registers its faults in its own module; importing this package
loads them all. The order of the imports below is the catalogue's order, and that order is
behaviour: the faults on one policy decision stack in it (the first outermost), the self-check
splits the catalogue by it and ``amws-reference faults`` lists it. So the modules are imported
in the order they took in the catalogue, not alphabetically, and a new fault goes at the end of
its module:

- conventions: ``_responses`` (what an answer carries, errors), ``_requests`` (bodies,
  validation, paths, paging), ``_authentication`` (keys, permissions, localhost, encryption),
  ``_records`` (system scope, references, hard delete), ``_rate_limits`` (buckets, costs,
  Retry-After);
- ``_credentials``; ``_media`` (staged files, photos, signed links);
- people: ``_persons``, ``_users``;
- ``_reader_and_webhooks``;
- reference data: ``_name_only`` (departments, organisations, cost centers, visit reasons,
  groups), ``_locations``, ``_roles``, ``_vehicles``, ``_access_control``;
- ``_visits``; ``_watchlists``.
"""

# isort: off
from amws_conformance.reference_server.faults import (  # noqa: F401  (each module registers its faults)
    _responses,
    _requests,
    _authentication,
    _records,
    _rate_limits,
    _credentials,
    _media,
    _persons,
    _users,
    _reader_and_webhooks,
    _name_only,
    _locations,
    _roles,
    _vehicles,
    _access_control,
    _visits,
    _watchlists,
    _mutants,  # last: the spec-derived mutants follow the hand-written catalogue
)

# isort: on
from amws_conformance.reference_server.faults._model import CATALOGUE, Fault, Faults

__all__ = ["CATALOGUE", "Fault", "Faults"]
