"""The computer's side of the terminal game (play.py): the strategies it plays, the task it
checks, the family's own Player it plays with, and that strategy's exact average.

The computer's move is the family's own, from :func:`yes_no_tasks.player` and
:func:`ranked_tasks.player`: the optimal :class:`yes_no.Evaluation` itself; for greedy and
info the chooser their exact Evaluation calls; for the count-keeping strategies the players
of the exact runs (belief_players.py), their estimates updated after every answer; for
``persistent`` (and greedy with pair ties) the decision function of its Monte Carlo
(simulation/persistent.py).  Every yes/no strategy of the family is offered
(:data:`STRATEGIES`); ``sequence`` belongs to the game without feedback and is not.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from solvers.card_guessing.exact import belief_players, yes_no
from solvers.card_guessing.exact.yes_no import Deck, Guess, State
from solvers.card_guessing.rules import check_exact_size
from solvers.card_guessing.tasks import own_tasks, ranked_tasks, yes_no_tasks
from solvers.own_strategy import is_own
from solvers.registry import TaskError, checked_params, get_family

FAMILY = "card_guessing"
PLAY_MAX_STATES = 100_000  # refuse decks whose exact solve would keep a player waiting
OWN_MAX_STATES = 100_000  # decisions evaluated for the computer's own exact average, at most

# the family's strategies the yes/no game plays, each in one line that fits 80 columns in
# --help and on the opening screen
STRATEGIES = {
    "optimal": "the highest expected score, solved exactly",
    "greedy": "names a type most likely to be next",
    "info": "P(next) less gamma x the entropy expected to remain",
    "count_tracker": "estimates; a no takes one card from the others pro rata",
    "constant_decrement": "estimates; a no takes --decrement from each other type",
    "persistent": "of types within 10% of the likeliest, the most refused",
}
# strategy parameters with an option of their own: parameter -> option
OPTIONS = {"gamma": "--gamma", "entropy": "--entropy", "decrement": "--decrement"}
# what --param may set: the strategies' parameters and the size limit, none of the run's modes
GAME_KEYS = ("tie_break", "gamma", "entropy", "entropy_r", "entropy_t", "log_base", "decrement",
             "max_states")  # fmt: skip


@dataclass
class Computer:
    """The computer in one game: the family's Player for its strategy, the belief it keeps
    (estimated counts, or nothing), and the draws of a uniform tie-break."""

    player: belief_players.Player
    rng: random.Random
    belief: Any = None

    def start(self, deck: Deck) -> None:
        self.belief = self.player.start(deck)

    def guess(self, state: State) -> Guess:
        """The strategy's guess (one drawn at random when a uniform tie-break leaves several)."""
        tied = self.player.guesses(state, self.belief)
        return tied[0] if len(tied) == 1 else self.rng.choice(tied)

    def update(self, guess: Guess, yes: bool) -> None:
        self.belief = self.player.update(self.belief, guess, yes)

    def explanation(self) -> str | None:
        """What a strategy of one's own says of its belief (its optional ``explain(belief)``),
        on one line; None where it offers none."""
        if not isinstance(self.player, own_tasks.YesNoPlayer):
            return None
        return self.player.moves.explain(self.belief)

    def estimates(self):
        """The estimated counts per type of a count-keeping strategy, else None."""
        return self.belief if isinstance(self.player, belief_players.EstimatePlayer) else None


def strategy_names() -> list[str]:
    """Strategies offered: those the card_guessing family registers that the yes/no game plays."""
    return [s for s in get_family(FAMILY).rules.strategies if s in STRATEGIES]


def is_dotted(strategy: str) -> bool:
    """Whether ``--strategy`` names a class of one's own (``module.Class``)."""
    return "." in strategy


def own_task(deck: Sequence[int], target: str, params: Mapping[str, str]) -> dict[str, Any]:
    """The checked task of a strategy of one's own played in the terminal: its class's
    arguments from ``--param KEY=VALUE`` (a value read as JSON where it parses, else text),
    ``max_states`` the exact average's limit; named by its class."""
    arguments = {}
    for key, value in params.items():
        if key == "max_states":
            continue
        try:
            arguments[key] = json.loads(value)
        except ValueError:
            arguments[key] = value
    name = target.rpartition(".")[2]
    task = {
        "family": FAMILY,
        "deck": list(deck),
        "strategy": name if name not in STRATEGIES else f"{name}_own",
        "strategy_target": target,
        "strategy_params": arguments,
        "max_states": params.get("max_states", PLAY_MAX_STATES),
    }
    _, out = checked_params(task)
    check_exact_size(
        out["deck"], out["max_states"], "--param max_states=N raises it, for a longer wait"
    )
    own_tasks.check_task(out)
    return out


def player_task(deck: Sequence[int], strategy: str, params: Mapping[str, str]) -> dict[str, Any]:
    """The checked card_guessing task of the computer's strategy (errors name the key): the
    family's parameter checks, and a deck small enough to solve exactly before play; a
    dotted ``strategy`` is a class of one's own (:func:`own_task`)."""
    if is_dotted(strategy):
        return own_task(deck, strategy, params)
    for key, value in params.items():
        if key not in GAME_KEYS:
            raise TaskError(key, value, f"not a setting of the game; valid: {', '.join(GAME_KEYS)}")
    task = {"family": FAMILY, "deck": list(deck), "strategy": strategy, **params}
    task.setdefault("max_states", PLAY_MAX_STATES)
    _, out = checked_params(task)
    yes_no_tasks.check_partial_task(out)  # an entropy preset becomes its (r, t)
    if out.get("tie_break") == "pair" and strategy != "greedy":
        raise TaskError("tie_break", "pair", "only greedy breaks ties by pair")
    check_exact_size(
        out["deck"], out["max_states"], "--param max_states=N raises it, for a longer wait"
    )
    return out


def make_player(task: Mapping[str, Any]) -> belief_players.Player:
    """The computer player for a checked task: the family's own Player for its strategy."""
    if is_own(task):  # every move checked; no limit on the moves of a game
        moves = own_tasks.Moves(task)
        moves.limit = None
        return own_tasks.YesNoPlayer(moves)
    if ranked_tasks.applies(task):  # persistent, or greedy with pair ties
        return ranked_tasks.player(task)
    return yes_no_tasks.player(task)


class _OverBudget(Exception):
    """More decisions than the budget of :func:`own_expectation`."""


class _Budgeted:
    """``player`` that counts its decisions and stops after ``budget`` of them."""

    def __init__(self, player: belief_players.Player, budget: int):
        self.player, self.left = player, budget

    def start(self, deck):
        return self.player.start(deck)

    def guesses(self, state, belief):
        self.left -= 1
        if self.left < 0:
            raise _OverBudget
        return self.player.guesses(state, belief)

    def update(self, belief, a, yes):
        return self.player.update(belief, a, yes)


def own_expectation(
    player: belief_players.Player, deck: Sequence[int], budget: int = OWN_MAX_STATES
) -> Fraction | None:
    """The exact expected score of ``player`` on ``deck`` (belief_players.exact_counts, which
    the family's exact runs of the count-keeping strategies use), or None past ``budget``
    decisions."""
    if isinstance(player, belief_players.EvaluationPlayer):
        return yes_no.expected_score(player.ev, deck)[0]  # fills its memo: free guesses
    try:
        pmf, _ = belief_players.exact_distribution(deck, _Budgeted(player, budget))
    except _OverBudget:
        return None
    return sum((k * q for k, q in enumerate(pmf)), Fraction(0))


def strategy_label(task: Mapping[str, Any]) -> str:
    """The strategy and the parameters it plays with, e.g. ``info (gamma 0.15, shannon)``."""
    strategy, parts = task["strategy"], []
    if is_own(task):
        arguments = json.loads(task["strategy_params"])
        parts += [f"{k}={json.dumps(v)}" for k, v in arguments.items()]
        strategy = task["strategy_target"]
    if strategy == "info":
        from solvers.entropy import preset_name

        r, t = task["entropy_r"], task["entropy_t"]
        parts += [f"gamma {task['gamma']:g}", preset_name(r, t) or f"entropy r={r:g}, t={t:g}"]
        if task["log_base"] != 2:
            parts.append(f"log base {task['log_base']:g}")
    if strategy == "constant_decrement":
        parts.append(f"decrement {task['decrement']:g}")
    if task.get("tie_break") not in (None, "lowest"):
        parts.append(f"ties {task['tie_break']}")
    return f"{strategy} ({', '.join(parts)})" if parts else strategy
