"""The summary stage on large stores: counts by DuckDB, a family's rows as a lazy
StoredRows, the report's tables capped; on a small store (the thresholds forced low) the
large-store path writes the same numbers as the plain pandas path."""

from __future__ import annotations

import html
import itertools
import math
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipeline.outputs.report import write_report
from pipeline.outputs.summary import generic_summary, write_summary
from pipeline.storage import store, store_layout, store_overview
from pipeline.storage.study_folder import StudyFolder
from solvers import solve
from solvers.card_guessing.summary.rows import summary_rows
from solvers.kit.stored_rows import StoredRows
from tests.helpers.pages import page_data
from tests.helpers.store_rows import write_rows

STUDY = {"name": "big", "description": "an entropy grid written in three batches"}


def solved_rows() -> list[dict]:
    """Entropy grids (r x t x gamma) on (2,2,1) and (2,1) (36 and 30 info rows: more than
    the per-deck table keeps; on (2,1) most gammas tie), the references, and two failed
    tasks (72 rows); ids unique, study 'big'."""
    tasks = [{"deck": d, "strategy": s} for d in ([2, 2, 1], [2, 1]) for s in ("optimal", "greedy")]
    grids = [
        ([2, 2, 1], [0.0, 1.0, math.inf], [0.0, 1.0, 2.0], [0.1, 0.4, 0.7, 1.0]),
        ([2, 1], [0.5, 1.0, 2.0], [0.5, 1.0], [g / 4 for g in range(5)]),
    ]
    for deck, rs, ts, gammas in grids:
        for g, r, t in itertools.product(gammas, rs, ts):  # late gammas: past the first 13
            tasks.append(
                {"deck": deck, "strategy": "info", "entropy_r": r, "entropy_t": t, "gamma": g}
            )
    rows = [row for task in tasks for row in solve({"family": "card_guessing", **task})]
    for n, row in enumerate(rows):
        row.update(task_id=f"{n:020d}", study="big")
    for n in range(2):
        bad = {**rows[n], "task_id": f"e{n:019d}", "status": "error", "error": f"boom {n}"}
        rows.append({**bad, "expected_score": None, "expected_score_exact": None})
    return rows


@pytest.fixture
def study_dir(tmp_path) -> Path:
    """A study folder whose store holds :func:`solved_rows` in three files (batches)."""
    rows = solved_rows()
    folder = tmp_path / "first" / "big"
    for part in (rows[:10], rows[10:25], rows[25:]):
        write_rows(folder / "results", part, {"written_at": "2026-01-01T00:00:00"})
    return folder


def copy_study(folder: Path, outputs: Path, name: str = "") -> Path:
    """A copy of the study folder (its store) under ``outputs`` (as study ``name``)."""
    target = outputs / (name or folder.name)
    shutil.copytree(folder / "results", target / "results")
    return target


def test_stored_rows_read_as_load_results_does(study_dir):
    results = study_dir / "results"
    loaded = store.load_results(results)
    stored = store.family_rows(results, "card_guessing")
    assert len(store.family_files(results, "card_guessing")) == 3
    pd.testing.assert_frame_equal(stored.frame(), loaded.drop(columns=list(store.RUN_COLUMNS)))
    ok = store.family_rows(results, "card_guessing", "ok")
    assert ok.count() == len(loaded) - 2 == len(ok)
    first = ok.frame(["task_id", "expected_score"], limit=4)
    assert list(first["task_id"]) == list(loaded["task_id"][:4])
    framed = StoredRows("card_guessing", frame=loaded, where="status = 'error'")
    assert framed.count() == 2 and list(framed.frame()["error"]) == ["boom 0", "boom 1"]


def test_store_counts_agree_with_the_rows_in_pandas(study_dir):
    results = study_dir / "results"
    counts = store_overview.store_counts(results)
    expected = store_overview.frame_counts(store.load_results(results))
    pd.testing.assert_frame_equal(counts.by_status, expected.by_status, check_dtype=False)
    assert counts.tasks == expected.tasks == counts.rows
    assert counts.rows_with("error") == counts.tasks_with("error") == 2
    assert store_overview.store_counts(study_dir / "nothing").rows == 0


def test_the_large_store_path_writes_the_same_summary_as_pandas(study_dir, tmp_path, monkeypatch):
    import solvers.card_guessing.summary as card_summary

    seen = []
    original = card_summary.summarize

    def spy(rows, out_dir):
        seen.append(type(rows).__name__)
        return original(rows, out_dir)

    spy.takes_stored_rows = True
    monkeypatch.setattr(card_summary, "summarize", spy)
    plain = copy_study(study_dir, tmp_path / "plain")
    large = copy_study(study_dir, tmp_path / "large")
    write_summary(StudyFolder(plain), STUDY)
    write_summary(StudyFolder(large), STUDY, large_rows=0)
    assert seen == ["DataFrame", "StoredRows"]
    lazy = store.family_rows(large / "results", "card_guessing", "ok")
    assert len(summary_rows(lazy)) < lazy.count() == 70  # the exact info rows were reduced
    text = (plain / "summary.md").read_text()
    assert text == (large / "summary.md").read_text()
    assert "### Which entropies make info optimal" in text and "boom 1" in text
    assert "72 tasks, 72 result rows: 70 ok, 2 failed" in text
    tables = sorted(p.name for p in (plain / "summary").glob("*.parquet"))
    assert "card_guessing_entropy_grid.parquet" in tables
    for name in tables:
        pd.testing.assert_frame_equal(
            pd.read_parquet(plain / "summary" / name), pd.read_parquet(large / "summary" / name)
        )
    assert page_data(plain / "report.html")["tables"] == page_data(large / "report.html")["tables"]


def test_the_report_caps_its_rows_and_says_how_to_read_them_all(study_dir):
    path = write_report(StudyFolder(study_dir), STUDY, report_rows=5)
    tables = {t["title"]: t for t in page_data(path)["tables"]}
    assert len(tables["All results (card_guessing)"]["rows"]) == 5
    assert len(tables["Failed tasks (card_guessing)"]["rows"]) == 2  # fewer than the cap
    text = html.unescape(path.read_text())
    assert "first 5 of 70 rows" in text
    folder = store_layout.family_dir(study_dir.resolve() / "results", "card_guessing")
    assert f"read_parquet('{folder}/*.parquet') WHERE status = 'ok'" in text
    assert "72 tasks, 72 result rows: 70 ok, 2 failed" in text
    whole = page_data(write_report(StudyFolder(study_dir), STUDY))["tables"]
    assert len(next(t for t in whole if t["title"].startswith("All results"))["rows"]) == 70


def test_the_index_counts_without_rows_and_leaves_big_families_out_of_comparisons(study_dir):
    from pipeline.outputs.index import write_index

    outputs = study_dir.parent
    copy_study(study_dir, outputs, "twin")
    text = write_index(outputs).read_text()
    assert re.search(
        r"data-study='big'>.*?<td>card_guessing</td><td></td><td>72</td>"
        r"<td>70</td><td>2</td>",
        text,
    )
    assert '"studies":["big","twin"]' in text
    text = write_index(outputs, compare_rows=10).read_text()
    assert "Left out of the comparison" in text and "big (card_guessing, 70 rows)" in text
    assert '"families":[]' in text


def test_the_generic_summary_reads_only_its_first_rows_of_stored_rows(study_dir, tmp_path):
    results = study_dir / "results"
    frame = store.load_results(results)
    ok = frame[frame["status"] == "ok"].reset_index(drop=True)
    lazy = store.family_rows(results, "card_guessing", "ok")
    assert generic_summary(lazy, tmp_path) == generic_summary(ok, tmp_path)
    assert generic_summary(ok.head(0), tmp_path) == "No successful results."


def test_a_report_of_rows_already_loaded_matches_the_report_from_the_store(study_dir):
    loaded = store.load_results(study_dir / "results")
    from_store = page_data(write_report(StudyFolder(study_dir), STUDY))
    text_store = (study_dir / "report.html").read_text()
    from_rows = page_data(write_report(StudyFolder(study_dir), STUDY, loaded))
    assert from_rows["tables"][2:] == from_store["tables"][2:]  # after the provenance tables
    status = re.compile(r"<p class='status'>(.*?)</p>")
    assert status.search(text_store).group(1) == status.search(
        (study_dir / "report.html").read_text()
    ).group(1)
