"""What a task of ``high_low`` is: its parameters, strategies and whole-task checks (the
family's :class:`~solvers.family.Rules`)."""

from __future__ import annotations

from solvers.family import Rules
from solvers.high_low import deck, distinct, own
from solvers.high_low.float_layers import sizes
from solvers.own_strategy import is_own, own_params
from solvers.params import IntCheck, OrAbsent, Param, max_states_param, one_of
from solvers.registry import Task, TaskError

STRATEGIES = ("optimal", "majority")
METHODS = ("exact", "float", "monte_carlo")
DEFAULT_MAX_STATES = 1_000_000
MAX_FLOAT_N = 50_000


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
    is weighed against the budget of where it runs (:func:`~solvers.high_low.scheduling.needs`)."""
    sizes.check_deck(ranks, suits)


RULES = Rules(
    strategies=STRATEGIES,
    default_strategy="optimal",
    params=(
        Param("n", OrAbsent(IntCheck(2, 10**6)), None, "distinct cards 1..n", dtype="int64"),
        Param("ranks", OrAbsent(IntCheck(1, 1000)), None, "ranks of a real deck", dtype="int64"),
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
    check_task=check_task,
)
