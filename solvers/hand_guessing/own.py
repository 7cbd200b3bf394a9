"""Hand-guessing strategies of one's own: the protocol, the checks and the rows (see
:mod:`solvers.own_strategy` for how a study names one).

The protocol: a class whose constructor's keyword arguments are its parameters, with

- ``start(cards, ranks, suits) -> belief``: the game, a hidden hand of ``cards`` distinct
  cards from a deck of ``ranks`` x ``suits`` cards; the belief is any hashable value the
  strategy keeps (a tuple, a frozenset...);
- ``guess(belief) -> hand``: the next guess, ``cards`` distinct cards (a tuple, list or
  set of card numbers); any hand may be guessed, consistent with the feedback so far or not;
- ``update(belief, guess, feedback) -> belief``: what it keeps after ``feedback`` to
  ``guess`` (the hand just guessed, as a sorted tuple of card numbers).

A card is the number ``rank * suits + suit`` (rank 0 is the 2, then 3, ..., 10, J, Q, K, A;
suit 0 to 3 are C, D, H, S), as in :mod:`solvers.hand_guessing.cards`, whose ``feedback``
a strategy may import.  The feedback is the game's five numbers ``(correct cards, lower
ranks, correct ranks, higher ranks, correct suits)``: the cards in both hands; the answer's
cards ranked below the guess's lowest rank; the ranks in common counted with multiplicity;
the answer's cards ranked above the guess's highest rank; the suits in common with
multiplicity.

One game, exactly in this order::

    belief = start(cards, ranks, suits)
    repeat:
        hand = guess(belief)
        feedback = the five numbers of hand against the answer
        if feedback[0] == cards: the game ends (this guess counted)
        belief = update(belief, hand, feedback)

The strategy must be a function of what it was told: the same belief gives the same guess
(each is asked twice, :func:`solvers.own_strategy.twice`; answers that differ are an error
row).  ``first_guess`` (and the entropy parameters) belong to the built-in strategies: a
strategy of one's own makes its first guess itself.

Evaluation, as the built-in strategies' (:func:`solvers.hand_guessing.strategies.play`): the
strategy's decision tree is walked from the root, each node's answers split by the
feedback to its guess, keeping the branches that hold a *target* answer (every answer, the
chunk ``answer_chunk`` of ``n_chunks``, or a seeded ``sample``), the user's answers
memoised on the belief (``guess``) and on (belief, feedback) (``update``).  The row has the
built-ins' columns: ``average_guesses_exact`` (a rational over the targets; a sample gives
its mean and ``standard_error`` instead), ``total_guesses``, ``max_guesses``, the
``histogram``, ``first_guess``, ``tree_nodes``.  A game is bounded by one guess per hand:
a strategy that has not found an answer by then gives an error row naming the answer and
its last guesses; one whose guess splits none of the hands left and whose update leaves the
belief equal to what it was (it would guess the same hand forever) gives its error row at
once.

Every move is checked: a guess that is not a hand of the game, an exception in the user's
code or a belief that is not hashable is an error row naming the strategy, the move (the
method, its arguments, the guess's number) and the value.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from solvers.hand_guessing import strategies as S
from solvers.hand_guessing import table as T
from solvers.hand_guessing.cards import hand_index
from solvers.own_strategy import Protocol, QueryMoves, StrategyError, same_belief, shown
from solvers.registry import Task
from solvers.task_ids import task_rng

PROTOCOL = Protocol(
    {
        "start": "start(cards, ranks, suits) -> belief: any hashable belief",
        "guess": "guess(belief) -> hand: cards distinct card numbers, rank * suits + suit",
        "update": "update(belief, guess, feedback) -> belief: feedback is (correct, lower, "
        "ranks, higher, suits)",
    }
)

Hand = tuple[int, ...]


class Moves(QueryMoves):
    """The user's strategy behind checks (:class:`QueryMoves`): a guess is a hand, an answer
    the code of the game's five numbers."""

    def __init__(self, task: Task, f: T.Features):
        super().__init__(task, (f.cards, f.deck.ranks, f.deck.suits))
        self.f, self.deck, self.cards = f, f.deck, f.cards

    def checked(self, hand: Any, move: str) -> int:
        return hand_index(self.deck, self.checked_hand(hand, move))

    def checked_hand(self, hand: Any, move: str) -> Hand:
        """``hand`` as a sorted tuple of card numbers; StrategyError for no hand of the game."""
        try:
            if isinstance(hand, str | bytes) or any(isinstance(c, bool) for c in hand):
                raise TypeError
            cards = tuple(sorted(operator.index(c) for c in hand))
        except Exception:  # not iterable, or not of integers
            raise StrategyError(
                f"{self.who}: {move} returned {shown(hand)}, not a hand (card numbers)"
            ) from None
        size = self.deck.size
        if (
            len(cards) != self.cards
            or len(set(cards)) != len(cards)
            or not all(0 <= c < size for c in cards)
        ):
            raise StrategyError(
                f"{self.who}: {move} returned {shown(hand)}: not a hand of this game "
                f"({self.cards} distinct cards numbered 0 to {size - 1})"
            )
        return cards

    def hand(self, index: int) -> Hand:
        return tuple(int(c) for c in self.f.hands[index])

    def query(self, index: int) -> Hand:
        return self.hand(index)

    def feedback(self, code: int) -> tuple[int, ...]:
        return T.decode(self.cards, code)


def play(moves: Moves, targets: np.ndarray) -> tuple[S.Play, int]:
    """(guesses per target answer and nodes, as :func:`strategies.play` gives them; the first
    guess's hand index)."""
    f = moves.f
    n = len(f)
    targets = np.unique(np.asarray(targets))
    is_target = np.zeros(n, dtype=bool)
    is_target[targets] = True
    depth_of = np.zeros(n, dtype=np.int64)
    win = T.win_code(f.cards)
    stack: list[tuple[np.ndarray, int, Any, tuple[int, ...]]] = [
        (np.arange(n), 1, moves.start(), ())
    ]
    nodes, first = 0, -1
    while stack:
        candidates, depth, belief, last = stack.pop()
        if depth > n:
            raise StrategyError(
                f"{moves.who}: did not find the hand {moves.hand(int(candidates[0]))} within "
                f"{n:,} guesses (one per hand); its last guesses: "
                f"{', '.join(str(moves.hand(g)) for g in last)}"
            )
        guess = moves.guess(belief, depth)
        first = guess if first < 0 else first
        nodes += 1
        for code, part in S.feedback_parts(f, guess, candidates):
            if code == win:
                depth_of[part] = depth
            elif is_target[part].any():
                after = moves.update(belief, guess, int(code), depth)
                if len(part) == len(candidates) and same_belief(after, belief):
                    raise StrategyError(
                        f"{moves.who}: repeats itself: guess(belief={shown(belief)}) at guess "
                        f"{depth} gave {moves.hand(guess)}, which splits none of the "
                        f"{len(part):,} hands left, and update left the belief as it was: it "
                        f"would guess {moves.hand(guess)} forever"
                    )
                stack.append((part, depth + 1, after, (*last[-4:], guess)))
    return S.Play(targets, depth_of[targets], nodes), first


def evaluate(task: Task, f: T.Features) -> tuple[S.Play, int]:
    """(guesses over every answer, one chunk of them, or a seeded sample, with the nodes
    walked; the first guess's hand index): what the family's ``result_row`` makes its row of."""
    moves = Moves(task, f)
    if task["sample"] is not None:
        targets = S.sample_targets(len(f), task["sample"], task_rng(task))
    else:
        targets = S.chunk_targets(len(f), task["answer_chunk"], task["n_chunks"])
    return play(moves, targets)
