"""harness/evidence/observation.py: the typed record a test report carries to the controller."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from amws_conformance.harness.evidence.observation import PROPERTY, Observation


@dataclass
class _Report:
    user_properties: list[tuple[str, object]] = field(default_factory=list)


def test_a_record_comes_back_as_it_was_attached_through_plain_data() -> None:
    seen = Observation(
        rules=["AUTH-HEADER-REQUIRED"],
        violated=["AUTH-HEADER-REQUIRED"],
        cause="no answer",
        transcript=[{"method": "GET", "status": 401}],
        assumed_operations=["createInvite"],
        expected="rule:AUTH-HEADER-REQUIRED",
    )
    report = _Report([("fault", "some-fault")])
    seen.attach(report)
    # What crosses from an xdist worker is plain data: a JSON round trip loses nothing.
    crossed = _Report([(n, json.loads(json.dumps(v))) for n, v in report.user_properties])
    assert Observation.of(crossed) == seen
    assert ("fault", "some-fault") in crossed.user_properties  # another plugin's entry stays


def test_attaching_again_replaces_the_record() -> None:
    report = _Report()
    Observation(rules=["A"]).attach(report)
    Observation(rules=["A"], expected="test:x").attach(report)
    assert [name for name, _ in report.user_properties] == [PROPERTY]
    assert Observation.of(report).expected == "test:x"


def test_a_report_the_harness_did_not_make_reads_as_an_empty_record() -> None:
    seen = Observation.of(_Report([("other", 1)]))
    assert seen == Observation(rules=[])
    assert seen.transcript is None and seen.cause is None
