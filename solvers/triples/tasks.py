"""From a checked task of ``triples`` to its rows, by analysis (the family's
:class:`~solvers.family.Solver`)."""

from __future__ import annotations

from fractions import Fraction

from solvers.family import Solver
from solvers.registry import Row, Task, exact_columns
from solvers.task_ids import task_rng
from solvers.triples import chain, simulate, win


def _deck(task: Task) -> tuple[int, int, int]:
    return task["ranks"], task["suits"], task["k"]


def _win_probability(task: Task) -> list[Row]:
    p = win.win_probabilities(*_deck(task))
    _, visited = win.quartet_moment_law(*_deck(task))
    return [{**exact_columns("p_win", p[task["n"]]), "n_states": visited}]


def _monte_carlo(task: Task) -> list[Row]:
    ranks, suits, k = _deck(task)
    wins = simulate.count_wins(task_rng(task), ranks, suits, k, task["n"], task["games"])
    estimate, se = simulate.estimate_win(wins, task["games"])
    exact = win.win_probability(ranks, suits, k, task["n"])
    return [
        {
            **exact_columns("p_win", exact),
            "wins": wins,
            "p_win_mc": estimate,
            "p_win_se": se,
            "z_score": simulate.z_score(estimate, float(exact), task["games"]),
        }
    ]


def _chain_probs(task: Task) -> list[Fraction]:
    """p[0..ranks+1] for the task's deck (index = level)."""
    return win.win_probabilities(*_deck(task))


def _hitting_times(task: Task) -> list[Row]:
    times = chain.hitting_times_from(_chain_probs(task), task["start"])
    return [
        {"target": level, **exact_columns("expected_rounds", t)}
        for level, t in enumerate(times, start=1)
    ]


def _distribution(task: Task) -> list[Row]:
    dists = chain.distributions(_chain_probs(task), task["start"], task["rounds"])
    return [
        {"after_rounds": j, "level": level, **exact_columns("prob", q)}
        for j, dist in enumerate(dists)
        for level, q in enumerate(dist, start=1)
    ]


def _equilibrium(task: Task) -> list[Row]:
    p = _chain_probs(task)
    pi = chain.stationary(p)
    cross = chain.crossing_level(p)
    return [
        {
            "crossing_level": cross,
            "mode_level": chain.mode_level(pi),
            **exact_columns("mean_level", chain.mean_level(pi)),
            **exact_columns("region_mass", sum(pi[cross - 1 : cross + 1], Fraction(0))),
            "stationary": [float(q) for q in pi],
            "p_win_levels": [float(q) for q in p[1:]],
        }
    ]


RUNNERS = {
    "win_probability": _win_probability,
    "monte_carlo": _monte_carlo,
    "hitting_times": _hitting_times,
    "distribution": _distribution,
    "equilibrium": _equilibrium,
}


def run(task: Task) -> list[Row]:
    """The rows of one task, by analysis (see the module docstring)."""
    return RUNNERS[task["analysis"]](task)


# each result column in a line (the report's tooltips and column lists)
COLUMN_DOCS = {
    "p_win": "A's probability of winning at level n (win_probability, monte_carlo)",
    "p_win_exact": "p_win as an exact fraction p/q",
    "n_states": "tally states the exact solver visited",
    "wins": "monte_carlo: games A won",
    "p_win_mc": "monte_carlo: A's win rate over the games played",
    "p_win_se": "monte_carlo: standard error of p_win_mc",
    "z_score": "monte_carlo: (p_win_mc - p_win) in standard errors of the exact binomial",
    "target": "hitting_times: the level to reach",
    "expected_rounds": "hitting_times: expected rounds to first reach target from start",
    "expected_rounds_exact": "expected_rounds as an exact fraction p/q",
    "after_rounds": "distribution: rounds played (0 = the start)",
    "level": "distribution: the level",
    "prob": "distribution: probability of being at level after after_rounds rounds",
    "prob_exact": "prob as an exact fraction p/q",
    "crossing_level": "equilibrium: the highest level where A wins with probability 1/2 or more",
    "mode_level": "equilibrium: the likeliest level of the stationary law",
    "mean_level": "equilibrium: the mean level of the stationary law",
    "mean_level_exact": "mean_level as an exact fraction p/q",
    "region_mass": "equilibrium: stationary probability of the crossing level and the one above it",
    "region_mass_exact": "region_mass as an exact fraction p/q",
    "stationary": "equilibrium: the stationary probability of each level, from 1 up",
    "p_win_levels": "equilibrium: A's win probability at each level, from 1 up",
}

SOLVER = Solver(
    run=run,
    column_docs=COLUMN_DOCS,
    columns={
        "p_win": "float64",
        "p_win_exact": "string",
        "n_states": "int64",
        "wins": "int64",
        "p_win_mc": "float64",
        "p_win_se": "float64",
        "z_score": "float64",
        "target": "int64",
        "expected_rounds": "float64",
        "expected_rounds_exact": "string",
        "after_rounds": "int64",
        "level": "int64",
        "prob": "float64",
        "prob_exact": "string",
        "crossing_level": "int64",
        "mode_level": "int64",
        "mean_level": "float64",
        "mean_level_exact": "string",
        "region_mass": "float64",
        "region_mass_exact": "string",
        "stationary": "list<float64>",
        "p_win_levels": "list<float64>",
    },
)
