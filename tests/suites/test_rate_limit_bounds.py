"""No test runs without end: against a target whose profile declares buckets too large to
drain (a staging system with raised quotas), the bucket tests skip as not configured, naming
the figures, instead of bursting for hours."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from amws_conformance.harness.plan.forecast import (
    MAX_DRAIN_REQUESTS,
    Bucket,
    drain_requests,
    undrainable,
)
from tests.reference_server.conftest import LiveServer

RAISED = {"capacity": 10**9, "refill_per_minute": 10**9}


def test_a_burst_is_bounded_by_the_declared_bucket() -> None:
    documented = Bucket(2000, 800)
    assert drain_requests(documented, 10, 15) == (2000 + 200) // 10 + 2
    assert undrainable(documented, 10, 15) is None
    reason = undrainable(Bucket(**RAISED), 30, 15)
    assert reason is not None and reason.startswith("not configured: ")
    assert "1,000,000,000 units" in reason and f"bound of {MAX_DRAIN_REQUESTS:,}" in reason


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


def test_raised_buckets_skip_the_bucket_tests_with_the_figures(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    profile = json.loads(json.dumps(server.profile))
    profile["rate_limits"] = {
        "default": RAISED,
        "unauthenticated": RAISED,
        "per_key": {key: RAISED for key in profile["keys"]},
    }
    path = pytester.path / "raised.yaml"
    path.write_text(yaml.safe_dump(profile), encoding="utf-8")
    suites = Path(__file__).resolve().parents[2] / "amws_conformance" / "suites"
    suite = suites / "rules" / "test_rate_limits.py"
    result = pytester.runpytest(str(suite), "--target", str(path), "-rs", "-p", "no:xdist")
    outcomes = result.parseoutcomes()
    assert outcomes.get("skipped", 0) >= 10 and not outcomes.get("failed"), outcomes
    said = result.stdout.str()
    assert "not configured: draining the declared bucket of 1,000,000,000 units" in said
