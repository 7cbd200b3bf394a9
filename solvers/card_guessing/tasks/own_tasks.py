"""Card-guessing strategies of one's own: the protocol, the checks, the exact and Monte Carlo
rows (see :mod:`solvers.own_strategy` for how a study names one).

The protocol: a class whose constructor's keyword arguments are its parameters, with

- ``start(deck) -> belief``: ``deck`` is a tuple of cards per type; the belief is any
  hashable value the strategy keeps (a tuple, a number, a frozenset...);
- ``guess(belief) -> int``: the type it names next, counting from 0, a function of the
  belief alone (:class:`Moves` asks it twice and again where a belief is met again);
- ``update(belief, guess, answer) -> belief``: what it keeps after the answer, which is
  ``yes`` (a bool) under ``feedback: partial``, the type of the card shown (an int) under
  ``feedback: complete``, and None under ``feedback: none``;

and an optional class attribute ``feedback``: the feedback model(s) it is written for, one
name or a tuple of names (``"partial"`` when left out).

The value of such a policy depends on the history only through (what the game has told,
belief), so the exact evaluation memoises on that pair and counts deck orders exactly, as
the built-in playable strategies are counted (:func:`belief_players.exact_counts` under yes/no
feedback; the composition left under complete feedback; the guess sequence under none): the
expected score is a rational ``p/q`` and the score's whole distribution comes with it.
``max_states`` bounds the pairs visited, checked as they are met.  ``method: monte_carlo``
plays ``n_games`` shuffled decks seeded from the task id (yes/no and complete feedback).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from fractions import Fraction
from math import prod
from typing import Any

import numpy as np

from solvers.card_guessing.exact import belief_players, complete_feedback, no_feedback
from solvers.card_guessing.exact.yes_no import Guess, State
from solvers.own_strategy import (
    Held,
    Protocol,
    StrategyError,
    agreed,
    asked,
    build,
    call,
    held,
    shown,
    strategy_words,
    target_class,
    twice,
)
from solvers.registry import Row, Task, TaskError
from solvers.task_ids import task_rng

PROTOCOL = Protocol(
    {
        "start": "start(deck) -> belief: deck is a tuple of cards per type; any hashable belief",
        "guess": "guess(belief) -> int: the type named next, counting from 0",
        "update": "update(belief, guess, answer) -> belief: answer is yes (partial), the card "
        "shown (complete) or None (none)",
    }
)
FEEDBACKS = ("partial", "complete", "none")
METHODS = ("exact", "monte_carlo")


def written_for(cls: type) -> tuple[str, ...]:
    """The feedback models a class says it is written for (``feedback``; partial if absent)."""
    said = getattr(cls, "feedback", "partial")
    names = (said,) if isinstance(said, str) else tuple(said)
    bad = [n for n in names if n not in FEEDBACKS]
    if bad or not names:
        raise ValueError(
            f"its class attribute feedback={said!r} names no feedback model; valid: "
            f"{', '.join(FEEDBACKS)}"
        )
    return names


def check_task(task: Task) -> None:
    """Refuse, before any work, an own strategy's task the game cannot evaluate as asked (the
    size of a yes/no deck for the exact solver is the family's check, as for its built-ins)."""
    target, feedback, method = task["strategy_target"], task["feedback"], task["method"]
    try:
        models = written_for(target_class(target))
    except ValueError as exc:
        raise TaskError("strategy_target", target, str(exc)) from None
    if feedback not in models:
        raise TaskError(
            "feedback",
            feedback,
            f"{target} is written for feedback={'/'.join(models)} (its class attribute feedback)",
        )
    if method not in METHODS or (feedback == "none" and method != "exact"):
        valid = "exact" if feedback == "none" else " or ".join(METHODS)
        raise TaskError("method", method, f"a strategy of one's own runs {valid} here")
    if (
        method == "exact"
        and feedback == "complete"
        and labelled_compositions(task["deck"]) > task["max_states"]
    ):
        raise TaskError(
            "deck",
            task["deck"],
            f"too large for the exact solver: {labelled_compositions(task['deck']):,} "
            f"compositions, limit max_states={task['max_states']:,} (raise max_states to try "
            f"anyway, or method=monte_carlo)",
        )


# The cost of a strategy of one's own is its code's, unknown before it runs; these are the
# costs of simple ones (a few tuple operations a move), measured on one core with
# SwitchAfterNo and the count tracker written as one's own, decks (4,4,4) to (4,4,4,4):
# 15-55 us per estimated state exactly (the count tracker's Fractions up to 240 us), 6-10 us
# per card played by Monte Carlo.  A plan's estimate, within a factor of ~5 for such code.
SECONDS_PER_STATE = 50e-6
SECONDS_PER_CARD_PLAYED = 10e-6


def estimated_seconds(task: Task, yes_no_states: int) -> float:
    """Roughly the solver seconds of a checked own strategy's task (``stage=plan``), given the
    family's estimate of the yes/no deck's states."""
    deck = task["deck"]
    if task["method"] == "monte_carlo":
        return task["n_games"] * sum(deck) * SECONDS_PER_CARD_PLAYED
    if task["feedback"] == "partial":
        return yes_no_states * SECONDS_PER_STATE
    if task["feedback"] == "complete":
        return labelled_compositions(deck) * SECONDS_PER_STATE
    return sum(deck) * SECONDS_PER_STATE


def labelled_compositions(deck: Sequence[int]) -> int:
    """The compositions of cards left, types told apart: what complete feedback can show."""
    return prod(c + 1 for c in deck)


# ------------------------------------------------------------------------ the adapters

# The guesses and updates Moves keeps, each: a belief met again must get its guess again,
# and an update met again (Monte Carlo replays the same ones game after game) is answered
# from memory.  Past this many, a guess is still asked twice, an update once.
KEPT = 200_000


class Moves:
    """The user's strategy behind checks: each call named in errors with the move it was
    (the card's position in the deck, the belief), each answer checked (a type of the deck
    with cards left, a hashable belief held as :class:`Held`, the belief given left as it
    was), and the (state, belief) pairs counted.  A strategy is a function of its belief:
    each answer is asked twice the first time (:func:`twice`), a belief met again in another
    state must get the guess it got before, and an update met again is answered from
    memory (up to KEPT of each)."""

    def __init__(self, task: Task):
        self.task, self.who = task, strategy_words(task)
        self.strategy = build(task)
        self.deck = tuple(task["deck"])
        self.cards = sum(self.deck)
        self.limit = task["max_states"] if task["method"] == "exact" else None
        self.pairs = 0
        self.guessed: dict[Held, Any] = {}  # each belief's guess, when first met
        self.updated: dict[tuple[Held, Guess, Any], Held] = {}  # (belief, guess, answer)

    def start(self, deck: Sequence[int]) -> Held:
        deck = tuple(int(c) for c in deck)
        belief = call(self.who, f"start({deck})", lambda: self.strategy.start(deck))
        return held(self.who, f"start({deck})", belief)

    def guess(self, belief: Held, position: int, left: Sequence[int] | None) -> Guess:
        """The checked guess at card ``position`` (1-based); ``left``: cards of each type the
        player knows may still come (None: it cannot know)."""
        self.pairs += 1
        if self.limit is not None and self.pairs > self.limit:
            raise StrategyError(
                f"{self.who}: the exact evaluation passed max_states={self.limit:,} (state, "
                f"belief) pairs at card {position} of {self.cards}: a belief holding more than "
                f"the game tells multiplies them; raise max_states, or use method=monte_carlo"
            )
        move = f"guess(belief={shown(belief)}) at card {position} of {self.cards}"
        ask = lambda: asked(self.who, move, lambda: self.strategy.guess(belief.value), belief)  # noqa: E731
        before = self.guessed.get(belief, self.guessed)
        if before is self.guessed:  # met for the first time (or no longer kept)
            g = twice(self.who, move, ask)
            if len(self.guessed) < KEPT:
                self.guessed[belief] = g
        else:
            g = ask()
            agreed(self.who, move, before, g, "where this belief was met before")
        try:
            if isinstance(g, bool):
                raise TypeError
            g = operator.index(g)
        except TypeError:
            raise StrategyError(
                f"{self.who}: {move} returned {shown(g)}, not a type index (an int)"
            ) from None
        if not 0 <= g < len(self.deck):
            raise StrategyError(
                f"{self.who}: {move} returned {g}: no such type (the deck has types 0 to "
                f"{len(self.deck) - 1})"
            )
        if left is not None and left[g] == 0:
            raise StrategyError(f"{self.who}: {move} returned {g}: a type with no cards left")
        return g

    def explain(self, belief: Held) -> str | None:
        """The strategy's own words on its belief (its optional ``explain(belief)``, used by
        the terminal game), on one line; None where it has no such method."""
        if not callable(getattr(self.strategy, "explain", None)):
            return None
        move = f"explain(belief={shown(belief)})"
        text = asked(self.who, move, lambda: self.strategy.explain(belief.value), belief)
        return " ".join(str(text).split())

    def update(self, belief: Held, g: Guess, answer: Any, position: int | None) -> Held:
        key = (belief, g, answer)
        hit = self.updated.get(key)
        if hit is not None:
            return hit
        at = f" at card {position} of {self.cards}" if position is not None else ""
        move = f"update(belief={shown(belief)}, guess={g}, answer={answer!r}){at}"

        def ask() -> Held:
            out = asked(
                self.who, move, lambda: self.strategy.update(belief.value, g, answer), belief
            )
            return held(self.who, move, out)

        if len(self.updated) >= KEPT:
            return ask()
        self.updated[key] = twice(self.who, move, ask)
        return self.updated[key]


class YesNoPlayer:
    """An own strategy as a :class:`belief_players.Player` (yes/no feedback)."""

    def __init__(self, moves: Moves):
        self.moves = moves

    def start(self, deck):
        return self.moves.start(deck)

    def guesses(self, state: State, belief: Any) -> list[Guess]:
        n, pairs = state
        left = [c for c, _ in pairs]  # cards not yet confirmed by a yes
        return [self.moves.guess(belief, self.moves.cards - n + 1, left)]

    def update_at(self, state: State, belief: Any, a: Guess, yes: bool) -> Any:
        return self.moves.update(belief, a, bool(yes), self.moves.cards - state[0] + 1)

    def update(self, belief: Any, a: Guess, yes: bool) -> Any:
        """:meth:`update_at` where the state is not at hand (the terminal game)."""
        return self.moves.update(belief, a, bool(yes), None)


# ----------------------------------------------------------------------------- the rows


def rows(task: Task) -> list[Row]:
    """One row: exact (mean, variance, distribution as p/q and floats) or Monte Carlo."""
    from solvers.card_guessing.tasks.feedback_tasks import pmf_columns
    from solvers.card_guessing.tasks.yes_no_tasks import exact_row, scores_row

    moves = Moves(task)
    deck, feedback = task["deck"], task["feedback"]
    if task["method"] == "monte_carlo":
        rng = task_rng(task)
        if feedback == "partial":
            from solvers.card_guessing.simulation import shuffled_decks

            scores = shuffled_decks.play_games(deck, YesNoPlayer(moves), task["n_games"], rng)
        else:
            scores = complete_scores(deck, moves, task["n_games"], rng)
        return [scores_row(scores, sum(deck))]
    if feedback == "partial":
        pmf, n_states = belief_players.exact_distribution(deck, YesNoPlayer(moves))
        return [exact_row(pmf, n_states)]
    if feedback == "complete":
        pmf, n_states = complete_distribution(deck, moves)
        return [exact_row(pmf, n_states)]
    sequence = blind_sequence(deck, moves)
    m = no_feedback.guess_counts(sequence, len(deck))
    return [{**pmf_columns(no_feedback.score_distribution(deck, m)), "n_states": len(sequence)}]


def complete_distribution(deck: Sequence[int], moves: Moves) -> tuple[list[Fraction], int]:
    """(pmf, pairs visited): the exact score distribution under complete feedback, counting
    orders on (composition left, belief), types told apart."""
    memo: dict[tuple[tuple[int, ...], Any], list[int]] = {}
    cards = sum(deck)

    def counts(left: tuple[int, ...], belief: Any) -> list[int]:
        key = (left, belief)
        hit = memo.get(key)
        if hit is not None:
            return hit
        n = sum(left)
        if n == 0:
            memo[key] = [1]
            return memo[key]
        g = moves.guess(belief, cards - n + 1, left)
        d = [0] * (n + 1)
        for t, c in enumerate(left):
            if not c:
                continue
            after = left[:t] + (c - 1,) + left[t + 1 :]
            child = counts(after, moves.update(belief, g, t, cards - n + 1))
            shift = int(t == g)
            for k, v in enumerate(child):
                d[k + shift] += v
        memo[key] = d
        return d

    start = tuple(int(c) for c in deck)
    d = counts(start, moves.start(start))
    total = complete_feedback.orders(start)
    assert sum(d) == total  # every order of the deck counted once
    return [Fraction(v, total) for v in d], len(memo)


def complete_scores(
    deck: Sequence[int], moves: Moves, n_games: int, rng: np.random.Generator
) -> np.ndarray:
    """Monte Carlo scores under complete feedback (guesses memoised on (left, belief))."""
    from solvers.card_guessing.simulation.shuffled_decks import CHUNK, shuffled_orders

    start = tuple(int(c) for c in deck)
    first = moves.start(start)
    guesses: dict = {}
    out = np.empty(n_games, dtype=np.int64)
    for at in range(0, n_games, CHUNK):
        for i, order in enumerate(shuffled_orders(deck, min(CHUNK, n_games - at), rng).tolist()):
            left, belief, score = list(start), first, 0
            for position, card in enumerate(order, 1):
                key = (tuple(left), belief)
                g = guesses.get(key)
                if g is None:
                    g = guesses[key] = moves.guess(belief, position, left)
                score += g == card
                left[card] -= 1
                belief = moves.update(belief, g, card, position)
            out[at + i] = score
    return out


def blind_sequence(deck: Sequence[int], moves: Moves) -> list[int]:
    """The guesses of an own strategy under no feedback: each update is told nothing."""
    start = tuple(int(c) for c in deck)
    belief, out = moves.start(start), []
    for position in range(1, sum(start) + 1):
        g = moves.guess(belief, position, None)
        out.append(g)
        belief = moves.update(belief, g, None, position)
    return out
