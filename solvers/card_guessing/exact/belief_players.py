"""Players with a private belief, and exact evaluation of any of them (Gural, Simper & So 2019,
section 6).

A :class:`Player` names a type from the labelled (c, p) state *and* a belief of its own that
it updates after every answer (the playable strategies keep estimated counts per type).  The
value of such a policy depends on the history only through (state, belief), so
:func:`exact_counts` memoises on that pair and counts arrangements exactly, like
:class:`yes_no.Evaluation` does for policies of the state alone.

The playable strategies keep an estimate ``C_i`` of the cards of each type still to come:

* ``count_tracker``: "yes" to ``a``: ``C_a -= 1``; "no" to ``a``: every other type loses its
  share of one card, ``C_i -= C_i / sum_{j != a} C_j``.
* ``constant_decrement``: "yes" as above; "no" to ``a``: ``C_i -= d`` for every ``i != a``.

Rules fixed here (Gural, Simper & So leave them open): estimates are clipped at zero after every
update; the player names the type with the largest estimate among the types that still have
unconfirmed cards (a type whose every card was confirmed by a "yes" is never named), ties
by ``tie_break``.  Arithmetic is exact (Fractions): ``d = 0.55`` is 11/20.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from fractions import Fraction
from typing import Protocol

from solvers.card_guessing.exact.yes_no import (
    Chooser,
    Deck,
    Evaluation,
    Guess,
    State,
    after_no,
    after_yes,
    arrangements,
    break_tie,
    initial_state,
    yes_counts,
)

Belief = Hashable
Estimates = tuple[Fraction, ...]


class Player(Protocol):
    """A policy with its own belief: start it, ask its guesses, tell it the answers."""

    def start(self, deck: Deck) -> Belief: ...

    def guesses(self, state: State, belief: Belief) -> list[Guess]:
        """The guess, or several tied guesses to average over (uniform tie-break)."""
        ...

    def update(self, belief: Belief, a: Guess, yes: bool) -> Belief: ...


def updater(player: Player) -> Callable[[State, Belief, Guess, bool], Belief]:
    """``(state, belief, a, yes) -> belief``: the player's update, told the state the guess
    was made in when the player wants it (an ``update_at`` method: a strategy of one's own,
    whose errors name the card's position), else :meth:`Player.update`."""
    at = getattr(player, "update_at", None)
    if at is not None:
        return at
    return lambda state, belief, a, yes: player.update(belief, a, yes)


class StatePlayer:
    """A policy of the labelled (c, p) state alone, from a chooser (greedy, info...)."""

    def __init__(self, chooser: Chooser):
        self.chooser = chooser

    def start(self, deck: Deck) -> Belief:
        return None

    def guesses(self, state: State, belief: Belief) -> list[Guess]:
        return self.chooser(state, yes_counts(state))

    def update(self, belief: Belief, a: Guess, yes: bool) -> Belief:
        return None


class EvaluationPlayer(StatePlayer):
    """The policy stored in an :class:`yes_no.Evaluation` (e.g. the optimal one)."""

    def __init__(self, ev: Evaluation):
        self.ev = ev

    def guesses(self, state: State, belief: Belief) -> list[Guess]:
        return [self.ev.guess(state)]


class EstimatePlayer:
    """A playable strategy: estimated counts per type (see the module docstring)."""

    def __init__(
        self,
        decrement: Fraction | None = None,
        tie_break: str = "lowest",
        *,
        clip: bool = True,
        skip_exhausted: bool = True,
    ):
        self.decrement = decrement  # None: count_tracker's proportional update
        self.tie_break = tie_break
        self.clip = clip
        self.skip_exhausted = skip_exhausted

    def start(self, deck: Deck) -> Estimates:
        return tuple(Fraction(c) for c in deck)

    def guesses(self, state: State, belief: Estimates) -> list[Guess]:
        pairs = state[1]
        live = [a for a in range(len(pairs)) if pairs[a][0] > 0 or not self.skip_exhausted]
        best = max(belief[a] for a in live)
        return break_tie([a for a in live if belief[a] == best], self.tie_break)

    def update(self, belief: Estimates, a: Guess, yes: bool) -> Estimates:
        est = list(belief)
        if yes:
            est[a] -= 1
        elif self.decrement is not None:
            est = [e if i == a else e - self.decrement for i, e in enumerate(est)]
        else:
            others = sum(e for i, e in enumerate(est) if i != a)
            if others:
                est = [e if i == a else e - e / others for i, e in enumerate(est)]
        if self.clip:
            est = [max(e, Fraction(0)) for e in est]
        return tuple(est)


def count_tracker(tie_break: str = "lowest", **rules: bool) -> EstimatePlayer:
    """The proportional count tracker of Gural, Simper & So (2019), section 6."""
    return EstimatePlayer(None, tie_break, **rules)


def constant_decrement(
    decrement: Fraction | float | str = Fraction(11, 20), tie_break: str = "lowest", **rules: bool
) -> EstimatePlayer:
    """The constant-decrement tracker (Gural, Simper & So 2019, section 6); floats are read as
    decimals."""
    d = decrement if isinstance(decrement, Fraction) else Fraction(repr(decrement))
    return EstimatePlayer(d, tie_break, **rules)


def exact_counts(deck: Sequence[int], player: Player) -> tuple[list[int | Fraction], int]:
    """(D, n_states): D[k] = deck orders on which ``player`` scores k; memo on (state, belief).

    Orders are counted as distinct type sequences, so sum(D) = multinomial(deck); D holds
    Fractions only when a uniform tie-break averages over several guesses.
    """
    memo: dict[tuple[State, Belief], list[int | Fraction]] = {}
    update = updater(player)

    def counts(state: State, belief: Belief) -> list[int | Fraction]:
        key = (state, belief)
        hit = memo.get(key)
        if hit is not None:
            return hit
        n, pairs = state
        total = arrangements(pairs)
        if n == 0:
            memo[key] = [total]
            return memo[key]
        picks = player.guesses(state, belief)
        d: list[int | Fraction] = [0] * (n + 1)
        for a in picks:
            n_yes = arrangements(after_yes(state, a)[1]) if pairs[a][0] > 0 else 0
            if n_yes:
                for k, v in enumerate(counts(after_yes(state, a), update(state, belief, a, True))):
                    d[k + 1] += v
            if total - n_yes:
                for k, v in enumerate(counts(after_no(state, a), update(state, belief, a, False))):
                    d[k] += v
        if len(picks) > 1:
            d = [Fraction(v, len(picks)) for v in d]
        memo[key] = d
        return d

    start = tuple(int(c) for c in deck)
    return counts(initial_state(start), player.start(start)), len(memo)


def exact_distribution(deck: Sequence[int], player: Player) -> tuple[list[Fraction], int]:
    """(pmf, n_states): the exact score distribution of ``player`` on a shuffled ``deck``."""
    d, n_states = exact_counts(deck, player)
    total = sum(d)
    return [Fraction(v) / total for v in d], n_states
