"""The rule catalogue is complete in form: unique ids, every field, honest levels."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from amws_conformance import spec

RAW = yaml.safe_load((Path(spec.__file__).parent / "rules.yaml").read_text(encoding="utf-8"))
FIELDS = {"id", "title", "source", "level", "statement"}
OPTIONAL = {"operations", "note", "no_fault", "depends_on"}
DEPENDENCY_FIELDS = {"needs", "kind", "resolution", "how"}
PROFILE_SCHEMA = json.loads(
    (Path(spec.__file__).parent.parent / "harness" / "profile.schema.json").read_text("utf-8")
)
OPERATION_IDS = {op.operation_id for op in spec.operations()}


def test_catalogue_is_a_list_of_well_over_150_rules() -> None:
    assert isinstance(RAW, list)
    assert len(RAW) > 150


def test_ids_are_unique() -> None:
    ids = [entry["id"] for entry in RAW]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates


@pytest.mark.parametrize("entry", RAW, ids=lambda e: str(e.get("id")))
def test_rule_has_every_field(entry: dict) -> None:
    assert set(entry) >= FIELDS, sorted(FIELDS - set(entry))
    assert set(entry) <= FIELDS | OPTIONAL, sorted(set(entry) - FIELDS - OPTIONAL)
    assert re.fullmatch(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)+", entry["id"])
    assert entry["level"] in {"normative", "assumed"}
    assert re.match(r"doc[123] § \S", entry["source"])
    for key in ("title", "statement"):
        assert isinstance(entry[key], str) and entry[key].strip()


@pytest.mark.parametrize("entry", RAW, ids=lambda e: str(e.get("id")))
def test_rule_operations_exist(entry: dict) -> None:
    unknown = set(entry.get("operations") or ()) - OPERATION_IDS
    assert not unknown


def test_both_levels_are_used() -> None:
    levels = {rule.level for rule in spec.rules()}
    assert levels == {"normative", "assumed"}


def test_every_operation_is_named_by_some_rule() -> None:
    named = {oid for rule in spec.rules() for oid in rule.operations}
    assert not OPERATION_IDS - named, sorted(OPERATION_IDS - named)


@pytest.mark.parametrize(
    "entry", [e for e in RAW if "depends_on" in e], ids=lambda e: str(e.get("id"))
)
def test_dependencies_say_what_and_how(entry: dict) -> None:
    """Each entry of a rule's inventory of what its tests need beyond the documents names the
    thing, its kind and how the suite copes: a profile resolution names its profile field, and
    the others name none."""
    assert isinstance(entry["depends_on"], list) and entry["depends_on"]
    for dependency in entry["depends_on"]:
        assert set(dependency) >= DEPENDENCY_FIELDS, sorted(DEPENDENCY_FIELDS - set(dependency))
        assert set(dependency) <= DEPENDENCY_FIELDS | {"profile_field"}
        assert dependency["kind"] in {"name", "figure", "format", "order", "status"}
        assert dependency["resolution"] in {"documented", "profile", "undecided"}
        assert ("profile_field" in dependency) == (dependency["resolution"] == "profile")
        if "profile_field" in dependency:  # a dotted path the profile schema knows
            node = PROFILE_SCHEMA
            for part in dependency["profile_field"].split("."):
                node = node["properties"][part]
                node = (
                    PROFILE_SCHEMA["$defs"][node["$ref"].split("/")[-1]] if "$ref" in node else node
                )
        for key in ("needs", "how"):
            assert isinstance(dependency[key], str) and dependency[key].strip()
    rule = next(r for r in spec.rules() if r.id == entry["id"])
    assert len(rule.depends_on) == len(entry["depends_on"])


def test_every_profile_figure_the_suites_read_is_in_the_inventory() -> None:
    """A suite test that judges a rule by a figure the profile declares (throttles.*) must say
    so in a rule's depends_on: a new dependency shows in review as a catalogue entry."""
    suites = Path(spec.__file__).parent.parent / "suites"
    read = {
        f"throttles.{name}"
        for path in suites.rglob("*.py")
        for name in re.findall(r'profile\.throttle\("([a-z_]+)"\)', path.read_text("utf-8"))
    }
    declared = {
        d.profile_field for rule in spec.rules() for d in rule.depends_on if d.profile_field
    }
    assert read, "the suites read no declared figure: this test looks in the wrong place"
    assert read <= declared, sorted(read - declared)


# The profile's accessors for things the documents leave open, and the profile field each reads.
DECLARING_ACCESSORS = {"media_link_fields": "media_links.fields"}


def test_every_declared_name_the_suites_read_is_in_the_inventory() -> None:
    """A suite that reads a name the profile declares (media_links.fields, ...) must say so in
    some rule's depends_on, as that rule's profile field or in how the suite copes."""
    suites = Path(spec.__file__).parent.parent / "suites"
    sources = [path.read_text("utf-8") for path in suites.rglob("*.py")]
    read = {
        field
        for accessor, field in DECLARING_ACCESSORS.items()
        if any(f"profile.{accessor}" in text for text in sources)
    }
    dependencies = [d for rule in spec.rules() for d in rule.depends_on]
    named = {
        field
        for field in DECLARING_ACCESSORS.values()
        for d in dependencies
        if d.profile_field == field or field in d.how
    }
    assert read, "the suites read no declared name: this test looks in the wrong place"
    assert read <= named, sorted(read - named)
