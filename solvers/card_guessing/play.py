"""Play the yes/no card-guessing game against the computer in a terminal (Gural, Simper & So 2019,
section 7).

``python -m solvers.card_guessing.play [DECK] [--names J,Q,K] [--strategy optimal]
[--gamma G] [--entropy NAME|R,T] [--decrement D] [--param KEY=VALUE]
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
only ask, update the (c, p) state of :mod:`solvers.card_guessing.exact.yes_no` and print.  The
computer plays with the family's own Player for its strategy (play_players.py).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, TextIO

from solvers.card_guessing.exact import belief_players, yes_no
from solvers.card_guessing.exact.yes_no import Deck, Guess, State
from solvers.card_guessing.play_players import (
    OPTIONS,
    STRATEGIES,
    Computer,
    is_dotted,
    make_player,
    own_expectation,
    player_task,
    strategy_label,
    strategy_names,
)
from solvers.card_guessing.play_screen import (
    Lines,
    Style,
    answer_word,
    belief_lines,
    chances_lines,
    color_wanted,
    deck_text,
    estimate_lines,
    expectation_lines,
    final_lines,
    first_sentence,
    guess_note,
    history_lines,
    rule,
    score_line,
    wrap_text,
)
from solvers.card_guessing.tasks import own_tasks
from solvers.own_strategy import StrategyError
from solvers.registry import TaskError, get_family

QUIT_WORDS = ("quit", "exit")
UNDO_WORDS = ("undo",)
RESERVED = {*QUIT_WORDS, *UNDO_WORDS, "help", "?", "y", "n", "yes", "no"}
HELP_GUESS = "Name the next card (its name or number); you hear yes or no. quit stops."
HELP_ANSWER = "Is the turned card the one the computer named? y or n; undo; quit stops."


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
    player: belief_players.Player  # the family's Player for the validated task
    optimal: Fraction
    own: Fraction | None  # the strategy's exact average (None: not computed on this deck)
    label: str = ""  # the strategy with its parameters, e.g. "info (gamma 0.15, shannon)"

    @property
    def estimates_only(self) -> bool:
        """Whether the computer keeps a belief of its own (estimated counts, or a strategy of
        one's own), so the exact odds shown are not its own."""
        return isinstance(self.player, belief_players.EstimatePlayer | own_tasks.YesNoPlayer)

    def computer(self, seed: int | None = None) -> Computer:
        """A fresh computer for one game (``seed``: its tie draws, for a replayable game)."""
        comp = Computer(self.player, random.Random(seed))
        comp.start(self.deck)
        return comp


def computer_step(computer: Computer, state: State) -> tuple[list[Fraction], Guess]:
    """The computer's chances for the next card and its guess."""
    return yes_no.next_card_probabilities(state), computer.guess(state)


def after(state: State, guess: Guess, yes: bool) -> State:
    """The (c, p) state after naming ``guess`` and hearing yes or no."""
    return yes_no.after_yes(state, guess) if yes else yes_no.after_no(state, guess)


def intro_lines(setup: Setup, mode: str, seed: int | None, style: Style) -> Lines:
    """The opening screen: the deck, the strategy, the rules of the chosen mode, the commands."""
    names = ", ".join(setup.names)
    lines = [
        rule("guesslab: the yes/no card game", style, char="="),
        f"Deck: {deck_text(setup.deck, setup.names)}.",
        *wrap_text(f"Computer's strategy: {setup.label or setup.strategy}: {describe(setup)}."),
    ]
    if mode == "human":
        lines += [
            f"Shuffled with --seed {seed} (use it again to replay this deck).",
            "Name each card before it is turned; you hear only yes or no.",
            "The computer plays the same deck alongside you.",
            f"Type a card name ({names}) or its number; quit stops.",
        ]
    else:
        lines += [
            "Shuffle a real deck like this and turn its cards one at a time, face down.",
            "The computer names each card first; answer y or n.",
            "undo takes back your last answer; quit stops.",
        ]
    start = yes_no.initial_state(setup.deck)
    return lines + [
        "",
        *belief_lines(start, setup.names, style, estimates_only=setup.estimates_only),
    ]


def describe(setup: Setup) -> str:
    """The strategy in a few words: the family's line, or its docstring's first sentence."""
    if setup.strategy in STRATEGIES:
        return STRATEGIES[setup.strategy]
    first = first_sentence(type(setup.player.moves.strategy).__doc__ or "") or "no docstring"
    return f"a strategy of your own ({first})"


def reasoning_lines(why: str | None, indent: str = "  ") -> Lines:
    """The computer's own words for its guess (a strategy of one's own with ``explain``)."""
    return wrap_text(f"{indent}Its reasoning: {why}") if why else []


def play_human(
    setup: Setup, order: Sequence[Guess], console: Console, seed: int | None = None
) -> tuple[int, int]:
    """The person guesses the shuffled ``order`` while the computer plays it alongside."""
    style, names, total = console.style, setup.names, len(order)
    state, computer = yes_no.initial_state(setup.deck), setup.computer(seed)
    you = cpu = 0
    history: list[tuple[Guess, bool]] = []
    choices = "/".join(names)
    # a count-keeper's guesses follow its estimates: the chances shown are the exact ones
    chances = "Exact chances" if setup.estimates_only else "Computer's chances"
    for k, card in enumerate(order, 1):
        console.show(["", rule(f"Card {k} of {total}", style)])
        mine = console.ask(
            f"Your guess for card {k} [{choices}]: ", lambda t: parse_guess(t, names)
        )
        probs, theirs = computer_step(computer, state)
        why = computer.explanation()
        you += mine == card
        cpu += theirs == card
        history.append((mine, mine == card))
        state = after(state, theirs, theirs == card)
        computer.update(theirs, theirs == card)
        console.show(
            [
                f"  You guessed {names[mine]}: {answer_word(mine == card, style)}.",
                *history_lines(names, history),
                *chances_lines(probs, names, theirs, style, f"  {chances} for card {k}: "),
                f"  Computer guessed {names[theirs]}: {answer_word(theirs == card, style)}.",
                *reasoning_lines(why),
                *guess_note(probs, names, theirs, setup.strategy),
                *belief_lines(state, names, style, estimates_only=setup.estimates_only),
                *estimate_lines(computer.estimates(), state, names),
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
    state, computer = yes_no.initial_state(setup.deck), setup.computer()
    total, cpu = state[0], 0
    undo: list[tuple[State, int, Any]] = []
    while state[0] > 0:
        k = total - state[0] + 1
        probs, guess = computer_step(computer, state)
        console.show(["", rule(f"Card {k} of {total}", style)])
        console.show(chances_lines(probs, names, guess, style, f"Chances for card {k}: "))
        console.show(f"The computer guesses {names[guess]}.")
        console.show(reasoning_lines(computer.explanation(), indent=""))
        console.show(guess_note(probs, names, guess, setup.strategy))
        answer = console.ask(
            f"Is card {k} a {names[guess]}? [y/n]: ",
            lambda t, p=probs, g=guess: _answer(t, p, g, names),
        )
        if answer == "undo":
            if not undo:
                console.show("Nothing to undo yet.")
                continue
            state, cpu, computer.belief = undo.pop()
            console.show(f"Took back the answer for card {k - 1}.")
            continue
        undo.append((state, cpu, computer.belief))
        cpu += answer
        state = after(state, guess, answer)
        computer.update(guess, answer)
        console.show(
            [
                f"  {names[guess]}: {answer_word(answer, style)}.",
                *belief_lines(state, names, style, estimates_only=setup.estimates_only),
                *estimate_lines(computer.estimates(), state, names),
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


def make_setup(deck: Sequence[int], names: list[str], strategy: str, params: Mapping) -> Setup:
    """Check the computer's task and compute the exact expectations, before play starts."""
    task = player_task(deck, strategy, params)
    player = make_player(task)
    deck = tuple(task["deck"])
    own = own_expectation(player, deck)
    optimal = own if strategy == "optimal" else yes_no.optimal_value(deck)[0]
    return Setup(deck, names, strategy, player, optimal, own, strategy_label(task))


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


def option_params(args: argparse.Namespace) -> dict[str, str]:
    """The strategy parameters given by their own options (``--entropy R,T``: r and t)."""
    out = {}
    if args.gamma is not None:
        out["gamma"] = args.gamma
    if args.decrement is not None:
        out["decrement"] = args.decrement
    if args.entropy is not None:
        r, comma, t = args.entropy.partition(",")
        if comma:
            out["entropy_r"], out["entropy_t"] = r.strip(), t.strip()
        else:
            out["entropy"] = args.entropy
    return out


COMMAND = "guesslab-play"  # the installed console script (pyproject's [project.scripts])


def program_name(argv0: str) -> str:
    """The name usage lines give: the console script, or the module run with ``python -m``."""
    return COMMAND if os.path.basename(argv0) == COMMAND else "python -m solvers.card_guessing.play"


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line: what is wrong, naming the option and the value; exit 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def strategies_help() -> str:
    """The strategies offered, one line each (the end of --help)."""
    names = strategy_names()
    width = max(len(n) for n in [*names, OWN_NAME])
    lines = [f"  {n:<{width}}  {STRATEGIES[n]}" for n in names]
    lines.append(f"  {OWN_NAME:<{width}}  your own class; its arguments by --param KEY=VALUE")
    return "strategies (--strategy):\n" + "\n".join(lines)


OWN_NAME = "module.Class"  # how --help shows a strategy of one's own


def parser() -> argparse.ArgumentParser:
    """The command-line options."""
    defaults = {p.name: p.default for p in get_family("card_guessing").rules.params}
    p = _Parser(
        prog=program_name(sys.argv[0]),
        description=(
            "Play the yes/no card-guessing game against the computer\n"
            "(Gural, Simper & So 2019, section 7)."
        ),
        epilog=strategies_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("deck", nargs="?", default="3,3,3", help="cards per type (default 3,3,3)")
    p.add_argument("--names", help="card names, one per type (default J,Q,K for three types)")
    p.add_argument(
        "--strategy",
        default="optimal",
        metavar="NAME",
        help="the computer's strategy, listed below, or a class of your own as module.Class "
        "(default optimal)",
    )
    p.add_argument(
        "--gamma",
        metavar="G",
        help=f"info: weight of the expected entropy, a number >= 0 (default {defaults['gamma']})",
    )
    p.add_argument(
        "--entropy",
        metavar="NAME|R,T",
        help="info: the Sharma-Mittal entropy, a named one (shannon, collision, min_entropy, "
        "...) or its order and degree R,T (default shannon, in bits)",
    )
    p.add_argument(
        "--decrement",
        metavar="D",
        help="constant_decrement: estimate each other type loses per no, a number >= 0 "
        f"(default {defaults['decrement']})",
    )
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another parameter of the strategy: tie_break (lowest, highest, uniform; greedy "
        "also pair), log_base, entropy_r, entropy_t, max_states",
    )
    p.add_argument("--mode", choices=("human", "computer"), default="human")
    p.add_argument("--seed", type=int, help="shuffle seed (human mode; default: random)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    return p


def task_params(args: argparse.Namespace) -> tuple[dict[str, str], dict[str, str]]:
    """(the strategy's parameters, for each the option that gave it) of parsed options."""
    given = option_params(args)
    origin = {k: OPTIONS.get(k, "--entropy") for k in given}
    for key, value in parse_params(args.param).items():
        if key in given or (key in ("entropy_r", "entropy_t", "entropy") and args.entropy):
            where = origin.get(key, "--entropy")
            raise ValueError(f"--param {key}={value!r}: given by {where} already")
        given[key], origin[key] = value, "--param"
    return given, origin


def option_message(exc: TaskError, args: argparse.Namespace, origin: Mapping[str, str]) -> str:
    """A checked parameter's error as the player typed it: ``--gamma '-1': must be ...``."""
    if exc.key in ("strategy", "strategy_target", "feedback"):  # the class itself
        return f"--strategy {args.strategy!r}: {exc.reason}"
    if exc.key == "strategy_params":
        return f"--param: {exc.reason}"
    where = origin.get(exc.key)
    reason = exc.reason.replace(f"strategy {args.strategy!r}", f"--strategy {args.strategy}")
    if where == "--param":
        return f"--param {exc.key}={exc.value!r}: {reason}"
    if where == "--entropy" and exc.key != "entropy":  # R,T: say which of the two
        return f"--entropy {args.entropy!r}: {exc.key}={exc.value!r}: {reason}"
    if where is not None:
        return f"{where} {exc.value!r}: {reason}"
    if exc.key == "deck":
        return f"deck {args.deck!r}: {reason}"
    return str(exc)


def setup_from_args(args: argparse.Namespace, p: argparse.ArgumentParser) -> Setup:
    """The Setup for parsed options; bad values end in a usage error naming the option."""
    from solvers.card_guessing.rules import check_deck

    try:
        deck = check_deck(args.deck)
    except ValueError as exc:
        p.error(f"deck {args.deck!r}: {exc}")
    try:
        names = parse_names(args.names, len(deck)) if args.names else default_names(len(deck))
    except ValueError as exc:
        p.error(f"--names {args.names!r}: {exc}")
    if not is_dotted(args.strategy) and args.strategy not in strategy_names():
        p.error(
            f"--strategy {args.strategy!r}: unknown; valid: {', '.join(strategy_names())}, or "
            f"a class of your own as {OWN_NAME}"
        )
    try:
        params, origin = task_params(args)
    except ValueError as exc:
        p.error(str(exc))
    try:
        return make_setup(deck, names, args.strategy, params)
    except TaskError as exc:
        p.error(option_message(exc, args, origin))


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
            play_human(setup, shuffled_order(setup.deck, seed), console, seed)
        else:
            play_computer(setup, console)
    except Quit:
        console.show("Stopped. Bye.")
    except EOFError:
        console.show(["", "Input ended. Bye."])
    except StrategyError as exc:  # a strategy of one's own failed in a move
        console.show(["", f"The computer's strategy failed: {exc}"])
        return 1
    except KeyboardInterrupt:
        console.show(["", "Interrupted. Bye."])
        return 130
    except BrokenPipeError:  # the reader went away: silence the final flush too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
