"""Cards, hands and the 5-number feedback of the hand-guessing game (Juraszek 2014).

A deck has ``ranks`` ranks (the lowest ``ranks`` of 2, 3, ..., 10, J, Q, K, A; the full deck
has all 13, ace high) and ``suits`` suits (of C, D, H, S).  A card is the integer
``rank * suits + suit``; a hand is a sorted tuple of distinct cards, and the hands of a size
are numbered in lexicographic order of those tuples (index 0 is the lowest cards).  So cards
order by rank, then suit: 2C < 2D < 2H < 2S < 3C < ... < AS.

The feedback of a guess against an answer is five numbers:
correct cards, lower ranks, correct ranks, higher ranks, correct suits.
:func:`feedback` is the plain reference; the vectorised table is in :mod:`.table`.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Card = int  # rank * suits + suit
Hand = tuple[Card, ...]  # sorted, distinct
Feedback = tuple[int, int, int, int, int]  # correct, lower, ranks, higher, suits

RANK_NAMES = "23456789TJQKA"
SUIT_NAMES = "CDHS"
MAX_CARDS = 4


@dataclass(frozen=True)
class Deck:
    """A deck of ``ranks`` x ``suits`` cards."""

    ranks: int = 13
    suits: int = 4

    @property
    def size(self) -> int:
        return self.ranks * self.suits

    def rank(self, card: Card) -> int:
        return card // self.suits

    def suit(self, card: Card) -> int:
        return card % self.suits

    def name(self, card: Card) -> str:
        """A card's name such as "TD" (ten of diamonds)."""
        return RANK_NAMES[self.rank(card)] + SUIT_NAMES[self.suit(card)]

    def hand_name(self, hand: Sequence[Card]) -> str:
        """A hand as comma-separated card names in card order, e.g. "6C,TD"."""
        return ",".join(self.name(c) for c in sorted(hand))

    def parse(self, name: str) -> Card:
        """The card called ``name`` ("TD", "10d", "as"); ValueError names a bad card."""
        text = str(name).strip().upper()
        rank_text, suit_text = text[:-1], text[-1:]
        if rank_text == "10":
            rank_text = "T"
        if len(rank_text) != 1 or rank_text not in RANK_NAMES or suit_text not in SUIT_NAMES:
            raise ValueError(
                f"unknown card {name!r}: write rank then suit, ranks 2-9, T (or 10), J, Q, K, A "
                "and suits C, D, H, S, e.g. 'TD'"
            )
        rank, suit = RANK_NAMES.index(rank_text), SUIT_NAMES.index(suit_text)
        if rank >= self.ranks or suit >= self.suits:
            raise ValueError(
                f"card {name!r} is not in a deck of {self.ranks} ranks "
                f"({RANK_NAMES[: self.ranks]}) and {self.suits} suits ({SUIT_NAMES[: self.suits]})"
            )
        return rank * self.suits + suit


def card_names(value: object) -> list[str]:
    """A card list as upper-case names: a list, or a string such as "6C,TD" or "6C TD"."""
    if isinstance(value, str):
        items = [v for v in value.replace(",", " ").split() if v]
    elif isinstance(value, Sequence):
        items = [str(v).strip() for v in value]
    else:
        raise ValueError("must be 'search' or a list of card names such as ['2C', '3D']")
    names = []
    for item in items:
        text = item.upper()
        names.append("T" + text[2:] if text.startswith("10") else text)
    return names


def hands(deck: Deck, cards: int) -> list[Hand]:
    """Every hand of ``cards`` cards, in index order."""
    return list(itertools.combinations(range(deck.size), cards))


def hand_count(deck: Deck, cards: int) -> int:
    """How many hands of ``cards`` cards the deck has."""
    return math.comb(deck.size, cards)


def hand_index(deck: Deck, hand: Sequence[Card]) -> int:
    """The index of a hand (any card order) among the hands of its size."""
    return int(hand_indices(deck, np.sort(np.asarray([hand], dtype=np.int64), axis=1))[0])


def hand_indices(deck: Deck, sorted_hands: np.ndarray) -> np.ndarray:
    """Lexicographic indices of the rows of ``sorted_hands`` (each row increasing)."""
    n, k = deck.size, sorted_hands.shape[1]
    binom = np.array(
        [[math.comb(m, j) for j in range(k + 1)] for m in range(n + 1)], dtype=np.int64
    )
    tail = sum(binom[n - 1 - sorted_hands[:, i], k - i] for i in range(k))
    return math.comb(n, k) - 1 - tail


def feedback(deck: Deck, guess: Sequence[Card], answer: Sequence[Card]) -> Feedback:
    """The five numbers for ``guess`` against ``answer``, by plain counting (the reference)."""
    g_ranks = [deck.rank(c) for c in guess]
    a_ranks = [deck.rank(c) for c in answer]
    correct = len(set(guess) & set(answer))
    lower = sum(r < min(g_ranks) for r in a_ranks)
    higher = sum(r > max(g_ranks) for r in a_ranks)
    same_ranks = _multiset_overlap(g_ranks, a_ranks)
    same_suits = _multiset_overlap([deck.suit(c) for c in guess], [deck.suit(c) for c in answer])
    return correct, lower, same_ranks, higher, same_suits


def _multiset_overlap(xs: Sequence[int], ys: Sequence[int]) -> int:
    """Sum over values of min(count in xs, count in ys)."""
    cx, cy = Counter(xs), Counter(ys)
    return sum(min(n, cy[v]) for v, n in cx.items())


def win_feedback(cards: int) -> Feedback:
    """The feedback of a correct guess."""
    return cards, 0, cards, 0, cards
