"""The game of Mastermind with a code jar: codes, feedback, and the jar's code weights.

What the family's strategies and the optimal search (optimal.py) share; no strategy here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction
from functools import lru_cache

import numpy as np

Code = tuple[int, ...]  # colours 0..colours-1, one per peg
Feedback = tuple[int, int]  # (black, white)
Jar = list[int] | list[str]  # canonical jar weights: ints, or "p/q" strings if any is not one


# ---------------------------------------------------------------------------- the game


def feedback(guess: Code, secret: Code) -> Feedback:
    """(black, white) for ``guess`` against ``secret``: plain counting, the reference."""
    black = sum(g == s for g, s in zip(guess, secret, strict=True))
    common = sum(min(guess.count(c), secret.count(c)) for c in set(guess))
    return black, common - black


def feedbacks(pegs: int) -> list[Feedback]:
    """Every possible (black, white) for ``pegs`` pegs, sorted; (pegs, 0) is the last."""
    return [
        (b, w)
        for b in range(pegs + 1)
        for w in range(pegs + 1 - b)
        if not (b == pegs - 1 and w == 1)
    ]


def all_codes(pegs: int, colours: int) -> np.ndarray:
    """Every code as a row of colours, in lexicographic order (index = base-colours number)."""
    return np.array(list(itertools.product(range(colours), repeat=pegs)), dtype=np.int8).reshape(
        colours**pegs, pegs
    )


def code_label(index: int, pegs: int, colours: int) -> str:
    """A code as text with colours numbered from 1: "1122" (or "1-2-10-3" past 9 colours)."""
    digits = []
    for _ in range(pegs):
        index, d = divmod(index, colours)
        digits.append(str(d + 1))
    return ("" if colours <= 9 else "-").join(reversed(digits))


@lru_cache(maxsize=8)
def feedback_table(pegs: int, colours: int) -> np.ndarray:
    """table[guess, secret] = id of the feedback in :func:`feedbacks`; cached per worker."""
    codes = all_codes(pegs, colours)
    n = len(codes)
    counts = np.stack([(codes == c).sum(axis=1) for c in range(colours)], axis=1)
    lut = np.full((pegs + 1, pegs + 1), -1, dtype=np.int16)
    for i, (b, w) in enumerate(feedbacks(pegs)):
        lut[b, w] = i
    table = np.empty((n, n), dtype=np.uint8)
    step = max(1, 2_000_000 // (n * max(pegs, colours)))
    for lo in range(0, n, step):
        g = codes[lo : lo + step]
        black = (g[:, None, :] == codes[None, :, :]).sum(axis=2)
        common = np.minimum(counts[lo : lo + step, None, :], counts[None, :, :]).sum(axis=2)
        table[lo : lo + step] = lut[black, common - black]
    table.setflags(write=False)
    return table


def jar_weights(jar: Sequence[object] | None, colours: int) -> list[int]:
    """The jar as integer weights per colour (rationals scaled by their common denominator)."""
    if jar is None:
        return [1] * colours
    fracs = [Fraction(str(w)) for w in jar]
    scale = math.lcm(*(f.denominator for f in fracs))
    return [int(f * scale) for f in fracs]


def code_weights(pegs: int, colours: int, jar: Sequence[object] | None) -> list[int]:
    """Integer weight of every code: the product of its pegs' jar weights (Hofer & Nelson 2016, eq.
    2)."""
    w = jar_weights(jar, colours)
    return [
        math.prod(w[c] for c in code) for code in itertools.product(range(colours), repeat=pegs)
    ]


# ------------------------------------------------------------------------ choosing a guess
