"""Global checks catch each kind of deviation, naming the rule it breaks."""

from __future__ import annotations

import json

import httpx

from amws_conformance import spec
from amws_conformance.harness._checks import check

DEPT = spec.operation("getDepartment")
CREATE = spec.operation("createDepartment")


def _response(status: int, body: object, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(
        status,
        content=json.dumps(body).encode(),
        headers={"content-type": "application/json", **(headers or {})},
        request=httpx.Request("GET", "http://t/api/ws/v1/departments/x"),
    )


def _rules(op: spec.Operation, response: httpx.Response, body: object = None) -> set[str]:
    return {v.rule for v in check(op, body, response)}


def test_a_documented_answer_passes() -> None:
    ok = _response(200, {"uuid": "11111111-2222-4333-8444-555555555555", "name": "Sales"})
    assert check(DEPT, None, ok) == []


def test_undocumented_status_is_flagged() -> None:
    assert _rules(DEPT, _response(418, {"code": 418, "reason": "teapot"})) == {
        "CONV-RESPONSE-CONFORMS"
    }


def test_body_that_breaks_the_schema_is_flagged() -> None:
    assert "CONV-RESPONSE-CONFORMS" in _rules(DEPT, _response(200, {"name": 5}))


def test_429_without_retry_after_is_flagged() -> None:
    assert "RATE-RETRY-AFTER-HEADER" in _rules(
        DEPT, _response(429, {"code": 429, "reason": "slow"})
    )


def test_error_code_must_be_an_integer() -> None:
    assert "ERR-BODY-SHAPE" in _rules(DEPT, _response(404, {"code": "404", "reason": "x"}))


def test_error_code_other_than_the_status_breaks_the_assumed_rule_only() -> None:
    found = _rules(DEPT, _response(404, {"code": 400, "reason": "x"}))
    assert "ERR-BODY-CODE-IS-STATUS" in found and "ERR-BODY-SHAPE" not in found


def test_echoed_rejected_value_is_flagged() -> None:
    body = {"name": "SecretValue123"}
    response = _response(
        422,
        {
            "code": 422,
            "reason": "Invalid Fields: [@name: SecretValue123]",
            "errors": {"name": "bad"},
        },
    )
    assert "ERR-NO-ECHO" in _rules(CREATE, response, body)


def test_non_utc_timestamp_is_flagged() -> None:
    location = spec.operation("getLocation")
    body = {
        "uuid": "11111111-2222-4333-8444-555555555555",
        "name": "HQ",
        "type": "AREA",
        "effectiveDate": "2026-01-01T10:00:00.000+02:00",
    }
    assert "CONV-TIMESTAMP-UTC-MILLIS" in _rules(location, _response(200, body))


# -- acknowledgements (CONV-WRITE-ACKNOWLEDGEMENT; CONV-ACK-CODE-IS-STATUS is assumed) ----------
NEW = "0b7f3a52-6a2f-4d0e-9a51-0c3c7e5d2a11"


def _ack(status: int, body: object, method: str = "POST", path: str = "") -> httpx.Response:
    url = f"http://t/api/ws/v1/departments{path}"
    return httpx.Response(
        status,
        content=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        request=httpx.Request(method, url),
    )


def test_a_documented_acknowledgement_passes() -> None:
    body = {"code": 201, "message": "success", "uuid": NEW}
    assert check(CREATE, {"name": "Sales"}, _ack(201, body)) == []


def test_another_code_and_a_field_of_its_own_break_only_the_assumed_rule() -> None:
    body = {"code": 0, "message": "success", "uuid": NEW, "requestId": "r-1"}
    assert _rules(CREATE, _ack(201, body), {"name": "Sales"}) == {"CONV-ACK-CODE-IS-STATUS"}


def test_an_acknowledgement_carrying_the_record_is_flagged() -> None:
    body = {"code": 201, "message": "success", "uuid": NEW, "name": "Sales"}
    assert "CONV-WRITE-ACKNOWLEDGEMENT" in _rules(CREATE, _ack(201, body), {"name": "Sales"})


def test_reference_data_acknowledges_with_success() -> None:
    body = {"code": 201, "message": "created", "uuid": NEW}
    assert "CONV-WRITE-ACKNOWLEDGEMENT" in _rules(CREATE, _ack(201, body), {"name": "Sales"})


def test_an_update_acknowledges_the_record_it_addressed() -> None:
    update = spec.operation("updateDepartment")
    other = "11111111-2222-4333-8444-555555555555"
    ok = {"code": 200, "message": "success", "uuid": NEW}
    assert check(update, {"name": "S"}, _ack(200, ok, "PUT", f"/{NEW}")) == []
    wrong = {**ok, "uuid": other}
    assert "CONV-WRITE-ACKNOWLEDGEMENT" in _rules(update, _ack(200, wrong, "PUT", f"/{NEW}"))
