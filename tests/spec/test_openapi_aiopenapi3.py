"""A second, independent linter: aiopenapi3 reads spec/openapi.yaml as a client would.

openapi-spec-validator (test_openapi.py) checks the document against the OpenAPI 3.1 JSON
Schema. aiopenapi3 shares no code with it: it parses the file with its own loader into strict
pydantic models of every OpenAPI object (an unknown key is an error, ``x-`` extensions aside),
resolves every reference, indexes every operation and builds a data model from every schema, so
a schema a client generator cannot use (an array without ``items``, say) fails here.
"""

from __future__ import annotations

import copy
import gc
import warnings
from typing import Any

import pytest
from aiopenapi3 import FileSystemLoader, OpenAPI
from aiopenapi3.errors import ReferenceResolutionError

from amws_conformance import spec

URL = "http://127.0.0.1/"  # the fictive address a client of the document would call
# Warnings aiopenapi3 may give that say nothing about the document, each with its reason.
IGNORED_WARNINGS: dict[str, str] = {}


def _ignored(message: str) -> bool:
    return any(part in message for part in IGNORED_WARNINGS)


def _load_file() -> tuple[OpenAPI, list[str]]:
    """The loaded document, and the warnings loading it gave: only its own. What earlier tests
    of this process left for the garbage collector is finalised before the recording starts,
    and the collector does not run inside it (it would finalise their objects there too)."""
    gc.collect()
    gc.disable()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            api = OpenAPI.load_file(
                URL,
                "openapi.yaml",
                loader=FileSystemLoader(spec._load.SPEC_DIR),
            )
    finally:
        gc.enable()
    return api, [f"{w.category.__name__}: {w.message}" for w in caught]


def _load_dict(document: dict[str, Any]) -> OpenAPI:
    return OpenAPI(URL, document, use_operation_tags=False)


@pytest.fixture(scope="module")
def loaded() -> tuple[OpenAPI, list[str]]:
    return _load_file()


def test_loads_without_errors_or_warnings(loaded: tuple[OpenAPI, list[str]]) -> None:
    _, found = loaded
    assert [w for w in found if not _ignored(w)] == []


class _LeftByAnEarlierTest:
    """Garbage in a reference cycle (only the collector frees it) that warns when finalised,
    as a transport an earlier test left open does."""

    def __init__(self) -> None:
        self.cycle = self

    def __del__(self) -> None:
        warnings.warn("unclosed transport (an earlier test's)", ResourceWarning, stacklevel=1)


# Outside the recording, whatever -W says: the garbage is this test's own doing.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_the_recording_leaves_out_what_earlier_tests_left() -> None:
    _LeftByAnEarlierTest()
    _, found = _load_file()
    assert not any("an earlier test's" in w for w in found), found


def test_the_recording_keeps_a_warning_the_load_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    # The test above cannot pass by dropping warnings: one raised while loading is counted.
    load_file = OpenAPI.load_file

    def warning_load(*args: Any, **kwargs: Any) -> OpenAPI:
        warnings.warn("a construct a client cannot use", UserWarning, stacklevel=1)
        return load_file(*args, **kwargs)

    monkeypatch.setattr(OpenAPI, "load_file", warning_load)
    _, found = _load_file()
    assert found == ["UserWarning: a construct a client cannot use"]


def test_every_operation_webhook_and_schema_is_read(loaded: tuple[OpenAPI, list[str]]) -> None:
    api, _ = loaded
    document = spec.openapi()
    indexed = set(api._.Iter(api, False))
    assert indexed == {op.operation_id for op in spec.operations()}
    assert set(api._root.webhooks) == set(document["webhooks"])
    schemas = api.components.schemas
    assert set(schemas) == set(document["components"]["schemas"])
    for name, schema in schemas.items():
        assert schema.get_type() is not None, name


def _broken(change: str) -> dict[str, Any]:
    document = copy.deepcopy(spec.openapi())
    departments = document["paths"]["/api/ws/v1/departments"]["get"]
    if change == "unknown-key":
        departments["responses"]["200"]["content"]["application/json"]["exmaple"] = []
    elif change == "array-without-items":
        del document["components"]["schemas"]["PageMeta"]["properties"]["entries"]["items"]
    elif change == "dangling-ref":
        departments["responses"]["400"] = {"$ref": "#/components/responses/Missing"}
    return document


def test_the_document_loads_from_a_dict_too() -> None:
    # The broken copies below are loaded this way; the intact one must pass it.
    _load_dict(copy.deepcopy(spec.openapi()))


@pytest.mark.parametrize(
    ("change", "raised", "named"),
    [
        ("unknown-key", ValueError, "exmaple"),  # pydantic's ValidationError
        ("array-without-items", AssertionError, "entries"),  # its model builder's check
        ("dangling-ref", ReferenceResolutionError, "Missing"),
    ],
)
def test_the_linter_refuses_a_broken_copy(change: str, raised: type[Exception], named: str) -> None:
    """The linter is strict enough to matter: each of these defects stops the load."""
    with pytest.raises(raised) as refused:
        _load_dict(_broken(change))
    assert named in f"{refused.value!r} {refused.value}"
