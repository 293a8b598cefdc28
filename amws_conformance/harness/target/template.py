"""The commented target profile ``amws-conformance init`` writes, made from the profile schema.

Every field of ``profile.schema.json`` appears in the schema's order, its ``description`` as a
comment above it and its first ``examples`` value as its value (a field with no example of its
own shows its sub-fields, each with theirs). What the schema requires is filled in; every other
field is commented out with its whole block, to be switched on by removing one ``# `` per line.
A field without a description or an example makes :func:`template` raise, so a field added to
the schema without them fails the project's tests instead of going missing from the template.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

SCHEMA_FILE = Path(__file__).parents[1].joinpath("profile.schema.json")
WIDTH = 98
HEADER = """\
A target profile for amws-conformance. Fill it in, then run:
  amws-conformance run --target {path} --conformance-report report/
A value written ${{NAME}} is read from the environment when the run starts (a variable that is
not set stops the run, naming the field): keep keys and secrets there rather than in this file.
Commented-out fields are optional: remove one "# " from each line of a field's block to use it.
"""


class TemplateError(Exception):
    """The schema lacks what the template needs; ``str(error)`` names the field."""


def _resolved(node: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` and ``allOf`` parts merged in (its own keys win)."""
    merged: dict[str, Any] = {}
    parts = [node["$ref"]] if "$ref" in node else []
    for ref in parts:
        target: Any = root
        for step in ref.removeprefix("#/").split("/"):
            target = target[step]
        merged.update(_resolved(target, root))
    for part in node.get("allOf", ()):
        merged.update(_resolved(part, root))
    merged.update({k: v for k, v in node.items() if k not in ("$ref", "allOf")})
    return merged


def _value_lines(name: str, value: Any) -> list[str]:
    """``name: value`` in YAML: a mapping or list in flow style where it fits on one line."""
    style: bool | None = False  # block style; scalars are plain
    if isinstance(value, dict | list):
        items = value.values() if isinstance(value, dict) else value
        if not any(isinstance(item, dict | list) for item in items):
            flow = yaml.safe_dump({name: value}, default_flow_style=True, width=1000)
            line = flow.strip().removeprefix("{").removesuffix("}")
            if len(line) <= WIDTH - 8:  # room for the indentation and "# " of a nested block
                return [line]
        else:
            style = None  # a block, its innermost mappings and lists in flow style
    text = yaml.safe_dump({name: value}, default_flow_style=style, sort_keys=False, width=WIDTH)
    return text.splitlines()


def _lines(
    name: str,
    node: Mapping[str, Any],
    root: Mapping[str, Any],
    where: str,
    parent_live: bool,
    required: bool,
) -> list[str]:
    """One field at indentation zero: its description as a comment, then its value or block.

    ``parent_live``: the block around the field is in effect (not commented out, or everything
    is shown). There an optional field is commented out; inside a commented-out block nothing
    is commented out a second time (the block shows its whole shape once switched on), and an
    optional field says so instead.
    """
    node = _resolved(node, root)
    description = node.get("description")
    if not description:
        raise TemplateError(f"profile schema field {where}: no description")
    commented = parent_live and not required
    if not parent_live and not required:
        description += " Optional."
    comment = textwrap.wrap(description, WIDTH - 2, initial_indent="# ", subsequent_indent="# ")
    if "examples" in node:
        body = _value_lines(name, node["examples"][0])
    elif node.get("properties"):
        body = [f"{name}:"]
        inner = set(node.get("required", ()))
        live = parent_live and not commented
        for child, sub in node["properties"].items():
            lines = _lines(child, sub, root, f"{where}.{child}", live, child in inner)
            body += ["  " + line for line in lines]
    else:
        raise TemplateError(f"profile schema field {where}: no example")
    return comment + (["# " + line for line in body] if commented else body)


def template(path: str = "PROFILE", everything: bool = False) -> str:
    """The profile to fill in; ``everything`` leaves no field commented out (the project's
    tests check that the schema's examples, all switched on, make a valid profile)."""
    root = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    out = ["# " + line if line else "#" for line in HEADER.format(path=path).splitlines()]
    for name, node in root["properties"].items():
        required = everything or name in root.get("required", ())
        out += ["", *_lines(name, node, root, name, not everything, required)]
    return "\n".join(out) + "\n"


def write(path: Path) -> None:
    """Write the template to ``path``; an existing file is never replaced (FileExistsError)."""
    text = template(str(path))
    with path.open("x", encoding="utf-8") as fh:
        fh.write(text)
