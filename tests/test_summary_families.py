"""Every family's summary and report on a large store: each one takes the lazy
StoredRows (reads only the columns it uses; DuckDB adds up or picks rows where a family's
tables keep one row of many), and writes what it writes from a DataFrame of every row.

The large-store path is forced on a small store (``large_rows=0``) and compared with the
plain pandas path file by file: summary.md, every table and figure under summary/, and the
data of report.html.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pipeline.outputs.summary import write_summary
from pipeline.storage.study_folder import StudyFolder
from solvers import solve
from solvers.kit.stored_rows import StoredRows, accepts_stored_rows
from solvers.registry import families, family_report, family_summary, get_family
from tests.helpers.pages import page_data
from tests.helpers.store_rows import write_rows

DECK = {"ranks": 4, "suits": 3, "k": 2}
# Per family: small tasks that reach every section of its summary and report.
TASKS = {
    "no_repeat": [{"N": n} for n in (4, 5, 6, 20, 21)],
    "triples": [
        *({**DECK, "analysis": "win_probability", "n": n} for n in (1, 2, 3)),
        {**DECK, "analysis": "monte_carlo", "n": 2, "games": 2000},
        {**DECK, "analysis": "hitting_times", "start": 1},
        {**DECK, "analysis": "distribution", "start": 1, "rounds": 6},
        {**DECK, "analysis": "equilibrium"},
        {**DECK, "ranks": 5, "analysis": "equilibrium"},
    ],
    "hand_guessing": [  # a game in three chunks, one chunk of another chunking, a sample
        *({"ranks": 4, "suits": 2, "cards": 2, "n_chunks": 3, "answer_chunk": c} for c in range(3)),
        {"ranks": 4, "suits": 2, "cards": 2, "n_chunks": 2, "answer_chunk": 0},
        {"ranks": 4, "suits": 2, "cards": 1, "strategy": "sharma_mittal", "entropy_r": 2.0},
        {"ranks": 4, "suits": 2, "cards": 1, "strategy": "sharma_mittal", "entropy_t": 2.0},
        {"ranks": 4, "suits": 2, "cards": 2, "sample": 10},
    ],
    "high_low": [
        *({"n": n, "strategy": "optimal"} for n in (2, 3, 4, 5)),
        {"n": 5, "strategy": "optimal", "method": "float"},
        *(
            {"ranks": 3, "suits": 2, "strategy": s, "method": m}
            for s in ("optimal", "majority")
            for m in ("exact", "float")
        ),
        {"ranks": 3, "suits": 2, "strategy": "majority", "method": "monte_carlo", "n_games": 500},
    ],
    "mastermind": [
        *(
            {"pegs": 2, "colours": 3, "strategy": s}
            for s in ("minimax", "expected_size", "optimal")
        ),
        *(
            {"pegs": 2, "colours": 3, "strategy": "sharma_mittal", "entropy_r": r, "entropy_t": t}
            for r, t in itertools.product((0.0, 1.0, 2.0), (0.0, 1.0, 2.0))
        ),
        {"pegs": 2, "jar": [1, 2, 3], "strategy": "minimax"},
    ],
}


def built_in_families() -> list[str]:
    """The families guesslab ships (their solvers under solvers/), not a test's or a user's."""
    return [f for f in families() if get_family(f).solver.run.__module__.startswith("solvers.")]


def test_every_built_in_family_s_summary_and_report_take_stored_rows():
    built_in = built_in_families()
    assert set(TASKS) | {"card_guessing"} == set(built_in)
    for family in built_in:
        assert accepts_stored_rows(family_summary(family)), family
        report = family_report(family)
        assert report is None or accepts_stored_rows(report), family


def rerun(family: str, row: dict) -> dict:
    """A row of the same task with other numbers (every numeric result moved a little), as
    if the task was run again: which of the two a table keeps shows."""
    out = dict(row)
    for name, kind in get_family(family).solver.columns.items():
        if out.get(name) is not None and kind in ("float64", "int64"):
            out[name] = out[name] * (1 + 1e-6) if kind == "float64" else out[name] + 1
    return out


def family_store(tmp_path: Path, family: str) -> Path:
    """A study folder whose store holds the family's TASKS' rows in three files, the first
    two rows stored again, run again (:func:`rerun`), in the last one (before compaction)."""
    rows = [row for task in TASKS[family] for row in solve({"family": family, **task})]
    assert all(row["status"] == "ok" for row in rows)
    for n, row in enumerate(rows):
        row.update(task_id=f"{n:020d}", study="fam")
    rows += [rerun(family, row) for row in rows[:2]]
    folder = tmp_path / "first" / "fam"
    third = len(rows) // 3
    for part in (rows[:third], rows[third : 2 * third], rows[2 * third :]):
        write_rows(folder / "results", part, {"written_at": "2026-01-01T00:00:00"})
    return folder


@pytest.mark.parametrize("family", sorted(TASKS))
def test_the_large_store_path_writes_what_the_pandas_path_writes(family, tmp_path, monkeypatch):
    folder = family_store(tmp_path, family)
    plain, large = tmp_path / "plain" / "fam", tmp_path / "large" / "fam"
    for target in (plain, large):
        shutil.copytree(folder / "results", target / "results")
    summary = family_summary(family)
    seen = []

    def spy(rows, out_dir):
        seen.append(type(rows))
        return summary(rows, out_dir)

    spy.takes_stored_rows = True
    module = __import__(summary.__module__, fromlist=["_"])
    monkeypatch.setattr(module, summary.__name__, spy)
    study = {"name": "fam"}
    write_summary(StudyFolder(plain), study)
    write_summary(StudyFolder(large), study, large_rows=0)
    assert seen == [pd.DataFrame, StoredRows]
    text = (plain / "summary.md").read_text()
    assert text == (large / "summary.md").read_text()
    assert "No successful results" not in text and len(text) > 500
    made = sorted(p.name for p in (plain / "summary").iterdir())
    assert made == sorted(p.name for p in (large / "summary").iterdir())
    assert any(name.endswith(".png") for name in made)
    for name in made:
        if name.endswith(".parquet"):
            expected = pd.read_parquet(plain / "summary" / name)
            pd.testing.assert_frame_equal(pd.read_parquet(large / "summary" / name), expected)
        else:
            assert (plain / "summary" / name).read_bytes() == (
                large / "summary" / name
            ).read_bytes(), name
    assert page_data(plain / "report.html") == page_data(large / "report.html")


def test_a_family_section_s_tables_keep_report_rows_and_say_how_many_exist():
    from pipeline.outputs.report import Page, add_section
    from solvers.kit.report_sections import Section, Table

    frame = pd.DataFrame({"r": range(30), "value": [x / 7 for x in range(30)]})
    page = Page(title="t")
    add_section(page, Section("A grid", [Table("Every point", frame, note="Points.")]), 10)
    add_section(page, Section("A line", [Table("Few points", frame.head(4))]), 10)
    capped, whole = page.tables
    assert [row[0] for row in capped["rows"]] == list(range(10))
    assert len(whole["rows"]) == 4
    body = "".join(page.body)
    assert "first 10 of 30 rows" in body and "(4 rows)" in body
    assert "Points. The first 10 of 30 rows; summary/*.parquet and the store" in body


def test_a_scatter_trace_of_many_points_shows_every_kth_and_the_last():
    from solvers.kit.report_sections import TRACE_POINTS, scatter

    n = 3 * TRACE_POINTS + 7
    frame = pd.DataFrame({"n": range(n, 0, -1), "p": [1 / (k + 1) for k in range(n)]})
    small = frame.head(50).assign(line="b")
    fig = scatter(pd.concat([frame.assign(line="a"), small]), x="n", y="p", group="line")
    many, few = fig.data
    assert len(many.x) <= TRACE_POINTS + 1 and list(many.x[:2]) == [1, 5]
    assert many.x[-1] == n and many.y[-1] == 1.0  # the last point (largest n) is kept
    assert many.name == f"a (1 point in 4 of {n:,})"
    assert few.name == "b" and len(few.x) == 50


def test_a_heatmap_of_many_cells_shows_every_kth_row_and_column_and_the_last():
    from solvers.kit.report_sections import HEATMAP_CELLS, heatmap

    side = 251  # 63,001 cells: 1 value in 3 of each axis, 84 x 84 cells
    grid = pd.DataFrame(itertools.product(range(side), range(side)), columns=["r", "t"])
    grid["v"] = grid["r"] * 1000 + grid["t"]
    fig = heatmap(grid, x="t", y="r", z="v", title="grid")
    cells = fig.data[0]
    assert list(cells.x[:3]) == ["0", "3", "6"] and cells.x[-1] == "250"
    assert len(cells.x) * len(cells.y) <= HEATMAP_CELLS and len(cells.y) == 85
    assert cells.z[-1][-1] == 250_250 and cells.z[1][2] == 3006
    assert fig.layout.title.text == "grid (1 t and 1 r value in 3 of 251 x 251)"
    small = heatmap(grid[(grid["r"] < 100) & (grid["t"] < 100)], x="t", y="r", z="v")
    assert len(small.data[0].x) == 100 and len(small.data[0].y) == 100
