"""What a task of ``hand_guessing`` is: its parameters, strategies and whole-task checks
(the family's :class:`~solvers.family.Rules`)."""

from __future__ import annotations

from solvers.family import Rules
from solvers.hand_guessing import own
from solvers.hand_guessing import strategies as S
from solvers.hand_guessing.cards import (
    MAX_CARDS,
    RANK_NAMES,
    SUIT_NAMES,
    Deck,
    card_names,
    hand_count,
)
from solvers.own_strategy import own_params
from solvers.params import IntCheck, OrAbsent, Param, described, sharma_mittal_params
from solvers.registry import Task, TaskError

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


RULES = Rules(
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
    check_task=check_task,
)
