"""Rows for yes/no (partial) feedback tasks solved exactly or by Monte Carlo.

Exact method: ``optimal``, ``greedy`` and ``info`` run through :class:`yes_no.Evaluation`
(labelled states for the lowest/highest tie-breaks, canonical states for uniform); the playable
strategies through :func:`belief_players.exact_counts` (memo on state and estimates).  Monte
Carlo plays shuffled decks (simulation/shuffled_decks.py; greedy and info through their compiled
paths), seeded from the task id.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from solvers import entropy
from solvers.card_guessing.exact import belief_players, yes_no
from solvers.card_guessing.exact.entropy_weighted import (
    MAX_POSTERIOR,
    info_chooser,
    largest_posterior,
)
from solvers.params import FloatCheck, IntCheck, OrAbsent, described
from solvers.registry import Row, Task, TaskError, exact_columns
from solvers.task_ids import task_rng

INFO = "info"
PLAYABLE = ("count_tracker", "constant_decrement")
STRATEGIES = (INFO, *PLAYABLE)
ENTROPY_DEFAULTS = {"entropy_r": 1.0, "entropy_t": 1.0}


# ------------------------------------------------------------------------ parameter checks


check_gamma = FloatCheck(low=0.0)  # gamma: a finite number >= 0
check_n_games = OrAbsent(IntCheck(low=1))  # shuffled decks played, or absent (method=exact)


@described(
    "a preset name: " + ", ".join(f"`{name}`" for name in entropy.preset_names()) + "; or absent"
)
def check_preset(value: Any) -> str | None:
    """An entropy preset name (see solvers.entropy.preset) or None."""
    if value is None:
        return None
    entropy.preset(value)  # raises ValueError listing the valid names
    return str(value).strip().lower()


def check_partial_task(task: Task) -> None:
    """Whole-task checks of this module's parameters; resolves an ``entropy`` preset to (r, t)."""
    if task.get("entropy") is not None:
        point = dict(zip(("entropy_r", "entropy_t"), entropy.preset(task["entropy"]), strict=True))
        for key, value in point.items():
            if task[key] not in (ENTROPY_DEFAULTS[key], value):
                raise TaskError(
                    key, task[key], f"conflicts with entropy={task['entropy']!r} ({key}={value})"
                )
            task[key] = value
    monte_carlo = task["method"] == "monte_carlo"
    if monte_carlo and task.get("n_games") is None:
        raise TaskError("n_games", None, "required with method=monte_carlo")
    if not monte_carlo and task.get("n_games") is not None:
        raise TaskError("n_games", task["n_games"], "only applies to method=monte_carlo")
    if monte_carlo and task["strategy"] == INFO:
        check_info_posterior_size(task["deck"])
    if task["strategy"] in STRATEGIES and task["feedback"] != "partial":
        raise TaskError("strategy", task["strategy"], "only defined for feedback=partial")


def check_info_posterior_size(deck: list[int]) -> None:
    """Refuse info Monte Carlo on decks whose exact composition posteriors can outgrow memory.

    The info move needs the exact posterior over the composition of the cards still to come
    (never sampled decks).  On 13 ranks x 4 it already holds 5.4 million compositions after 16
    cards of a greedy game (and up to 10^8 mid-deck), so a move costs seconds; such decks are
    refused up front rather than failing mid-run.
    """
    bound = largest_posterior(deck)
    if bound > MAX_POSTERIOR:
        raise TaskError(
            "deck",
            deck,
            f"info needs exact composition posteriors, and on this deck one can hold up to "
            f"{bound:,} compositions (limit {MAX_POSTERIOR:,}); use greedy, or fewer types",
        )


# ---------------------------------------------------------------------------- the runs


def rows(task: Task) -> list[Row]:
    """One row for a partial-feedback task solved exactly (any strategy) or by Monte Carlo."""
    if task["method"] == "monte_carlo":
        return [monte_carlo_row(task)]
    deck = task["deck"]
    if task["strategy"] == INFO:
        pmf, n_states = yes_no.score_distribution(info_evaluation(task), deck)
    elif task["strategy"] in PLAYABLE:
        pmf, n_states = belief_players.exact_distribution(deck, player(task))
    else:  # optimal, greedy
        ev = yes_no.evaluation(task["strategy"], task["tie_break"] or "lowest")
        pmf, n_states = yes_no.score_distribution(ev, deck)
    return [exact_row(pmf, n_states)]


def exact_row(pmf: list[Fraction], n_states: int) -> Row:
    """Exact mean, variance and distribution of the score."""
    mean = sum(k * q for k, q in enumerate(pmf))
    var = sum(k * k * q for k, q in enumerate(pmf)) - mean * mean
    return {
        **exact_columns("expected_score", mean),
        **exact_columns("score_variance", var),
        "score_pmf": [float(q) for q in pmf],
        "n_states": n_states,
    }


def info_evaluation(task: Task) -> yes_no.Evaluation:
    """The Evaluation of a task's info policy."""
    tie_break = task["tie_break"] or "lowest"
    chooser = info_chooser(
        task["gamma"], task["entropy_r"], task["entropy_t"], task["log_base"], tie_break
    )
    return yes_no.Evaluation(chooser, canonical_states=tie_break == "uniform")


def player(task: Task) -> belief_players.Player:
    """The task's strategy as a Player (for exact playable runs and Python Monte Carlo)."""
    strategy, tie_break = task["strategy"], task["tie_break"] or "lowest"
    if strategy == "count_tracker":
        return belief_players.count_tracker(tie_break)
    if strategy == "constant_decrement":
        return belief_players.constant_decrement(task["decrement"], tie_break)
    if strategy == INFO:
        return belief_players.StatePlayer(info_chooser(*_info_args(task), tie_break))
    if strategy == "greedy":
        return belief_players.StatePlayer(yes_no.greedy_chooser(tie_break))
    if strategy == "optimal":
        return belief_players.EvaluationPlayer(yes_no.evaluation("optimal"))
    raise ValueError(f"no Monte Carlo player for strategy {strategy!r}")


def _info_args(task: Task) -> tuple[float, float, float, float]:
    return task["gamma"], task["entropy_r"], task["entropy_t"], task["log_base"]


def fast_info_fits(deck: list[int]) -> bool:
    """Whether the compiled info path (info_policy/) can encode ``deck``'s states."""
    from solvers.card_guessing.info_policy import moves

    try:
        moves.encoding(deck)
    except ValueError:
        return False
    return True


def monte_carlo_row(task: Task) -> Row:
    """Mean, standard error, variance and score frequencies over ``n_games`` shuffled decks."""
    from solvers.card_guessing.simulation import shuffled_decks  # imports Numba: only when needed

    rng = task_rng(task)
    deck, n_games = task["deck"], task["n_games"]
    if task["strategy"] == "greedy":
        scores, _ = shuffled_decks.greedy_scores(deck, n_games, rng, task["tie_break"] or "lowest")
    elif task["strategy"] == INFO and fast_info_fits(deck):
        tie_break = task["tie_break"] or "lowest"
        scores, _ = shuffled_decks.info_scores(deck, n_games, rng, *_info_args(task), tie_break)
    else:
        scores = shuffled_decks.play_games(deck, player(task), n_games, rng)
    return scores_row(scores, sum(deck))


def scores_row(scores: np.ndarray, n_cards: int) -> Row:
    """Mean, sample variance, standard error and score frequencies of Monte Carlo scores."""
    n = len(scores)
    var = float(scores.var(ddof=1)) if n > 1 else 0.0
    return {
        "expected_score": float(scores.mean()),
        "score_variance": var,
        "std_error": (var / n) ** 0.5,
        "score_pmf": (np.bincount(scores, minlength=n_cards + 1) / n).tolist(),
    }
