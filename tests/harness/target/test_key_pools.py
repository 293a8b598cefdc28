"""Key pools through the plugin: a nested pytest against a reference server serving a pool."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from amws_conformance import spec
from tests.reference_server.conftest import LiveServer

READS = """
import pytest

@pytest.mark.rule("DEPT-LIST-SHAPE")
def test_idle(client):
    client("full")  # the run starts (preflight included) and sends nothing more

@pytest.mark.rule("DEPT-LIST-SHAPE")
def test_spread(client):
    full = client("full")
    for _ in range(9):
        assert full.get("/api/ws/v1/departments").status_code == 200

@pytest.mark.rule("DEPT-LIST-SHAPE")
@pytest.mark.one_key
def test_pinned(client):
    full = client("full")
    for _ in range(5):
        assert full.get("/api/ws/v1/departments").status_code == 200
"""


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    # The documented bucket: with a raised one every key refills at once, all tie, and the
    # fullest is always the first.
    with LiveServer(documented_buckets=True, pools={"full": 3}) as live:
        yield live


def _run(
    pytester: pytest.Pytester, profile: dict[str, Any], *tests: str
) -> tuple[Any, dict[str, Any]]:
    path = pytester.path / "target.yaml"
    path.write_text(yaml.safe_dump(profile), encoding="utf-8")
    report = pytester.path / "report"
    result = pytester.runpytest(
        "--target", str(path), "--conformance-report", str(report), "-p", "no:cacheprovider", *tests
    )
    return result, json.loads((report / "report.json").read_text(encoding="utf-8"))


def _units(document: dict[str, Any], test: str) -> dict[str, int]:
    units: dict[str, int] = document["tests"][f"test_pools.py::{test}"]["units"]
    return units


def _per_key(
    pytester: pytest.Pytester, server: LiveServer, test: str
) -> tuple[dict[str, Any], dict[str, int]]:
    """One test's run: its report and the units each key of the full pool paid in it."""
    result, document = _run(pytester, server.profile, f"test_pools.py::{test}")
    result.assert_outcomes(passed=1)
    paid = document["rate_units"]["per_key"]
    return document, {k: paid.get(k, 0) for k in ("full[0]", "full[1]", "full[2]")}


def test_a_pool_spreads_the_requests_and_a_pinned_test_uses_the_first_key(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    pytester.makepyfile(test_pools=READS)
    cost = int(spec.operation("listDepartments").rate_cost or 0)
    _, preflight = _per_key(pytester, server, "test_idle")  # what every run's preflight pays
    document, spread = _per_key(pytester, server, "test_spread")
    assert _units(document, "test_spread") == {"full": 9 * cost}
    assert document["target"]["keys"]["full"] == 3
    # Fullest first: every key took some of the nine reads, and what the keys paid evens out
    # to within one read (the preflight's first key paid more to begin with).
    assert all(spread[k] > preflight[k] for k in spread), (preflight, spread)
    assert max(spread.values()) - min(spread.values()) <= cost, spread
    _, pinned = _per_key(pytester, server, "test_pinned")
    assert {k: pinned[k] - preflight[k] for k in pinned} == {
        "full[0]": 5 * cost,
        "full[1]": 0,
        "full[2]": 0,
    }


def test_a_disabled_key_in_a_pool_is_named_and_left_out_and_the_run_goes_on(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    pytester.makepyfile(test_pools=READS)
    profile = json.loads(json.dumps(server.profile))
    profile["keys"]["full"][1] = profile["keys"]["disabled"]
    result, document = _run(pytester, profile, "test_pools.py::test_spread")
    result.assert_outcomes(passed=1)
    said = result.stdout.str()
    assert "amws: keys.full[1]: a read answered 401, not 200" in said
    assert "left out of the pool" in said
    assert profile["keys"]["disabled"] not in said
    assert list(document["target"]["pool_problems"]) == ["full[1]"]
    assert document["target"]["keys"]["full"] == 2
    per_key = document["rate_units"]["per_key"]
    # The preflight's one refused read is all it paid; the test's reads went to the others.
    assert per_key["full[1]"] == spec.rate_limit().failed_authentication_cost
    assert per_key["full[0]"] + per_key["full[2]"] >= 9 * 30
    assert document["verdict"] != "blocked" and result.ret == 0
    assert "3 full keys" not in said and "2 full keys" in said


def test_one_key_a_class_books_units_to_the_class_as_before(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_pools=READS)
    with LiveServer() as live:
        result, document = _run(pytester, live.profile, "test_pools.py::test_spread")
    result.assert_outcomes(passed=1)
    per_key, per_class = document["rate_units"]["per_key"], document["rate_units"]["keys"]
    assert not any("[" in k for k in per_key)
    assert per_key["full"] == per_class["full"]
    assert document["target"]["keys"]["full"] == 1
