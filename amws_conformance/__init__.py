"""The Access Management Web Service conformance suite, as one installable package.

- ``spec``: the contract (``openapi.yaml``) and the rule catalogue (``rules.yaml``), read by all;
- ``harness``: what the suites use to reach a target (profile, client, plans, evidence) and
  the ``amws-conformance`` command;
- ``suites``: the tests users run; ``fixtures``: their payload factories and example profiles;
- ``reference_server``: the reference implementation (``amws-reference``);
- ``selfcheck``: runs the suites against the reference server's faults (``amws-selfcheck``).

The harness and the suites never import the reference server; only ``selfcheck`` reaches both.
"""
