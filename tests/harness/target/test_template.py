"""``amws-conformance init``: the commented profile made from the profile schema."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from amws_conformance.harness import load
from amws_conformance.harness.cli import main
from amws_conformance.harness.target import template as _template
from amws_conformance.harness.target.profile import validate
from amws_conformance.harness.target.template import SCHEMA_FILE, TemplateError, template


def _fill_environment(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Set every ``${NAME}`` of ``text`` to a value of the shape its field asks for."""
    for name in set(re.findall(r"\$\{([A-Z0-9_]+)\}", text)):
        value = "ab" * 32 if name.endswith("_SECRET") else "cd" * 16 if name.endswith("_IV") else ""
        monkeypatch.setenv(name, value or "k" * 64)


def _paths(node: dict[str, Any], root: dict[str, Any], prefix: str = "") -> set[str]:
    """Every field path of the schema under ``node`` (``$ref`` and ``allOf`` followed), down to
    the fields that carry an example of their own."""
    refs = [node.get("$ref")] + [part.get("$ref") for part in node.get("allOf", ())]
    for ref in filter(None, refs):
        node = {**root["$defs"][ref.rsplit("/", 1)[1]], **node}
    found: set[str] = set()
    for name, sub in node.get("properties", {}).items():
        found.add(prefix + name)
        if "examples" not in sub:
            found |= _paths(sub, root, f"{prefix}{name}.")
    return found


def _data_paths(data: Any, prefix: str = "") -> set[str]:
    found: set[str] = set()
    if isinstance(data, dict):
        for name, value in data.items():
            found.add(prefix + name)
            found |= _data_paths(value, f"{prefix}{name}.")
    return found


def test_init_writes_a_profile_that_loads_once_its_keys_are_in_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "my-staging.yaml"
    assert main(["init", str(path)]) == 0
    assert f"--target {path}" in capsys.readouterr().out
    text = path.read_text(encoding="utf-8")
    # Filled in: the one required key comes from the environment, as the template says.
    monkeypatch.setenv("AMWS_KEY_FULL", "f" * 64)
    profile = load(path)
    assert profile.key("full") == "f" * 64
    # Only what the schema requires is switched on; everything else waits, commented out.
    assert set(yaml.safe_load(text)) == set(json.loads(SCHEMA_FILE.read_text())["required"])
    assert yaml.safe_load(text)["keys"] == {"full": "${AMWS_KEY_FULL}"}


def test_init_leaves_an_existing_file_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "profile.yaml"
    path.write_text("name: mine\n", encoding="utf-8")
    assert main(["init", str(path)]) == 1
    assert path.read_text(encoding="utf-8") == "name: mine\n"
    assert "exists" in capsys.readouterr().err


def test_every_schema_field_is_in_the_template_and_its_examples_make_a_valid_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The template cannot drift from the schema: every field appears, and switched on
    together, the schema's examples pass the profile loader."""
    text = template(everything=True)
    _fill_environment(text, monkeypatch)
    data = yaml.safe_load(text)
    validate(data)
    root = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    assert _paths(root, root) <= _data_paths(data)


def test_switching_on_one_commented_block_gives_a_valid_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the header says: removing one "# " from each line of a block switches it on."""
    text = template()
    _fill_environment(text, monkeypatch)
    lines = text.splitlines()
    start = lines.index("# webhooks:")
    end = lines.index("", start)
    switched = lines[:start] + [line.removeprefix("# ") for line in lines[start:end]] + lines[end:]
    data = yaml.safe_load("\n".join(switched))
    assert data["webhooks"]["listen"]
    validate(data)


def test_a_schema_field_without_description_or_example_stops_the_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    schema["properties"]["new_field"] = {"type": "string", "description": "Something new."}
    changed = tmp_path / "profile.schema.json"
    changed.write_text(json.dumps(schema), encoding="utf-8")
    monkeypatch.setattr(_template, "SCHEMA_FILE", changed)
    with pytest.raises(TemplateError, match="new_field: no example"):
        template()
    del schema["properties"]["new_field"]["description"]
    changed.write_text(json.dumps(schema), encoding="utf-8")
    with pytest.raises(TemplateError, match="new_field: no description"):
        template()
