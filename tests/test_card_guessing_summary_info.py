"""Summaries of the info studies (gamma sweep, entropy grid: summary/info.py) and of no_repeat,
on solved rows."""

from __future__ import annotations

import itertools
import math

import pandas as pd
from omegaconf import OmegaConf

from pipeline.running.plan import plan
from solvers import solve
from solvers.card_guessing.summary import info as info_summary
from solvers.kit.summary_parts import saved_check
from solvers.registry import family_summary as get_summary
from tests.helpers.repository import ROOT


def _rows(tasks):
    return pd.DataFrame([r for t in tasks for r in solve({"family": "card_guessing", **t})])


def test_gamma_sweep_section_finds_the_optimal_interval(tmp_path):
    """(3,3,3), Shannon bits: info equals the optimum on a gamma interval containing 0.15."""
    tasks = [{"deck": [3, 3, 3], "strategy": s} for s in ("optimal", "greedy")]
    tasks += [{"deck": [3, 3, 3], "strategy": "info", "gamma": g / 20} for g in range(0, 21)]
    text = get_summary("card_guessing")(_rows(tasks), tmp_path)
    assert "### Info strategy against gamma" in text
    table = pd.read_parquet(tmp_path / "card_guessing_gamma_intervals.parquet")
    (interval,) = table["intervals where info = optimal"]
    assert interval == "[0.15, 0.2]"
    assert (tmp_path / "card_guessing_gamma_sweep.png").stat().st_size > 0
    check, facts = saved_check(tmp_path / "card_guessing_gamma_sweep.png")
    assert check == "ok" and facts["3,3,3"]["optimal_intervals"] == [[0.15, 0.2]]
    assert text.count("info (") == 1  # the per-deck table keeps only the best info row
    assert info_summary.compact_note("3,3,3") in text  # and says so, and where the rest is


def test_a_deck_with_few_info_rows_shows_them_all_without_a_note(tmp_path):
    tasks = [{"deck": [2, 2], "strategy": "info", "gamma": g / 10} for g in range(3)]
    text = get_summary("card_guessing")(_rows(tasks), tmp_path)
    assert text.count("info (") == 3
    assert info_summary.compact_note("2,2") not in text


def test_entropy_grid_section_writes_ratios_and_heatmap(tmp_path):
    tasks = [{"deck": [2, 2, 1], "strategy": "optimal"}, {"deck": [2, 2, 1], "strategy": "greedy"}]
    for r, t, g in itertools.product([0.0, 1.0, math.inf], [0.0, 1.0, 2.0], [0.1, 1.0]):
        tasks.append(
            {"deck": [2, 2, 1], "strategy": "info", "entropy_r": r, "entropy_t": t, "gamma": g}
        )
    text = get_summary("card_guessing")(_rows(tasks), tmp_path)
    assert "### Which entropies make info optimal" in text and "shannon" in text
    ratios = pd.read_parquet(tmp_path / "card_guessing_entropy_grid.parquet")
    assert len(ratios) == 9 and (ratios["best_ratio"] <= 1).all()
    assert (tmp_path / "card_guessing_entropy_grid.png").stat().st_size > 0
    assert saved_check(tmp_path / "card_guessing_entropy_grid.png")[0] == "ok"


def test_optimal_intervals_groups_consecutive_grid_points():
    got = info_summary.optimal_intervals([0, 0.1, 0.2, 0.3, 0.4], [False, True, True, False, True])
    assert got == [(0.1, 0.2), (0.4, 0.4)]


def test_no_repeat_summary_reports_violations_and_figures(tmp_path):
    rows = pd.DataFrame([solve({"family": "no_repeat", "N": n})[0] for n in (8, 20, 30)])
    text = get_summary("no_repeat")(rows, tmp_path)
    assert "**0 violations**" in text and "Smallest gap" in text
    assert (tmp_path / "no_repeat_figure_1a.png").stat().st_size > 0
    assert (tmp_path / "no_repeat_figure_1b.png").stat().st_size > 0
    for name in ("no_repeat_figure_1a.png", "no_repeat_figure_1b.png"):  # at the page's width
        assert saved_check(tmp_path / name)[0] == "ok", name


def test_study_configs_plan_without_errors():
    """The three studies validate as a whole (sizes: 309, 3606 and 297 tasks)."""
    sizes = {}
    for name in ("gamma_sweep", "entropy_grid", "no_repeat_conjecture"):
        cfg = OmegaConf.to_container(OmegaConf.load(ROOT / "conf" / "study" / f"{name}.yaml"))
        sizes[name] = len(plan(cfg))
    assert sizes == {"gamma_sweep": 309, "entropy_grid": 3606, "no_repeat_conjecture": 297}
