"""Benchmarks of the conformance suite and the reference server (``python -m benchmarks``).

Not tests: nothing here is collected by ``pytest tests`` or ``pytest amws_conformance/suites``
(no module is named ``test_*``) and nothing asserts a timing. Each benchmark is bounded in count
and time.
"""
