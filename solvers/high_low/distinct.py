"""Higher/lower with n distinct cards 1..n (Norvig 2020, *Flipping Cards: A Guessing Game*).

The cards are shuffled and laid face down; the first is turned up, and before each next card
the player calls "higher" or "lower".  With distinct cards everything the player knows is the
pair (m, u): ``m`` cards still face down, ``u`` of them below the card showing (the others are
above).  Relabelling the unseen cards 0..m-1 keeps only that pair, so there are
``n (n + 1) / 2 - 1`` states with m >= 1 (m = 1 is certain: the last card is known).

Exact values use integers only: ``counts[m][u]`` is the number of orders of the m down cards
on which the best caller never misses; dividing by ``m!`` gives a probability.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import cache
from itertools import permutations

import numpy as np

Layer = list[int]  # counts[u] for one m: orders of the m down cards called all right
Call = str  # "higher" or "lower"
Rule = Callable[[int, int], Call]  # (m, u) -> call


def n_states(n: int) -> int:
    """The number of (m, u) states with 1 <= m <= n - 1 that the exact recursion fills."""
    return n * (n + 1) // 2 - 1


def majority_call(m: int, u: int) -> Call:
    """The majority rule: "higher" when more down cards are above (ties call "higher")."""
    return "higher" if m - u >= u else "lower"


def next_layer(prev: Layer, rule: Rule | None = None) -> Layer:
    """Counts for m = len(prev) down cards from the counts for m - 1 (rule None: the best call)."""
    m = len(prev)
    prefix = [0]
    for c in prev:
        prefix.append(prefix[-1] + c)
    total = prefix[-1]
    out = []
    for u in range(m + 1):
        higher, lower = total - prefix[u], prefix[u]  # next card above / below the one showing
        if rule is None:
            out.append(max(higher, lower))
        else:
            out.append(higher if rule(m, u) == "higher" else lower)
    return out


def perfect_layers(n: int, rule: Rule | None = None) -> list[Layer]:
    """Layers m = 0..n-1 of perfect-order counts (rule None: optimal play)."""
    layers: list[Layer] = [[1]]
    for _ in range(1, n):
        layers.append(next_layer(layers[-1], rule))
    return layers


def p_perfect(n: int, rule: Rule | None = None) -> Fraction:
    """Exact probability that every call is right with n distinct cards (rule None: optimal)."""
    return Fraction(sum(perfect_layers(n, rule)[-1]), math.factorial(n))


def expected_correct(n: int) -> Fraction:
    """Exact expected right calls when play goes on after a miss (best play: the majority call).

    The next card becomes the up card whatever was called, so the call only changes the
    current point: with m cards down and u of them below, the best call is right with
    probability max(u, m - u) / m, and u is uniform on 0..m.
    """
    total = Fraction(0)
    for m in range(1, n):
        total += Fraction(sum(max(u, m - u) for u in range(m + 1)), m * (m + 1))
    return total


def expected_correct_dp(n: int) -> Fraction:
    """Expected right calls by the full recursion over (m, u), each call chosen for the best."""
    layer = [Fraction(0)]  # m = 0: nothing left to call
    for m in range(1, n):
        rest = sum(layer) / m  # the next card is any of the m, uniformly
        layer = [Fraction(max(u, m - u), m) + rest for u in range(m + 1)]
    return sum(layer) / n


def majority_optimality(n_max: int) -> tuple[bool, bool, int]:
    """(majority never worse, majority strictly better whenever counts differ, states checked).

    Solves the game's own optimum exactly for every n <= n_max (the layers are shared by all n)
    and compares both calls in every state; size limit about n_max = 500.
    """
    never_worse, strict, checked = True, True, 0
    prev: Layer = [1]
    for m in range(1, n_max):
        prefix = [0]
        for c in prev:
            prefix.append(prefix[-1] + c)
        for u in range(m + 1):
            higher, lower = prefix[-1] - prefix[u], prefix[u]
            best, other = (higher, lower) if m - u >= u else (lower, higher)
            never_worse &= best >= other
            if m - u != u:
                strict &= best > other
            checked += 1
        prev = next_layer(prev)
    return never_worse, strict, checked


def p_perfect_float(n: int) -> tuple[float, float]:
    """(probability, log10 of it) of a perfect game, optimal play, by NumPy layers; any n >= 1.

    Each layer is rescaled to its maximum (the scale kept as a logarithm), so the value is
    exact up to rounding even where the probability itself underflows.
    """
    layer = np.ones(1)
    log10_scale = 0.0
    for m in range(1, n):
        prefix = np.concatenate(([0.0], np.cumsum(layer)))
        layer = np.maximum(prefix[-1] - prefix, prefix) / m
        top = layer.max()
        layer /= top
        log10_scale += math.log10(top)
    log10_p = log10_scale + math.log10(layer.mean())
    return 10.0**log10_p, log10_p


def p_perfect_memo(n: int) -> tuple[float, int]:
    """(probability, states cached) by the plain memoised recursion Norvig (2020) uses (baseline).

    ``given(up, k)``: chance to call all of k remaining cards right when the showing card has
    index ``up`` among them; the work is O(n^3).  Size limit: recursion depth about n.
    """

    @cache
    def given(up: int, k: int) -> float:
        if k <= 2:
            return 1.0
        call_higher = up < (k - 1) / 2
        total = 0.0
        for down in range(k):
            if down != up and (down > up) == call_higher:
                total += given(down - (down > up), k - 1)
        return total / (k - 1)

    p = sum(given(up, n) for up in range(n)) / n
    return p, given.cache_info().currsize


def calls_right(order: tuple[int, ...], rule: Rule = majority_call) -> list[bool]:
    """For one order of distinct cards, whether each call of ``rule`` is right."""
    out = []
    for i in range(len(order) - 1):
        up, rest = order[i], order[i + 1 :]
        u = sum(c < up for c in rest)
        higher = rule(len(rest), u) == "higher"
        out.append((order[i + 1] > up) == higher)
    return out


def brute_force(n: int, rule: Rule = majority_call) -> tuple[Fraction, Fraction]:
    """(P(all calls right), expected right calls) over all n! orders; size limit n <= 9."""
    if n > 9:
        raise ValueError(f"n={n}: brute force enumerates n! orders, limit 9")
    perfect = right = count = 0
    for order in permutations(range(n)):
        calls = calls_right(order, rule)
        perfect += all(calls)
        right += sum(calls)
        count += 1
    return Fraction(perfect, count), Fraction(right, count)
