"""Higher/lower strategies of one's own: the protocol, the checks, the exact and Monte Carlo
rows (see :mod:`solvers.own_strategy` for how a study names one).

The protocol: a class whose constructor's keyword arguments are its parameters, with

- ``start(ranks, suits) -> belief``: the deck, ``ranks`` ranks of ``suits`` cards each
  (``n`` distinct cards: ``ranks=n, suits=1``); the belief is any hashable value the strategy
  keeps (a tuple, a number, a frozenset...);
- ``update(belief, card) -> belief``: called for every card turned up, the first one and the
  last one included; ``card`` is its rank, counting from 1 (1..n for distinct cards);
- ``call(belief, card) -> "higher" | "lower"``: the call on the next card, ``card`` being the
  rank showing (the belief has already been updated with it).

One game, exactly in this order::

    belief = start(ranks, suits)
    belief = update(belief, first)            # the first card is turned up
    for each of the other ranks * suits - 1 cards:
        said = call(belief, showing)          # "higher" or "lower"
        next card turned up: scored against said
        belief = update(belief, next)         # it is the card showing now

A next card of a higher rank makes "higher" right, of a lower rank "lower"; a card of the
rank showing is scored by ``ties`` as the family does: ``lose`` a miss, ``win`` a right call,
``push`` neither (not a miss, not a right call).  Play goes on after a miss.  The strategy
must be a function of what it was told: the same belief and card give the same call (each
call and update is asked twice, :func:`solvers.own_strategy.twice`; answers that differ are
an error row).

Exact (``method: exact``): what the strategy can know depends on the game only through (the
cards left of each rank, the rank showing), so its value is a recursion on (those counts, the
rank showing, belief), memoised on the triple, counting the orders of the labelled cards
exactly: ``p_perfect_exact`` is the share of orders on which no call is a miss and
``expected_correct_exact`` the expected number of right calls, both rationals ``p/q``.
Ranks are told apart (the counts are not put in a canonical order: a strategy may read
them).  Before any work a deck is refused when its (counts, rank showing) states alone,
``ranks * suits * (suits + 1) ** (ranks - 1)``, pass ``max_states`` (distinct cards: n = 16
is the largest under the default 1,000,000); while it runs, the triples met are counted and
the task stops with an error row when they pass ``max_states`` (a belief holding more than
the counts multiplies them).

Monte Carlo (``method: monte_carlo``), seeded from the task's id
(:func:`solvers.task_ids.task_rng`), plays ``n_games`` games of each of two kinds:

- shuffled decks played in full: ``expected_correct`` is the mean number of right calls and
  ``expected_correct_se`` its standard error (the sample standard deviation over the square
  root of ``n_games``);
- games whose next card is drawn only among the cards that make the strategy's call right
  (sequential importance sampling, as the built-in ``majority`` rule's Monte Carlo): each
  game weighs the product of the chances of that, ``m_right / m`` per call (zero once no
  card can make it right, the game then played on with any card); ``p_perfect`` is the
  mean weight, an unbiased estimate of P(perfect game) that stays precise where perfect
  games are far too rare to be met by plain play (52 cards: about 3e-8), with
  ``p_perfect_se``.

The user's answers are memoised on (belief, card) up to MEMO entries each (a strategy is a
function of what it was told; the memo bounds the memory of long games).

Every move is checked: a call other than the two words, an exception in the user's code or
a belief that is not hashable is an error row naming the strategy, the move (the method,
its arguments, the card's position in the deck) and the value.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from solvers.own_strategy import (
    Held,
    Protocol,
    StrategyError,
    asked,
    build,
    call,
    held,
    shown,
    strategy_words,
    twice,
)
from solvers.registry import Row, Task, TaskError, exact_columns
from solvers.task_ids import task_rng

PROTOCOL = Protocol(
    {
        "start": "start(ranks, suits) -> belief: the deck (n distinct cards: ranks=n, suits=1)",
        "update": "update(belief, card) -> belief: every card turned up, its rank from 1",
        "call": 'call(belief, card) -> "higher" or "lower": the call on the next card, card '
        "being the rank showing",
    }
)
METHODS = ("exact", "monte_carlo")
CALLS = ("higher", "lower")


def deck_of(task: Task) -> tuple[int, int]:
    """(ranks, suits) of a task: distinct n is n ranks of one card."""
    return (task["n"], 1) if task["n"] is not None else (task["ranks"], task["suits"])


def labelled_states(ranks: int, suits: int) -> int:
    """The (counts left per rank, rank showing) pairs a game can reach, at most: what the
    exact recursion visits with a belief that holds no more than the counts."""
    return ranks * suits * (suits + 1) ** (ranks - 1)


def check_task(task: Task) -> None:
    """Refuse, before any work, an own strategy's task the game cannot evaluate as asked."""
    method = task["method"]
    if method not in METHODS:
        raise TaskError("method", method, "a strategy of one's own runs exact or monte_carlo")
    if method != "exact":
        return
    ranks, suits = deck_of(task)
    states = labelled_states(ranks, suits)
    if states > task["max_states"]:
        key = "n" if task["n"] is not None else "ranks"
        raise TaskError(
            key,
            task[key],
            f"too large for the exact evaluation of a strategy of one's own: about {states:,} "
            f"(counts, card showing) states, limit max_states={task['max_states']:,} (raise "
            "max_states to try anyway, or method=monte_carlo)",
        )


class Moves:
    """The user's strategy behind checks: each call named in errors with its move (the card's
    position in the deck, the belief), each answer checked, the triples counted."""

    def __init__(self, task: Task):
        self.who = strategy_words(task)
        self.strategy = build(task)
        self.ranks, self.suits = deck_of(task)
        self.cards = self.ranks * self.suits
        self.limit = task["max_states"] if task["method"] == "exact" else None
        self.states = 0

    def start(self) -> Held:
        move = f"start({self.ranks}, {self.suits})"
        belief = call(self.who, move, lambda: self.strategy.start(self.ranks, self.suits))
        return held(self.who, move, belief)

    def update(self, belief: Held, card: int, position: int) -> Held:
        """The new belief, asked twice (:func:`solvers.own_strategy.twice`)."""
        move = f"update(belief={shown(belief)}, card={card}) at card {position} of {self.cards}"

        def ask() -> Held:
            out = asked(self.who, move, lambda: self.strategy.update(belief.value, card), belief)
            return held(self.who, move, out)

        return twice(self.who, move, ask)

    def call(self, belief: Held, card: int, position: int) -> bool:
        """True for "higher"; ``position``: the card called on (2-based: the first is shown);
        asked twice (:func:`solvers.own_strategy.twice`)."""
        move = f"call(belief={shown(belief)}, card={card}) at card {position} of {self.cards}"
        ask = lambda: asked(self.who, move, lambda: self.strategy.call(belief.value, card), belief)  # noqa: E731
        said = twice(self.who, move, ask)
        if not isinstance(said, str) or said not in CALLS:
            raise StrategyError(
                f"{self.who}: {move} returned {shown(said)}: not 'higher' or 'lower'"
            )
        return said == "higher"

    def count_state(self, position: int) -> None:
        self.states += 1
        if self.limit is not None and self.states > self.limit:
            raise StrategyError(
                f"{self.who}: the exact evaluation passed max_states={self.limit:,} (counts, card "
                f"showing, belief) triples at card {position} of {self.cards}: a belief holding "
                "more than the cards seen multiplies them; raise max_states, or use "
                "method=monte_carlo"
            )


def outcome(card: int, showing: int, higher: bool, ties: str) -> tuple[bool, bool]:
    """(right, miss) of a call on ``card`` with ``showing`` up."""
    if card == showing:
        return ties == "win", ties == "lose"
    right = (card > showing) == higher
    return right, not right


# ------------------------------------------------------------------------------ exact


def exact_counts(moves: Moves, ties: str) -> tuple[int, int, int]:
    """(orders with no miss, right calls summed over orders, triples) over the (ranks x
    suits)! orders of the labelled cards."""
    memo: dict[tuple[tuple[int, ...], int, Any], tuple[int, int]] = {}
    cards = moves.cards
    factorial = [math.factorial(k) for k in range(cards + 1)]

    def count(left: tuple[int, ...], showing: int, belief: Any) -> tuple[int, int]:
        key = (left, showing, belief)
        hit = memo.get(key)
        if hit is not None:
            return hit
        m = sum(left)
        if m == 0:
            return 1, 0
        position = cards - m + 1
        moves.count_state(position)
        higher = moves.call(belief, showing, position)
        perfect = right_sum = 0
        for r, c in enumerate(left):
            if not c:
                continue
            card = r + 1
            after = left[:r] + (c - 1,) + left[r + 1 :]
            sub_perfect, sub_right = count(after, card, moves.update(belief, card, position))
            right, miss = outcome(card, showing, higher, ties)
            perfect += 0 if miss else c * sub_perfect
            right_sum += c * (right * factorial[m - 1] + sub_right)
        memo[key] = perfect, right_sum
        return perfect, right_sum

    first = moves.start()
    perfect = right_sum = 0
    full = (moves.suits,) * moves.ranks
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * cards + 100))
    try:
        for r in range(moves.ranks):
            after = full[:r] + (moves.suits - 1,) + full[r + 1 :]
            sub = count(after, r + 1, moves.update(first, r + 1, 1))
            perfect += moves.suits * sub[0]
            right_sum += moves.suits * sub[1]
    finally:
        sys.setrecursionlimit(limit)
    return perfect, right_sum, len(memo)


# ------------------------------------------------------------------------ Monte Carlo


MEMO = 200_000  # (belief, card) answers kept per kind for Monte Carlo (bounded memory)


class Memo:
    """The user's calls and updates for Monte Carlo, memoised on (belief, card) while the
    memo holds fewer than MEMO entries each."""

    def __init__(self, moves: Moves):
        self.moves = moves
        self.calls: dict[tuple[Any, int], bool] = {}
        self.updates: dict[tuple[Any, int], Any] = {}

    def call(self, belief: Any, showing: int, position: int) -> bool:
        key = (belief, showing)
        higher = self.calls.get(key)
        if higher is None:
            higher = self.moves.call(belief, showing, position)
            if len(self.calls) < MEMO:
                self.calls[key] = higher
        return higher

    def update(self, belief: Any, card: int, position: int) -> Any:
        key = (belief, card)
        if key in self.updates:
            return self.updates[key]
        out = self.moves.update(belief, card, position)
        if len(self.updates) < MEMO:
            self.updates[key] = out
        return out


def play_games(memo: Memo, ties: str, n_games: int, rng: np.random.Generator) -> np.ndarray:
    """Right calls of ``n_games`` shuffled decks played in full."""
    moves = memo.moves
    deck = np.repeat(np.arange(1, moves.ranks + 1), moves.suits)
    first = moves.start()
    right = np.empty(n_games, dtype=np.int64)
    for game in range(n_games):
        order = rng.permutation(deck).tolist()
        showing = order[0]
        belief = memo.update(first, showing, 1)
        score = 0
        for position, card in enumerate(order[1:], 2):
            higher = memo.call(belief, showing, position)
            score += outcome(card, showing, higher, ties)[0]
            belief, showing = memo.update(belief, card, position), card
        right[game] = score
    return right


def perfect_weights(memo: Memo, ties: str, n_games: int, rng: np.random.Generator) -> np.ndarray:
    """Importance weights of ``n_games`` games drawn among the cards that make each call
    right (their mean estimates P(perfect game))."""
    moves = memo.moves
    ranks, suits = moves.ranks, moves.suits
    first = moves.start()
    weights = np.empty(n_games)
    for game in range(n_games):
        left = [suits] * ranks
        showing = int(rng.integers(ranks)) + 1
        left[showing - 1] -= 1
        belief = memo.update(first, showing, 1)
        weight = 1.0
        for position in range(2, moves.cards + 1):
            m = moves.cards - position + 1
            higher = memo.call(belief, showing, position)
            pool = [
                c if not outcome(r + 1, showing, higher, ties)[1] else 0 for r, c in enumerate(left)
            ]
            n_right = sum(pool)
            weight *= n_right / m
            if not n_right:
                pool = left  # a lost game plays on: its weight stays 0
            pick = rng.random() * sum(pool)
            r = 0
            while pick >= pool[r]:
                pick -= pool[r]
                r += 1
            left[r] -= 1
            belief, showing = memo.update(belief, r + 1, position), r + 1
        weights[game] = weight
    return weights


# ----------------------------------------------------------------------------- the rows


def rows(task: Task) -> list[Row]:
    """One row: exact (P(perfect game) and expected right calls as p/q) or Monte Carlo."""
    moves = Moves(task)
    ties = task["ties"]
    row: Row = {"n_cards": moves.cards}
    if task["method"] == "exact":
        perfect, right_sum, states = exact_counts(moves, ties)
        orders = math.factorial(moves.cards)
        p = Fraction(perfect, orders)
        row.update(exact_columns("p_perfect", p), p_perfect_se=0.0, n_states=states)
        row.update(exact_columns("expected_correct", Fraction(right_sum, orders)))
        row["log10_p_perfect"] = (
            math.log10(p.numerator) - math.log10(p.denominator) if p else -math.inf
        )
        return [row]
    memo, rng = Memo(moves), task_rng(task)
    right = play_games(memo, ties, task["n_games"], rng)
    weights = perfect_weights(memo, ties, task["n_games"], rng)
    p = float(weights.mean())
    row.update(p_perfect=p, p_perfect_se=standard_error(weights))
    row["log10_p_perfect"] = math.log10(p) if p > 0 else -math.inf
    row.update(expected_correct=float(right.mean()), expected_correct_se=standard_error(right))
    return [row]


def standard_error(values: Sequence[float] | np.ndarray) -> float:
    """The sample standard deviation over the square root of the sample's size."""
    values = np.asarray(values, dtype=float)
    return float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else math.nan
