"""The ledger file: what a run made and has not removed survives the run, and only that."""

from __future__ import annotations

from pathlib import Path

import httpx

from amws_conformance.harness.lifecycle.journal import Entry, Journal, files_of, read
from amws_conformance.harness.lifecycle.ledger import Ledger

TARGET = {"run_id": "r1", "base_url": "http://target.example"}


def test_the_file_holds_what_is_made_and_not_removed(tmp_path: Path) -> None:
    path = tmp_path / "r1.ledger.jsonl"
    journal = Journal(path, TARGET)
    ledger = Ledger(journal)
    ledger.register("a", "/persons/a", "full", "createPerson")
    ledger.register("w", "/watchlists/w", "full", "createWatchlist")
    ledger.register("e", "/watchlists/w/entries/e", "full", "createWatchlistEntry")
    ledger.register("f", "/files/f", "full", "uploadFile")
    ledger.register("d", "/departments/d", "full", "createDepartment")
    ledger.forget("f")  # a claimed staged file
    ledger.deleted("/watchlists/w")  # its entries go with it
    journal.close(empty=False)  # its file is read as a later sweep reads it
    target, left = read(path)
    assert target == TARGET
    assert left == [
        Entry("a", "/persons/a", "full", "createPerson"),
        Entry("d", "/departments/d", "full", "createDepartment"),
    ]


def test_a_cleanup_marks_its_deletes_and_an_empty_file_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "r1.ledger.jsonl"
    journal = Journal(path, TARGET)
    ledger = Ledger(journal)
    ledger.register("a", "/persons/a", "full", "createPerson")
    ledger.register("b", "/persons/b", "full", "createPerson")
    statuses = {"a": 200, "b": 500}
    ledger.cleanup(lambda entry: httpx.Response(statuses[entry.uuid]))
    assert [m.uuid for m in read(path)[1]] == ["b"]
    journal.close(empty=False)
    assert path.exists()
    Journal(path, None).close(empty=True)
    assert not path.exists()


def test_a_line_cut_short_by_a_kill_loses_only_itself(tmp_path: Path) -> None:
    path = tmp_path / "r1.ledger.jsonl"
    journal = Journal(path, TARGET)
    Ledger(journal).register("a", "/persons/a", "full", "createPerson")
    journal.close(empty=False)  # the run's own lines are flushed; the kill cuts one after them
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"event":"made","uuid":"b","del')
    assert [m.uuid for m in read(path)[1]] == ["a"]


def test_a_run_id_finds_its_own_files_and_its_xdist_workers(tmp_path: Path) -> None:
    for name in ("r1", "r1-gw0", "r1-gw1", "r12", "other"):
        (tmp_path / f"{name}.ledger.jsonl").write_text("", encoding="utf-8")
    assert [p.name for p in files_of(tmp_path, "r1")] == [
        "r1-gw0.ledger.jsonl",
        "r1-gw1.ledger.jsonl",
        "r1.ledger.jsonl",
    ]
    assert len(files_of(tmp_path)) == 5
    assert files_of(tmp_path / "missing") == []
