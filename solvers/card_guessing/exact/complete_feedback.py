"""Complete feedback card guessing: the card is shown after every guess.

The player then knows exactly which cards are left (the *composition*), and what is still
to come does not depend on the guesses made, so naming a most frequent remaining type is
optimal (it maximises the chance of the current point and cannot change the future).  Greedy
and optimal coincide, and every tie-break gives the same score distribution (types with equal
counts are interchangeable).

Exact evaluation on integers: for a composition ``s``, ``D(s)[k]`` = number of orders of the
cards of ``s`` on which the policy scores exactly ``k``.  Orders starting with a card of type
``i`` are the orders of ``s - e_i``, so ``D(s)`` is the sum of the children's counts, the
named type's child shifted by one.  States are sorted compositions (equal counts commute).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import groupby
from math import comb

Composition = tuple[int, ...]  # cards left per type, sorted ascending, zeros dropped
Counts = tuple[int, ...]  # D[k]: orders on which k cards are called right


def canonical(deck: Sequence[int]) -> Composition:
    """The composition up to relabelling types: positive counts, sorted ascending."""
    return tuple(sorted(int(c) for c in deck if c > 0))


def orders(comp: Sequence[int]) -> int:
    """Number of distinct orders of the multiset with these counts (the multinomial)."""
    out, total = 1, 0
    for c in comp:
        total += c
        out *= comb(total, c)
    return out


def state_count(deck: Sequence[int]) -> int:
    """An upper bound on the sorted compositions below ``deck`` (the states the solver visits).

    Types sharing a count ``c`` (``m`` of them) contribute the multisets of size ``m`` drawn
    from {0..c}: C(c + m, m).  Exact when every type has the same count; otherwise states of
    different groups can coincide after sorting.  The empty composition is included.
    """
    out = 1
    for c, group in groupby(sorted(deck)):
        m = len(list(group))
        out *= comb(c + m, m)
    return out


def children(comp: Composition) -> list[tuple[int, int, Composition]]:
    """(count value v, types holding v, composition after one card of such a type is drawn)."""
    out = []
    for v, group in groupby(comp):
        m = len(list(group))
        i = comp.index(v)  # the first of the equal counts: removing it keeps the order sorted
        child = comp[:i] + ((v - 1,) if v > 1 else ()) + comp[i + 1 :]
        out.append((v, m, child))
    return out


class CompleteSolver:
    """Score counts D(s) of the most-frequent-type policy, memoised on sorted compositions."""

    def __init__(self) -> None:
        self.memo: dict[Composition, Counts] = {(): (1,)}

    def counts(self, comp: Composition) -> Counts:
        """D[k] = orders of ``comp`` on which naming a most frequent type scores k."""
        hit = self.memo.get(comp)
        if hit is not None:
            return hit
        n = sum(comp)
        d = [0] * (n + 1)
        top = comp[-1]  # the named type: any type with the largest count
        for v, m, child in children(comp):
            sub = self.counts(child)
            others = m - 1 if v == top else m
            if others:
                for k, x in enumerate(sub):
                    d[k] += others * x
            if v == top:
                for k, x in enumerate(sub):
                    d[k + 1] += x
        out = tuple(d)
        self.memo[comp] = out
        return out


def score_distribution(deck: Sequence[int]) -> tuple[list[Fraction], int]:
    """(pmf, n_states): the exact score distribution of optimal play, and the states visited."""
    comp = canonical(deck)
    solver = CompleteSolver()
    _fill_by_levels(solver, comp)
    d = solver.counts(comp)
    total = orders(comp)
    return [Fraction(x, total) for x in d], len(solver.memo)


def _fill_by_levels(solver: CompleteSolver, comp: Composition) -> None:
    """Solve every reachable state from the smallest up, so recursion stays one level deep."""
    levels = [{comp}]
    for _ in range(sum(comp)):
        levels.append({child for c in levels[-1] for _, _, child in children(c)})
    for level in reversed(levels):
        for state in level:
            solver.counts(state)


def expected_score(deck: Sequence[int]) -> Fraction:
    """The optimal expected score, exactly: sum over steps of E[max count left / cards left]."""
    return sum(step_success(deck), Fraction(0))


def state_probabilities(deck: Sequence[int]) -> list[dict[Composition, Fraction]]:
    """For each step j = 0..N-1, the exact law of the sorted composition before card j+1."""
    level = {canonical(deck): Fraction(1)}
    out = []
    while level and next(iter(level)):
        out.append(level)
        nxt: dict[Composition, Fraction] = {}
        for comp, p in level.items():
            n = sum(comp)
            for v, m, child in children(comp):
                nxt[child] = nxt.get(child, Fraction(0)) + p * Fraction(v * m, n)
        level = nxt
    return out


def step_success(deck: Sequence[int]) -> list[Fraction]:
    """P(the j-th guess is right) under optimal play, for each step j, exactly."""
    return [
        sum((p * Fraction(comp[-1], sum(comp)) for comp, p in level.items()), Fraction(0))
        for level in state_probabilities(deck)
    ]


def harmonic(n: int) -> Fraction:
    """H_n = 1 + 1/2 + ... + 1/n (the complete-feedback score of n distinct cards)."""
    return sum((Fraction(1, k) for k in range(1, n + 1)), Fraction(0))


def two_type_score(n: int) -> Fraction:
    """n + (4^n / C(2n, n) - 1) / 2: the complete-feedback score of the deck (n, n)."""
    return n + (Fraction(4**n, comb(2 * n, n)) - 1) / 2
