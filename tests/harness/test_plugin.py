"""The pytest plugin, run in a nested pytest against a live reference server (pytester)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from amws_conformance.harness.evidence.verdicts import EXIT_INCOMPLETE
from tests.reference_server.conftest import LiveServer

DEPTS = "/api/ws/v1/departments"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


def _profile(pytester: pytest.Pytester, server: LiveServer, **changes: object) -> Path:
    data = json.loads(json.dumps(server.profile))
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for name in parents:
            node = node[name]
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    path = pytester.path / "target.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_options_live_in_their_own_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        ["AMWS conformance:", "*--target=PROFILE*", "*--conformance-report=DIR*"]
    )
    assert "--allow-physical" in result.stdout.str() and "--run-id" in result.stdout.str()


def test_markers_are_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--markers")
    for marker in (
        "rule(*ids)",
        "requires(capability)",
        "physical",
        "rate_limit",
        "webhooks",
        "slow",
    ):
        assert f"@pytest.mark.{marker}" in result.stdout.str()


def test_bad_profile_stops_the_run_with_one_line(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    pytester.makepyfile("def test_never(api):\n    raise AssertionError('must not run')\n")
    profile = _profile(pytester, server, keys__full=None)
    result = pytester.runpytest("--target", str(profile))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if "profile field" in line]
    assert len(errors) == 1 and "keys.full is required" in errors[0]
    assert "must not run" not in result.stdout.str()


def test_a_key_that_does_not_behave_as_its_class_leaves_its_tests_undecided(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    """A readonly key that can write: a wrong key in the profile, or a target that does not
    enforce permissions. The preflight cannot tell which: it names the key and both causes,
    the tests that need the key read undecided, every other test runs, and the run exits 6."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.rule("DEPT-LIST-SHAPE")
        def test_runs(api):
            assert api.get("/api/ws/v1/departments").status_code == 200

        @pytest.mark.rule("AUTH-PERMISSION-READ-WRITE")
        def test_needs_readonly(client):
            client("readonly")
            raise AssertionError("must not run")

        @pytest.mark.rule("AUTH-PERMISSION-READ-WRITE")
        @pytest.mark.requires("readonly")
        def test_marked(api):
            raise AssertionError("must not run")
        """
    )
    profile = _profile(pytester, server, keys__readonly=server.profile["keys"]["full"])
    report = pytester.path / "report"
    result = pytester.runpytest(
        "--target", str(profile), "-rs", "--conformance-report", str(report)
    )
    assert result.ret == EXIT_INCOMPLETE
    result.assert_outcomes(passed=1, skipped=2)
    said = result.stdout.str()
    assert "must not run" not in said
    assert "amws: keys.readonly: a write answered 200" in said
    assert "the target does not enforce the permissions" in said  # the other cause
    assert said.count("undecided: keys.readonly: a write answered 200") == 2
    document = json.loads((report / "report.json").read_text(encoding="utf-8"))
    assert list(document["target"]["key_problems"]) == ["readonly"]
    assert server.profile["keys"]["full"] not in (report / "report.json").read_text("utf-8")
    rule = document["rules"]["AUTH-PERMISSION-READ-WRITE"]
    assert rule["verdict"] == "skipped" and rule["skip_reasons"][0].startswith("undecided: ")
    assert document["rules"]["DEPT-LIST-SHAPE"]["verdict"] == "passed"
    assert document["verdict"] == "incomplete"


def test_a_key_no_header_can_carry_stops_the_run_naming_it_never_showing_it(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    """A line break inside a key: the HTTP client would refuse the header and quote it in its
    error (blaming base_url); the profile check names the key's field instead, and no output
    shows the value."""
    pytester.makepyfile(
        "import pytest\n\n@pytest.mark.rule('DEPT-LIST-SHAPE')\n"
        "def test_never(api):\n    raise AssertionError('must not run')\n"
    )
    secret = "S3cr3t" + "k" * 30 + "\n" + "k" * 30
    profile = _profile(pytester, server, keys__full=secret)
    result = pytester.runpytest("--target", str(profile))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    said = result.stdout.str() + result.stderr.str()
    assert "profile field keys.full" in said and "must not run" not in said
    assert "base_url" not in said
    assert "S3cr3t" not in said and "kkkkkkkkkk" not in said


def test_missing_key_is_skipped_as_not_configured(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.rule("AUTH-PERMISSION-READ-WRITE")
        def test_readonly(client):
            client("readonly")

        @pytest.mark.rule("AUTH-PERMISSION-READ-WRITE")
        @pytest.mark.requires("readonly")
        def test_marked(api):
            pass
        """
    )
    result = pytester.runpytest(
        "--target", str(_profile(pytester, server, keys__readonly=None)), "-rs"
    )
    result.assert_outcomes(skipped=2)
    assert result.stdout.str().count("not configured: the profile has no keys.readonly") == 2


def test_physical_tests_need_permission(pytester: pytest.Pytester, server: LiveServer) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.rule("ACP-TRIGGER-ONCE")
        @pytest.mark.physical
        def test_door(api):
            pass
        """
    )
    profile = _profile(pytester, server, allow__physical=False)
    denied = pytester.runpytest("--target", str(profile), "-rs")
    denied.assert_outcomes(skipped=1)
    assert "not allowed: physical actions are off" in denied.stdout.str()
    allowed = pytester.runpytest("--target", str(profile), "--allow-physical")
    allowed.assert_outcomes(passed=1)


def test_unknown_rule_is_a_usage_error(pytester: pytest.Pytester, server: LiveServer) -> None:
    pytester.makepyfile(
        "import pytest\n\n@pytest.mark.rule('NO-SUCH-RULE')\ndef test_x():\n    pass\n"
    )
    result = pytester.runpytest("--target", str(_profile(pytester, server)))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "NO-SUCH-RULE" in result.stderr.str()


def test_report_has_verdicts_evidence_and_no_keys(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.rule("DEPT-FIELD-REQUIRED")
        def test_required(api):
            assert api.post("/api/ws/v1/departments", json={}).status_code == 422

        @pytest.mark.rule("DEPT-NAME-UNIQUE")
        def test_fails(api, factories):
            body = factories.named("createDepartment", "dept")
            assert api.post("/api/ws/v1/departments", json=body).status_code == 201
            assert api.post("/api/ws/v1/departments", json=body).status_code == 201
        """
    )
    report = pytester.path / "report"
    result = pytester.runpytest(
        "--target", str(_profile(pytester, server)), "--conformance-report", str(report)
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = (report / "report.json").read_text()
    document = json.loads(text)
    assert document["rules"]["DEPT-FIELD-REQUIRED"]["verdict"] == "passed"
    assert document["rules"]["DEPT-NAME-UNIQUE"]["verdict"] == "failed"
    assert document["rules"]["DEPT-FIELD-LENGTH"]["verdict"] == "not-run"
    assert document["verdict"] == "not conformant"
    assert document["target"]["base_url"] == server.base_url
    failure = next(iter(document["failures"].values()))
    assert failure["rules"] == ["DEPT-NAME-UNIQUE"] and failure["transcript"]
    for key in server.profile["keys"].values():
        assert (key["key"] if isinstance(key, dict) else key) not in text
    assert "not conformant" in (report / "report.html").read_text()
    # Per test, what the target charged: a refused create still costs its 50 units; the
    # created department's cleanup delete (30) is booked to the test that made it.
    tests = document["tests"]
    assert tests["test_report_has_verdicts_evidence_and_no_keys.py::test_required"]["units"] == {
        "full": 50
    }
    assert tests["test_report_has_verdicts_evidence_and_no_keys.py::test_fails"]["units"] == {
        "full": 2 * 50 + 30
    }
    # The preflight is paced and counted like any test: a list, a create and a delete (110).
    units = document["rate_units"]
    assert units["keys"]["full"] == 110 + 50 + 2 * 50 + 30
    assert units["failed_auth"] == 0 and units["unplanned_429"] == 0


def test_tests_of_assumed_choices_never_decide_a_normative_rule(
    pytester: pytest.Pytester, server: LiveServer
) -> None:
    # getInviteStatus is x-assumed: the documents name a status operation, not its shape.
    pytester.makepyfile(
        """
        import pytest

        FAKE = "/api/ws/v1/invites/00000000-0000-4000-8000-000000000000/status"

        @pytest.mark.rule("ERR-404-UNKNOWN-UUID")
        def test_through_assumed(api):
            api.get(FAKE)
            assert False, "a failure seen only through an operation of assumed shape"

        @pytest.mark.rule("ERR-404-UNKNOWN-UUID")
        def test_documented(api, ledger):
            assert api.get(f"/api/ws/v1/departments/{ledger.fresh_uuid()}").status_code == 404

        @pytest.mark.rule("INV-UPDATE-IDENTICAL-425")
        def test_only_through_assumed(api):
            api.get(FAKE)

        @pytest.mark.rule("DEPT-FIELD-REQUIRED", "LOC-FIELD-PRECISION")
        def test_beside_an_assumed_rule(api):
            assert False, "may be the assumed rule's fault"

        @pytest.mark.rule("DEPT-FIELD-REQUIRED")
        def test_alone(api):
            assert api.post("/api/ws/v1/departments", json={}).status_code == 422
        """
    )
    report = pytester.path / "report"
    pytester.runpytest(
        "--target", str(_profile(pytester, server)), "--conformance-report", str(report)
    )
    document = json.loads((report / "report.json").read_text())
    decided = document["rules"]["ERR-404-UNKNOWN-UUID"]
    assert decided["verdict"] == "passed" and decided["certifies"]
    assert [t.rsplit("::", 1)[1] for t in decided["informative_tests"]] == ["test_through_assumed"]
    beside = document["rules"]["DEPT-FIELD-REQUIRED"]
    assert beside["verdict"] == "passed", "a test beside an assumed rule decided a normative one"
    assert document["rules"]["LOC-FIELD-PRECISION"]["verdict"] == "failed"
    only = document["rules"]["INV-UPDATE-IDENTICAL-425"]
    assert only["verdict"] == "passed" and not only["certifies"]
    assert document["normative_not_certifiable"] == ["INV-UPDATE-IDENTICAL-425"]
    assert "seen only beside our assumptions" in (report / "report.html").read_text()


def test_failed_test_still_cleans_up(pytester: pytest.Pytester, server: LiveServer) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.rule("DEPT-WRITE-ACK")
        def test_creates_then_fails(api, factories):
            body = factories.named("createDepartment", "left")
            assert api.post("/api/ws/v1/departments", json=body).status_code == 201
            raise AssertionError("boom")
        """
    )
    result = pytester.runpytest("--target", str(_profile(pytester, server)), "--run-id", "cleanup1")
    result.assert_outcomes(failed=1)
    with server.client() as api:
        names = [d["name"] for d in api.get(DEPTS).json()]
    assert not [n for n in names if "cleanup1" in n]


def test_foreign_records_are_never_touched(pytester: pytest.Pytester, server: LiveServer) -> None:
    with server.client() as api:
        foreign = api.post(DEPTS, json={"name": "Not the suite's"}).json()["uuid"]
    pytester.makepyfile(
        f"""
        import pytest
        from amws_conformance.harness import SafetyError

        @pytest.mark.rule("DEPT-DELETE-HARD")
        def test_refuses(api):
            with pytest.raises(SafetyError):
                api.delete("/api/ws/v1/departments/{foreign}")
            with pytest.raises(SafetyError):
                api.put("/api/ws/v1/departments/{foreign}", json={{"name": "renamed"}})
        """
    )
    result = pytester.runpytest("--target", str(_profile(pytester, server)))
    result.assert_outcomes(passed=1)
    with server.client() as api:
        assert api.get(f"{DEPTS}/{foreign}").json()["name"] == "Not the suite's"
