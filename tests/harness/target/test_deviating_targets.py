"""What the suite says of a target that deviates, in one detail, from the reference server.

Each test puts a proxy in front of a live reference server that changes one thing in its
answers, and runs a few suite modules against the proxy as a vendor would. A deviation from a
documented rule fails that rule, with evidence, and the run goes on to its report (it never
stops with exit 4 as if the profile were wrong). A difference only in a detail the documents
never state passes every normative rule.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from starlette.requests import Request
from starlette.responses import Response

from tests._proxy import Proxy, Rewrite, passed_on
from tests._served import ordinary_env
from tests.reference_server.conftest import LiveServer

# The suites run from the package folder: its pytest.ini makes it the root (ids suites/...).
ROOT = Path(__file__).resolve().parents[3] / "amws_conformance"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


def _run(
    server: LiveServer, rewrite: Rewrite, tmp_path: Path, *selection: str
) -> tuple[int, dict[str, Any]]:
    """The suites ``selection`` against the proxied server: pytest's exit code and the report."""
    with Proxy(server.base_url, rewrite) as proxy:
        profile = {**server.profile, "base_url": proxy.base_url}
        path = tmp_path / "proxied.yaml"
        path.write_text(yaml.safe_dump(profile), encoding="utf-8")
        report = tmp_path / "report"
        options = ["--target", str(path), "--plan", "deep", "--conformance-report", str(report)]
        done = subprocess.run(
            [sys.executable, "-m", "pytest", *selection, "-q", "-p", "no:cacheprovider", *options],
            cwd=ROOT,
            # As a user starts it: not as a worker of the xdist session running this test.
            env=ordinary_env(),
            capture_output=True,
            text=True,
            check=False,
        )
    assert (report / "report.json").exists(), done.stdout[-3000:] + done.stderr[-2000:]
    return done.returncode, json.loads((report / "report.json").read_text())


def _failed_normative(document: dict[str, Any]) -> list[str]:
    return [
        rule for rule, v in document["rules"].items() if v["certifies"] and v["verdict"] == "failed"
    ]


def _with_keys(
    chosen: Callable[[Request, httpx.Response, Any], bool], keys: dict[str, Any]
) -> Rewrite:
    """A rewrite that sets ``keys`` in the JSON bodies of the answers ``chosen`` picks."""

    def rewrite(request: Request, answer: httpx.Response) -> Response:
        try:
            body = answer.json()
        except ValueError:
            return passed_on(answer)
        if chosen(request, answer, body):
            return passed_on(answer, content=json.dumps({**body, **keys}).encode())
        return passed_on(answer)

    return rewrite


def test_creates_answering_200_fail_their_rule_and_the_run_goes_on(
    server: LiveServer, tmp_path: Path
) -> None:
    def rewrite(request: Request, answer: httpx.Response) -> Response:
        if answer.status_code == 201:
            return passed_on(answer, status_code=200)
        return passed_on(answer)

    code, document = _run(
        server, rewrite, tmp_path, "suites/rules/test_reference_data.py", "-k", "Department"
    )
    assert code == pytest.ExitCode.TESTS_FAILED
    assert document["verdict"] == "not conformant"
    rule = document["rules"]["DEPT-WRITE-ACK"]
    assert rule["verdict"] == "failed"
    evidence = " ".join(rule["global_check_failures"])
    assert "(preflight)" in evidence and "answered 200, not 201" in evidence
    # The records made with a 200 were still the run's own, and were removed.
    assert document["cleanup_problems"] == []


def test_other_systems_records_answering_403_fail_the_scope_rule(
    server: LiveServer, tmp_path: Path
) -> None:
    other = server.profile["keys"]["other_system"]

    def rewrite(request: Request, answer: httpx.Response) -> Response:
        if answer.status_code == 404 and request.headers.get("authorization") == other:
            body = json.dumps({"code": 403, "reason": "Forbidden"}).encode()
            return passed_on(answer, status_code=403, content=body)
        return passed_on(answer)

    code, document = _run(server, rewrite, tmp_path, "suites/rules/test_isolation.py")
    assert code == pytest.ExitCode.TESTS_FAILED
    scope = document["rules"]["CONV-SYSTEM-SCOPE-404"]
    assert scope["verdict"] == "failed"
    assert any("(preflight)" in found for found in scope["global_check_failures"])
    assert "CONV-SYSTEM-SCOPE-404" in _failed_normative(document)


def test_acknowledgement_code_and_extra_fields_are_not_normative(
    server: LiveServer, tmp_path: Path
) -> None:
    """The documents type an acknowledgement's code as an integer and say the record is not
    returned; a target whose code is not the HTTP status and that adds a field of its own
    breaks only our assumed reading (CONV-ACK-CODE-IS-STATUS)."""

    def acknowledgement(request: Request, answer: httpx.Response, body: Any) -> bool:
        acknowledges = isinstance(body, dict) and {"code", "message", "uuid"} <= set(body)
        return answer.status_code in (200, 201) and request.method != "DELETE" and acknowledges

    rewrite = _with_keys(acknowledgement, {"code": 1, "requestId": "r-1"})

    code, document = _run(
        server,
        rewrite,
        tmp_path,
        "suites/rules/test_conventions_writes.py",
        "suites/rules/test_reference_data.py",
        "-k",
        "acknowledgement or Department",
    )
    # The assumed rule's own test fails: listed, not counted by the exit status.
    assert code == pytest.ExitCode.OK
    assert _failed_normative(document) == []
    assert document["rules"]["CONV-WRITE-ACKNOWLEDGEMENT"]["verdict"] == "passed"
    assert document["rules"]["CONV-ACK-CODE-IS-STATUS"]["verdict"] == "failed"
    assert document["verdict"] == "incomplete"  # a partial run, nothing normative broken


def test_error_bodies_with_a_code_of_their_own_break_only_the_assumed_rule(
    server: LiveServer, tmp_path: Path
) -> None:
    """The documents give a failure body {code: integer, reason}; that the code repeats the
    HTTP status is our reading (ERR-BODY-CODE-IS-STATUS), and nothing forbids a key of the
    target's own. A target whose failure bodies differ only so passes the normative rules."""

    def refusal(request: Request, answer: httpx.Response, body: Any) -> bool:
        return answer.status_code >= 400 and isinstance(body, dict) and "reason" in body

    rewrite = _with_keys(refusal, {"code": 1, "traceId": "t-1"})

    code, document = _run(
        server,
        rewrite,
        tmp_path,
        "suites/rules/test_roles.py",
        "suites/rules/test_files.py",
        "suites/rules/test_errors.py",
        "-k",
        "unknown or refus or 403 or type or code",
    )
    assert _failed_normative(document) == [], document["root_causes"]
    assert document["rules"]["ERR-BODY-CODE-IS-STATUS"]["verdict"] == "failed"
    assert code == pytest.ExitCode.OK  # the assumed rule's own tests fail: informative
