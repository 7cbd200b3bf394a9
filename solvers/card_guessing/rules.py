"""What a task of ``card_guessing`` is: its parameters, strategies and whole-task checks
(the family's :class:`~solvers.family.Rules`).

Each kind of task checks what is its own in its module of tasks/; here are the deck, the tie
rule and the exact solver's size limit, and the check that hands a task to its kind's.
"""

from __future__ import annotations

from functools import lru_cache

from solvers import entropy
from solvers.card_guessing.tasks import (
    feedback_tasks,
    float_tasks,
    own_tasks,
    ranked_tasks,
    yes_no_tasks,
)
from solvers.family import Rules
from solvers.own_strategy import is_own, own_params
from solvers.params import (
    FloatCheck,
    IntCheck,
    IntListCheck,
    Param,
    described,
    max_states_param,
    one_of,
    sharma_mittal_params,
)
from solvers.registry import Task, TaskError

FEEDBACKS = ("partial", "complete", "none")
STRATEGIES = ("optimal", "greedy", *yes_no_tasks.STRATEGIES, "sequence", "persistent")
TIE_BREAKS = ("lowest", "highest", "uniform", "pair")  # pair: ranked_tasks.py
DEFAULT_MAX_STATES = 3_000_000
MAX_DECK_CARDS = 200
DECK_COUNTS = IntListCheck(low=1)


@described(f"{DECK_COUNTS.markdown}, at most {MAX_DECK_CARDS} cards in all")
def check_deck(value) -> list[int]:
    """A deck as a list of positive card counts per type."""
    deck = DECK_COUNTS(value)
    if sum(deck) > MAX_DECK_CARDS:
        raise ValueError(f"decks of more than {MAX_DECK_CARDS} cards are not supported")
    return deck


def estimated_states(deck: list[int]) -> int:
    """See :func:`_estimated_states` (cached: grids repeat decks across many tasks)."""
    return _estimated_states(tuple(deck))


def check_exact_size(deck: list[int], max_states: int, raise_it: str) -> None:
    """TaskError naming the deck when the exact solver would visit more than ``max_states``
    states (:func:`estimated_states`); ``raise_it`` says how the limit is raised."""
    estimate = estimated_states(deck)
    if estimate > max_states:
        raise TaskError(
            "deck",
            deck,
            f"too large for the exact solver: about {estimate:,} states, limit "
            f"max_states={max_states:,} ({raise_it})",
        )


@described(
    "one of "
    + ", ".join(f"`{t}`" for t in TIE_BREAKS if t != "pair")
    + f"; {' and '.join(ranked_tasks.PAIR_STRATEGIES)} also `pair` (ties to the smallest (c, p) "
    f"pair), with method {' or '.join(f'`{m}`' for m in ranked_tasks.PAIR_METHODS)}"
)
def check_tie_break(value):
    """A tie rule (whether ``pair`` fits the strategy and method is the whole-task check's)."""
    if value not in TIE_BREAKS:
        raise check_tie_break.refused()
    return value


@lru_cache(maxsize=4096)
def _estimated_states(deck: tuple[int, ...]) -> int:
    """An estimate of the canonical (c, p) states the exact solver visits for ``deck``.

    Counts the multisets of per-type states (y_i confirmed, p_i "no" heard), types with equal
    counts being interchangeable, whose cards passed sum(y) + sum(p) stay below N.  It ignores
    feasibility and the many n per state, so it is an estimate (tests keep it within a small
    factor of the states really visited).
    """
    n = sum(deck)
    total = [1] + [0] * (n - 1)  # total[w]: multisets over all groups with weight w
    for c in sorted(set(deck)):
        m = deck.count(c)
        weights = [c] + [y + p for y in range(c) for p in range(n - y)]  # exhausted, or (y, p)
        dp = [[0] * n for _ in range(m + 1)]  # dp[j][w]: multisets of size j, weight w
        dp[0][0] = 1
        for wt in weights:
            for j in range(1, m + 1):
                row, prev = dp[j], dp[j - 1]
                for w in range(wt, n):
                    row[w] += prev[w - wt]
        group = dp[m]
        total = [sum(total[i] * group[w - i] for i in range(w + 1)) for w in range(n)]
    return sum(total)


def check_task(task: Task) -> None:
    """Refuse, before any work, a deck too large for the exact solver."""
    yes_no_tasks.check_partial_task(task)
    if is_own(task):  # a strategy of one's own (tasks/own_tasks.py)
        own_tasks.check_task(task)
        if task["method"] == "exact" and task["feedback"] == "partial":
            check_exact_size(task["deck"], task["max_states"], "raise max_states to try anyway")
        return None
    if ranked_tasks.applies(task):
        return ranked_tasks.check_task(task)  # method ranked, persistent, pair ties
    if task["feedback"] != "partial" or task["strategy"] == "sequence":
        return feedback_tasks.check_task(task)  # complete / none feedback, fixed sequences
    if task["method"] == "float":
        return float_tasks.check_task(task)  # the float engines
    if task["method"] == "exact" or task["strategy"] == "optimal":
        check_exact_size(task["deck"], task["max_states"], "raise max_states to try anyway")


RULES = Rules(
    strategies=STRATEGIES,
    default_strategy="optimal",
    params=(
        Param(
            "deck",
            check_deck,
            doc="cards per type, e.g. [3, 3, 3]",
            list_column="deck_counts",
        ),
        Param("feedback", one_of(FEEDBACKS), "partial", "what the player is told"),
        Param(
            "sequence",
            feedback_tasks.check_sequence,
            "constant",
            "feedback none: type indices named in turn, or constant, cycle, blocks",
            ("sequence",),
        ),
        Param(
            "tie_break",
            check_tie_break,
            "lowest",
            "ties between equally good types",
            ("greedy", *yes_no_tasks.STRATEGIES),
        ),
        Param(
            "method",
            one_of(("exact", "monte_carlo", "float", "ranked")),
            "exact",
            "how the score is evaluated",
        ),
        Param(
            "n_games",
            yes_no_tasks.check_n_games,
            None,
            "Monte Carlo: shuffled decks played (method=monte_carlo only)",
            dtype="int64",
        ),
        Param(
            "gamma",
            yes_no_tasks.check_gamma,
            0.15,
            "info: entropy weight",
            ("info",),
            dtype="float64",
        ),
        Param(
            "entropy",
            yes_no_tasks.check_preset,
            None,
            "info: a named Sharma-Mittal member (sets entropy_r, entropy_t)",
            ("info",),
        ),
        *sharma_mittal_params(("info",)),
        Param(
            "log_base",
            described(entropy.LOG_BASE_WORDS)(entropy.as_log_base),
            2.0,
            "info: entropy unit",
            ("info",),
            dtype="float64",
        ),
        Param(
            "decrement",
            FloatCheck(low=0.0),
            0.55,
            "constant_decrement: estimate lost per 'no'",
            ("constant_decrement",),
            dtype="float64",
        ),
        Param(
            "workers",
            IntCheck(low=1),
            1,
            "method=float, optimal, or method=ranked: Dask workers sharing each layer (under "
            "cluster=sync, float's parts run in threads, ranked's chunks one after another; "
            "1: in this process; ranked goes out of core on its own when memory is short)",
            identity=False,
            dtype="int64",
        ),
        max_states_param(DEFAULT_MAX_STATES),
        *own_params(),
    ),
    own=own_tasks.PROTOCOL,
    check_task=check_task,
)
