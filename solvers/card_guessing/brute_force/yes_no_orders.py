"""Brute force for yes/no card guessing: every deck order enumerated, no (c, p) statistic.

Only for tiny decks (tests cross-check the clever solvers against these).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import cache

Order = tuple[int, ...]  # a deck order: the type of each card, top first
Belief = frozenset[Order]  # the orders still consistent with every answer


def deck_orders(deck: Sequence[int]) -> list[Order]:
    """Every distinct order of the multiset deck (each equally likely after a shuffle)."""
    out: list[Order] = []

    def extend(prefix: list[int], left: list[int]) -> None:
        if not any(left):
            out.append(tuple(prefix))
            return
        for t, k in enumerate(left):
            if k:
                left[t] -= 1
                prefix.append(t)
                extend(prefix, left)
                prefix.pop()
                left[t] += 1

    extend([], list(deck))
    return out


def next_card_probabilities(belief: Belief, position: int, types: int) -> list[Fraction]:
    """P(card at ``position`` is type a) for every a, over the consistent orders."""
    counts = [0] * types
    for order in belief:
        counts[order[position]] += 1
    return [Fraction(k, len(belief)) for k in counts]


def optimal_value(deck: Sequence[int]) -> Fraction:
    """The best expected score, by recursion over sets of consistent orders (tiny decks)."""
    types, n = len(deck), sum(deck)

    @cache
    def value(belief: Belief, position: int) -> Fraction:
        if position == n:
            return Fraction(0)
        best = Fraction(-1)
        for a in range(types):
            yes = frozenset(o for o in belief if o[position] == a)
            no = belief - yes
            v = Fraction(0)
            if yes:
                v += Fraction(len(yes), len(belief)) * (1 + value(yes, position + 1))
            if no:
                v += Fraction(len(no), len(belief)) * value(no, position + 1)
            best = max(best, v)
        return best

    return value(frozenset(deck_orders(deck)), 0)


History = list[tuple[int, bool]]  # (guess, answer) so far
Policy = Callable[[History, list[Order], int], int]  # history, consistent orders, position


def policy_value(deck: Sequence[int], policy: Policy) -> tuple[Fraction, list[Fraction]]:
    """(mean score, score pmf) of ``policy`` played on every order of ``deck``.

    Walks the game tree with the list of consistent orders: each order follows one path, so
    this is plain enumeration of every order, done in O(orders x cards).
    """
    orders = deck_orders(deck)
    hist = [0] * (sum(deck) + 1)

    def walk(belief: list[Order], history: History, score: int) -> None:
        position = len(history)
        if position == len(belief[0]):
            hist[score] += len(belief)
            return
        guess = policy(history, belief, position)
        yes = [o for o in belief if o[position] == guess]
        no = [o for o in belief if o[position] != guess]
        if yes:
            walk(yes, [*history, (guess, True)], score + 1)
        if no:
            walk(no, [*history, (guess, False)], score)

    walk(orders, [], 0)
    pmf = [Fraction(k, len(orders)) for k in hist]
    return sum(k * q for k, q in enumerate(pmf)), pmf


def greedy_policy(tie_break: str = "lowest") -> Policy:
    """Greedy from the consistent orders: the most likely next type (ties: lowest/highest)."""

    def policy(history: History, belief: list[Order], position: int) -> int:
        types = 1 + max(max(o) for o in belief)
        probs = next_card_probabilities(frozenset(belief), position, types)
        best = max(probs)
        tied = [a for a, q in enumerate(probs) if q == best]
        return tied[0] if tie_break == "lowest" else tied[-1]

    return policy
