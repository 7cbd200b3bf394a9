"""The store's upkeep (pipeline/store_upkeep.py): compaction replaces a file whole and durably,
and the quarantine moves only what is not a results file."""

from __future__ import annotations

import os

from helpers.store_rows import write_rows

from pipeline import store, store_upkeep
from solvers import Family, register
from solvers.registry import families

FAMILY = "test_upkeep"

if FAMILY not in families():
    register(Family(name=FAMILY, version="1", params=(), run=lambda task: [{"kept": 1.0}],
                    columns={"kept": "float64"}))  # fmt: skip


def rows(*task_ids: str) -> list[dict]:
    return [
        {"family": FAMILY, "task_id": t, "study": "s", "status": "ok", "kept": 1.0}
        for t in task_ids
    ]


def synced(monkeypatch) -> set[tuple[int, int]]:
    """The (device, inode) of every file or folder os.fsync is called on from now."""
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
    store_upkeep.compact(results)
    assert len(store.load_results(results)) == 2
    assert identity(older) in seen  # the file written over ``older``, task b's row alone
    assert identity(older.parent) in seen
