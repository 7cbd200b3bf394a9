"""The store (pipeline/storage/store.py): result files written whole or not at all, compaction that
keeps each task's newest rows, and readers that agree with a plain reading of the files."""

from __future__ import annotations

import os

import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.errors import StoreError
from pipeline.storage import store, store_upkeep
from pipeline.storage.study_folder import StudyFolder
from solvers.registry import get_family
from tests.helpers.folders import copy_outputs
from tests.helpers.runs import run
from tests.helpers.store_rows import write_rows


def test_compaction_keeps_each_task_s_newest_rows_and_the_files_readable(tmp_path):
    """An older file losing some rows is rewritten in place, its schema and metadata kept; a
    file losing all its rows goes; every remaining task's status comes back."""
    results = tmp_path / "results"

    def row(tid, status):
        return {"family": "card_guessing", "task_id": tid, "study": "s", "status": status}

    (old,) = write_rows(results, [row("a", "ok"), row("b", "error")], {"run": 1})
    (gone,) = write_rows(results, [row("c", "error")], {"run": 2})
    (new,) = write_rows(results, [row("b", "ok"), row("c", "ok")], {"run": 3})
    stored = StudyFolder(tmp_path).compact()
    assert sorted(stored.every.ids) == sorted(stored.ok.ids) == [b"a", b"b", b"c"]
    assert store.result_files(results) == [old, new] and not gone.exists()
    assert pq.read_table(old)["task_id"].to_pylist() == ["a"]
    assert store_upkeep.bad_file_reason(old) is None
    version = get_family("card_guessing").version  # write_rows records it, as a run does
    assert store.file_metadata(old) == {"run": 1, "solver_version": version}
    assert sorted(store.load_results(results)["task_id"]) == ["a", "b", "c"]


def test_a_killed_write_leaves_no_broken_file(paper_outputs, outputs):
    copy_outputs(paper_outputs, outputs)
    folder = outputs / "paper" / "results" / "family=card_guessing"
    (folder / ".part-0-dead.parquet.tmp").write_bytes(b"half a file")
    assert len(pd.read_parquet(folder)) == 2  # readers skip hidden files
    run(outputs, "cluster=sync", "study.grid.deck=[[2,2]]")
    assert not list(folder.glob(".*.tmp"))


@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 12), st.booleans()), max_size=6),
        min_size=1,
        max_size=5,
    )
)
@settings(max_examples=60, deadline=None)
def test_the_store_s_newest_rows_and_ids_match_a_plain_python_reading(tmp_path_factory, files):
    """store_upkeep.compact's arrays against dicts: each task keeps the rows of the newest file
    holding it; a task is ok when its newest file has an ok row (files of (task, ok) rows,
    20-digit hex ids, some sharing their first 16 digits)."""
    from pipeline.storage import store

    results = tmp_path_factory.mktemp("store") / "results"

    def tid(n):
        return f"{n % 3:016x}{n:04x}"  # ids 0, 3, 6... share their first 16 digits

    newest, ok = {}, {}
    for number, rows in enumerate(files):
        stored = [
            {
                "family": "card_guessing",
                "task_id": tid(n),
                "study": "s",
                "status": "ok" if good else "error",
            }
            for n, good in rows
        ]
        write_rows(results, stored, {"file": number})
        for n, _ in rows:
            newest[tid(n)] = number
        for n, _ in rows:
            ok[tid(n)] = any(good for m, good in rows if m == n)
    stored = StudyFolder(results.parent).compact()
    assert sorted(stored.every.ids.tolist()) == sorted(t.encode() for t in newest)
    assert sorted(stored.ok.ids.tolist()) == sorted(t.encode() for t in newest if ok[t])
    rows = store.load_results(results)
    for path in store.result_files(results):
        number = store.file_metadata(path)["file"]
        assert all(newest[t] == number for t in pq_ids(path))
    assert set(rows["task_id"]) == set(newest)


def pq_ids(path):
    import pyarrow.parquet as pq

    return pq.read_table(path)["task_id"].to_pylist()


def test_a_failed_write_leaves_no_partial_file(tmp_path, monkeypatch):
    def full_disk(fd):  # the bytes went into the temporary file, then the disk filled up
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    rows = [{"family": "card_guessing", "task_id": "a", "study": "s", "status": "ok"}]
    with pytest.raises(StoreError, match="No space left"):
        write_rows(tmp_path / "results", rows, {})
    assert not [p for p in (tmp_path / "results").rglob("*") if p.is_file()]


def without_columns(results, *columns: str) -> list:
    """Rewrite every results file under ``results`` without ``columns``, its metadata kept:
    the files of a study stored before its family gained those columns."""
    files = store.result_files(results)
    for path in files:
        with pq.ParquetFile(path) as pf:
            table = pf.read()
        pq.write_table(table.drop_columns(list(columns)), path)
    return files


def test_files_stored_before_columns_were_added_are_kept_read_and_resumed(paper_outputs, tmp_path):
    """A study whose files lack score_std and deck_counts is resumed: none is quarantined, its
    tasks are skipped, new tasks' files hold the columns, and every reader gives every row with
    every column (missing in the old rows)."""
    import duckdb

    from pipeline.storage import store, store_overview
    from tests.helpers.folders import copy_outputs

    out = copy_outputs(paper_outputs, tmp_path / "out")
    results = out / "paper" / "results"
    old = without_columns(results, "score_std", "deck_counts")
    assert all(store_upkeep.bad_file_reason(p) is None for p in old)
    said: list[str] = []
    again = run(out, "cluster=sync", "study.grid.deck=[[3,3,3],[2,2]]", logged=said)
    assert (again.skipped, again.computed, again.errors) == (2, 2, 0)
    assert "not a guesslab results file" not in "\n".join(said)
    assert all(p.is_file() for p in old) and not (out / "paper" / "quarantine").exists()
    assert "deck_counts" not in pq.read_schema(old[0]).names

    frame = store.load_results(out / "paper")
    lazy = store.family_rows(results, "card_guessing", "ok").frame()
    sql = duckdb.sql(
        f"SELECT * FROM read_parquet('{results}/**/*.parquet', union_by_name = true)"
    ).df()
    for rows in (frame, lazy, sql):
        rows = rows.sort_values(["deck", "strategy"])
        assert list(rows["deck"]) == ["2,2", "2,2", "3,3,3", "3,3,3"]
        assert [list(v) if hasattr(v, "__len__") else None for v in rows["deck_counts"]] == [
            [2, 2],
            [2, 2],
            None,
            None,  # fmt: skip
        ]
        std = rows["score_std"].tolist()
        assert pd.isna(std[2]) and pd.isna(std[3]) and std[0] > 0 and std[1] > 0
    assert list(frame.columns[: len(lazy.columns)]) == list(lazy.columns)
    assert store_overview.store_counts(results).tasks == 4
    assert (out / "paper" / "summary.md").read_text().count("2,2") >= 1


def test_a_file_whose_columns_differ_otherwise_is_quarantined(tmp_path):
    """Only missing columns are taken for a file written before columns were added: a column
    of another type, one the family does not have, or no task_id, and the file is refused."""
    import pyarrow as pa

    from solvers import solve

    rows = solve({"family": "card_guessing", "deck": [2, 1], "strategy": "greedy"})
    rows[0].update(task_id="t", study="s")
    (path,) = write_rows(tmp_path / "results", rows, {"run": 1})
    table = pq.read_table(path)
    metadata = table.schema.metadata
    for odd in (
        table.drop_columns(["task_id"]),
        table.append_column("extra", pa.array([1], pa.int64())),
        table.set_column(
            table.schema.get_field_index("n_states"), "n_states", pa.array([1.0], pa.float64())
        ),  # fmt: skip
    ):
        pq.write_table(odd.replace_schema_metadata(metadata), path)
        assert "schema differs" in store_upkeep.bad_file_reason(path)
    pq.write_table(table.drop_columns(["score_std"]).replace_schema_metadata(metadata), path)
    assert store_upkeep.bad_file_reason(path) is None


def test_a_results_file_is_read_again_once_it_is_another_file(tmp_path):
    """A small results file's ids are kept between reads of the store while it stays the
    same file; a file renamed over it (as compaction and every write do) is read anew, and
    a good file replaced by a foreign one is found bad."""
    from pipeline.storage.store_newest import ids_and_ok

    results = tmp_path / "results"

    def row(tid, status):
        return {"family": "card_guessing", "task_id": tid, "study": "s", "status": status}

    (path,) = write_rows(results, [row("a", "ok"), row("b", "error")], {"run": 1})
    ids, ok = ids_and_ok(path)
    assert ids_and_ok(path)[0] is ids and not ids.flags.writeable  # kept, read-only
    assert store_upkeep.bad_file_reason(path) is None
    (other,) = write_rows(results, [row("c", "ok")], {"run": 2})
    os.replace(other, path)
    assert ids_and_ok(path)[0].tolist() == [b"c"] and ids_and_ok(path)[1].tolist() == [True]
    path.unlink()
    path.write_bytes(b"PAR1 not a Parquet file at all PAR1")
    assert store_upkeep.bad_file_reason(path).startswith("unreadable Parquet")
