"""A failure's text in report.json never carries a key of the profile."""

from __future__ import annotations

import pytest

from amws_conformance.harness.evidence.report import Collector


def test_a_key_quoted_by_a_failure_is_cut_out_of_the_report() -> None:
    collector = Collector(None)
    collector.secrets = ["S3CR3T-VALUE-1234"]
    collector.pytest_runtest_logreport(
        pytest.TestReport(
            nodeid="t.py::test_x",
            location=("t.py", 1, "test_x"),
            keywords={},
            outcome="failed",
            longrepr="AssertionError: the key S3CR3T-VALUE-1234 was refused",
            when="call",
            user_properties=[],
        )
    )
    reason = collector.tests["t.py::test_x"]["reason"]
    assert "S3CR3T" not in reason and "[redacted]" in reason
