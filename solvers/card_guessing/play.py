"""Play the yes/no card-guessing game against the computer in a terminal (Gural, Simper & So 2019,
section 7).

``python -m solvers.card_guessing.play [DECK] [--names J,Q,K] [--strategy optimal]
[--mode human|computer] [--seed N] [--color auto|always|never]``

* ``--mode human`` (default): the program shuffles a deck; you name each card before it is
  turned and hear only yes or no, while the computer plays the same deck alongside you.
* ``--mode computer``: you shuffle a real deck; the computer names each card, you answer
  y or n (``undo`` takes back the last answer).

After every card the screen shows the computer's guess and its chances for each type, the
answer, a bar chart of its exact belief over the composition of the cards still to come
(most likely first, the rest folded into one "other" bar) and the scores; at the end, both
scores and what the optimal strategy expects on average, exactly.

Rendering is done by small pure functions returning lines (play_screen.py); the loops here
only ask, update the (c, p) state of :mod:`solvers.card_guessing.exact.yes_no` and print.  A new
strategy becomes playable by adding one entry to :data:`PLAYERS` (name -> function of the
validated task returning an object with ``guess(state)``); strategies the family registers
that :func:`solvers.card_guessing.exact.yes_no.evaluation` knows work without an entry.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol, TextIO

from solvers.card_guessing.exact import yes_no
from solvers.card_guessing.exact.yes_no import Deck, Guess, State
from solvers.card_guessing.play_screen import (
    Lines,
    Style,
    answer_word,
    belief_lines,
    chances_lines,
    color_wanted,
    deck_text,
    expectation_lines,
    final_lines,
    guess_note,
    history_lines,
    rule,
    score_line,
)
from solvers.registry import TaskError, get_family, validate

PLAY_MAX_STATES = 100_000  # refuse decks whose exact solve would keep a player waiting
QUIT_WORDS = ("quit", "exit")
UNDO_WORDS = ("undo",)
RESERVED = {*QUIT_WORDS, *UNDO_WORDS, "help", "?", "y", "n", "yes", "no"}
FAMILY = "card_guessing"
HELP_GUESS = "Name the next card (its name or number); you hear yes or no. quit stops."
HELP_ANSWER = "Is the turned card the one the computer named? y or n; undo; quit stops."


class Guesser(Protocol):
    """Anything that names a card type in a labelled (c, p) state."""

    def guess(self, state: State) -> Guess: ...


PlayerFactory = Callable[[Mapping[str, Any]], Guesser]


def _evaluation_player(task: Mapping[str, Any]) -> Guesser:
    return yes_no.evaluation(task["strategy"], task.get("tie_break") or "lowest")


# strategy name (one the family registers) -> the computer player for its validated task;
# a strategy without an entry is played by yes_no.evaluation(strategy, tie_break)
PLAYERS: dict[str, PlayerFactory] = {
    "optimal": _evaluation_player,
    "greedy": _evaluation_player,
}


class InputError(ValueError):
    """A line typed at the prompt that cannot be used; the message says why."""


class Quit(Exception):
    """The player asked to stop."""


# ----------------------------------------------------------------------------- input


def default_names(n_types: int) -> list[str]:
    """Card names for ``n_types`` types: J, Q, K, A, then letters, then T1, T2, ..."""
    if n_types <= 4:
        return ["J", "Q", "K", "A"][:n_types]
    if n_types <= 26:
        return [chr(ord("A") + i) for i in range(n_types)]
    return [f"T{i + 1}" for i in range(n_types)]


def parse_names(text: str, n_types: int) -> list[str]:
    """Comma-separated card names, one per type, distinct ignoring case, at most 8 characters."""
    names = [n.strip() for n in text.split(",")]
    if len(names) != n_types:
        raise ValueError(f"{len(names)} names given for a deck of {n_types} types")
    for name in names:
        if not name or len(name) > 8 or " " in name:
            raise ValueError(f"card name {name!r} must be 1 to 8 characters with no spaces")
        if name.lower() in RESERVED or name.isdigit():
            raise ValueError(f"card name {name!r} is reserved (a command, answer or number)")
    if len({n.lower() for n in names}) != len(names):
        raise ValueError("card names must differ (ignoring case)")
    return names


def command(text: str) -> str:
    """The typed line, trimmed and lower-cased; raises Quit for quit/exit."""
    word = text.strip().lower()
    if word in QUIT_WORDS:
        raise Quit
    return word


def parse_guess(text: str, names: Sequence[str]) -> Guess:
    """The type named by ``text`` (its name in any case, or its number 1..r)."""
    word = command(text)
    if word in ("help", "?"):
        raise InputError(HELP_GUESS)
    for a, name in enumerate(names):
        if word == name.lower() or word == str(a + 1):
            return a
    choices = ", ".join(names)
    if not word:
        raise InputError(f"Type a card name: {choices} (or quit).")
    raise InputError(f"Unknown card {text.strip()!r}: type one of {choices} (or quit).")


def parse_answer(text: str) -> bool | str:
    """True for yes, False for no, ``"undo"`` to take back the last answer."""
    word = command(text)
    if word in ("y", "yes"):
        return True
    if word in ("n", "no"):
        return False
    if word in UNDO_WORDS:
        return "undo"
    if word in ("help", "?"):
        raise InputError(HELP_ANSWER)
    raise InputError(f"Please answer y or n (or undo, quit); got {text.strip()!r}.")


def contradiction(
    probs: Sequence[Fraction], guess: Guess, yes: bool, names: Sequence[str]
) -> str | None:
    """Why answering ``yes``/no to ``guess`` is impossible given the answers so far, or None."""
    name = names[guess]
    if yes and probs[guess] == 0:
        return (
            f"That can't be right: after your earlier answers no {name} can be next "
            f"(chance 0). Check the card and answer again (or undo)."
        )
    if not yes and probs[guess] == 1:
        return (
            f"That can't be right: after your earlier answers the next card must be a {name} "
            f"(chance 100%). Check the card and answer again (or undo)."
        )
    return None


# ----------------------------------------------------------------------------- console


@dataclass
class Console:
    """Where the game prints and reads: real streams by default, anything file-like in tests."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    read: Callable[[str], str] | None = None  # None: input() (echoed when stdin is no tty)
    style: Style = field(default_factory=Style)

    def show(self, lines: str | Sequence[str] = ("",)) -> None:
        """Print ``lines``."""
        for line in [lines] if isinstance(lines, str) else lines:
            self.out.write(line + "\n")
        self.out.flush()

    def ask(self, prompt: str, parse: Callable[[str], Any]) -> Any:
        """``parse`` of the typed line, asking again (with the reason) until it parses."""
        while True:
            text = self._line(self.style.paint(prompt, "bold"))
            try:
                return parse(text)
            except InputError as exc:
                self.show(self.style.paint(str(exc), "yellow"))

    def _line(self, prompt: str) -> str:
        if self.read is not None:
            return self.read(prompt)
        text = input(prompt)
        if not sys.stdin.isatty():  # keep piped transcripts readable
            self.out.write(text + "\n")
        return text


# ----------------------------------------------------------------------------- games


@dataclass
class Setup:
    """Everything fixed before the first card."""

    deck: Deck
    names: list[str]
    strategy: str
    player: Guesser
    optimal: Fraction
    own: Fraction | None


def computer_step(player: Guesser, state: State) -> tuple[list[Fraction], Guess]:
    """The computer's chances for the next card and its guess."""
    return yes_no.next_card_probabilities(state), player.guess(state)


def after(state: State, guess: Guess, yes: bool) -> State:
    """The (c, p) state after naming ``guess`` and hearing yes or no."""
    return yes_no.after_yes(state, guess) if yes else yes_no.after_no(state, guess)


def intro_lines(setup: Setup, mode: str, seed: int | None, style: Style) -> Lines:
    """The opening screen: the deck, the rules of the chosen mode and the commands."""
    names = ", ".join(setup.names)
    lines = [
        rule("guesslab: the yes/no card game", style, char="="),
        f"Deck: {deck_text(setup.deck, setup.names)}.",
    ]
    if mode == "human":
        lines += [
            f"Shuffled with --seed {seed} (use it again to replay this deck).",
            "Name each card before it is turned; you hear only yes or no.",
            f"The computer ({setup.strategy} strategy) plays the same deck alongside you.",
            f"Type a card name ({names}) or its number; quit stops.",
        ]
    else:
        lines += [
            "Shuffle a real deck like this and turn its cards one at a time, face down.",
            f"The computer ({setup.strategy} strategy) names each card first; answer y or n.",
            "undo takes back your last answer; quit stops.",
        ]
    return lines + ["", *belief_lines(yes_no.initial_state(setup.deck), setup.names, style)]


def play_human(setup: Setup, order: Sequence[Guess], console: Console) -> tuple[int, int]:
    """The person guesses the shuffled ``order`` while the computer plays it alongside."""
    style, names, total = console.style, setup.names, len(order)
    state = yes_no.initial_state(setup.deck)
    you = cpu = 0
    history: list[tuple[Guess, bool]] = []
    choices = "/".join(names)
    for k, card in enumerate(order, 1):
        console.show(["", rule(f"Card {k} of {total}", style)])
        mine = console.ask(
            f"Your guess for card {k} [{choices}]: ", lambda t: parse_guess(t, names)
        )
        probs, theirs = computer_step(setup.player, state)
        you += mine == card
        cpu += theirs == card
        history.append((mine, mine == card))
        state = after(state, theirs, theirs == card)
        console.show(
            [
                f"  You guessed {names[mine]}: {answer_word(mine == card, style)}.",
                *history_lines(names, history),
                *chances_lines(probs, names, theirs, style, f"  Computer's chances for card {k}: "),
                f"  Computer guessed {names[theirs]}: {answer_word(theirs == card, style)}.",
                *guess_note(probs, names, theirs, setup.strategy),
                *belief_lines(state, names, style),
                score_line([("you", you), ("computer", cpu)], k, total),
            ]
        )
    console.show(
        final_lines(
            [("You", you), (f"Computer ({setup.strategy})", cpu)],
            total,
            expectation_lines(setup.deck, setup.strategy, setup.optimal, setup.own),
            [names[c] for c in order],
            style,
        )
    )
    return you, cpu


def play_computer(setup: Setup, console: Console) -> int:
    """The computer guesses a physical deck; the person answers yes or no for each card."""
    style, names = console.style, setup.names
    state = yes_no.initial_state(setup.deck)
    total, cpu = state[0], 0
    undo: list[tuple[State, int]] = []
    while state[0] > 0:
        k = total - state[0] + 1
        probs, guess = computer_step(setup.player, state)
        console.show(["", rule(f"Card {k} of {total}", style)])
        console.show(chances_lines(probs, names, guess, style, f"Chances for card {k}: "))
        console.show(f"The computer guesses {names[guess]}.")
        console.show(guess_note(probs, names, guess, setup.strategy))
        answer = console.ask(
            f"Is card {k} a {names[guess]}? [y/n]: ",
            lambda t, p=probs, g=guess: _answer(t, p, g, names),
        )
        if answer == "undo":
            if not undo:
                console.show("Nothing to undo yet.")
                continue
            state, cpu = undo.pop()
            console.show(f"Took back the answer for card {k - 1}.")
            continue
        undo.append((state, cpu))
        cpu += answer
        state = after(state, guess, answer)
        console.show(
            [
                f"  {names[guess]}: {answer_word(answer, style)}.",
                *belief_lines(state, names, style),
                score_line([("computer", cpu)], k, total),
            ]
        )
    console.show(
        final_lines(
            [(f"Computer ({setup.strategy})", cpu)],
            total,
            expectation_lines(setup.deck, setup.strategy, setup.optimal, setup.own),
            None,
            style,
        )
    )
    return cpu


def _answer(text: str, probs: Sequence[Fraction], guess: Guess, names: Sequence[str]):
    answer = parse_answer(text)
    if answer != "undo":
        reason = contradiction(probs, guess, answer, names)
        if reason:
            raise InputError(reason)
    return answer


# ----------------------------------------------------------------------------- setup


def strategy_names() -> list[str]:
    """Strategies offered: those the card_guessing family registers."""
    return list(get_family(FAMILY).strategies)


def player_task(deck: Sequence[int], strategy: str, params: Mapping[str, str]) -> dict[str, Any]:
    """The validated card_guessing task for the computer's strategy (errors name the key)."""
    task = {"family": FAMILY, "deck": list(deck), "strategy": strategy, **params}
    fam = get_family(FAMILY)
    if "max_states" not in params and "max_states" in fam.param_names:
        task["max_states"] = PLAY_MAX_STATES
    out = validate(task)
    if fam.check_task is not None:
        fam.check_task(out)
    return out


def make_player(task: Mapping[str, Any]) -> Guesser:
    """The computer player for a validated task: PLAYERS entry, else yes_no.evaluation."""
    factory = PLAYERS.get(task["strategy"], _evaluation_player)
    try:
        return factory(task)
    except ValueError as exc:
        raise TaskError(
            "strategy",
            task["strategy"],
            f"not playable yet ({exc}); add it to solvers.card_guessing.play.PLAYERS",
        ) from None


def own_expectation(player: Guesser, deck: Sequence[int]) -> Fraction | None:
    """The exact expected score of the computer's own strategy, when it can be evaluated."""
    if isinstance(player, yes_no.Evaluation):
        return yes_no.expected_score(player, deck)[0]
    return None


def make_setup(deck: Sequence[int], names: list[str], strategy: str, params: Mapping) -> Setup:
    """Validate the computer's task and compute the exact expectations, before play starts."""
    task = player_task(deck, strategy, params)
    player = make_player(task)
    deck = tuple(task["deck"])
    own = own_expectation(player, deck)  # fills the player's memo: its guesses are then free
    optimal = own if strategy == "optimal" and own is not None else yes_no.optimal_value(deck)[0]
    return Setup(deck, names, strategy, player, optimal, own)


def shuffled_order(deck: Sequence[int], seed: int) -> list[Guess]:
    """The deck as a list of type indices, shuffled reproducibly by ``seed``."""
    cards = [a for a, c in enumerate(deck) for _ in range(c)]
    random.Random(seed).shuffle(cards)
    return cards


def parse_params(items: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict (values are checked by the family)."""
    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--param {item!r}: expected KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


COMMAND = "guesslab-play"  # the installed console script (pyproject's [project.scripts])


def program_name(argv0: str) -> str:
    """The name usage lines give: the console script, or the module run with ``python -m``."""
    return COMMAND if os.path.basename(argv0) == COMMAND else "python -m solvers.card_guessing.play"


def parser() -> argparse.ArgumentParser:
    """The command-line options."""
    p = argparse.ArgumentParser(
        prog=program_name(sys.argv[0]),
        description=(
            "Play the yes/no card-guessing game against the computer "
            "(Gural, Simper & So 2019, section 7)."
        ),
    )
    p.add_argument("deck", nargs="?", default="3,3,3", help="cards per type (default 3,3,3)")
    p.add_argument("--names", help="card names, one per type (default J,Q,K for three types)")
    p.add_argument("--strategy", default="optimal", choices=strategy_names())
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a strategy parameter of the card_guessing family, e.g. tie_break=highest",
    )
    p.add_argument("--mode", choices=("human", "computer"), default="human")
    p.add_argument("--seed", type=int, help="shuffle seed (human mode; default: random)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    return p


def setup_from_args(args: argparse.Namespace, p: argparse.ArgumentParser) -> Setup:
    """The Setup for parsed options; bad values end in a usage error naming the option."""
    from solvers.card_guessing import check_deck

    try:
        deck = check_deck(args.deck)
    except ValueError as exc:
        p.error(f"deck {args.deck!r}: {exc}")
    try:
        names = parse_names(args.names, len(deck)) if args.names else default_names(len(deck))
    except ValueError as exc:
        p.error(f"--names {args.names!r}: {exc}")
    try:
        return make_setup(deck, names, args.strategy, parse_params(args.param))
    except ValueError as exc:
        p.error(str(exc))


def main(argv: Sequence[str] | None = None) -> int:
    """Run one game; 0 when it ends or the player quits, 130 on Ctrl-C, 2 on bad options."""
    p = parser()
    args = p.parse_args(argv)
    style = Style(color_wanted(args.color, sys.stdout.isatty(), os.environ))
    console = Console(style=style)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    try:
        setup = setup_from_args(args, p)
        console.show(intro_lines(setup, args.mode, seed, style))
        if args.mode == "human":
            play_human(setup, shuffled_order(setup.deck, seed), console)
        else:
            play_computer(setup, console)
    except Quit:
        console.show("Stopped. Bye.")
    except EOFError:
        console.show(["", "Input ended. Bye."])
    except KeyboardInterrupt:
        console.show(["", "Interrupted. Bye."])
        return 130
    except BrokenPipeError:  # the reader went away: silence the final flush too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
