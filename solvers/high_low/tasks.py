"""From a checked task of ``high_low`` to its row: the exact, float and Monte Carlo paths
(the family's :class:`~solvers.family.Solver`)."""

from __future__ import annotations

import functools
import json
import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from solvers.family import Solver
from solvers.high_low import deck, distinct, own
from solvers.own_strategy import is_own
from solvers.registry import Row, Task, exact_columns
from solvers.task_ids import task_rng

if TYPE_CHECKING:  # the float solver's modules hold its kernels: imported where a task runs
    from solvers.high_low.float_layers import departures, solver


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

SOLVER = Solver(
    run=run,
    column_docs=COLUMN_DOCS,
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
)
