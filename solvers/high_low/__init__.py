"""Family ``high_low``: call each next card "higher" or "lower" than the one showing (Norvig 2020).

Decks: ``n`` distinct cards 1..n, or a real deck of ``ranks`` x ``suits`` cards where an equal
card is scored by ``ties`` (``lose``, ``win`` or ``push``).  Strategies: ``optimal`` (best chance
of a perfect game) and ``majority`` (call the side holding more unseen cards, "higher" on a
tie).  ``method``: ``exact`` (integers, then fractions), ``float`` (NumPy for distinct
cards; Numba layers for real decks, float_layers/: sized by the memory budget of where it
runs, layers on disk when short, checkpointed and resumed) or ``monte_carlo``
(``n_games`` seeded games, any deck, majority rule).  The expected
number of right calls is always the best possible when play goes on after a miss, computed
exactly by a hypergeometric sum (the call never changes what comes next).

A strategy of one's own (a class named by ``_target_``, protocol and evaluation in
:mod:`solvers.high_low.own`) runs ``exact`` (any deck whose states fit ``max_states``) or
``monte_carlo``; for it ``expected_correct`` is the strategy's own expected number of right
calls (play going on after a miss), not the best possible, and ``expected_correct_se`` its
standard error under Monte Carlo.
"""

from __future__ import annotations

import functools
import json
import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from solvers.high_low import deck, distinct, own
from solvers.high_low.float_layers import sizes
from solvers.kit.budget import Need
from solvers.own_strategy import is_own, own_params
from solvers.params import IntCheck, OrAbsent, Param, max_states_param, one_of
from solvers.registry import Family, Row, Task, TaskError, exact_columns, register
from solvers.task_ids import task_rng

if TYPE_CHECKING:  # the float solver's modules hold its kernels: imported where a task runs
    from solvers.high_low.float_layers import departures, solver

VERSION = "2"  # of its rows: what each version changed is in CHANGELOG.md
STRATEGIES = ("optimal", "majority")
METHODS = ("exact", "float", "monte_carlo")
DEFAULT_MAX_STATES = 1_000_000
MAX_FLOAT_N = 50_000
# CPU seconds per (counts, card showing) state of the float path on a real deck, both
# policies, checkpoints included: 702 s for the four solves of 14 x 4 (4.89e9 states each)
SECONDS_PER_STATE = 3.6e-8


def deck_states(task: Task) -> int:
    """States the exact solver needs for the task's deck (an estimate for real decks)."""
    if task["n"] is not None:
        return distinct.n_states(task["n"])
    estimate = deck.estimated_states(task["ranks"], task["suits"])
    return estimate if task["strategy"] == "optimal" else 2 * estimate  # majority: no mirror


def check_task(task: Task) -> None:
    """Refuse, before any work: no deck or two decks, tiny decks, and sizes beyond a method."""
    n, ranks, suits, method = task["n"], task["ranks"], task["suits"], task["method"]
    if n is None and ranks is None and suits is None:
        raise TaskError("n", None, "give n (distinct cards) or ranks and suits (a real deck)")
    if n is not None and (ranks is not None or suits is not None):
        key = "ranks" if ranks is not None else "suits"
        raise TaskError(key, task[key], "n (distinct cards) and ranks/suits exclude each other")
    if n is None:
        for key in ("ranks", "suits"):
            if task[key] is None:
                raise TaskError(key, None, "a real deck needs both ranks and suits")
        if ranks * suits < 2:
            raise TaskError("suits", suits, f"ranks x suits = {ranks * suits}: need 2 cards")
    if is_own(task):
        return own.check_task(task)  # a strategy of one's own (own.py)
    if method == "float" and n is None:
        check_float_deck(ranks, suits)
    elif method == "float" and n > MAX_FLOAT_N:
        raise TaskError("n", n, f"the float path is O(n^2): limit n <= {MAX_FLOAT_N:,}")
    if method == "monte_carlo" and n is None and suits > 1 and task["strategy"] == "optimal":
        raise TaskError(
            "strategy",
            "optimal",
            "monte_carlo plays a fixed rule; use strategy=majority (the optimal policy of a "
            "real deck needs method=exact or method=float)",
        )
    if method == "exact" and deck_states(task) > task["max_states"]:
        key = "n" if n is not None else "ranks"
        size = f"n={n}" if n is not None else f"ranks x suits = {ranks}x{suits}"
        raise TaskError(
            key,
            task[key],
            f"{size} is too large for the exact solver: about {deck_states(task):,} states, "
            f"limit max_states={task['max_states']:,}; use method=float (real decks up to "
            "13 x 4), method=monte_carlo (with n_games) or raise max_states",
        )


def check_float_deck(ranks: int, suits: int) -> None:
    """Refuse a real deck whose count vectors do not fit the float path's codes; its memory
    is weighed against the budget of where it runs (:func:`needs`)."""
    sizes.check_deck(ranks, suits)


def needs(task: Task, workers: int) -> Need | None:
    """The float path's need for a real deck: one process (Numba threads over a layer),
    whatever ``workers``; its smallest memory is with the layers on disk, and the solve
    keeps both in memory when the budget allows (:func:`float_layers.sizes.choose_storage`).
    None for the other methods (small) and for distinct cards (O(n) floats)."""
    if task["method"] != "float" or task["n"] is not None or is_own(task):
        return None
    size = sizes.sizing(task["ranks"], task["suits"])
    layers = sizes.layer_states(task["ranks"], task["suits"])
    return Need(
        memory=size.out_of_core,
        disk=size.disk,
        note=size.describe(),
        states=size.states,
        largest=max(layers),
        cpu_seconds=estimated_seconds(task),
    )


# CPU seconds of an exact task on one core: per task, and per state of a real deck (the
# fractions of its counts) or of n distinct cards (the high_low study's tasks: 4-9 us a state
# of a real deck, 0.3 us of n <= 200 distinct cards)
EXACT_SECONDS_PER_TASK = 5e-5
EXACT_SECONDS_PER_STATE = 6e-6
EXACT_SECONDS_PER_DISTINCT_STATE = 3.5e-7
# Monte Carlo (the majority rule): seconds per card dealt (13 x 4, 80,000 games: 0.27 us)
MONTE_CARLO_SECONDS_PER_CARD = 2.7e-7


def estimated_seconds(task: Task) -> float | None:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``): the exact
    path and the float path on a real deck from their states, Monte Carlo from the cards
    dealt; None for the float path of distinct cards and a strategy of one's own."""
    if is_own(task):
        return None
    if task["method"] == "exact":
        per = EXACT_SECONDS_PER_DISTINCT_STATE if task["n"] is not None else EXACT_SECONDS_PER_STATE
        return EXACT_SECONDS_PER_TASK + per * deck_states(task)
    if task["method"] == "monte_carlo":
        cards = task["n"] if task["n"] is not None else task["ranks"] * task["suits"]
        return EXACT_SECONDS_PER_TASK + MONTE_CARLO_SECONDS_PER_CARD * cards * task["n_games"]
    if task["method"] != "float" or task["n"] is not None:
        return None
    return SECONDS_PER_STATE * sizes.size_estimate(task["ranks"], task["suits"]).states


def distinct_expected(n: int) -> Fraction:
    """Exact best expected right calls for n distinct cards, by the closed per-step sums."""
    total = Fraction(0)
    for m in range(1, n):
        k = m // 2
        best_sum = 3 * k * k + 2 * k if m % 2 == 0 else (k + 1) * (3 * k + 2)
        total += Fraction(best_sum, m * (m + 1))
    return total


def run(task: Task) -> list[Row]:
    """One row: P(perfect game) (exact, float or estimated), expected right calls, states."""
    if is_own(task):
        return own.rows(task)
    n, method, strategy = task["n"], task["method"], task["strategy"]
    ranks, suits = (n, 1) if n is not None else (task["ranks"], task["suits"])
    expected = (
        distinct_expected(n) if n is not None else deck.expected_correct(ranks, suits, task["ties"])
    )
    row: Row = {"n_cards": ranks * suits, **exact_columns("expected_correct", expected)}
    if method == "exact":
        if n is not None:
            rule = None if strategy == "optimal" else distinct.majority_call
            p, states = distinct.p_perfect(n, rule), distinct.n_states(n)
        else:
            p, states = deck.p_perfect(ranks, suits, task["ties"], strategy)
        row.update(exact_columns("p_perfect", p), p_perfect_se=0.0, n_states=states)
        row["log10_p_perfect"] = log10_fraction(p)
    elif method == "float" and n is None:
        row.update(float_deck_columns(ranks, suits, task["ties"], strategy))
    elif method == "float":
        p_float, log10_p = distinct.p_perfect_float(n)
        row.update(p_perfect=p_float, log10_p_perfect=log10_p, p_perfect_se=0.0)
        row["n_states"] = distinct.n_states(n)
    else:
        ties = task["ties"] if n is None else "lose"
        est, se = deck.p_perfect_monte_carlo(ranks, suits, ties, task["n_games"], task_rng(task))
        row.update(p_perfect=est, p_perfect_se=se)
        row["log10_p_perfect"] = math.log10(est) if est > 0 else -math.inf
    return [row]


def float_deck_columns(ranks: int, suits: int, ties: str, strategy: str) -> Row:
    """Row columns of the float path for a real deck (optimal: with its departures)."""
    result = float_deck_solution(ranks, suits, ties != "lose", strategy)
    row: Row = {"p_perfect": result.p, "p_perfect_se": 0.0, "n_states": result.states}
    row["log10_p_perfect"] = math.log10(result.p) if result.p > 0 else -math.inf
    if result.departures is not None:
        row.update(departures=result.departures, departures_checked=result.checked)
        row["departures_uneven"] = result.uneven
        row["departures_top"] = json.dumps([departure_record(d) for d in result.top])
        row["departures_top_uneven"] = json.dumps([departure_record(d) for d in result.top_uneven])
    return row


@functools.lru_cache(maxsize=2)
def float_deck_solution(ranks: int, suits: int, equal_ok: bool, strategy: str) -> solver.Result:
    """float_layers.solver.solve, kept for the next task: ties win and push give the same perfect
    games."""
    ties = "win" if equal_ok else "lose"
    from solvers.high_low.float_layers import solver

    return solver.solve(ranks, suits, ties, strategy, departures=strategy == "optimal")


def departure_record(d: departures.Departure) -> dict[str, Any]:
    """A departure as plain JSON-able values."""
    below, same, above = d.state
    return {
        "below": list(below),
        "same": same,
        "above": list(above),
        "cards_left": d.cards_left,
        "occurrence": d.occurrence,
        "loss": d.loss,
        "call": d.call,
    }


def log10_fraction(q: Fraction) -> float:
    """log10 of a positive fraction, without overflow or underflow."""
    return math.log10(q.numerator) - math.log10(q.denominator)


# each result column in a line (the report's tooltips and column lists)
COLUMN_DOCS = {
    "n_cards": "cards in the deck",
    "p_perfect": "probability that the strategy calls every card right",
    "p_perfect_exact": "p_perfect as an exact fraction p/q (method=exact)",
    "p_perfect_se": "Monte Carlo standard error of p_perfect (0 when computed)",
    "log10_p_perfect": "log10 of p_perfect (readable where p_perfect underflows)",
    "expected_correct": "expected right calls when play goes on after a miss (the best possible; "
    "a strategy of one's own: its own)",
    "expected_correct_exact": "expected_correct as an exact fraction p/q",
    "expected_correct_se": "Monte Carlo standard error of expected_correct (a strategy of one's "
    "own, method=monte_carlo)",
    "n_states": "states the solver visited",
    "departures": "method=float, optimal: states where the best call differs from the majority "
    "rule's",
    "departures_checked": "states examined for a departure",
    "departures_uneven": "departures where the unseen cards above and below differ in number",
    "departures_top": "the likeliest departures as JSON records (state, cards left, "
    "probability of passing through it, relative loss of the majority call, best call)",
    "departures_top_uneven": "the likeliest uneven departures, as departures_top",
}

FAMILY = register(
    Family(
        name="high_low",
        version=VERSION,
        summary="solvers.high_low.summary:summarize",
        report="solvers.high_low.report:report",
        examples=({"n": 6, "strategy": "optimal"},),
        doc=__doc__,
        strategies=STRATEGIES,
        default_strategy="optimal",
        params=(
            Param("n", OrAbsent(IntCheck(2, 10**6)), None, "distinct cards 1..n", dtype="int64"),
            Param(
                "ranks", OrAbsent(IntCheck(1, 1000)), None, "ranks of a real deck", dtype="int64"
            ),
            Param("suits", OrAbsent(IntCheck(1, 1000)), None, "cards per rank", dtype="int64"),
            Param("ties", one_of(deck.TIES), "lose", "how an equal card scores (real decks)"),
            Param("method", one_of(METHODS), "exact", "exact, float or monte_carlo"),
            Param(
                "n_games",
                IntCheck(low=2),
                100_000,
                "games simulated by method=monte_carlo",
                dtype="int64",
            ),
            max_states_param(DEFAULT_MAX_STATES),
            *own_params(),
        ),
        own=own.PROTOCOL,
        run=run,
        check_task=check_task,
        needs=needs,
        estimate=estimated_seconds,
        columns={
            "n_cards": "int64",
            "p_perfect": "float64",
            "p_perfect_exact": "string",
            "p_perfect_se": "float64",
            "log10_p_perfect": "float64",
            "expected_correct": "float64",
            "expected_correct_exact": "string",
            "expected_correct_se": "float64",  # a strategy of one's own, method=monte_carlo
            "n_states": "int64",
            # method=float, real deck, optimal: where the best call beats the majority rule's
            "departures": "int64",
            "departures_checked": "int64",
            "departures_uneven": "int64",  # of which the cards above and below differ in number
            "departures_top": "string",
            "departures_top_uneven": "string",
        },
        column_docs=COLUMN_DOCS,
    )
)
