"""The self-check: runs the suites against the reference server with each fault of its catalogue.

The only package that imports both the reference server and the harness (ARCHITECTURE.md:
imports run suites -> harness -> spec, reference_server -> spec, selfcheck -> both). Run it
with ``amws-selfcheck`` or ``amws-conformance selfcheck``; see :mod:`selfcheck.cli`. Its pytest
plugin, :mod:`selfcheck.plugin` (the fault matrix, ``--reference-fault``), is never loaded for
users: only where ``-p selfcheck.plugin`` asks for it (the self-check's runs, project tests).
"""
