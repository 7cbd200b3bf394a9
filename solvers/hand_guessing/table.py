"""Integer-coded feedback for many (guess, answer) pairs at once, with NumPy.

Every hand is described by a few integer features (computed once per deck and hand size and
cached per process):

- ``mask``: the hand's cards as bits of a uint64;
- ``rank_bits`` / ``suit_bits``: bit ``level * width + value`` is set when the hand holds
  more than ``level`` cards of that rank (suit), so that the popcount of the AND of two hands'
  words is sum over values of min(count, count): the "correct ranks" ("correct suits");
- ``low_high[h * ranks**2 + lo * ranks + hi]``: the lower-ranks and higher-ranks numbers
  of answer ``h`` against a guess whose lowest rank is ``lo`` and highest ``hi``, already
  weighted into the code;
- ``span``: each hand's ``lo * ranks + hi``.

A feedback (correct, lower, ranks, higher, suits) is coded as the base-(cards + 1) number
``correct lower ranks higher suits`` (at most 5**5 = 3125 codes).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from solvers.hand_guessing.cards import Deck, Feedback, hand_count, hands, win_feedback

Codes = np.ndarray  # int16 feedback codes
BLOCK = 1 << 21  # pairs per vectorised block (a few tens of MiB of temporaries)


@dataclass(frozen=True)
class Features:
    """Per-hand integer features of every hand of one size (see the module docstring)."""

    deck: Deck
    cards: int
    hands: np.ndarray  # (n, cards) int8, sorted rows, index order
    mask: np.ndarray  # (n,) uint64
    rank_bits: np.ndarray  # (n,) uint64
    suit_bits: np.ndarray  # (n,) uint64
    span: np.ndarray  # (n,) int32: lowest rank * ranks + highest rank
    low_high: np.ndarray  # (n * ranks * ranks,) int16, row h at h * ranks**2

    @property
    def base(self) -> int:
        return self.cards + 1

    @property
    def n_codes(self) -> int:
        return self.base**5

    def __len__(self) -> int:
        return len(self.mask)


def encode(cards: int, fb: Feedback) -> int:
    """The integer code of a feedback tuple."""
    code = 0
    for x in fb:
        code = code * (cards + 1) + x
    return code


def decode(cards: int, code: int) -> Feedback:
    """The feedback tuple of an integer code."""
    out = []
    for _ in range(5):
        code, x = divmod(code, cards + 1)
        out.append(x)
    return tuple(reversed(out))  # type: ignore[return-value]


@lru_cache(maxsize=8)
def features(deck: Deck, cards: int) -> Features:
    """The features of every hand of ``cards`` cards (cached; 4 cards: ~100 MB, ~5 s)."""
    h = np.asarray(hands(deck, cards), dtype=np.int64).reshape(hand_count(deck, cards), cards)
    rank, suit = h // deck.suits, h % deck.suits
    mask = np.bitwise_or.reduce(np.left_shift(np.uint64(1), h.astype(np.uint64)), axis=1)
    rank_bits = _level_bits(rank, deck.ranks)
    suit_bits = _level_bits(suit, deck.suits)
    lo, hi = rank.min(axis=1), rank.max(axis=1)
    base = cards + 1
    # below[h, r]: cards of hand h with rank < r, for r = 0..ranks
    below = (rank[:, :, None] < np.arange(deck.ranks + 1)[None, None, :]).sum(axis=1)
    r = np.arange(deck.ranks)
    lower = below[:, r]  # against a guess whose lowest rank is r
    higher = cards - below[:, r + 1]  # against a guess whose highest rank is r
    low_high = lower[:, :, None] * base**3 + higher[:, None, :] * base
    return Features(
        deck=deck,
        cards=cards,
        hands=h.astype(np.int8),
        mask=mask,
        rank_bits=rank_bits,
        suit_bits=suit_bits,
        span=(lo * deck.ranks + hi).astype(np.int32),
        low_high=np.ascontiguousarray(low_high, dtype=np.int16).ravel(),
    )


def _level_bits(values: np.ndarray, width: int) -> np.ndarray:
    """uint64 per row: bit level * width + v is set when v occurs more than level times."""
    out = np.zeros(len(values), dtype=np.uint64)
    for col in range(values.shape[1]):
        # this card is the (level+1)-th of its value among the columns so far
        level = (values[:, :col] == values[:, col : col + 1]).sum(axis=1)
        out |= np.left_shift(np.uint64(1), (level * width + values[:, col]).astype(np.uint64))
    return out


def codes(f: Features, guesses: np.ndarray, answers: np.ndarray) -> Codes:
    """codes[i, j]: the feedback code of guess ``guesses[i]`` against answer ``answers[j]``."""
    base = f.base
    g, a = np.asarray(guesses), np.asarray(answers)
    out = np.bitwise_count(f.mask[g][:, None] & f.mask[a][None, :]).astype(np.int16)
    out *= base**2
    out += np.bitwise_count(f.rank_bits[g][:, None] & f.rank_bits[a][None, :])
    out *= base**2
    out += np.bitwise_count(f.suit_bits[g][:, None] & f.suit_bits[a][None, :])
    width = f.deck.ranks**2
    out += f.low_high[a[None, :] * width + f.span[g][:, None]]
    return out


def code_row(f: Features, guess: int, answers: np.ndarray) -> Codes:
    """The feedback codes of one guess against every answer in ``answers``."""
    return codes(f, np.asarray([guess]), answers)[0]


def win_code(cards: int) -> int:
    """The code of a correct guess."""
    return encode(cards, win_feedback(cards))
