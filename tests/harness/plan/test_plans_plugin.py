"""Run plans in the plugin, against a live reference server (pytester): what a plan leaves out
is reported as not run (plan), the forecast is printed before the first test, and
``--max-minutes`` starts no test that would end too late, while cleanup still runs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response

from amws_conformance.harness.plan.schedule import default_plan
from amws_conformance.harness.target.profile import validate
from tests._proxy import Proxy, passed_on
from tests.harness.test_plugin import _profile, server  # noqa: F401 - the module's fixture
from tests.reference_server.conftest import LiveServer

DEPTS = "/api/ws/v1/departments"
TESTS = """
import pytest

@pytest.mark.rule("AUTH-HEADER-REQUIRED")
def test_in_gate(client):
    assert client("missing").get("/api/ws/v1/departments").status_code == 401

@pytest.mark.rule("DEPT-FIELD-LENGTH")
def test_not_in_gate(api):
    assert api.post("/api/ws/v1/departments", json={"name": "x"}).status_code == 422

@pytest.mark.rule("DEPT-WRITE-ACK")
def test_unknown_to_the_table(api, factories):
    body = factories.named("createDepartment", "plan")
    assert api.post("/api/ws/v1/departments", json=body).status_code == 201
"""


def _table(path: Path, module: str, units: dict[str, dict[str, int]]) -> Path:
    decides = {"test_in_gate": ["AUTH-HEADER-REQUIRED"], "test_not_in_gate": ["DEPT-FIELD-LENGTH"]}
    tests = {
        f"{module}.py::{name}": {"units": units.get(name, {"full": 30}), "decides": rules}
        for name, rules in decides.items()
    }
    table = {"measured": {"preflight": {}}, "setups": {}, "tests": tests}
    path.write_text(json.dumps(table), encoding="utf-8")
    return path


def test_gate_leaves_out_what_it_does_not_cover(
    pytester: pytest.Pytester,
    server: LiveServer,  # noqa: F811
) -> None:
    pytester.makepyfile(test_plan_gate=TESTS)
    table = _table(pytester.path / "costs.json", "test_plan_gate", {})
    report = pytester.path / "report"
    result = pytester.runpytest(
        *("--target", str(_profile(pytester, server)), "--plan", "gate"),
        *("--cost-table", str(table), "--conformance-report", str(report)),
    )
    # The test the table does not know yet is new: it runs rather than hides.
    result.assert_outcomes(passed=2, deselected=1)
    result.stdout.fnmatch_lines(["amws plan gate: 2 tests (1 left out); units *; forecast *"])
    document = json.loads((report / "report.json").read_text())
    left = document["tests"]["test_plan_gate.py::test_not_in_gate"]
    assert left["outcome"] == "not-run"
    rule = document["rules"]["DEPT-FIELD-LENGTH"]
    assert rule["verdict"] == "not-run" and rule["skip_reasons"] == ["not run (plan)"]
    assert document["plan"]["name"] == "gate" and document["plan"]["left_out"] == 1
    assert document["verdict"] == "incomplete"  # nothing failed; not every rule was decided


def test_max_minutes_starts_no_test_that_would_end_too_late(
    pytester: pytest.Pytester,
    server: LiveServer,  # noqa: F811
) -> None:
    pytester.makepyfile(test_plan_time=TESTS)
    # The second test, by the table, spends 5000 units of a bucket refilled at 1 a second.
    table = _table(
        pytester.path / "costs.json", "test_plan_time", {"test_not_in_gate": {"full": 5000}}
    )
    slow = {"capacity": 1000, "refill_per_minute": 60}
    profile = _profile(pytester, server, rate_limits__per_key__full=slow)
    report = pytester.path / "report"
    result = pytester.runpytest(
        *("--target", str(profile), "--plan", "deep", "--max-minutes", "1", "-rs"),
        *("--cost-table", str(table), "--conformance-report", str(report), "--run-id", "late1"),
    )
    result.assert_outcomes(passed=1, skipped=2)
    document = json.loads((report / "report.json").read_text())
    outcomes = {n.split("::")[1]: t["outcome"] for n, t in document["tests"].items()}
    # Once one test does not fit, none after it starts: they are not run (time), not skipped.
    assert outcomes == {
        "test_in_gate": "passed",
        "test_not_in_gate": "not-run",
        "test_unknown_to_the_table": "not-run",
    }
    assert document["rules"]["DEPT-WRITE-ACK"]["skip_reasons"][0].startswith("not run (time)")
    assert document["rate_units"]["unplanned_429"] == 0
    with server.client() as api:
        assert not [d for d in api.get(DEPTS).json() if "late1" in d["name"]]


def _validated(**rate_limits: object) -> object:
    keys = {"full": "k" * 64}
    data = {"name": "t", "base_url": "https://amws.example", "keys": keys}
    if rate_limits:
        data["rate_limits"] = rate_limits
    return validate(data)


def test_certify_is_the_default_where_the_documented_bucket_applies() -> None:
    raised = {"capacity": 10**6, "refill_per_minute": 10**6}
    assert default_plan(_validated()) == "certify"  # silent on rate limits
    assert default_plan(_validated(default={"capacity": 2000, "refill_per_minute": 800})) == (
        "certify"
    )
    # The full key raised, failed authentications still on the documented bucket.
    assert default_plan(_validated(per_key={"full": raised})) == "certify"
    assert default_plan(_validated(per_key={"full": raised}, unauthenticated=raised)) == "deep"
    assert default_plan(None) == "deep"  # the embedded reference server (raised quotas)


RUNS_ON = """
import pytest

@pytest.mark.rule("DEPT-WRITE-ACK")
def test_keeps_asking(api, factories):
    body = factories.named("createDepartment", "late")
    assert api.post("/api/ws/v1/departments", json=body).status_code == 201
    for _ in range(5000):  # far longer than --max-minutes allows on this slow target
        api.get("/api/ws/v1/departments")
    pytest.fail("the deadline never stopped the test")
"""


def test_the_deadline_ends_a_running_test_and_leaves_time_for_its_cleanup(
    pytester: pytest.Pytester,
    server: LiveServer,  # noqa: F811
) -> None:
    # A test the forecast lets start (the table does not know it) that would run for minutes:
    # the deadline, not the forecast, must end it, and what it made is still removed. The
    # deadline (12 s from the start) leaves a loaded machine time for the preflight, so the
    # forecast never stops the test before it starts.
    pytester.makepyfile(test_plan_running=RUNS_ON)
    table = _table(pytester.path / "costs.json", "test_plan_running", {})

    def slow(request: Request, answer: httpx.Response) -> Response:
        time.sleep(0.02)
        return passed_on(answer)

    with Proxy(server.base_url, slow) as proxy:
        profile = _profile(pytester, server, base_url=proxy.base_url)
        report = pytester.path / "report"
        result = pytester.runpytest(
            *("--target", str(profile), "--plan", "deep", "--max-minutes", "0.2", "-rs"),
            *("--cost-table", str(table), "--conformance-report", str(report)),
            *("--run-id", "late2"),
        )
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*not run (time): --max-minutes was reached while it ran*"])
    document = json.loads((report / "report.json").read_text())
    assert document["cleanup_problems"] == []
    with server.client() as api:
        assert not [d for d in api.get(DEPTS).json() if "late2" in d["name"]]
