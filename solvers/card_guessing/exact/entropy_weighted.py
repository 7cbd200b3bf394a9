"""The entropy-weighted ``info`` strategy for yes/no card guessing (Gural, Simper & So 2019,
sections 2.2, 5.6).

In a state (c, p) the player names the type ``a`` maximising

    score(a) = P(next is a) - gamma * E[H_{r,t}(composition of the cards still to come | answer)]

where the expectation is over the answer to "a?":
``P(yes) H(posterior after yes) + P(no) H(posterior after no)``.  Both posteriors come exactly
from the (c, p) statistic (:func:`yes_no.composition_posterior` of the two children); only
the score is a float, and it only decides the move: the expected score of the resulting
policy is still evaluated exactly by :class:`yes_no.Evaluation`.

Only types that can be next (P(next is a) > 0) are candidates: naming an impossible type
scores nothing and teaches nothing, and the source's own tie-free examples never need it.

Float ties: the scores of interchangeable types (same (c_i, p_i)) are computed identically,
but two different computations of the same real number can differ in the last bits.  Scores
within ``TIE_TOLERANCE`` (relative, with an absolute floor of the same size) of the best are
treated as tied and the ``tie_break`` rule picks among them, so exact ties always reach the
tie-break and never depend on rounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

from solvers import entropy
from solvers.card_guessing.exact.yes_no import (
    Chooser,
    Guess,
    State,
    after_no,
    after_yes,
    break_tie,
    canonical,
    composition_posterior,
)

MAX_POSTERIOR = 200_000  # compositions in one posterior (compiled path: ~8 (r + 2) r bytes each)


def largest_posterior(deck: tuple[int, ...] | list[int]) -> int:
    """The most compositions any posterior of ``deck`` can have (a bound, met or not).

    A posterior over the composition k of the n cards still to come lives on
    {k : 0 <= k_i <= c_i, sum k = n}; its size is at most the largest coefficient of
    prod_i (1 + x + ... + x^{c_i}).  Cached: planning checks it for every info Monte Carlo
    task, and grids repeat decks.
    """
    return _largest_posterior(tuple(deck))


@lru_cache(maxsize=4096)
def _largest_posterior(deck: tuple[int, ...]) -> int:
    coeffs = [1]
    for c in deck:
        grown = [0] * (len(coeffs) + c)
        for n, v in enumerate(coeffs):
            for j in range(c + 1):
                grown[n + j] += v
        coeffs = grown
    return max(coeffs)


TIE_TOLERANCE = 1e-9  # scores this close (relative) to the best count as tied
EntropyFn = Callable[[State], float]  # H of the composition posterior of a state


def posterior_entropy(r: float, t: float, log_base: float) -> EntropyFn:
    """H_{r,t} (in units of ``log_base``) of a state's composition posterior (memoised)."""

    def h(state: State) -> float:
        # relabelling types permutes the posterior: the entropy of the canonical state serves
        return _entropy(canonical(state), r, t, log_base)

    return h


@lru_cache(maxsize=1 << 18)
def _entropy(state: State, r: float, t: float, log_base: float) -> float:
    """H_{r,t} of a canonical state's composition posterior (shared by the tasks of a worker)."""
    return entropy.sharma_mittal(_posterior_probs(state), r, t, log_base, normalize=True)


@lru_cache(maxsize=1 << 16)
def _posterior_probs(state: State) -> tuple[float, ...]:
    """The composition posterior of a canonical state as floats (order irrelevant)."""
    return tuple(float(q) for q in composition_posterior(state).values())


def expected_posterior_entropy(state: State, a: Guess, p_yes: Fraction, h: EntropyFn) -> float:
    """E[H(posterior)] after naming ``a``: P(yes) H(yes child) + P(no) H(no child)."""
    out = 0.0
    if p_yes > 0:
        out += float(p_yes) * h(after_yes(state, a))
    if p_yes < 1:
        out += float(1 - p_yes) * h(after_no(state, a))
    return out


def info_scores(state: State, ys: list[int], gamma: float, h: EntropyFn) -> list[float]:
    """score(a) for every type (-inf where the type cannot be next); ``ys`` = yes-counts."""
    total = sum(ys)
    out = []
    for a, y in enumerate(ys):
        if y == 0:
            out.append(-math.inf)
            continue
        p_yes = Fraction(y, total)
        penalty = gamma * expected_posterior_entropy(state, a, p_yes, h) if gamma else 0.0
        out.append(float(p_yes) - penalty)
    return out


def tied_best(scores: list[float], tol: float = TIE_TOLERANCE) -> list[Guess]:
    """Indices whose score is within ``tol`` (relative, floor ``tol``) of the best score."""
    best = max(scores)
    slack = tol * max(1.0, abs(best))
    return [a for a, s in enumerate(scores) if s >= best - slack]


def info_chooser(
    gamma: float,
    r: float = 1.0,
    t: float = 1.0,
    log_base: float = 2.0,
    tie_break: str = "lowest",
) -> Chooser:
    """The ``info`` policy as a chooser for :class:`yes_no.Evaluation` (states labelled or not)."""
    h = posterior_entropy(r, t, log_base)

    def choose(state: State, ys: list[int]) -> list[Guess]:
        return break_tie(tied_best(info_scores(state, ys, gamma, h)), tie_break)

    return choose
