"""``amws-conformance bundle`` and ``verify``: a run's evidence in one zip, and a check that the
zip still says what the run found: every hash, the spec against this suite's, and every
verdict recomputed from the per-test results."""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from amws_conformance.harness.evidence.bundle import PROFILE, REDACTED, redact, write_atomically
from amws_conformance.harness.evidence.verify import verify
from tests.harness._runs import FAULT_RULE, Run, amws

Members = dict[str, bytes]
MADE = {
    "manifest.json",
    "report.json",
    "report.html",
    "junit.xml",
    PROFILE,
    "plan.json",
}
PASSED_TEST = "suites/rules/test_roles.py::test_list_holds_the_system_roles"


@pytest.fixture(scope="module")
def bundled(faulty_run: Run, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The faulty run's report, bundled."""
    output = tmp_path_factory.mktemp("bundle") / "result.zip"
    done = amws("bundle", faulty_run.report, "-o", output)
    assert done.returncode == 0, done.stdout + done.stderr
    return output


def _members(path: Path) -> Members:
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def _rewritten(source: Path, target: Path, edit: Callable[[Members], None]) -> Path:
    members = _members(source)
    edit(members)
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return target


def _edit_report(change: Callable[[dict[str, Any]], None]) -> Callable[[Members], None]:
    """Change report.json, then make the manifest's hash fit it, as a forger would."""

    def edit(members: Members) -> None:
        document = json.loads(members["report.json"])
        change(document)
        members["report.json"] = json.dumps(document, indent=2).encode()
        manifest = json.loads(members["manifest.json"])
        manifest["files"]["report.json"] = hashlib.sha256(members["report.json"]).hexdigest()
        members["manifest.json"] = json.dumps(manifest).encode()

    return edit


def _secrets(profile: Any, redacted: Any) -> Iterator[str]:
    """The values of ``profile`` that redaction replaced."""
    if isinstance(profile, dict):
        for key, value in profile.items():
            yield from _secrets(value, redacted[key])
    elif isinstance(profile, list):
        for value, other in zip(profile, redacted, strict=True):
            yield from _secrets(value, other)
    elif profile != redacted:
        yield str(profile)


def test_bundle_then_verify_passes(bundled: Path) -> None:
    assert set(_members(bundled)) == MADE
    done = amws("verify", bundled)
    assert done.returncode == 0, done.stdout
    assert "is consistent" in done.stdout and "mismatch" not in done.stdout


def test_the_bundle_holds_no_secret_of_the_profile(faulty_run: Run, bundled: Path) -> None:
    secrets = sorted(set(_secrets(faulty_run.profile, redact(faulty_run.profile))))
    # Every key, the encryption secrets and IVs, the reader keys, the webhook HMAC key and
    # header value, the control token.
    assert len(secrets) >= 14, secrets
    for name, data in _members(bundled).items():
        for secret in secrets:
            assert secret.encode() not in data, f"{name} holds a secret of the profile"
    profile = yaml.safe_load(_members(bundled)[PROFILE].decode())
    assert profile["keys"]["full"] == REDACTED
    assert profile["base_url"] == faulty_run.profile["base_url"]


def test_one_changed_byte_of_report_json_fails_verify_naming_it(
    bundled: Path, tmp_path: Path
) -> None:
    def flip(members: Members) -> None:
        at = members["report.json"].index(b'"verdict": "') + len(b'"verdict": "')
        report = members["report.json"]
        members["report.json"] = report[:at] + bytes([report[at] ^ 0x20]) + report[at + 1 :]

    done = amws("verify", _rewritten(bundled, tmp_path / "byte.zip", flip))
    assert done.returncode == 1
    assert "mismatch: report.json: sha256" in done.stdout, done.stdout


@pytest.mark.parametrize("junit", [True, False], ids=["with-junit", "without-junit"])
def test_a_changed_outcome_fails_verify_though_its_hash_was_made_to_fit(
    bundled: Path, tmp_path: Path, junit: bool
) -> None:
    def change(document: dict[str, Any]) -> None:
        assert document["tests"][PASSED_TEST]["outcome"] == "passed"
        document["tests"][PASSED_TEST]["outcome"] = "skipped"

    edit = _edit_report(change)

    def forge(members: Members) -> None:
        if not junit:
            del members["junit.xml"]
            manifest = json.loads(members["manifest.json"])
            del manifest["files"]["junit.xml"]
            members["manifest.json"] = json.dumps(manifest).encode()
        edit(members)

    done = amws("verify", _rewritten(bundled, tmp_path / "outcome.zip", forge))
    assert done.returncode == 1, done.stdout
    lines = done.stdout.splitlines()
    assert not any(line.startswith("mismatch: report.json: sha256") for line in lines)
    # The recomputed verdicts and counts no longer match the recorded ones.
    assert 'mismatch: rule ROLE-SHAPE verdict: recorded "passed", recomputed "skipped"' in lines
    assert any(line.startswith("mismatch: test_summary: recorded") for line in lines)
    if junit:  # pytest's own record of the run names the test
        assert (
            f"mismatch: test {PASSED_TEST}: outcome skipped in report.json, passed in junit.xml"
        ) in lines


def test_a_changed_verdict_fails_verify(bundled: Path, tmp_path: Path) -> None:
    def change(document: dict[str, Any]) -> None:
        assert document["rules"][FAULT_RULE]["verdict"] == "failed"
        document["rules"][FAULT_RULE]["verdict"] = "passed"
        document["verdict"] = "conformant"

    done = amws("verify", _rewritten(bundled, tmp_path / "verdict.zip", _edit_report(change)))
    assert done.returncode == 1
    assert f'mismatch: rule {FAULT_RULE} verdict: recorded "passed", recomputed "failed"' in (
        done.stdout
    )
    assert 'mismatch: verdict: recorded "conformant", recomputed "not conformant"' in done.stdout


def test_a_run_judged_by_another_spec_fails_verify(bundled: Path, tmp_path: Path) -> None:
    other = "0" * 64

    def change(document: dict[str, Any]) -> None:
        document["spec"]["rules_sha256"] = other

    def forge(members: Members) -> None:
        _edit_report(change)(members)
        manifest = json.loads(members["manifest.json"])
        manifest["spec"]["spec/rules.yaml"] = other
        members["manifest.json"] = json.dumps(manifest).encode()

    done = amws("verify", _rewritten(bundled, tmp_path / "spec.zip", forge))
    assert done.returncode == 1
    assert f"mismatch: spec/rules.yaml: the run was judged by sha256 {other}" in done.stdout


def test_members_not_in_the_manifest_and_missing_ones_are_named(
    bundled: Path, tmp_path: Path
) -> None:
    def edit(members: Members) -> None:
        del members["plan.json"]
        members["extra.txt"] = b"added"

    found = verify(_rewritten(bundled, tmp_path / "members.zip", edit))
    assert "plan.json: listed in the manifest, not in the bundle" in found.mismatches
    assert "extra.txt: in the bundle, not listed in the manifest" in found.mismatches


def _copy_report(run: Run, folder: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    folder.mkdir()
    for path in run.report.iterdir():
        (folder / path.name).write_bytes(path.read_bytes())
    document = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    change(document)
    (folder / "report.json").write_text(json.dumps(document), encoding="utf-8")
    return folder


def test_the_expectations_file_the_run_read_is_bundled_and_must_be_unchanged(
    faulty_run: Run, tmp_path: Path
) -> None:
    known = tmp_path / "expectations.yaml"
    known.write_text(f"- rule: {FAULT_RULE}\n  reason: known\n", encoding="utf-8")
    digest = hashlib.sha256(known.read_bytes()).hexdigest()
    report = _copy_report(
        faulty_run,
        tmp_path / "report",
        lambda d: d.update(expectations={"file": str(known), "sha256": digest}),
    )
    output = tmp_path / "result.zip"
    assert amws("bundle", report, "-o", output).returncode == 0
    assert _members(output)["expectations.yaml"] == known.read_bytes()
    assert amws("verify", output).returncode == 0
    # Changed since the run: refused, and the zip already there is left as it was.
    before = output.read_bytes()
    known.write_text("- rule: OTHER\n  reason: edited\n", encoding="utf-8")
    done = amws("bundle", report, "-o", output)
    assert done.returncode == 1
    assert "changed since the run" in done.stderr and "nothing written" in done.stderr
    assert output.read_bytes() == before
    # Gone: refused, and nothing half-written is left beside where the zip would go.
    known.unlink()
    fresh = tmp_path / "out" / "fresh.zip"
    fresh.parent.mkdir()
    done = amws("bundle", report, "-o", fresh)
    assert done.returncode == 1, done.stdout
    assert "--expectations FILE" in done.stderr
    assert not fresh.exists() and list(fresh.parent.iterdir()) == []


def test_secrets_are_the_fields_the_profile_schema_marks() -> None:
    profile = {
        "name": "staging",
        "base_url": "https://user:pa55@staging.example.com",
        "keys": {
            "full": "k" * 64,
            "readonly": ["r" * 64, "q" * 64],
            "encrypted": {"key": "e" * 64, "secret": "s" * 64, "iv": "i" * 32, "fields": ["a"]},
        },
        "virtual_reader": {"uuid": "u", "key": "readerkey1", "access_control_point": "p"},
        "webhooks": {
            "listen": "0.0.0.0:9000",
            "hmac_key": "h" * 16,
            "encryption": {"secret": "s" * 64, "iv": "i" * 32},
            "header": {"name": "Authorization", "value": "Bearer t"},
        },
        "roles": {"administrator": "r"},
        "control": {"url": "http://c", "token": "t"},
        "rate_limits": {"per_key": {"full": {"capacity": 5, "refill_per_minute": 1}}},
    }
    assert redact(profile) == {
        "name": "staging",
        "base_url": f"https://{REDACTED}@staging.example.com",
        "keys": {
            "full": REDACTED,
            "readonly": [REDACTED, REDACTED],  # a pool: how many keys stays visible
            "encrypted": {"key": REDACTED, "secret": REDACTED, "iv": REDACTED, "fields": ["a"]},
        },
        "virtual_reader": {"uuid": "u", "key": REDACTED, "access_control_point": "p"},
        "webhooks": {
            "listen": "0.0.0.0:9000",
            "hmac_key": REDACTED,
            "encryption": {"secret": REDACTED, "iv": REDACTED},
            "header": {"name": "Authorization", "value": REDACTED},
        },
        "roles": {"administrator": "r"},
        "control": {"url": "http://c", "token": REDACTED},
        "rate_limits": {"per_key": {"full": {"capacity": 5, "refill_per_minute": 1}}},
    }


class _Breaks(dict[str, bytes]):
    """Members whose second one cannot be read: the zip fails half-way through."""

    def items(self) -> Iterator[tuple[str, bytes]]:  # type: ignore[override]
        yield "report.json", b"{}"
        raise OSError("disk full")


def test_a_zip_that_fails_half_way_leaves_nothing_behind(tmp_path: Path) -> None:
    output = tmp_path / "result.zip"
    output.write_bytes(b"an earlier bundle")
    with pytest.raises(OSError, match="disk full"):
        write_atomically(output, _Breaks(), (2026, 1, 1, 0, 0, 0))
    assert output.read_bytes() == b"an earlier bundle"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.zip"]
