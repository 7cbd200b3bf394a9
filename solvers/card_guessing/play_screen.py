"""What the terminal game (play.py) shows: colours, exact numbers as text, the computer's belief
as a bar chart, and the screens around each card.

Every function here is pure: it returns lines (tested directly) and prints nothing.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from solvers.card_guessing.exact import yes_no
from solvers.card_guessing.exact.yes_no import Deck, Guess, State

Belief = Mapping[Deck, Fraction]  # composition of the cards still to come -> probability
Bar = tuple[str, Fraction, str]  # (label, probability, kind: "top", "rest" or "other")
Lines = list[str]

WIDTH = 80
BAR_ROWS = 6  # bars shown at most, "other" included


# ----------------------------------------------------------------------------- colour


ANSI = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
_ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Style:
    """Whether to colour; ``paint`` wraps text in ANSI codes only when it should."""

    color: bool = False

    def paint(self, text: str, *names: str) -> str:
        """``text`` in the named ANSI styles (unchanged when colour is off)."""
        if not self.color or not names or not text:
            return text
        codes = ";".join(ANSI[n] for n in names)
        return f"\x1b[{codes}m{text}\x1b[0m"


def color_wanted(choice: str, is_tty: bool, env: Mapping[str, str]) -> bool:
    """True when output should be coloured: ``always``, or ``auto`` on a capable terminal."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    return is_tty and not env.get("NO_COLOR") and env.get("TERM", "") != "dumb"


def visible(text: str) -> str:
    """``text`` without ANSI escape sequences (what the terminal shows)."""
    return _ANSI_RE.sub("", text)


# ----------------------------------------------------------------------------- numbers


def percent(p: Fraction) -> str:
    """A probability as a percentage with one decimal, e.g. ``33.3%``."""
    return f"{float(p) * 100:.1f}%"


def fraction_text(p: Fraction, limit: int = 11) -> str:
    """``p`` as ``a/b`` (``1`` and ``0`` bare), or "" if longer than ``limit`` characters."""
    text = str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"
    return text if len(text) <= limit else ""


def composition_label(comp: Sequence[int]) -> str:
    """A composition as Gural, Simper & So (2019) write it, e.g. ``(2,3,2)``."""
    return "(" + ",".join(str(k) for k in comp) + ")"


def clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, ending in ``~`` when cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "~"


# ----------------------------------------------------------------------------- belief


def ranked_belief(belief: Belief) -> list[tuple[Deck, Fraction]]:
    """Compositions with positive probability, most likely first (ties: smaller tuple first)."""
    return sorted(((c, p) for c, p in belief.items() if p > 0), key=lambda cp: (-cp[1], cp[0]))


def belief_bars(belief: Belief, rows: int = BAR_ROWS) -> list[Bar]:
    """At most ``rows`` bars: the likeliest compositions, the rest folded into one "other"."""
    ranked = ranked_belief(belief)
    if len(ranked) <= rows:
        shown, rest = ranked, []
    else:
        shown, rest = ranked[: rows - 1], ranked[rows - 1 :]
    bars: list[Bar] = [
        (composition_label(c), p, "top" if i == 0 else "rest") for i, (c, p) in enumerate(shown)
    ]
    if rest:
        bars.append((f"other ({len(rest)})", sum((p for _, p in rest), Fraction(0)), "other"))
    return bars


def bar_chart(bars: Sequence[Bar], style: Style = Style(), width: int = WIDTH) -> Lines:
    """One line per bar: label, a '#' bar scaled so probability 1 fills it, %, exact value."""
    label_w = min(max((len(b[0]) for b in bars), default=0), 30)
    frac_w = max((len(fraction_text(b[1])) for b in bars), default=0)
    bar_w = max(width - (2 + label_w + 2 + 2 + 6 + 2 + frac_w), 5)
    colour = {"top": ("green",), "rest": ("cyan",), "other": ("dim",)}
    lines = []
    for label, p, kind in bars:
        n = round(float(p) * bar_w)
        if p > 0 and n == 0:
            n = 1  # a possible composition never looks impossible
        bar = style.paint("#" * n, *colour[kind]) + " " * (bar_w - n)
        pct = style.paint(f"{percent(p):>6}", "bold") if kind == "top" else f"{percent(p):>6}"
        text = f"  {clip(label, label_w):<{label_w}}  {bar}  {pct}  {fraction_text(p)}"
        lines.append(text.rstrip())
    return lines


def belief_lines(
    state: State,
    names: Sequence[str],
    style: Style = Style(),
    width: int = WIDTH,
    estimates_only: bool = False,
) -> Lines:
    """The exact odds of the cards still to come given the answers: a heading and the bar
    chart.  They are the computer's belief, unless it keeps only estimated counts
    (``estimates_only``: count_tracker, constant_decrement), when the heading says so."""
    n = state[0]
    if n == 0:
        return []
    belief = yes_no.composition_posterior(state)
    what = "card" if n == 1 else "cards"
    if estimates_only:
        head = f"The {n} {what} still to come ({','.join(names)}), exact odds (not the computer's):"
    else:
        head = f"Computer's belief about the {n} {what} still to come ({','.join(names)}):"
    return [clip(head, width), *bar_chart(belief_bars(belief), style, width)]


def chances_lines(
    probs: Sequence[Fraction],
    names: Sequence[str],
    guess: Guess | None,
    style: Style = Style(),
    head: str = "Chances for the next card: ",
    width: int = WIDTH,
) -> Lines:
    """The computer's chances for the next card, its guess in brackets, wrapped to ``width``."""
    items = []
    for a, (name, p) in enumerate(zip(names, probs, strict=True)):
        item = f"{name} {percent(p)}"
        items.append(style.paint(f"[{item}]", "bold") if a == guess else item)
    return wrap_items(head, items, width)


def wrap_items(head: str, items: Sequence[str], width: int = WIDTH) -> Lines:
    """``head`` followed by ``items`` two spaces apart, wrapped under ``head`` at ``width``."""
    lines, line, indent = [], head, " " * min(len(visible(head)), 8)
    for item in items:
        sep = "" if line in (head, indent) else "  "
        if len(visible(line + sep + item)) > width and line not in (head, indent):
            lines.append(line)
            line, sep = indent, ""
        line += sep + item
    lines.append(line)
    return lines


# why a strategy names a type that is not the likeliest ({g}: the type named)
WHY_NOT_LIKELIEST = {
    "optimal": "naming {g} scores more on average over the rest of the deck",
    "info": "the answer to {g} is expected to leave less uncertainty about the rest",
    "count_tracker": "the computer's estimated count of {g} is higher",
    "constant_decrement": "the computer's estimated count of {g} is higher",
    "persistent": "{g} is within 10% of it and was refused most often of those",
}


def guess_note(
    probs: Sequence[Fraction], names: Sequence[str], guess: Guess, strategy: str
) -> Lines:
    """Why the guess may look odd: said when the computer names a type that is not likeliest."""
    best = max(range(len(probs)), key=lambda a: (probs[a], -a))
    if probs[guess] == probs[best]:
        return []
    text = f"  ({names[best]} is likelier at {percent(probs[best])}"
    if strategy in WHY_NOT_LIKELIEST:
        text += ", but " + WHY_NOT_LIKELIEST[strategy].format(g=names[guess])
    return wrap_text(text + ")")


def estimate_lines(
    estimates: Sequence[Fraction] | None, state: State, names: Sequence[str]
) -> Lines:
    """A count-keeping strategy's estimated cards per type still to come (what it names the
    largest of), or nothing."""
    if estimates is None or state[0] == 0:
        return []
    items = [f"{name} {float(e):.2f}" for name, e in zip(names, estimates, strict=True)]
    return wrap_items("Computer's estimated counts: ", items)


# ----------------------------------------------------------------------------- screens


def rule(title: str, style: Style = Style(), width: int = WIDTH, char: str = "-") -> str:
    """A heading line ``--- title ------`` exactly ``width`` characters wide."""
    text = f"{char * 3} {title} "
    return style.paint(text + char * max(width - len(text), 0), "bold")


def answer_word(yes: bool, style: Style = Style()) -> str:
    """``yes`` in green or ``no`` in red."""
    return style.paint("yes", "green", "bold") if yes else style.paint("no", "red")


def history_lines(names: Sequence[str], guesses: Sequence[tuple[Guess, bool]]) -> Lines:
    """Your guesses so far, ``+`` for yes and ``-`` for no (the source's cards on the table)."""
    items = [f"{names[g]}{'+' if yes else '-'}" for g, yes in guesses]
    return wrap_items("  Your guesses so far: ", items)


def deck_text(deck: Sequence[int], names: Sequence[str]) -> str:
    """The deck in words, e.g. ``3 J, 3 Q, 3 K (9 cards)``."""
    parts = ", ".join(f"{c} {name}" for c, name in zip(deck, names, strict=True))
    return f"{parts} ({sum(deck)} cards)"


def score_line(scores: Sequence[tuple[str, int]], done: int, total: int) -> str:
    """``Score after 3 of 9 cards: you 1, computer 2``."""
    parts = ", ".join(f"{who} {score}" for who, score in scores)
    return f"Score after {done} of {total} cards: {parts}"


def expectation_lines(
    deck: Sequence[int], strategy: str, optimal: Fraction, own: Fraction | None
) -> Lines:
    """What the optimal strategy (and the computer's own, if different) expects, exactly."""
    n = sum(deck)
    lines = [
        f"On average the optimal strategy gets {float(optimal):.3f} of {n} right "
        f"(exactly {optimal})."
    ]
    if strategy != "optimal" and own is not None:
        lines.append(f"The {strategy} strategy gets {float(own):.3f} (exactly {own}).")
    elif strategy != "optimal":
        lines.append(f"The {strategy} strategy's average is not computed on a deck this large.")
    return lines


def final_lines(
    scores: Sequence[tuple[str, int]],
    total: int,
    expectations: Lines,
    order_names: Sequence[str] | None,
    style: Style = Style(),
) -> Lines:
    """The closing screen: the deck (if known), every score, the exact expectations."""
    lines = ["", rule("Game over", style, char="=")]
    if order_names is not None:
        lines += wrap_items("The deck was: ", list(order_names))
    who_w = max(len(who) for who, _ in scores)
    lines += [f"{who + ':':<{who_w + 1}} {score} of {total}" for who, score in scores]
    return lines + [wrap for e in expectations for wrap in wrap_text(e)]


def wrap_text(text: str, width: int = WIDTH) -> Lines:
    """Plain text wrapped on spaces to ``width``, continuation lines indented like the first."""
    indent = text[: len(text) - len(text.lstrip())]
    more = indent + " " if indent else ""
    return textwrap.wrap(text, width, subsequent_indent=more) or [""]


# a sentence's end: ., ! or ? before a blank and a capital letter (so "e.g. the" goes on)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def first_sentence(doc: str) -> str:
    """The first sentence of a docstring, whole, on one line, without its final stop: its
    first paragraph (up to a blank line), cut where a sentence ends."""
    paragraph = " ".join(inspect.cleandoc(doc).split("\n\n", 1)[0].split())
    return SENTENCE_END.split(paragraph, maxsplit=1)[0].rstrip(".")
