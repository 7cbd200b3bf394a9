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


SOLVER = Solver(
    run=run,
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
