"""The search's memo: exact costs, proven lower bounds and chosen queries of candidate sets,
keyed by Zobrist hashes of the set's codes and the guesses left."""

from __future__ import annotations

import numpy as np
from numba import types
from numba.typed import Dict

from solvers.kit.compile_once import njit

KEY = types.UniTuple(types.uint64, 3)


@njit(cache=True, nogil=True)
def _memo_key(s: np.ndarray, left: int, zobrist: np.ndarray) -> tuple:
    """The memo's key of the candidate set s with ``left`` guesses left: two 64-bit Zobrist
    hashes of its codes and ``left``."""
    h1, h2 = np.uint64(0), np.uint64(0)
    for i in range(s.size):
        h1 += zobrist[0, s[i]]
        h2 += zobrist[1, s[i]]
    return (h1, h2, np.uint64(left))


@njit(cache=True, nogil=True)
def _remembered(
    key: tuple,
    best: int,
    best_q: int,
    known: int,
    bound: int,
    exact: Dict,
    lower: Dict,
    choice: Dict,
) -> int:
    """The outcome of a search, stored: its cost and query if a query beat the bound, else the
    proven lower bound."""
    if best_q >= 0:
        exact[key] = best
        choice[key] = best_q
        return best
    lower[key] = max(known, bound)
    return max(known, bound)


@njit(cache=True, nogil=True)
def _chosen(s: np.ndarray, left: int, zobrist: np.ndarray, choice: Dict) -> int:
    """The optimal query stored for the candidate set s with ``left`` guesses left, or -1."""
    return choice.get(_memo_key(s, left, zobrist), -1)
