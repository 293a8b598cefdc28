"""The certification bundle: ``amws-conformance bundle`` packs a run's evidence into one zip, and
``amws-conformance verify`` checks that a zip still says what the run found.

A bundle holds ``report.json``, ``report.html``, the JUnit XML of the run if it wrote one, the
target profile with every secret redacted (the run writes that copy beside its report; the
fields the profile schema marks ``x-secret`` are the secrets), the expectations file if the
run used one, the plan (``plan.json``), and ``manifest.json``: the suite's name and version,
the sha256 of every other file, and the sha256 of the ``spec/openapi.yaml`` and
``spec/rules.yaml`` the run was judged by.

``verify`` checks every hash, that the spec hashes are this suite's, and then recomputes every
rule verdict and the run's verdict from the per-test results and the rule levels alone
(:func:`harness._verdicts.certification`, the function the report plugin wrote them with) and
compares: a changed byte breaks a hash, and a changed outcome whose hash was made to fit no
longer gives the recorded verdicts and test counts. This shows a bundle consistent, not who
made it: whoever rewrites the results and everything derived from them can forge one, as
nothing is signed.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import yaml

import spec
from harness._plan import plan_rules
from harness._verdicts import (
    PLAN_LEFT_OUT,
    CatalogueRule,
    catalogue,
    certification,
    decides,
    root_causes,
)

MANIFEST = "manifest.json"
REPORT = "report.json"
HTML = "report.html"
JUNIT = "junit.xml"
PROFILE = "profile.redacted.yaml"
EXPECTATIONS = "expectations.yaml"
PLAN = "plan.json"
SPEC_FILES = ("openapi.yaml", "rules.yaml")
REDACTED = "<redacted>"
MEMBER_LIMIT = 1 << 30  # bytes a member of a bundle may unpack to: verify reads untrusted zips
# The profile fields that are secrets carry this annotation in harness/profile.schema.json.
SECRET = "x-secret"
_SCHEMA: dict[str, Any] = json.loads(
    Path(__file__).with_name("profile.schema.json").read_text(encoding="utf-8")
)
_USERINFO = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")


class BundleError(Exception):
    """The bundle cannot be made; ``str(error)`` says why in one line."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def spec_hashes() -> dict[str, str]:
    """The sha256 of this suite's ``spec/openapi.yaml`` and ``spec/rules.yaml``."""
    folder = Path(spec.__file__).parent
    return {f"spec/{name}": sha256((folder / name).read_bytes()) for name in SPEC_FILES}


def suite_version() -> str:
    try:
        return metadata.version("amws-conformance")
    except metadata.PackageNotFoundError:
        return "unknown"


# -- the profile, redacted ------------------------------------------------------------------
def _resolve(node: Mapping[str, Any]) -> dict[str, Any]:
    """A schema node with its ``$ref`` and ``allOf`` parts merged in (shallow)."""
    merged: dict[str, Any] = {}
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        merged.update(_resolve(_SCHEMA["$defs"][ref.removeprefix("#/$defs/")]))
    for part in node.get("allOf", ()):
        resolved = _resolve(part)
        merged["properties"] = {**merged.get("properties", {}), **resolved.get("properties", {})}
        merged.update({k: v for k, v in resolved.items() if k != "properties"})
    properties = {**merged.get("properties", {}), **node.get("properties", {})}
    merged.update({k: v for k, v in node.items() if k not in ("$ref", "allOf")})
    if properties:
        merged["properties"] = properties
    return merged


def redact(value: Any, schema: Mapping[str, Any] = _SCHEMA) -> Any:
    """``value`` (a profile, or a part of one under ``schema``) with every field the schema
    marks ``x-secret`` replaced by ``<redacted>``; credentials written into a URL go too."""
    node = _resolve(schema)
    if node.get(SECRET) and value is not None:
        # A pool of keys stays a list: the bundle shows how many keys the run had.
        return [REDACTED] * len(value) if isinstance(value, list) else REDACTED
    if isinstance(value, dict):
        properties = node.get("properties", {})
        extra = node.get("additionalProperties")
        return {
            k: redact(v, properties.get(k, extra if isinstance(extra, dict) else {}))
            for k, v in value.items()
        }
    if isinstance(value, list):
        items = node.get("items")
        return [redact(v, items if isinstance(items, dict) else {}) for v in value]
    if isinstance(value, str):
        return _USERINFO.sub(r"\1" + REDACTED + "@", value)
    return value


def redacted_profile(data: Mapping[str, Any]) -> str:
    """The YAML text of a profile with its secrets redacted, as a bundle carries it."""
    head = (
        "# The target profile of the run. Every field harness/profile.schema.json marks\n"
        f"# {SECRET} is replaced by {REDACTED}.\n"
    )
    return head + yaml.safe_dump(redact(dict(data)), sort_keys=False, allow_unicode=True)


# -- bundle ---------------------------------------------------------------------------------
def _read_report(folder: Path) -> tuple[bytes, dict[str, Any]]:
    path = folder / REPORT
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise BundleError(f"{path}: cannot read it ({error.strerror})") from None
    try:
        document = json.loads(raw)
    except ValueError as error:
        raise BundleError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(document, dict) or "tests" not in document or "rules" not in document:
        raise BundleError(f"{path}: not a conformance report")
    if "global_check_violations" not in document:
        raise BundleError(
            f"{path}: written by a suite that did not record what verify needs "
            "(global_check_violations); run again with this version"
        )
    return raw, document


def _expectations(document: Mapping[str, Any], folder: Path, given: Path | None) -> bytes | None:
    """The expectations file the run used, checked against the sha256 the run recorded."""
    used = document.get("expectations") or {}
    if not used.get("file"):
        return None
    recorded = Path(used["file"])
    candidates = [given] if given else [recorded, folder / recorded.name]
    for path in candidates:
        if path is not None and path.is_file():
            data = path.read_bytes()
            if used.get("sha256") and sha256(data) != used["sha256"]:
                raise BundleError(
                    f"{path}: changed since the run (sha256 {sha256(data)[:12]}…, "
                    f"the run read {used['sha256'][:12]}…)"
                )
            return data
    raise BundleError(
        f"the run used the expectations file {recorded}, which is not there: "
        "give it with --expectations FILE"
    )


def _junit(document: Mapping[str, Any], folder: Path) -> bytes | None:
    """The run's JUnit XML: where --junitxml wrote it, else ``junit.xml`` in the report folder."""
    for name in (document.get("junit_xml"), folder / JUNIT):
        if name and Path(name).is_file():
            return Path(name).read_bytes()
    if document.get("junit_xml"):
        raise BundleError(f"the run wrote JUnit XML to {document['junit_xml']}; it is not there")
    return None


def plan_of(document: Mapping[str, Any]) -> dict[str, Any]:
    """What ``plan.json`` holds: the plan as the run reported it, its definition in this
    suite's ``plans.yaml``, the tests it kept and how many it left out."""
    plan = document.get("plan") or {}
    tests = document["tests"]
    left_out = {n for n, e in tests.items() if e.get("reason") == PLAN_LEFT_OUT}
    return {
        "run": plan,
        "definition": plan_rules().get(plan.get("name", ""), None),
        "kept": sorted(n for n in tests if n not in left_out),
        "left_out": len(left_out),
    }


Stamp = tuple[int, int, int, int, int, int]


def _zip_time(document: Mapping[str, Any]) -> Stamp:
    """Every member's time: the run's, so that one report always bundles to the same bytes."""
    try:
        when = dt.datetime.fromisoformat(str(document.get("generated_at")))
    except ValueError:
        when = dt.datetime(1980, 1, 1)
    return (max(when.year, 1980), when.month, when.day, when.hour, when.minute, when.second)


def write_atomically(path: Path, members: Mapping[str, bytes], stamp: Stamp) -> None:
    """Write the zip to a temporary file beside ``path`` and rename it into place: a failure
    leaves no half-written zip, and an earlier one at ``path`` stays as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as raw, zipfile.ZipFile(raw, "w") as archive:
            for name, data in members.items():
                info = zipfile.ZipInfo(name, date_time=stamp)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                archive.writestr(info, data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def bundle(folder: Path, output: Path, expectations: Path | None = None) -> dict[str, Any]:
    """Pack the report in ``folder`` into ``output``; returns the manifest."""
    raw, document = _read_report(folder)
    html = folder / HTML
    if not html.is_file():
        raise BundleError(f"{html}: not there (a run writes it beside report.json)")
    members: dict[str, bytes] = {REPORT: raw, HTML: html.read_bytes()}
    junit = _junit(document, folder)
    if junit is not None:
        members[JUNIT] = junit
    profile = document.get("profile") or {}
    if profile.get("file"):
        copy = folder / profile["file"]
        if not copy.is_file():
            raise BundleError(f"{copy}: the run wrote its redacted profile there; it is gone")
        members[PROFILE] = copy.read_bytes()
    used = _expectations(document, folder, expectations)
    if used is not None:
        members[EXPECTATIONS] = used
    members[PLAN] = json.dumps(plan_of(document), indent=2).encode()
    spec_of_run = document.get("spec") or {}
    manifest = {
        "suite": document.get("suite"),
        "bundled_by": {"name": "amws-conformance", "version": suite_version()},
        "verdict": document.get("verdict"),
        "target": {k: (document.get("target") or {}).get(k) for k in ("name", "base_url")},
        "spec": {
            "spec/openapi.yaml": spec_of_run.get("openapi_sha256"),
            "spec/rules.yaml": spec_of_run.get("rules_sha256"),
        },
        "files": {name: sha256(data) for name, data in members.items()},
    }
    members = {MANIFEST: json.dumps(manifest, indent=2).encode(), **members}
    write_atomically(output, members, _zip_time(document))
    return manifest


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


# -- the commands ---------------------------------------------------------------------------
def bundle_main(folder: Path, output: Path, expectations: Path | None) -> int:
    """``amws-conformance bundle``: 0 when the zip is written, 1 when it cannot be."""
    try:
        manifest = bundle(folder, output, expectations)
    except (BundleError, OSError) as error:
        print(f"amws-conformance bundle: {error}; nothing written", file=sys.stderr)
        return 1
    here = spec_hashes()
    if any(manifest["spec"][name] != digest for name, digest in here.items()):
        print(
            "amws-conformance bundle: the run's spec hashes are not this suite's; verify with "
            "this suite will say so",
            file=sys.stderr,
        )
    print(f"wrote {output}: {', '.join(manifest['files'])} and {MANIFEST}")
    print(f"verdict: {manifest['verdict']}")
    return 0


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
