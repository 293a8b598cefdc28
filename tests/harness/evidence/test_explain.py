"""harness/evidence/explain.py: the report header explains each figure; a 429 not asked for names
its request and why it is no failure."""

from __future__ import annotations

from amws_conformance.harness.evidence.explain import curl_block, figures, figures_block
from amws_conformance.harness.evidence.html import render


def _doc(unplanned: int) -> dict[str, object]:
    where = {"suites/rules/test_roles.py::test_x (full): GET /api/ws/v1/roles": 1}
    return {
        "verdict": "conformant",
        "plan": {"name": "gate", "tests": 40, "left_out": 0},
        "rate_units": {
            "keys": {"full": 10},
            "failed_auth": 0,
            "requests": 3,
            "unplanned_429": unplanned,
            "unplanned_429_where": where if unplanned else {},
        },
        "stability": 2,
        "tests": {},
        "rules": {},
    }


def test_every_figure_of_the_header_is_explained() -> None:
    names = [name for name, _ in figures(_doc(0))]
    for shown in ("target", "run id", "seed", "plan", "duration", "units", "429 not asked for"):
        assert shown in names
    assert "stability" in names and "exit status" in names


def test_a_429_not_asked_for_names_its_request_and_why_it_is_no_failure() -> None:
    said = dict(figures(_doc(1)))["429 not asked for"]
    assert "GET /api/ws/v1/roles" in said and "test_x" in said
    assert "Not a failure" in said and "Retry-After" in said
    page = render(_doc(1))
    assert "id='figures'" in page and "GET /api/ws/v1/roles" in page
    assert "what these figures mean" in figures_block(_doc(0))


def test_a_failure_shows_its_curl_and_the_variables_it_needs() -> None:
    curl = "curl -sS -i -X GET http://h/x -H 'authorization: '\"${AMWS_KEY_FULL}\""
    block = curl_block({"transcript": [{"curl": "old"}, {"curl": curl}]})
    assert "<code>AMWS_KEY_FULL</code>" in block and "&quot;${AMWS_KEY_FULL}&quot;" in block
    assert curl_block({"transcript": []}) == ""
