"""Entropy bounds on the complete-feedback score (Gural, Simper & So 2019, section 4).

At step j the next card X_j has, given the composition S_j left, a distribution whose best
guess fails with probability pi(S_j).  Gural, Simper & So (2019) average the entropy over the
compositions,
``H_j = sum_s P(S_j = s) H(X_j | S_j = s)``, and turns it into bounds on the step's success
probability 1 - pi_j, summed into bounds on the expected score:

- upper bound (Fano): H <= Phi(pi) = h(pi) + pi log(M - 1), Phi increasing on
  [0, (M-1)/M], so pi_j >= Phi^{-1}(H_j).  Phi is concave, so this holds for the averaged
  entropy too: a rigorous bound.
- lower bound (Feder and Merhav 1994): the least entropy with error pi is phi(pi), reached by
  k = floor(1 / (1 - pi)) masses 1 - pi and one remainder; on the segment
  (k-1)/k <= pi <= k/(k+1) it is ``k log k (1 - pi) + h(k pi - k + 1)``.  Their paper prints the
  last segment (k = M - 1); its 4.70 for (3,3,3) needs every segment.  Inverting gives
  pi_j <= phi^{-1}(H_j).  phi is not convex, so applied to the *averaged* entropy this is
  not a guaranteed bound at every step (it fails at step 8 of (3,3,3)); the chords of phi
  (Feder and Merhav's piecewise-linear bound through (1 - 1/k, log k)) are convex and give a
  rigorous, looser version.

M is the number of types in the deck.  Entropies are in bits; the bounds do not depend on the
base as long as entropy and bounding functions share it.  Inverses are found by bisection to
an absolute tolerance of 1e-12 in pi.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

from solvers.card_guessing.exact.complete_feedback import state_probabilities

TOLERANCE = 1e-12  # bisection stops when the bracket on pi is this narrow
Curve = Callable[[float], float]  # an entropy (bits) as a function of the error probability


def binary_entropy(x: float) -> float:
    """h(x) = -x log2 x - (1 - x) log2 (1 - x), with h(0) = h(1) = 0."""
    return -sum(t * math.log2(t) for t in (x, 1.0 - x) if t > 0.0)


def entropy(counts: Sequence[int]) -> float:
    """Entropy in bits of the next card when ``counts`` cards of each type are left."""
    n = sum(counts)
    return -sum(c / n * math.log2(c / n) for c in counts if c)


def fano_curve(m: int) -> Curve:
    """Phi(pi) = h(pi) + pi log2(M - 1): the largest entropy with error probability pi."""
    return lambda x: binary_entropy(x) + x * math.log2(m - 1)


def feder_merhav_curve(m: int) -> Curve:
    """phi(pi): the least entropy with error probability pi (every segment, k = 1..M-1)."""

    def phi(x: float) -> float:
        k = min(max(1, math.floor(1.0 / (1.0 - x) + 1e-12)), m - 1)
        return k * math.log2(k) * (1.0 - x) + binary_entropy(k * x - k + 1.0)

    return phi


def printed_last_segment_curve(m: int) -> Curve:
    """The source's printed phi: only the segment (M-2)/(M-1) <= pi <= (M-1)/M (k = M - 1)."""
    k = m - 1
    return lambda x: k * math.log2(k) * (1.0 - x) + binary_entropy(k * x - k + 1.0)


def chord_curve(m: int) -> Curve:
    """The piecewise-linear convex minorant of phi through (1 - 1/k, log2 k), k = 1..M."""

    def chords(x: float) -> float:
        k = min(max(1, math.floor(1.0 / (1.0 - x) + 1e-12)), m - 1)
        a, b = 1.0 - 1.0 / k, 1.0 - 1.0 / (k + 1)
        t = (x - a) / (b - a)
        return (1.0 - t) * math.log2(k) + t * math.log2(k + 1)

    return chords


def inverse(curve: Curve, h: float, lo: float, hi: float, tol: float = TOLERANCE) -> float:
    """The pi in [lo, hi] with curve(pi) = h for an increasing curve (clamped at the ends)."""
    if h <= curve(lo):
        return lo
    if h >= curve(hi):
        return hi
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if curve(mid) < h:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def step_entropies(deck: Sequence[int]) -> list[float]:
    """H_j = sum_s P(S_j = s) H(next card | s) in bits, for every step j (complete feedback)."""
    return [
        sum(float(p) * entropy(comp) for comp, p in level.items())
        for level in state_probabilities(deck)
    ]


def step_bounds(deck: Sequence[int], curve: str) -> list[float]:
    """Per-step bounds on P(correct guess) from the averaged entropy, for a named curve.

    ``fano``: upper bounds; ``feder_merhav`` (the source's lower bound), ``chords``
    (rigorous lower bound) or ``printed_last_segment`` (the formula as printed by Gural, Simper
    & So 2019, which holds on the last segment only): lower bounds.
    """
    m = sum(1 for c in deck if c > 0)
    hs = step_entropies(deck)
    if m == 1:
        return [1.0] * len(hs)  # a single type: every guess is right
    top = (m - 1) / m
    if curve == "fano":
        return [1.0 - inverse(fano_curve(m), h, 0.0, top) for h in hs]
    curves = {
        "feder_merhav": (feder_merhav_curve, 0.0),
        "chords": (chord_curve, 0.0),
        "printed_last_segment": (printed_last_segment_curve, (m - 2) / (m - 1)),
    }
    if curve not in curves:
        raise ValueError(f"unknown curve {curve!r}; valid: fano, {', '.join(curves)}")
    make, lo = curves[curve]
    return [1.0 - inverse(make(m), h, lo, top) for h in hs]


class ScoreBounds(NamedTuple):
    """Bounds on the complete-feedback expected score."""

    lower: float  # Feder and Merhav's curve, as published (not a bound at every step)
    lower_chords: float  # its chords: a rigorous lower bound
    upper: float  # Fano's


def score_bounds(deck: Sequence[int]) -> ScoreBounds:
    """Bounds on the complete-feedback expected score: the published lower, rigorous lower, Fano
    upper."""
    return ScoreBounds(
        sum(step_bounds(deck, "feder_merhav")),
        sum(step_bounds(deck, "chords")),
        sum(step_bounds(deck, "fano")),
    )
