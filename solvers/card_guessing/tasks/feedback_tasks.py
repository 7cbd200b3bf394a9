"""Tasks with ``feedback: complete`` or ``feedback: none``: which strategies apply, checks, rows.

- ``complete`` (the card is shown after each guess): ``optimal`` and ``greedy`` (the same
  policy: name a most frequent remaining type; every tie-break gives the same distribution).
  Rows add the entropy bounds of Gural, Simper & So (2019) section 4 (exact/entropy_bounds.py).
- ``none`` (nothing is shown): ``optimal`` and ``greedy`` (both always name a most frequent
  type of the full deck; greedy's ``tie_break`` picks among tied types, ``uniform`` draws
  each guess afresh), and ``sequence``: a fixed guess sequence given by ``sequence``.

Strategies that learn from yes/no answers are for ``partial`` only; ``sequence`` is for
``none`` only.  Both models are solved exactly for every deck (``method: exact``).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from solvers.card_guessing.exact import complete_feedback, entropy_bounds, no_feedback
from solvers.params import IntListCheck, described, int_words
from solvers.registry import Row, Task, TaskError, exact_columns

STRATEGIES_BY_FEEDBACK = {
    "complete": ("optimal", "greedy"),
    "none": ("optimal", "greedy", "sequence"),
}
SEQUENCE_ONLY_FEEDBACK = "none"
COLUMNS = {
    "bound_lower": "float64",
    "bound_lower_chords": "float64",
    "bound_upper": "float64",
}
COLUMN_DOCS = {  # the same columns in words
    "bound_lower": "complete feedback: Feder and Merhav's lower curve on the expected score, "
    "as Gural, Simper & So (2019) publish it (not a bound at every step)",
    "bound_lower_chords": "complete feedback: the chords of that curve, a rigorous lower bound",
    "bound_upper": "complete feedback: Fano's upper bound on the expected score",
}


TYPE_INDICES = IntListCheck(low=0)  # type indices count from 0


@described(
    "one of "
    + ", ".join(f"`{name}`" for name in no_feedback.SEQUENCE_NAMES)
    + f", or a list of type indices ({int_words(TYPE_INDICES.low, None, plural=True)})"
)
def check_sequence(value: Any) -> str | list[int]:
    """A named sequence (constant, cycle, blocks) or a list of type indices (0-based)."""
    if isinstance(value, str) and value.strip() in no_feedback.SEQUENCE_NAMES:
        return value.strip()
    if isinstance(value, str) and not value.replace(",", "").replace(" ", "").isdigit():
        raise check_sequence.refused()
    try:
        return TYPE_INDICES(value)
    except ValueError:
        raise check_sequence.refused() from None


def check_task(task: Task) -> None:
    """Refuse, before any work, strategies, methods and sequences that do not fit the feedback."""
    feedback, strategy = task["feedback"], task["strategy"]
    if feedback not in STRATEGIES_BY_FEEDBACK:
        raise TaskError("strategy", strategy, f"only defined for feedback={SEQUENCE_ONLY_FEEDBACK}")
    valid = STRATEGIES_BY_FEEDBACK[feedback]
    if strategy not in valid:
        raise TaskError(
            "strategy", strategy, f"not defined for feedback={feedback}; valid: {', '.join(valid)}"
        )
    if task["method"] != "exact":
        raise TaskError(
            "method", task["method"], f"feedback={feedback} is solved exactly: use method=exact"
        )
    deck = task["deck"]
    if strategy == "sequence":
        check_sequence_fits(task["sequence"], deck)
    work = estimated_work(task)
    if work > task["max_states"]:
        raise TaskError(
            "deck",
            deck,
            f"too large for feedback={feedback}: about {work:,} states, limit "
            f"max_states={task['max_states']:,} (raise max_states to try anyway)",
        )


def check_sequence_fits(sequence: str | list[int], deck: Sequence[int]) -> None:
    """Raise TaskError("sequence", ...) unless it names one type per card of ``deck``."""
    if isinstance(sequence, str):
        return
    if len(sequence) != sum(deck):
        raise TaskError(
            "sequence", sequence, f"has {len(sequence)} guesses but the deck has {sum(deck)} cards"
        )
    bad = [g for g in sequence if g >= len(deck)]
    if bad:
        raise TaskError(
            "sequence", sequence, f"names type {bad[0]} but the deck has types 0..{len(deck) - 1}"
        )


def estimated_work(task: Task) -> int:
    """States the exact solve visits (complete feedback), or the number of cards (none)."""
    deck = task["deck"]
    if task["feedback"] == "complete":
        return complete_feedback.state_count(deck)
    return sum(deck)


def tied_types(deck: Sequence[int]) -> list[int]:
    """The types with the largest count."""
    return [i for i, c in enumerate(deck) if c == max(deck)]


def rows(task: Task) -> list[Row]:
    """One row for a complete- or no-feedback task."""
    if task["feedback"] == "complete":
        return [complete_row(task["deck"])]
    return [none_row(task)]


def complete_row(deck: Sequence[int]) -> Row:
    """Exact score distribution of optimal complete-feedback play, with the entropy bounds."""
    pmf, n_states = complete_feedback.score_distribution(deck)
    bounds = entropy_bounds.score_bounds(deck)
    return {
        **pmf_columns(pmf),
        "n_states": n_states,
        "bound_lower": bounds.lower,
        "bound_lower_chords": bounds.lower_chords,
        "bound_upper": bounds.upper,
    }


def none_row(task: Task) -> Row:
    """Exact score distribution of a no-feedback strategy."""
    deck, strategy = task["deck"], task["strategy"]
    if strategy == "greedy" and task["tie_break"] == "uniform":
        return pmf_columns(no_feedback.mixed_score_distribution(deck, tied_types(deck)))
    tied = tied_types(deck)
    if strategy == "sequence":
        seq = task["sequence"]
        guesses = no_feedback.named_sequence(seq, deck) if isinstance(seq, str) else seq
    elif strategy == "greedy" and task["tie_break"] == "highest":
        guesses = [tied[-1]] * sum(deck)
    else:  # optimal, or greedy with ties to the lowest type
        guesses = [tied[0]] * sum(deck)
    m = no_feedback.guess_counts(guesses, len(deck))
    return pmf_columns(no_feedback.score_distribution(deck, m))


def pmf_columns(pmf: list[Fraction]) -> Row:
    """Exact mean and variance of a score pmf, and the pmf itself as floats."""
    mean = sum((k * q for k, q in enumerate(pmf)), Fraction(0))
    var = sum((k * k * q for k, q in enumerate(pmf)), Fraction(0)) - mean * mean
    return {
        **exact_columns("expected_score", mean),
        **exact_columns("score_variance", var),
        "score_pmf": [float(q) for q in pmf],
    }
