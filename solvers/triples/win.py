"""Triples before a quartet: exact win probabilities on the tally form (Holmes 2016).

A deck holds ``ranks`` x ``suits`` cards; cards are drawn one at a time from a uniform
shuffle.  A wins at level ``n`` if the pile holds ``n`` different k-of-a-kinds before any rank
reaches k + 1 cards; otherwise B wins.

The *tally form* of a pile is ``(c_0, ..., c_k)``: ``c_i`` ranks have exactly ``i`` cards in
the pile.  Piles with the same tally have the same future, so it is a sufficient state: the
next card belongs to a rank with ``i`` cards with probability ``c_i (suits - i) / remaining``.

All levels at once: let ``M`` be the number of ranks holding exactly k cards at the moment
the first rank reaches k + 1 (all of them reached k before it, and none went beyond).  A wins
at level ``n`` exactly when ``M >= n``, so one forward pass over the tallies gives the law of
``M`` and ``p_win(n) = P(M >= n)`` for every ``n``.  The pass runs on integers: a path of
``t`` draws has probability (product of its card counts) / (N (N-1) ... (N-t+1)).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from fractions import Fraction
from functools import lru_cache
from math import comb

Tally = tuple[int, ...]  # c_0..c_k: ranks holding exactly i cards, no rank beyond k


def tally_state_count(ranks: int, k: int) -> int:
    """Number of tallies (c_0..c_k) of ``ranks`` ranks: an upper bound on the states visited."""
    return comb(ranks + k, k)


def initial_tally(ranks: int, k: int) -> Tally:
    """The tally of the empty pile: every rank holds 0 cards."""
    return (ranks,) + (0,) * k


def tally_of(pile: Sequence[int], ranks: int, k: int) -> Tally:
    """The tally form of a pile of rank labels 0..ranks-1 (no rank beyond k cards)."""
    held = [0] * ranks
    for r in pile:
        held[r] += 1
    return tuple(held.count(i) for i in range(k + 1))


def _draw(tally: Tally, i: int) -> Tally:
    """The tally after drawing a card of a rank that held ``i`` < k cards."""
    out = list(tally)
    out[i] -= 1
    out[i + 1] += 1
    return tuple(out)


def _falling(n: int, t: int) -> int:
    out = 1
    for j in range(t):
        out *= n - j
    return out


@lru_cache(maxsize=256)
def quartet_moment_law(ranks: int, suits: int, k: int) -> tuple[tuple[Fraction, ...], int]:
    """(law of M over m = 0..ranks, tally states visited): M = ranks at k at the first k+1.

    Needs ``suits >= k + 1`` (otherwise no rank can reach k + 1 and M is undefined).
    """
    if suits < k + 1:
        raise ValueError(f"suits={suits} < k+1={k + 1}: no rank can reach k+1 cards")
    cards = ranks * suits
    layer: dict[Tally, int] = {initial_tally(ranks, k): 1}  # tally -> weighted path count
    ended = [0] * (ranks + 1)  # over the common denominator _falling(cards, ranks*k + 1)
    top = ranks * k + 1  # the game always ends by this many draws
    visited = 0
    for t in range(ranks * k + 1):
        visited += len(layer)
        scale = _falling(cards - t - 1, top - t - 1)  # lifts 1/falling(cards, t+1) to 1/top
        nxt: dict[Tally, int] = defaultdict(int)
        for tally, weight in layer.items():
            for i, c in enumerate(tally):
                if c == 0:
                    continue
                w = weight * c * (suits - i)
                if i == k:
                    ended[tally[k]] += w * scale
                else:
                    nxt[_draw(tally, i)] += w
        layer = nxt
    denom = _falling(cards, top)
    return tuple(Fraction(e, denom) for e in ended), visited


def win_probabilities(ranks: int, suits: int, k: int) -> list[Fraction]:
    """Exact P(A wins) for levels n = 0..ranks+1 (index n); n = 0 and 1 give 1, ranks+1 gives 0."""
    law, _ = quartet_moment_law(ranks, suits, k)
    tail = [Fraction(0)] * (ranks + 2)
    for m in range(ranks, -1, -1):
        tail[m] = tail[m + 1] + law[m]
    return tail


def win_probability(ranks: int, suits: int, k: int, n: int) -> Fraction:
    """Exact P(A wins) at level ``n`` (0 <= n <= ranks + 1)."""
    return win_probabilities(ranks, suits, k)[n]


# ------------------------------------------------------- the same, one level at a time


def win_probability_recursive(ranks: int, suits: int, k: int, n: int) -> tuple[Fraction, int]:
    """(P(A wins) at level n, tallies memoised): the backward recursion over tallies.

    The direct reading of the rules, one level at a time; a cross-check of the forward pass.
    """
    cards = ranks * suits
    memo: dict[Tally, Fraction] = {}

    def value(tally: Tally) -> Fraction:
        if tally[k] >= n:
            return Fraction(1)
        if tally in memo:
            return memo[tally]
        remaining = cards - sum(i * c for i, c in enumerate(tally))
        total = Fraction(0)
        for i, c in enumerate(tally[:k]):
            if c:
                total += Fraction(c * (suits - i), remaining) * value(_draw(tally, i))
        memo[tally] = total  # drawing onto a rank at k (a quartet) contributes 0
        return total

    return value(initial_tally(ranks, k)), len(memo)


def recursion_calls(ranks: int, k: int, n: int) -> int:
    """Calls a memoised backward recursion makes at level n: one per distinct next tally.

    The root counts once; a tally already expanded (or already won) returns at once but is
    still a call; a draw that makes a (k+1)-of-a-kind is a call that returns 0.  Suits do not
    change which tallies follow which, so they are not a parameter.
    """
    expanded: set[Tally] = set()

    def calls(tally: Tally) -> int:
        if tally[k] >= n or tally in expanded:
            return 1
        expanded.add(tally)
        total = 1 + (tally[k] > 0)  # this call, and the quartet-making draw if possible
        return total + sum(calls(_draw(tally, i)) for i, c in enumerate(tally[:k]) if c)

    return calls(initial_tally(ranks, k))


# ------------------------------------------------------------------- brute force


def _multiset_orders(counts: list[int]) -> Iterator[list[int]]:
    """Every distinct order of a multiset given as counts per label (small sizes only)."""
    total = sum(counts)
    order: list[int] = []

    def rec() -> Iterator[list[int]]:
        if len(order) == total:
            yield order
            return
        for label, c in enumerate(counts):
            if c:
                counts[label] -= 1
                order.append(label)
                yield from rec()
                order.pop()
                counts[label] += 1

    yield from rec()


def a_wins(order: Sequence[int], ranks: int, k: int, n: int) -> bool:
    """Whether A wins on this order of rank labels: n k-of-a-kinds before any k+1."""
    held = [0] * ranks
    kinds = 0
    for r in order:
        if kinds >= n:
            return True
        held[r] += 1
        if held[r] > k:
            return False
        kinds += held[r] == k
    return kinds >= n


def win_probability_brute(ranks: int, suits: int, k: int, n: int) -> Fraction:
    """P(A wins) by playing every distinct order of rank labels; decks of <= 12 cards."""
    if ranks * suits > 12:
        raise ValueError("brute force is limited to 12 cards")
    wins = total = 0
    for order in _multiset_orders([suits] * ranks):
        total += 1
        wins += a_wins(order, ranks, k, n)
    return Fraction(wins, total)
