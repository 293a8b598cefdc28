"""The certification bundle: ``amws-conformance bundle`` packs a run's evidence into one zip, and
``amws-conformance verify`` (:mod:`harness.evidence.verify`) checks that a zip still says what
the run found.

A bundle holds ``report.json``, ``report.html``, the JUnit XML of the run if it wrote one, the
target profile with every secret redacted (the run writes that copy beside its report; the
fields the profile schema marks ``x-secret`` are the secrets), the expectations file if the
run used one, the plan (``plan.json``), and ``manifest.json``: the suite's name and version,
the sha256 of every other file, and the sha256 of the ``spec/openapi.yaml`` and
``spec/rules.yaml`` the run was judged by.

``verify`` checks every hash, that the spec hashes are this suite's, and then recomputes every
rule verdict and the run's verdict from the per-test results and the rule levels alone
(:func:`harness.evidence.verdicts.certification`, the function the report plugin wrote them
with) and compares: a changed byte breaks a hash, and a changed outcome whose hash was made to
fit no longer gives the recorded verdicts and test counts. This shows a bundle consistent, not who
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
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from amws_conformance import spec
from amws_conformance.harness.evidence.verdicts import (
    PLAN_LEFT_OUT,
)
from amws_conformance.harness.plan.plan import plan_rules
from amws_conformance.harness.target.profile import REDACTED

MANIFEST = "manifest.json"
REPORT = "report.json"
HTML = "report.html"
JUNIT = "junit.xml"
PROFILE = "profile.redacted.yaml"
EXPECTATIONS = "expectations.yaml"
PLAN = "plan.json"
SPEC_FILES = ("openapi.yaml", "rules.yaml")
MEMBER_LIMIT = 1 << 30  # bytes a member of a bundle may unpack to: verify reads untrusted zips
# The profile fields that are secrets carry this annotation in harness/profile.schema.json.
SECRET = "x-secret"
_SCHEMA: dict[str, Any] = json.loads(
    Path(__file__).parents[1].joinpath("profile.schema.json").read_text(encoding="utf-8")
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
    marks ``x-secret`` replaced by ``[redacted]``; credentials written into a URL go too."""
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
