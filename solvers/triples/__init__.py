"""Family ``triples``: n different k-of-a-kinds before any rank reaches k+1 (Holmes 2016).

Cards of a ``ranks`` x ``suits`` deck are drawn one at a time from a uniform shuffle.  Player A
wins at level ``n`` if the pile holds ``n`` different k-of-a-kinds before any rank reaches
k + 1 cards; otherwise B wins.  In the adaptive game the level goes up by one after A wins and
down by one after A loses; levels run from 1 (A always wins) to ranks + 1 (A never wins).

Parameters: ``ranks``, ``suits``, ``k`` (deck and kind size, ``suits >= k + 1``), ``analysis``
and, by analysis, ``n`` / ``start`` / ``rounds`` / ``games``; execution knob ``max_states``.

Analyses (what one task returns):

- ``win_probability`` (``n``): one row, exact ``p_win`` at level ``n`` and the tallies visited.
- ``monte_carlo`` (``n``, ``games``): one row, the win rate over ``games`` shuffled decks
  (seeded from the task id), its standard error and its z-score against the exact value.
- ``hitting_times`` (``start``): one row per target level, the exact expected rounds to first
  reach it from ``start``.
- ``distribution`` (``start``, ``rounds``): one row per (round j = 0..rounds, level), the exact
  probability of being at that level after j rounds.
- ``equilibrium``: one row, the stationary law of the chain, its mode and mean, and the
  level where A's win probability crosses 1/2.
"""

from __future__ import annotations

from fractions import Fraction

from solvers.params import IntCheck, OrAbsent, Param, max_states_param, one_of
from solvers.registry import Family, Row, Task, TaskError, exact_columns, register
from solvers.task_ids import task_rng
from solvers.triples import chain, simulate, win

VERSION = "1"  # of its rows: what each version changed is in CHANGELOG.md
ANALYSES = ("win_probability", "monte_carlo", "hitting_times", "distribution", "equilibrium")
USES: dict[str, tuple[str, ...]] = {  # analysis -> the optional parameters it requires
    "win_probability": ("n",),
    "monte_carlo": ("n", "games"),
    "hitting_times": ("start",),
    "distribution": ("start", "rounds"),
    "equilibrium": (),
}
OPTIONAL = ("n", "start", "rounds", "games")
MAX_ROUNDS = 200
MAX_GAMES = 10_000_000
DEFAULT_MAX_STATES = 1_000_000


_positive = IntCheck(low=1)


def _optional(low: int, high: int | None = None) -> OrAbsent:
    return OrAbsent(IntCheck(low, high))


def check_task(task: Task) -> None:
    """Refuse impossible decks, levels out of range and parameters the analysis does not use."""
    ranks, suits, k = task["ranks"], task["suits"], task["k"]
    if k + 1 > suits:
        raise TaskError(
            "k",
            k,
            f"k + 1 = {k + 1} > suits = {suits}: no rank can reach k + 1 of a kind (no quartet "
            "is possible), so B could never win; use k <= suits - 1",
        )
    states = win.tally_state_count(ranks, k)
    if states > task["max_states"]:
        raise TaskError(
            "ranks",
            ranks,
            f"too large for the exact solver: {states:,} tally states for k={k}, limit "
            f"max_states={task['max_states']:,} (raise max_states to try anyway)",
        )
    used = USES[task["analysis"]]
    for name in OPTIONAL:
        if name in used and task[name] is None:
            raise TaskError(name, None, f"required by analysis {task['analysis']!r}")
        if name not in used and task[name] is not None:
            users = [a for a, names in USES.items() if name in names]
            raise TaskError(
                name,
                task[name],
                f"does not apply to analysis {task['analysis']!r} (only to {', '.join(users)})",
            )
    top = ranks + 1
    for name in ("n", "start"):
        if task[name] is not None and not 1 <= task[name] <= top:
            raise TaskError(name, task[name], f"levels run from 1 to ranks + 1 = {top}")


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


# CPU seconds of a task on one core (stage=plan), measured on the shipped triples studies
# (benchmarks/bench_plan_estimate.py): the exact analyses take under a millisecond on the
# standard deck (560 tally states), Monte Carlo about 20 ns a card dealt
SECONDS_PER_TASK = 1e-3
SECONDS_PER_CARD_DEALT = 2e-8


def estimated_seconds(task: Task) -> float:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``)."""
    if task["analysis"] == "monte_carlo":
        cards = task["ranks"] * task["suits"]
        return SECONDS_PER_TASK + SECONDS_PER_CARD_DEALT * cards * task["games"]
    return SECONDS_PER_TASK


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

FAMILY = register(
    Family(
        name="triples",
        version=VERSION,
        summary="solvers.triples.summary:summarize",
        examples=({"ranks": 4, "suits": 4, "k": 2, "n": 2},),
        doc=__doc__,
        params=(
            Param("ranks", _positive, 13, "number of ranks (face values)", dtype="int64"),
            Param("suits", _positive, 4, "cards per rank", dtype="int64"),
            Param("k", _positive, 3, "size of a kind (3: triples; B wins on k+1)", dtype="int64"),
            Param("analysis", one_of(ANALYSES), "win_probability", "what the task computes"),
            Param("n", _optional(0), None, "level: kinds A needs", dtype="int64"),
            Param("start", _optional(0), None, "starting level of the chain", dtype="int64"),
            Param("rounds", _optional(0, MAX_ROUNDS), None, "rounds of the chain", dtype="int64"),
            Param("games", _optional(1, MAX_GAMES), None, "Monte Carlo games", dtype="int64"),
            max_states_param(DEFAULT_MAX_STATES, "refuse decks with more tally states than this"),
        ),
        run=run,
        check_task=check_task,
        estimate=estimated_seconds,
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
        column_docs=COLUMN_DOCS,
    )
)
