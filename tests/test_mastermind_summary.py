"""The mastermind summary on rows built with solvers.solve (tiny games, a 3 x 3 (r, t) grid)."""

from __future__ import annotations

import itertools
import math

import pandas as pd

from solvers import solve
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
