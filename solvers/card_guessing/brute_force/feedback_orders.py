"""Brute force for complete and no feedback: every deck order (and every sequence) enumerated.

Only for tiny decks: tests check exact/complete_feedback.py and exact/no_feedback.py against
these.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import product

from solvers.card_guessing.brute_force.yes_no_orders import Order, deck_orders


def complete_optimum(deck: Sequence[int]) -> Fraction:
    """Best expected score with the card shown after each guess, over every adaptive policy.

    Recursion on the revealed prefix: the consistent orders are those sharing it.
    """
    types = len(deck)

    def value(belief: list[Order], position: int) -> Fraction:
        if position == len(belief[0]):
            return Fraction(0)
        groups: dict[int, list[Order]] = {}
        for o in belief:
            groups.setdefault(o[position], []).append(o)
        future = sum(
            (Fraction(len(g), len(belief)) * value(g, position + 1) for g in groups.values()),
            Fraction(0),
        )
        best_now = max(Fraction(len(groups.get(a, ())), len(belief)) for a in range(types))
        return best_now + future

    return value(deck_orders(deck), 0)


def complete_greedy_pmf(deck: Sequence[int], highest: bool = False) -> list[Fraction]:
    """Score pmf of naming a most frequent remaining type (ties: lowest or highest index)."""
    hist = [0] * (sum(deck) + 1)
    orders = deck_orders(deck)
    for order in orders:
        left, score = list(deck), 0
        for card in order:
            top = max(left)
            tied = [i for i, c in enumerate(left) if c == top]
            score += card == (tied[-1] if highest else tied[0])
            left[card] -= 1
        hist[score] += 1
    return [Fraction(k, len(orders)) for k in hist]


def sequence_pmf(deck: Sequence[int], sequence: Sequence[int]) -> list[Fraction]:
    """Score pmf of a fixed guess sequence, by matching it against every order."""
    hist = [0] * (sum(deck) + 1)
    orders = deck_orders(deck)
    for order in orders:
        hist[sum(g == c for g, c in zip(sequence, order, strict=True))] += 1
    return [Fraction(k, len(orders)) for k in hist]


def all_sequences(deck: Sequence[int]) -> list[tuple[int, ...]]:
    """Every guess sequence for ``deck``: types^cards of them."""
    return list(product(range(len(deck)), repeat=sum(deck)))


def none_optimum(deck: Sequence[int]) -> Fraction:
    """Best expected score without feedback: the best of every guess sequence."""
    return max(_mean(sequence_pmf(deck, s)) for s in all_sequences(deck))


def _mean(pmf: Sequence[Fraction]) -> Fraction:
    return sum((k * q for k, q in enumerate(pmf)), Fraction(0))
