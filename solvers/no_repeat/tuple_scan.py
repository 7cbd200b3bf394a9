"""The compiled scan of :func:`solvers.no_repeat.tasks.scan`: every valid (n, k, m) of one
deck size, the two entropies of each from the closed forms (the scalar twins of
:func:`solvers.no_repeat.closed_forms.entropies`), counted and the extremes kept.  A module
of its own so that importing the family (to read its parameters) imports no compiler."""

from __future__ import annotations

import math

import numpy as np

from solvers.kit.compile_once import njit


@njit(cache=True)
def _lc(lf: np.ndarray, n: int, r: int) -> float:
    """log C(n, r) (0 <= r <= n assumed by the callers' weights: others get weight 0)."""
    if r < 0 or r > n:
        return 0.0
    return lf[n] - lf[r] - lf[n - r]


@njit(cache=True)
def _term(p: float, log_size: float) -> float:
    return p * (log_size - math.log(p)) if p > 0 else 0.0


@njit(cache=True)
def _pair(lf: np.ndarray, N: int, n: int, k: int, m: int) -> tuple[float, float]:
    """(H_a, H_b) for one tuple: the scalar twin of :func:`.closed_forms.entropies`
    (compiled)."""
    u, rest, free = N - k, N - n - 1, n - k - m
    p_yes = 1.0 / (u - m)
    q = rest / (u - m - 1)
    h_no = _term(q, _lc(lf, u - 1, rest - 1)) + _term(1 - q, _lc(lf, u - 1, rest))
    h_a = p_yes * _lc(lf, u - 1, rest) + (1 - p_yes) * h_no
    pb_yes = (u - m - 1) / ((u - 1) * (u - m))
    hb_yes = _term(q, _lc(lf, u - 2, rest - 1)) + _term(1 - q, _lc(lf, u - 2, rest))
    big_a = (u - 1) + (u - m - 1) * (u - 2)
    hb_no = (
        _term(rest * (rest - 1) / big_a, _lc(lf, u - 2, rest - 2))
        + _term(rest * (n - k) / big_a, _lc(lf, u - 2, rest - 1))
        + _term((rest + free * rest) / big_a, _lc(lf, u - 2, rest - 1))
        + _term(((n - k) + free * (n - k - 1)) / big_a, _lc(lf, u - 2, rest))
    )
    return h_a, pb_yes * hb_yes + (1 - pb_yes) * hb_no


@njit(cache=True)
def _scan(N: int, lf: np.ndarray, tol: float):
    """(tuples, violations, equal, min gap, its n, k, m, max gap) over m >= 1 (see scan)."""
    count, bad, equal = 0, 0, 0
    best, best_n, best_k, best_m, worst = np.inf, -1, -1, -1, -np.inf
    for n in range(2, N - 1):
        for k in range(1, n):
            for m in range(0, n - k):
                h_a, h_b = _pair(lf, N, n, k, m)
                gap = h_b - h_a
                count += 1
                if abs(gap) <= tol:
                    equal += 1
                if m == 0:
                    continue
                if gap < -tol:
                    bad += 1
                if gap < best:
                    best, best_n, best_k, best_m = gap, n, k, m
                worst = max(worst, gap)
    return count, bad, equal, best, best_n, best_k, best_m, worst
