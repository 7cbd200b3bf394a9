"""The store's upkeep (pipeline/storage/store_upkeep.py): compaction replaces a file whole and
durably, and the quarantine moves only what is not a results file."""

from __future__ import annotations

import os

import pytest

from pipeline.storage import store, store_upkeep
from pipeline.storage.study_folder import StudyFolder
from solvers import Family, Rules, Solver, register
from solvers.registry import families
from tests.helpers.store_rows import write_rows

FAMILY = "test_upkeep"

if FAMILY not in families():
    register(
        Family(
            name=FAMILY,
            version="1",
            rules=Rules(params=()),
            solver=Solver(run=lambda task: [{"kept": 1.0}], columns={"kept": "float64"}),
        )
    )


def rows(*task_ids: str) -> list[dict]:
    return [
        {"family": FAMILY, "task_id": t, "study": "s", "status": "ok", "kept": 1.0}
        for t in task_ids
    ]


def synced(monkeypatch) -> set[tuple[int, int]]:
    """The (device, inode) of every file or folder os.fsync is called on after this call."""
    seen: set[tuple[int, int]] = set()
    real = os.fsync

    def spy(fd: int) -> None:
        info = os.fstat(fd)
        seen.add((info.st_dev, info.st_ino))
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return seen


def identity(path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_dev, info.st_ino


def test_compaction_syncs_the_replaced_file_and_its_folder(tmp_path, monkeypatch):
    """A file compaction rewrites reaches the disk before the rename counts: the new file and
    its folder are fsynced, as every write of the store is."""
    results = tmp_path / "results"
    older = write_rows(results, rows("a", "b"), {})[0]
    write_rows(results, rows("a"), {})  # a newer row of task a
    seen = synced(monkeypatch)
    StudyFolder(tmp_path).compact()
    assert len(store.load_results(results)) == 2
    assert identity(older) in seen  # the file written over ``older``, task b's row alone
    assert identity(older.parent) in seen


def test_a_valid_file_is_never_quarantined_when_its_check_fails_unexpectedly(tmp_path, monkeypatch):
    """Only an unknown family makes a file 'unknown family'; an error of the check itself
    surfaces, and the results file stays where it is."""
    results = tmp_path / "results"
    (path,) = write_rows(results, rows("a"), {})

    def broken(schema, family: str):
        raise RuntimeError("a bug in the schema check")

    monkeypatch.setattr(store_upkeep, "fits_family_schema", broken)
    with pytest.raises(RuntimeError, match="a bug in the schema check"):
        store_upkeep.quarantine_bad_files(results, tmp_path / "quarantine")
    assert store.result_files(results) == [path]
    assert not (tmp_path / "quarantine").exists()


def test_a_file_of_an_unknown_family_is_quarantined_as_such(tmp_path):
    results = tmp_path / "results"
    (path,) = write_rows(results, rows("a"), {})
    foreign = results / "family=gone" / path.name
    foreign.parent.mkdir()
    path.rename(foreign)
    moved = store_upkeep.quarantine_bad_files(results, tmp_path / "quarantine")
    assert moved == [(foreign, "unknown family 'gone'")]


def test_an_unexpected_error_in_the_check_moves_nothing(tmp_path, monkeypatch):
    """Every entry is judged before any is moved: when the check fails unexpectedly on one
    file, a foreign file judged before it stays in the store too, and no quarantine folder is
    made."""
    results = tmp_path / "results"
    (path,) = write_rows(results, rows("a"), {})
    foreign = path.parent / "part-0-foreign.parquet"  # sorts before the valid file
    foreign.write_bytes(b"not parquet")

    def broken(schema, family: str):
        raise RuntimeError("a bug in the schema check")

    monkeypatch.setattr(store_upkeep, "fits_family_schema", broken)
    with pytest.raises(RuntimeError, match="a bug in the schema check"):
        store_upkeep.quarantine_bad_files(results, tmp_path / "quarantine")
    assert foreign.exists() and path.exists()
    assert not (tmp_path / "quarantine").exists()
