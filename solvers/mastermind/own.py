"""Mastermind strategies of one's own: the protocol, the checks and the exact rows (see
:mod:`solvers.own_strategy` for how a study names one).

The protocol: a class whose constructor's keyword arguments are its parameters, with

- ``start(pegs, colours) -> belief``: the game, codes of ``pegs`` pegs in ``colours``
  colours; the belief is any hashable value the strategy keeps (a tuple, a frozenset...);
- ``guess(belief) -> code``: the next guess, a tuple (or list) of ``pegs`` colour indices,
  each from 0 to ``colours - 1``; any code may be guessed, feasible or not;
- ``update(belief, guess, feedback) -> belief``: what it keeps after the answer ``feedback``
  = ``(black, white)`` to ``guess`` (the code just guessed, as a tuple).

One game, exactly in this order::

    belief = start(pegs, colours)
    repeat:
        code = guess(belief)
        feedback = (black, white) of code against the secret
        if black == pegs: the game ends (this guess counted)
        belief = update(belief, code, feedback)

The secret is drawn peg by peg from the jar (``jar``: weights per colour; absent: uniform);
the jar is not given to the strategy (a strategy that weighs codes by it takes the weights as
constructor arguments).  The strategy must be a function of what it was told: the
same belief gives the same guess (each is asked twice, :func:`solvers.own_strategy.twice`;
answers that differ are an error row).

Exact (the only method, as for the built-ins): the strategy's decision tree is followed over
every secret at once, each node's secrets split by the feedback to its guess, and the
user's answers memoised on the belief (``guess``) and on (belief, feedback) (``update``):
``expected_guesses_exact`` is the jar-weighted mean number of guesses, a rational ``p/q``,
with the family's other columns as its built-in strategies fill them (``total_guesses`` for
a uniform jar, ``max_guesses``, the ``histogram`` of guesses over the codes, ``guess_pmf``
under the jar, ``first_guess``, ``n_codes``, ``tree_nodes``).  A game is bounded by one guess
per code (``colours ** pegs``): a strategy that has not found a secret by then gives an error
row naming the secret and its last guesses; one whose guess splits none of the codes left and
whose update leaves the belief equal to what it was (it would guess the same code forever)
gives its error row at once.

Every move is checked: a guess that is not a code of the game, an exception in the user's
code or a belief that is not hashable is an error row naming the strategy, the move (the
method, its arguments, the guess's number) and the value.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from solvers.mastermind.codes import feedback_table, feedbacks
from solvers.own_strategy import Protocol, QueryMoves, StrategyError, same_belief, shown
from solvers.registry import Task

PROTOCOL = Protocol(
    {
        "start": "start(pegs, colours) -> belief: any hashable belief",
        "guess": "guess(belief) -> code: a tuple of pegs colour indices from 0",
        "update": "update(belief, guess, feedback) -> belief: feedback is (black, white)",
    }
)

Code = tuple[int, ...]


class Moves(QueryMoves):
    """The user's strategy behind checks (:class:`QueryMoves`): a guess is a code."""

    def __init__(self, task: Task):
        super().__init__(task, (task["pegs"], task["colours"]))
        self.pegs, self.colours = task["pegs"], task["colours"]

    def checked(self, code: Any, move: str) -> int:
        """The code's index (its base-colours number); StrategyError for no code."""
        try:
            if isinstance(code, str | bytes) or any(isinstance(c, bool) for c in code):
                raise TypeError
            pegs = [operator.index(c) for c in code]
        except Exception:  # not iterable, or not of integers
            raise StrategyError(
                f"{self.who}: {move} returned {shown(code)}, not a code (a tuple of colour indices)"
            ) from None
        if len(pegs) != self.pegs or not all(0 <= c < self.colours for c in pegs):
            raise StrategyError(
                f"{self.who}: {move} returned {shown(code)}: not a code of this game "
                f"({self.pegs} pegs, colours 0 to {self.colours - 1})"
            )
        index = 0
        for c in pegs:
            index = index * self.colours + c
        return index

    def query(self, index: int) -> Code:
        return self.code(index)

    def code(self, index: int) -> Code:
        digits = []
        for _ in range(self.pegs):
            index, d = divmod(index, self.colours)
            digits.append(d)
        return tuple(reversed(digits))


def guesses_per_code(task: Task) -> tuple[np.ndarray, int, int]:
    """(guesses needed for every code, first guess, nodes of the decision tree)."""
    moves = Moves(task)
    table = feedback_table(moves.pegs, moves.colours)
    answers = feedbacks(moves.pegs)
    win = len(answers) - 1
    n = len(table)
    guesses = np.zeros(n, dtype=np.int64)
    stack = [(np.arange(n), 1, moves.start(), ())]
    nodes, first = 0, -1
    while stack:
        secrets, depth, belief, last = stack.pop()
        if depth > n:
            raise StrategyError(
                f"{moves.who}: did not find the code {moves.code(int(secrets[0]))} within "
                f"{n:,} guesses (one per code); its last guesses: "
                f"{', '.join(str(moves.code(g)) for g in last)}"
            )
        q = moves.guess(belief, depth)
        nodes += 1
        first = q if first < 0 else first
        labels = table[q, secrets]
        for k in np.unique(labels):
            part = secrets[labels == k]
            if k == win:
                guesses[part] = depth
            else:
                after = moves.update(belief, q, answers[k], depth)
                if len(part) == len(secrets) and same_belief(after, belief):
                    raise StrategyError(
                        f"{moves.who}: repeats itself: guess(belief={shown(belief)}) at guess "
                        f"{depth} gave {moves.code(q)}, which splits none of the {len(part):,} "
                        f"codes left, and update left the belief as it was: it would guess "
                        f"{moves.code(q)} forever"
                    )
                stack.append((part, depth + 1, after, (*last[-4:], q)))
    return guesses, first, nodes


def tree(task: Task) -> tuple[np.ndarray, int, int]:
    """(guesses needed for every code, first guess, nodes of the decision tree): what the
    family's ``result_columns`` makes its row of."""
    return guesses_per_code(task)
