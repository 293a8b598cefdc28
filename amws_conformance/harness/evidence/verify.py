"""``amws-conformance verify``: a certification bundle checked against itself and this suite.

It checks every hash, that the spec hashes are this suite's, then recomputes every rule verdict
and the run's verdict from the per-test results (the function the report plugin wrote them
with) and compares them, and holds the JUnit XML against the report."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from amws_conformance.harness.evidence.bundle import (
    EXPECTATIONS,
    JUNIT,
    MANIFEST,
    MEMBER_LIMIT,
    PLAN,
    PROFILE,
    REPORT,
    plan_of,
    sha256,
    spec_hashes,
    suite_version,
)
from amws_conformance.harness.evidence.verdicts import (
    CatalogueRule,
    catalogue,
    certification,
    decides,
    root_causes,
)


# -- verify ---------------------------------------------------------------------------------
@dataclass
class Verification:
    """What ``verify`` found: one line per mismatch, and what it checked."""

    mismatches: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "…"


def _compare(found: Verification, what: str, recorded: Any, recomputed: Any) -> None:
    if recorded != recomputed:
        found.mismatches.append(
            f"{what}: recorded {_short(recorded)}, recomputed {_short(recomputed)}"
        )


def recheck(document: Mapping[str, Any], found: Verification) -> None:
    """Recompute every verdict of a report from its tests, its global-check violations and its
    rules' levels, and name each one that differs from what the report records."""
    rules = document.get("rules") or {}
    tests = document.get("tests") or {}
    if "global_check_violations" not in document:
        found.mismatches.append("report.json: no global_check_violations, nothing to recompute")
        return
    levels = [CatalogueRule(k, v["level"], v["source"], v["title"]) for k, v in rules.items()]
    judged = certification(
        tests,
        levels,
        document["global_check_violations"],
        document.get("unreachable_since"),
        document.get("stopped"),
        document.get("interrupted"),
    )
    _compare(found, "verdict", document.get("verdict"), judged["verdict"])
    for key in (
        "normative_summary",
        "test_summary",
        "undecided",
        "normative_not_certifiable",
        "informative_tests",
    ):
        _compare(found, key, document.get(key), judged[key])
    for rule_id, verdict in judged["rules"].items():
        recorded = rules[rule_id]
        for name, value in verdict.items():
            _compare(found, f"rule {rule_id} {name}", recorded.get(name), value)
    level = {r.id: r.level for r in levels}
    for nodeid, entry in tests.items():
        _compare(found, f"test {nodeid} decides", entry.get("decides"), decides(entry, level))
    failures = document.get("failures") or {}
    failed = {n for n, e in tests.items() if e["outcome"] == "failed"}
    for nodeid in sorted(failed - set(failures)):
        found.mismatches.append(f"test {nodeid}: outcome failed, but no failure of it recorded")
    for nodeid in sorted(set(failures) - failed):
        outcome = tests.get(nodeid, {}).get("outcome", "absent")
        found.mismatches.append(f"test {nodeid}: a failure recorded, but its outcome is {outcome}")
    # Root causes group the failures by what broke, from the same fields and the failure text.
    with_text = {
        n: {**e, "reason": failures.get(n, {}).get("reason", e.get("reason"))}
        for n, e in tests.items()
    }
    _compare_causes(found, document.get("root_causes") or [], root_causes(with_text))
    found.checked.append(f"{len(judged['rules'])} rule verdicts and the verdict recomputed")


def _compare_causes(
    found: Verification, recorded: list[dict[str, Any]], recomputed: list[dict[str, Any]]
) -> None:
    """Root-cause groups, named by their cause: each one that differs, or is in one list only."""
    before = {group.get("cause"): group for group in recorded}
    after = {group["cause"]: group for group in recomputed}
    for cause in [*after, *(c for c in before if c not in after)]:
        _compare(found, f"root cause {cause!r}", before.get(cause), after.get(cause))
    if list(before) != list(after) and set(before) == set(after):
        found.mismatches.append("root causes: recorded in another order than recomputed")


def _against_junit(document: Mapping[str, Any], xml: bytes, found: Verification) -> None:
    """Each test's outcome in report.json against pytest's own JUnit XML of the run, for the
    tests both name: a failure (or error) there is a failed or flaky test here, a skip a test
    skipped or not run, a pass a passed or flaky one."""
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as error:
        found.mismatches.append(f"{JUNIT}: not valid XML ({error})")
        return
    agrees = {"failed": ("failed", "flaky"), "skipped": ("skipped", "not-run")}
    agrees["passed"] = ("passed", "flaky")
    by_address = {_junit_address(nodeid): nodeid for nodeid in document["tests"]}
    compared = 0
    for case in root.iter("testcase"):
        nodeid = by_address.get((case.get("classname", ""), case.get("name", "")))
        if nodeid is None:
            continue
        tags = {child.tag for child in case}
        there = (
            "failed"
            if tags & {"failure", "error"}
            else "skipped"
            if "skipped" in tags
            else "passed"
        )
        here = document["tests"][nodeid]["outcome"]
        compared += 1
        if here not in agrees[there]:
            found.mismatches.append(
                f"test {nodeid}: outcome {here} in {REPORT}, {there} in {JUNIT}"
            )
    found.checked.append(f"{compared} test outcomes against {JUNIT}")


def _junit_address(nodeid: str) -> tuple[str, str]:
    """(classname, name) of a test in pytest's JUnit XML."""
    path, *names = nodeid.split("::")
    module = path.removesuffix(".py").replace("/", ".")
    return ".".join([module, *names[:-1]]), names[-1] if names else ""


def _against_this_suite(document: Mapping[str, Any], found: Verification) -> None:
    """Whether the rules the report was judged by are this suite's: same levels."""
    rules = document.get("rules") or {}
    here = {r.id: r.level for r in catalogue()}
    for rule_id in sorted(set(here) - set(rules)):
        found.mismatches.append(f"rule {rule_id}: in this suite's catalogue, not in the report")
    for rule_id in sorted(set(rules) - set(here)):
        found.mismatches.append(f"rule {rule_id}: in the report, not in this suite's catalogue")
    for rule_id in sorted(set(rules) & set(here)):
        if rules[rule_id].get("level") != here[rule_id]:
            found.mismatches.append(
                f"rule {rule_id}: level {rules[rule_id].get('level')} in the report, "
                f"{here[rule_id]} in this suite's catalogue"
            )


def verify(path: Path) -> Verification:
    """Check a bundle: its hashes, its spec against this suite's, and every verdict it records."""
    found = Verification()
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as error:
        found.mismatches.append(f"{path}: not a readable zip ({error})")
        return found
    with archive:
        too_big = [i.filename for i in archive.infolist() if i.file_size > MEMBER_LIMIT]
        if too_big:
            found.mismatches.append(f"{', '.join(too_big)}: over {MEMBER_LIMIT:,} bytes unpacked")
            return found
        try:
            members = {info.filename: archive.read(info) for info in archive.infolist()}
        except (zipfile.BadZipFile, OSError, ValueError) as error:
            found.mismatches.append(f"{path}: a member cannot be read ({error})")
            return found
    try:
        manifest = json.loads(members.pop(MANIFEST))
        listed: dict[str, str] = dict(manifest["files"])
    except (KeyError, ValueError, TypeError) as error:
        found.mismatches.append(f"{MANIFEST}: missing or unreadable ({error!r})")
        return found
    for name in sorted(set(listed) | set(members)):
        if name not in members:
            found.mismatches.append(f"{name}: listed in the manifest, not in the bundle")
        elif name not in listed:
            found.mismatches.append(f"{name}: in the bundle, not listed in the manifest")
        elif sha256(members[name]) != listed[name]:
            found.mismatches.append(
                f"{name}: sha256 {sha256(members[name])}, the manifest says {listed[name]}"
            )
    found.checked.append(f"{len(listed)} file hashes")
    try:
        document = json.loads(members[REPORT])
    except KeyError:
        found.mismatches.append(f"{REPORT}: not in the bundle")
        return found
    except ValueError as error:
        found.mismatches.append(f"{REPORT}: not valid JSON ({error})")
        return found
    # The spec: the manifest's hashes, the report's, and this suite's must be one.
    here = spec_hashes()
    run_spec = document.get("spec") or {}
    recorded = {
        "spec/openapi.yaml": run_spec.get("openapi_sha256"),
        "spec/rules.yaml": run_spec.get("rules_sha256"),
    }
    for name, digest in here.items():
        if manifest.get("spec", {}).get(name) != recorded[name]:
            found.mismatches.append(
                f"{name}: sha256 {manifest.get('spec', {}).get(name)} in the manifest, "
                f"{recorded[name]} in report.json"
            )
        if recorded[name] != digest:
            found.mismatches.append(
                f"{name}: the run was judged by sha256 {recorded[name]}, this suite "
                f"({suite_version()}) has {digest}"
            )
    found.checked.append("spec hashes against this suite's")
    if manifest.get("suite") != document.get("suite"):
        found.mismatches.append(
            f"suite: {_short(manifest.get('suite'))} in the manifest, "
            f"{_short(document.get('suite'))} in report.json"
        )
    version = (document.get("suite") or {}).get("version")
    if version != suite_version():
        found.notes.append(
            f"the run used suite version {version}, this is {suite_version()}: the spec "
            "hashes decide whether its verdicts can be checked here"
        )
    _compare(found, "manifest verdict", manifest.get("verdict"), document.get("verdict"))
    if PLAN in members:
        try:
            plan = json.loads(members[PLAN])
        except ValueError as error:
            found.mismatches.append(f"{PLAN}: not valid JSON ({error})")
        else:
            _compare(found, f"{PLAN} run", plan.get("run"), document.get("plan"))
            expected = plan_of(document)
            for key in ("kept", "left_out"):
                _compare(found, f"{PLAN} {key}", plan.get(key), expected[key])
    profile = (document.get("profile") or {}).get("sha256")
    if profile and PROFILE in members and sha256(members[PROFILE]) != profile:
        found.mismatches.append(
            f"{PROFILE}: sha256 {sha256(members[PROFILE])}, report.json says {profile}"
        )
    expectations = (document.get("expectations") or {}).get("sha256")
    if expectations and EXPECTATIONS in members and sha256(members[EXPECTATIONS]) != expectations:
        found.mismatches.append(
            f"{EXPECTATIONS}: sha256 {sha256(members[EXPECTATIONS])}, "
            f"report.json says the run read {expectations}"
        )
    if all(recorded[name] == here[name] for name in here):
        _against_this_suite(document, found)
    if JUNIT in members:
        _against_junit(document, members[JUNIT], found)
    recheck(document, found)
    return found


def verify_main(path: Path) -> int:
    """``amws-conformance verify``: one line per mismatch; 0 when there is none, else 1."""
    found = verify(path)
    for line in found.mismatches:
        print(f"mismatch: {line}")
    for line in found.notes:
        print(f"note: {line}")
    if found.mismatches:
        print(f"verify: {len(found.mismatches)} mismatch(es) in {path}")
        return 1
    print(f"verify: {path} is consistent ({'; '.join(found.checked)})")
    return 0
