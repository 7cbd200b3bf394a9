"""The mastermind summary on rows built with solvers.solve (tiny games, a 3 x 3 (r, t) grid)."""

from __future__ import annotations

import itertools
import math

import pandas as pd

from solvers import solve
from solvers.kit.summary_parts import saved_check
from solvers.registry import family_summary as get_summary


def test_summary_writes_tables_and_a_heatmap_per_game(tmp_path) -> None:
    rows = []
    for pegs, jar in [(2, None), (2, [3, 2, 1])]:
        game = {"family": "mastermind", "pegs": pegs, "colours": 3, "jar": jar}
        for strategy in ("minimax", "most_parts", "expected_size", "first_feasible"):
            rows += solve({**game, "strategy": strategy})
        for r, t in itertools.product([0.0, 1.0, math.inf], [0.0, 1.0, 2.0]):
            rows += solve({**game, "strategy": "sharma_mittal", "entropy_r": r, "entropy_t": t})
    frame = pd.DataFrame(rows)
    text = get_summary("mastermind")(frame, tmp_path)
    assert "### 2 pegs, 3 colours, uniform jar" in text
    assert "### 2 pegs, 3 colours, jar 3,2,1" in text
    assert "sharma_mittal shannon (1, 1)" in text and "minimax" in text
    assert (tmp_path / "mastermind_2x3_uniform.png").stat().st_size > 0
    assert (tmp_path / "mastermind_2x3_3-2-1.png").stat().st_size > 0
    table = pd.read_parquet(tmp_path / "mastermind_results.parquet")
    assert len(table) == len(rows)


def test_summary_of_no_rows(tmp_path) -> None:
    assert "No successful" in get_summary("mastermind")(pd.DataFrame(), tmp_path)


def test_a_dense_rt_sweep_is_summarised_by_its_best_points_and_a_grid_file(tmp_path) -> None:
    """A 20 x 20 (r, t) sweep (rows copied from one real solve, each point given its own
    value): the Markdown shows the best points, not a 20-column table; the whole grid is in
    Parquet, cell by cell; the heatmap is drawn without writing 400 numbers in it."""
    game = {"family": "mastermind", "pegs": 2, "colours": 3, "jar": None}
    (base,) = solve({**game, "strategy": "sharma_mittal", "entropy_r": 1.0, "entropy_t": 1.0})
    orders, degrees = [0.1 * i for i in range(20)], [0.2 * j for j in range(20)]
    rows = [
        {**base, "entropy_r": r, "entropy_t": t, "expected_guesses": 3 + (r - 0.7) ** 2 + t}
        for r, t in itertools.product(orders, degrees)
    ]
    rows += solve({**game, "strategy": "minimax"})
    text = get_summary("mastermind")(pd.DataFrame(rows), tmp_path)
    assert "r \\ t" not in text and "rows r, columns t:" not in text
    assert "The grid (20 orders r x 20 degrees t) is in `summary/mastermind_2x3_uniform" in text
    grid = pd.read_parquet(tmp_path / "mastermind_2x3_uniform_grid.parquet")
    assert grid.shape == (20, 21) and grid.columns[0] == "r \\ t"
    assert grid.loc[3, "t=0.2"] == 3 + (orders[3] - 0.7) ** 2 + 0.2
    best_points = text.split("its best 12 points:")[1].split("![")[0]
    first = best_points.strip().splitlines()[2]  # the header, the rule, the best point
    assert [cell.strip() for cell in first.split("|")[1:4]] == ["0.7", "0", "3"]
    assert (tmp_path / "mastermind_2x3_uniform.png").stat().st_size > 0
    assert saved_check(tmp_path / "mastermind_2x3_uniform.png")[0] == "ok"


def test_the_study_s_8_by_8_heatmap_reads_at_page_width(tmp_path) -> None:
    """The mastermind study's grid (8 orders x 8 degrees) with every reference strategy in
    the title reads at page width: the check saved in the PNG (text size on the page, text
    inside the figure) names no problem."""
    game = {"family": "mastermind", "pegs": 2, "colours": 3, "jar": [3, 2, 1]}
    (base,) = solve({**game, "strategy": "sharma_mittal", "entropy_r": 1.0, "entropy_t": 1.0})
    orders, degrees = [0, 0.5, 1, 2, 3, 5, 10, math.inf], [0, 0.5, 1, 1.5, 2, 3, 5, 10]
    rows = [
        {**base, "entropy_r": r, "entropy_t": t, "expected_guesses": 3 + 0.01 * i + 0.001 * j}
        for (i, r), (j, t) in itertools.product(enumerate(orders), enumerate(degrees))
    ]
    for strategy in ("minimax", "most_parts", "expected_size", "first_feasible", "optimal"):
        rows += solve({**game, "strategy": strategy})
    get_summary("mastermind")(pd.DataFrame(rows), tmp_path)
    assert saved_check(tmp_path / "mastermind_2x3_3-2-1.png")[0] == "ok"


def test_a_small_grid_is_a_markdown_table(tmp_path) -> None:
    game = {"family": "mastermind", "pegs": 2, "colours": 3, "jar": None}
    rows = [
        row
        for r, t in itertools.product([0.0, 1.0], [1.0, 2.0])
        for row in solve({**game, "strategy": "sharma_mittal", "entropy_r": r, "entropy_t": t})
    ]
    text = get_summary("mastermind")(pd.DataFrame(rows), tmp_path)
    assert "rows r, columns t:" in text and "r \\ t" in text
    assert not (tmp_path / "mastermind_2x3_uniform_grid.parquet").exists()


def test_the_reference_line_names_the_limited_optimum_apart_from_the_optimum(tmp_path) -> None:
    """The report's text line and the heatmap's title list each reference strategy by its
    label: "optimal" and "optimal (at most 3 guesses)", not "optimal" twice."""
    from solvers.mastermind.report import report
    from solvers.mastermind.summary import references, result_table

    game = {"family": "mastermind", "pegs": 2, "colours": 3, "jar": None}
    rows = solve({**game, "strategy": "minimax"})
    rows += solve({**game, "strategy": "optimal"})
    rows += solve({**game, "strategy": "optimal", "guess_limit": 3})
    for r, t in itertools.product([1.0, 2.0], [1.0, 2.0]):
        rows += solve({**game, "strategy": "sharma_mittal", "entropy_r": r, "entropy_t": t})
    frame = pd.DataFrame(rows)
    (section,) = report(frame)[:1]
    (line,) = [item for item in section.items if isinstance(item, str)]
    refs = line.partition("References: ")[2]
    assert "optimal (at most 3 guesses) " in refs, refs
    assert refs.count("optimal") == 2, refs
    table = result_table(frame)
    title = references(table[table["strategy"] != "sharma_mittal"], ".3f")
    assert "optimal (at most 3 guesses) " in title and "minimax " in title, title


def test_the_report_says_why_a_non_uniform_jar_has_no_total_guesses() -> None:
    """total_guesses is stored for uniform jars only: for a non-uniform jar the report's
    tables leave the column out and say why."""
    from solvers.kit.report_sections import Table
    from solvers.mastermind.report import report

    game = {"family": "mastermind", "pegs": 2, "colours": 3}
    rows = [
        row
        for jar in (None, "3,1,1")
        for strategy in ("minimax", "optimal")
        for row in solve({**game, "jar": jar, "strategy": strategy})
    ]
    tables = {
        item.title: item
        for section in report(pd.DataFrame(rows))
        for item in section.items
        if isinstance(item, Table)
    }
    uneven = tables["Strategies: 2 pegs, 3 colours, jar 3,1,1"]
    assert "total_guesses" not in uneven.frame
    assert "uniform jars only" in uneven.note and "not equally likely" in uneven.note
    uniform = tables["Strategies: 2 pegs, 3 colours, uniform jar"]
    assert uniform.frame["total_guesses"].notna().all() and uniform.note == ""
    everything = tables["All strategies of all games"]
    assert everything.frame["total_guesses"].notna().any()
    assert everything.note == uneven.note
