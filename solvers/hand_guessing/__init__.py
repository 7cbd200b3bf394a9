"""Family ``hand_guessing``: find a hidden hand of cards from 5-number feedback (Juraszek 2014).

The answer is a set of ``cards`` (1 to 4) distinct cards from a deck of ``ranks`` x ``suits``
cards (default the 52-card deck, ranks 2..10, J, Q, K, A with ace high).  Each guess is a
hand of the same size, answered with (correct cards, lower ranks, correct ranks, higher ranks,
correct suits); the score is the number of guesses, the last (right)
one included.  See :mod:`.cards` for the numbering and the feedback, :mod:`.strategies` for the
strategies and their tie rule.

Parameters: ``cards``, ``strategy`` (``min_expected_size``, ``sharma_mittal``),
``entropy_r``/``entropy_t`` (Sharma-Mittal only; r cannot change a choice, see :mod:`.strategies`),
``first_guess`` (a card list such as ``["6C", "TD"]``, or ``search``), ``ranks``, ``suits``
(smaller decks for exhaustive checks), ``answer_chunk``/``n_chunks`` (evaluate one contiguous
chunk of the answers; a study fans the chunks out and the summary adds them up exactly) and
``sample`` (evaluate that many answers drawn with the task's seeded generator instead of all;
absent: every answer).  Execution knob ``max_answers`` refuses exact runs over more answers.

A strategy of one's own (a class named by ``_target_``; protocol and evaluation in
:mod:`solvers.hand_guessing.own`) is evaluated the same way, over every answer, a chunk or a
sample, with the same columns; it makes its first guess itself (``first_guess`` is the
built-ins').
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from solvers.hand_guessing import own
from solvers.hand_guessing import strategies as S
from solvers.hand_guessing import table as T
from solvers.hand_guessing.cards import (
    MAX_CARDS,
    RANK_NAMES,
    SUIT_NAMES,
    Deck,
    card_names,
    hand_count,
    hand_index,
)
from solvers.own_strategy import is_own, own_params
from solvers.params import IntCheck, OrAbsent, Param, described, sharma_mittal_params
from solvers.registry import Family, Row, Task, TaskError, exact_columns, register
from solvers.task_ids import task_rng

VERSION = "2"  # of its rows: what each version changed is in CHANGELOG.md
SEARCH = "search"
DEFAULT_MAX_ANSWERS = 30_000  # one task plays at most this many answers (3 cards: 22,100)

FirstGuess = str | list[str]


@described(
    f"`{SEARCH}`, or a list of distinct card names, rank then suit, such as `6C` and `TD`"
    f" (ranks `{RANK_NAMES}`, suits `{SUIT_NAMES}`)"
)
def check_first_guess(value: object) -> FirstGuess:
    """``search``, or a list of distinct card names (upper case, "10" written "T")."""
    if isinstance(value, str) and value.strip().lower() == SEARCH:
        return SEARCH
    names = card_names(value)
    if not names:
        raise ValueError("must be 'search' or a non-empty list of card names such as ['2C', '3D']")
    full = Deck()
    for name in names:
        full.parse(name)  # a malformed name raises ValueError naming it
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"the first guess repeats {', '.join(dupes)}: cards must be distinct")
    order = {n: full.parse(n) for n in names}
    return sorted(names, key=order.__getitem__)


check_sample = OrAbsent(IntCheck(low=1))  # answers played, or absent: every answer


def check_task(task: Task) -> None:
    """Refuse, before any work, a first guess or chunk or sample that does not fit the deck."""
    deck, cards = Deck(task["ranks"], task["suits"]), task["cards"]
    if cards > deck.size:
        raise TaskError("cards", cards, f"more than the {deck.size} cards of the deck")
    first = task["first_guess"]
    if first is not None and first != SEARCH:  # None: a strategy of one's own
        if len(first) != cards:
            raise TaskError(
                "first_guess", first, f"has {len(first)} cards; a guess needs cards={cards}"
            )
        for name in first:
            try:
                deck.parse(name)
            except ValueError as exc:
                raise TaskError("first_guess", first, str(exc)) from None
    n_chunks, chunk = task["n_chunks"], task["answer_chunk"]
    n = hand_count(deck, cards)
    if n_chunks > n:
        raise TaskError("n_chunks", n_chunks, f"more chunks than the {n:,} answers")
    if chunk >= n_chunks:
        raise TaskError("answer_chunk", chunk, f"must be < n_chunks={n_chunks} (0-based)")
    if task["sample"] is not None:
        if n_chunks != 1:
            raise TaskError("sample", task["sample"], "a sample cannot be split into chunks")
        if task["sample"] > n:
            raise TaskError("sample", task["sample"], f"more than the {n:,} possible answers")
        return
    size = len(S.chunk_targets(n, chunk, n_chunks))
    if size > task["max_answers"]:
        raise TaskError(
            "n_chunks",
            n_chunks,
            f"a chunk of {size:,} answers exceeds max_answers={task['max_answers']:,}: use more "
            "chunks, a sample, or raise max_answers",
        )


def first_guess_index(deck: Deck, cards: int, first: FirstGuess, rule: S.Rule) -> int:
    """The hand index of the first guess (searched by the strategy's score if asked)."""
    if first == SEARCH:
        return S.searched_first_guess(deck, cards, rule.strategy, rule.t)
    return hand_index(deck, [deck.parse(name) for name in first])


# CPU seconds of a task on one core (stage=plan): the table of every hand's features (30 us a
# hand: 4 cards, 270,725 hands, ~8 s), and per answer played a cost that grows with the hands
# its guesses are scored over; fitted to the shipped studies (hand_guessing: 27 tasks of 1 to
# 3 cards, first guesses searched, 20 s of CPU; hand_guessing_four_sample: 4 samples of 1,000
# four-card answers, 39 s) with benchmarks/bench_plan_estimate.py
SECONDS_PER_TASK = 5e-3
SECONDS_PER_HAND = 3e-5
SECONDS_PER_ANSWER = 40e-6
SECONDS_PER_ANSWER_PER_HAND = 2e-9


def estimated_seconds(task: Task) -> float | None:
    """Roughly the solver seconds of a checked task on one core (``stage=plan``); None for
    a strategy of one's own."""
    if is_own(task):
        return None
    hands = hand_count(Deck(task["ranks"], task["suits"]), task["cards"])
    answers = hands // task["n_chunks"] if task["sample"] is None else task["sample"]
    per_answer = SECONDS_PER_ANSWER + SECONDS_PER_ANSWER_PER_HAND * hands
    return SECONDS_PER_TASK + SECONDS_PER_HAND * hands + answers * per_answer


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

FAMILY = register(
    Family(
        name="hand_guessing",
        version=VERSION,
        summary="solvers.hand_guessing.summary:summarize",
        examples=({"cards": 1, "ranks": 4, "suits": 2, "strategy": "min_expected_size"},),
        doc=__doc__,
        strategies=S.STRATEGIES,
        default_strategy="min_expected_size",
        params=(
            Param(
                "cards",
                IntCheck(low=1, high=MAX_CARDS),
                doc="cards in the hidden hand",
                dtype="int64",
            ),
            *sharma_mittal_params(("sharma_mittal",), "no effect on uniform candidates"),
            Param(
                "first_guess",
                check_first_guess,
                SEARCH,
                "the first guess; search: the best one by the strategy's own score",
                S.STRATEGIES,
            ),
            Param(
                "ranks",
                IntCheck(low=1, high=len(RANK_NAMES)),
                13,
                "ranks in the deck (the lowest ones, from 2)",
                dtype="int64",
            ),
            Param(
                "suits",
                IntCheck(low=1, high=len(SUIT_NAMES)),
                4,
                "suits in the deck",
                dtype="int64",
            ),
            Param(
                "answer_chunk",
                IntCheck(low=0),
                0,
                "which chunk of the answers to play (0-based)",
                dtype="int64",
            ),
            Param(
                "n_chunks",
                IntCheck(low=1),
                1,
                "split the answers (in index order) into this many contiguous chunks",
                dtype="int64",
            ),
            Param(
                "sample",
                check_sample,
                None,
                "play this many random answers (task-seeded); absent: every answer",
                dtype="int64",
            ),
            Param(
                "max_answers",
                IntCheck(low=1),
                DEFAULT_MAX_ANSWERS,
                "refuse exact runs over more answers than this in one task",
                identity=False,
                dtype="int64",
            ),
            *own_params(),
        ),
        own=own.PROTOCOL,
        run=run,
        check_task=check_task,
        estimate=estimated_seconds,
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
        column_docs=COLUMN_DOCS,
    )
)
