"""``amws-reference spec [--enforced] [--output FILE]``: the published OpenAPI documents.

The documented output is the shipped file; the enforced one is valid OpenAPI 3.1 that differs from
it exactly where our ``x-assumed-schema`` overlays sit, with the overlay keys merged away.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from openapi_spec_validator import validate

from amws_conformance import spec
from amws_conformance.reference_server.cli import main

REPO = Path(__file__).resolve().parents[2]
OVERLAY = "x-assumed-schema"
Pointer = tuple[str, ...]


def _written(tmp_path: Path, *flags: str) -> str:
    out = tmp_path / ("enforced.yaml" if flags else "documented.yaml")
    assert main(["spec", *flags, "--output", str(out)]) == 0
    return out.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("spec")
    documented, enforced = _written(folder), _written(folder, "--enforced")
    return {
        "documented_text": documented,
        "enforced_text": enforced,
        "documented": yaml.safe_load(documented),
        "enforced": yaml.safe_load(enforced),
    }


def test_documented_output_is_the_shipped_file(outputs: dict[str, Any]) -> None:
    shipped = (REPO / "amws_conformance" / "spec" / "openapi.yaml").read_text(encoding="utf-8")
    assert outputs["documented_text"] == shipped


@pytest.mark.parametrize("which", ["documented", "enforced"])
def test_output_is_valid_openapi_3_1(outputs: dict[str, Any], which: str) -> None:
    document = outputs[which]
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_enforced_output_reads_in_a_client_library(outputs: dict[str, Any]) -> None:
    from aiopenapi3 import OpenAPI

    api = OpenAPI.loads("http://127.0.0.1/", outputs["enforced_text"])
    assert set(api.components.schemas) == set(outputs["enforced"]["components"]["schemas"])


def test_enforced_output_has_no_anchors_and_no_overlay_keys(outputs: dict[str, Any]) -> None:
    text = outputs["enforced_text"]
    assert "&id" not in text and "*id" not in text
    assert not list(_holders(outputs["enforced"]))


def _holders(node: Any, at: Pointer = ()) -> Iterator[Pointer]:
    """Where the overlays sit: every object that carries an ``x-assumed-schema``."""
    if isinstance(node, dict):
        if OVERLAY in node:
            yield at
        for key, value in node.items():
            if key != OVERLAY:
                yield from _holders(value, (*at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _holders(value, (*at, str(i)))


def _stripped(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _stripped(v) for k, v in node.items() if k != OVERLAY}
    if isinstance(node, list):
        return [_stripped(v) for v in node]
    return node


def _differences(left: Any, right: Any, at: Pointer = ()) -> Iterator[Pointer]:
    if isinstance(left, dict) and isinstance(right, dict):
        for key in dict.fromkeys([*left, *right]):
            if key not in left or key not in right:
                yield (*at, key)
            else:
                yield from _differences(left[key], right[key], (*at, key))
    elif isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            yield from _differences(a, b, (*at, str(i)))
    elif left != right or type(left) is not type(right):
        yield at


def _node(document: Any, at: Pointer) -> Any:
    for part in at:
        document = document[int(part)] if isinstance(document, list) else document[part]
    return document


def test_enforced_differs_exactly_where_the_overlays_are(outputs: dict[str, Any]) -> None:
    documented, enforced = outputs["documented"], outputs["enforced"]
    holders = list(_holders(documented))
    assert len(holders) >= 5, holders  # the document has overlays on phones, invites, persons...
    differences = list(_differences(_stripped(documented), enforced))
    outside = [d for d in differences if not any(d[: len(h)] == h for h in holders)]
    assert outside == [], "the enforced document changed something no overlay covers"
    unchanged = [h for h in holders if not any(d[: len(h)] == h for d in differences)]
    assert unchanged == [], "an overlay left its schema as it was"


def test_every_overlay_keyword_reaches_the_enforced_schema(outputs: dict[str, Any]) -> None:
    documented, enforced = outputs["documented"], outputs["enforced"]

    def check(overlay: dict[str, Any], merged: dict[str, Any], where: Pointer) -> None:
        for key, value in overlay.items():
            assert key in merged, (where, key)
            if key == "required":
                assert set(value) <= set(merged["required"]), where
            elif key == "properties":
                for name, part in value.items():
                    check(part, merged["properties"][name], (*where, "properties", name))
            else:
                assert merged[key] == _stripped(value), (where, key)

    for at in _holders(documented):
        check(_node(documented, at)[OVERLAY], _node(enforced, at), at)


def test_enforced_output_is_what_the_server_enforces(outputs: dict[str, Any]) -> None:
    assert outputs["enforced"] == spec.enforced()


def test_the_command_writes_to_standard_output() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "amws_conformance.reference_server.cli", "spec", "--enforced"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert yaml.safe_load(run.stdout) == spec.enforced()
