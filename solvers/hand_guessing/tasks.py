"""From a checked task of ``hand_guessing`` to its row: a strategy played over every
answer, a chunk of them or a seeded sample (the family's :class:`~solvers.family.Solver`)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from solvers.family import Solver
from solvers.hand_guessing import own
from solvers.hand_guessing import strategies as S
from solvers.hand_guessing import table as T
from solvers.hand_guessing.cards import Deck, hand_index
from solvers.hand_guessing.rules import SEARCH, FirstGuess
from solvers.own_strategy import is_own
from solvers.registry import Row, Task, exact_columns
from solvers.task_ids import task_rng


def first_guess_index(deck: Deck, cards: int, first: FirstGuess, rule: S.Rule) -> int:
    """The hand index of the first guess (searched by the strategy's score if asked)."""
    if first == SEARCH:
        return S.searched_first_guess(deck, cards, rule.strategy, rule.t)
    return hand_index(deck, [deck.parse(name) for name in first])


def run(task: Task) -> list[Row]:
    """One row: guesses over every answer, one chunk of them, or a seeded sample."""
    if is_own(task):  # a strategy of one's own (own.py): its decision tree, the same columns
        deck = Deck(task["ranks"], task["suits"])
        f = T.features(deck, task["cards"])
        result, first = own.evaluate(task, f)
        row = result_row(result, deck, f, first, sampled=task["sample"] is not None)
        return [{**row, "first_guess_searched": None}]
    deck, cards = Deck(task["ranks"], task["suits"]), task["cards"]
    sm = task["strategy"] == "sharma_mittal"
    rule = S.Rule(task["strategy"], task["entropy_t"] if sm else 1.0)
    f = T.features(deck, cards)
    first = first_guess_index(deck, cards, task["first_guess"], rule)
    if task["sample"] is not None:
        targets = S.sample_targets(len(f), task["sample"], task_rng(task))
    else:
        targets = S.chunk_targets(len(f), task["answer_chunk"], task["n_chunks"])
    result = S.play(f, first, rule, targets)
    row = result_row(result, deck, f, first, sampled=task["sample"] is not None)
    row["first_guess_searched"] = task["first_guess"] == SEARCH
    return [row]


def result_row(result: S.Play, deck: Deck, f: T.Features, first: int, *, sampled: bool) -> Row:
    """The result columns for the guesses of one play."""
    g = result.guesses
    total = int(g.sum())
    mean = Fraction(total, len(g))
    row: Row = {
        **exact_columns("average_guesses", mean),
        "total_guesses": total,
        "max_guesses": int(g.max()),
        "histogram": [int(x) for x in np.bincount(g, minlength=int(g.max()) + 1)[1:]],
        "first_guess": deck.hand_name(f.hands[first].tolist()),
        "answers": len(g),
        "total_answers": len(f),
        "standard_error": None,
        "tree_nodes": result.nodes,
    }
    if sampled:
        row["average_guesses_exact"] = None
        row["standard_error"] = S.standard_error(g, len(f))
    return row


# each result column in a line (the report's tooltips and column lists)
COLUMN_DOCS = {
    "average_guesses": "mean number of guesses over the answers played, the last (right) one "
    "included",
    "average_guesses_exact": "average_guesses as an exact fraction p/q (empty for a sample)",
    "total_guesses": "guesses summed over the answers played (chunks add up to the whole)",
    "max_guesses": "the most guesses any answer played took",
    "histogram": "answers found in 1, 2, 3, ... guesses",
    "first_guess": "the hand guessed first (card names)",
    "first_guess_searched": "whether first_guess was searched for (first_guess=search); empty "
    "for a strategy of one's own",
    "answers": "answers played: every hand, one chunk of them or the sample",
    "total_answers": "hands the answer could be (every hand of that size in the deck)",
    "standard_error": "standard error of average_guesses for a sample (finite-population "
    "corrected); empty when exact",
    "tree_nodes": "nodes of the decision tree the play walked",
}

SOLVER = Solver(
    run=run,
    column_docs=COLUMN_DOCS,
    columns={
        "average_guesses": "float64",
        "average_guesses_exact": "string",
        "total_guesses": "int64",
        "max_guesses": "int64",
        "histogram": "list<int64>",
        "first_guess": "string",
        "first_guess_searched": "bool",
        "answers": "int64",
        "total_answers": "int64",
        "standard_error": "float64",
        "tree_nodes": "int64",
    },
)
