"""The contract suite's cache of failed pattern searches (suites/contract/_draws.py): a cached
outcome is the one the search gives, so the coverage phase generates the same values with it,
without searching again."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import schemathesis.generation.hypothesis.examples as examples
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.coverage import DEFAULT_GENERATION_SESSION, GenerationSession
from schemathesis.specs.openapi.coverage._schema import CoverageContext, cover_schema_iter

from amws_conformance.suites.contract import _draws

# Two letters that must both appear, in one or two characters: the shape of the spec's password,
# whose lookaheads the random search does not satisfy at some lengths (here: it finds no "ab"
# at length two); small, so the failed search takes about a second.
SCHEMA = {"type": "string", "pattern": "^(?=.*a)(?=.*b)[ab]+$", "minLength": 1, "maxLength": 2}


def _coverage(session: GenerationSession) -> list[tuple[Any, str, str]]:
    """The coverage phase's values for SCHEMA (the ``searched`` fixture sees its searches)."""
    context = CoverageContext(
        root_schema=SCHEMA,
        location=ParameterLocation.BODY,
        media_type=("application", "json"),
        is_required=True,
        custom_formats={},
        validator_cls=jsonschema_rs.Draft202012Validator,
        session=session,
    )
    return [
        (v.value, v.generation_mode.value, v.description)
        for v in cover_schema_iter(context, SCHEMA)
    ]


@dataclass(frozen=True)
class Plain:
    values: list[tuple[Any, str, str]]
    searches: int  # pattern searches made


@pytest.fixture(scope="module")
def plain() -> Iterator[Plain]:
    """The coverage values of SCHEMA without the cache, and how many pattern searches they took."""
    found: list[Any] = []
    with pytest.MonkeyPatch.context() as patch:
        original = examples.generate_one

        def counting(strategy: Any, *args: Any, **kwargs: Any) -> Any:
            found.append(strategy)
            return original(strategy, *args, **kwargs)

        patch.setattr(examples, "generate_one", counting)
        values = _coverage(GenerationSession())
    yield Plain(values, len([s for s in found if _is_pattern(s)]))


@pytest.fixture
def searched(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The strategies hypothesis is asked to search, in order."""
    found: list[Any] = []
    original = examples.generate_one

    def counting(strategy: Any, *args: Any, **kwargs: Any) -> Any:
        found.append(strategy)
        return original(strategy, *args, **kwargs)

    monkeypatch.setattr(examples, "generate_one", counting)
    return found


def _installed(folder: Path) -> GenerationSession:
    session = GenerationSession()
    _draws.install(session, folder)
    return session


def _is_pattern(strategy: Any) -> bool:
    return "from_regex" in repr(strategy)


def _searches(searched: list[Any]) -> int:
    return len([s for s in searched if _is_pattern(s)])


def test_a_failed_search_is_answered_from_the_cache_with_the_same_values(
    tmp_path: Path, searched: list[Any], plain: Plain
) -> None:
    assert plain.searches, "the schema made no pattern search"
    cold = _coverage(_installed(tmp_path))
    files = list((tmp_path / _draws.FOLDER).glob("*.json"))
    assert cold == plain.values
    assert _searches(searched) == plain.searches
    assert files, "no failed search was written"
    searched.clear()

    warm = _coverage(_installed(tmp_path))
    assert warm == plain.values
    # Every search that failed is answered from the files: fewer pattern searches are made.
    assert _searches(searched) == plain.searches - len(files)


def test_an_entry_of_another_key_is_not_used(
    tmp_path: Path, searched: list[Any], plain: Plain
) -> None:
    folder = tmp_path / _draws.FOLDER
    folder.mkdir()
    session = _installed(tmp_path)
    _coverage(session)  # learns which files its keys have
    for file in folder.glob("*.json"):  # a key's file holding another key's entry
        file.write_text('{"key": "another", "unsatisfiable": ""}', encoding="utf-8")
    searched.clear()
    assert _coverage(_installed(tmp_path)) == plain.values
    assert _searches(searched) == plain.searches


def test_an_unwritable_folder_only_costs_the_search(
    tmp_path: Path, searched: list[Any], plain: Plain
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    assert _coverage(_installed(blocked)) == plain.values
    assert _searches(searched) == plain.searches


def test_the_cache_folder_is_told_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMWS_CACHE_DIR", "/x/amws")
    assert _draws.default_cache_dir() == Path("/x/amws")
    monkeypatch.delenv("AMWS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert _draws.default_cache_dir() == Path("/x/cache/amws-conformance")


def test_the_contract_schema_draws_through_the_cache() -> None:
    import amws_conformance.suites.contract._schema  # noqa: F401 - installs the cache on import

    assert isinstance(DEFAULT_GENERATION_SESSION.draw_outcomes, _draws._DrawOutcomes)
