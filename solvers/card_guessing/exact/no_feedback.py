"""No feedback card guessing: the player hears nothing, so a strategy is a fixed sequence.

Naming type ``g_j`` at position ``j`` scores with probability ``c_{g_j} / N`` whatever the
other guesses, so a sequence that names type ``i`` ``m_i`` times expects
``sum_i m_i c_i / N`` and the optimum is ``max_i c_i`` (every guess on a most frequent type).

The score distribution depends only on the guess counts ``m``.  It follows from
inclusion-exclusion over sets of forced matches: choosing ``k_i`` of the ``m_i`` positions
naming ``i`` and fixing an ``i`` there leaves ``(N - k)! / prod (c_i - k_i)!`` orders, so
``R_k = (N - k)! [x^k] prod_i sum_{k_i} C(m_i, k_i) x^{k_i} / (c_i - k_i)!`` counts (order,
k forced matches) pairs, and exactly ``k`` matches happen on
``E_k = sum_{j >= k} (-1)^(j - k) C(j, k) R_j`` orders.  Integers throughout.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from math import comb, factorial

GuessSequence = list[int]  # the type named at each position, top card first
GuessCounts = tuple[int, ...]  # m_i: how often each type is named
Counts = tuple[int, ...]  # E[k]: orders on which exactly k guesses are right

SEQUENCE_NAMES = ("constant", "cycle", "blocks")


def named_sequence(name: str, deck: Sequence[int]) -> GuessSequence:
    """A named guess sequence for ``deck``.

    ``constant``: always the most frequent type (lowest index on ties); ``cycle``: types
    0, 1, ..., r-1, 0, 1, ... ; ``blocks``: c_0 guesses of type 0, then c_1 of type 1, ...
    (each type named as often as it occurs).
    """
    n = sum(deck)
    if name == "constant":
        top = max(range(len(deck)), key=lambda i: (deck[i], -i))
        return [top] * n
    if name == "cycle":
        return [j % len(deck) for j in range(n)]
    if name == "blocks":
        return [i for i, c in enumerate(deck) for _ in range(c)]
    raise ValueError(f"unknown sequence name {name!r}; valid: {', '.join(SEQUENCE_NAMES)}")


def guess_counts(sequence: Sequence[int], types: int) -> GuessCounts:
    """How often each of ``types`` types is named in ``sequence``."""
    m = [0] * types
    for g in sequence:
        m[g] += 1
    return tuple(m)


def expected_score(deck: Sequence[int], m: Sequence[int]) -> Fraction:
    """sum_i m_i c_i / N: the expected score of naming type i m_i times (any order)."""
    return Fraction(sum(mi * ci for mi, ci in zip(m, deck, strict=True)), sum(deck))


def match_counts(deck: Sequence[int], m: Sequence[int]) -> Counts:
    """E[k] = orders of ``deck`` on which a sequence with guess counts ``m`` scores k."""
    n = sum(deck)
    poly = [1]  # prod_i sum_k C(m_i, k) c_i! / (c_i - k)! x^k  (scaled by prod c_i!)
    for c, mi in zip(deck, m, strict=True):
        factor = [comb(mi, k) * factorial(c) // factorial(c - k) for k in range(min(c, mi) + 1)]
        out = [0] * (len(poly) + len(factor) - 1)
        for a, x in enumerate(poly):
            for b, y in enumerate(factor):
                out[a + b] += x * y
        poly = out
    scale = 1
    for c in deck:
        scale *= factorial(c)
    forced = [factorial(n - k) * x // scale for k, x in enumerate(poly)]  # R_k
    exact = [
        sum((-1) ** (j - k) * comb(j, k) * forced[j] for j in range(k, len(forced)))
        for k in range(len(forced))
    ]
    return tuple(exact + [0] * (n + 1 - len(exact)))


def score_distribution(deck: Sequence[int], m: Sequence[int]) -> list[Fraction]:
    """The exact score pmf (index = score) of naming type i m_i times on a shuffled deck."""
    e = match_counts(deck, m)
    total = sum(e)
    return [Fraction(x, total) for x in e]


def mixed_score_distribution(deck: Sequence[int], tied: Sequence[int]) -> list[Fraction]:
    """The score pmf when every guess is drawn uniformly from the ``tied`` types, independently.

    Whatever the order, K = sum of the tied types' counts positions hold a tied type, and
    each is named right with chance 1/t independently: the score is Binomial(K, 1/t).
    """
    n, t = sum(deck), len(tied)
    k_tied = sum(deck[i] for i in tied)
    p = Fraction(1, t)
    pmf = [comb(k_tied, k) * p**k * (1 - p) ** (k_tied - k) for k in range(k_tied + 1)]
    return pmf + [Fraction(0)] * (n - k_tied)
