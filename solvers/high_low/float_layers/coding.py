"""Count vectors as integer codes: ``c[j] - 1`` in bit field ``j`` of an int64, a code's place
among the codes of its length and digit sum (a ranking by digit sums, :func:`_rank`), and how
every compiled kernel of the float layers is built (:data:`kernel`)."""

from __future__ import annotations

import numpy as np

from solvers.kit.compile_once import njit

kernel = njit(cache=True, nogil=True)
parallel_kernel = njit(cache=True, nogil=True, parallel=True)

CODE_BITS = 62  # a count vector's code is an int64: ranks x field_bits(suits) bits at most


def composition_counts(ranks: int, suits: int) -> list[list[int]]:
    """counts[L][m]: count vectors of L entries in 1..suits summing to m (exact integers)."""
    n = ranks * suits
    counts = [[0] * (n + 1) for _ in range(ranks + 1)]
    counts[0][0] = 1
    for length in range(1, ranks + 1):
        for m in range(n + 1):
            counts[length][m] = sum(counts[length - 1][m - v] for v in range(1, min(suits, m) + 1))
    return counts


def field_bits(suits: int) -> int:
    """Bits of one count field of a code (a count 1..suits is stored as count - 1)."""
    return max(1, (suits - 1).bit_length())


def rank_table(ranks: int, suits: int) -> np.ndarray:
    """before[j, t, d]: strings of j digits in 0..suits-1 after a digit below d, the j + 1
    digits summing to t (the ranking table of :func:`_rank`)."""
    top = ranks * (suits - 1)
    cnt = np.zeros((ranks + 1, top + 1), np.int64)
    cnt[0, 0] = 1
    for j in range(1, ranks + 1):
        for t in range(top + 1):
            cnt[j, t] = sum(cnt[j - 1, t - v] for v in range(min(suits - 1, t) + 1))
    before = np.zeros((ranks + 1, top + 1, suits), np.int64)
    for j in range(ranks + 1):
        for t in range(top + 1):
            for d in range(1, suits):
                before[j, t, d] = before[j, t, d - 1] + (cnt[j, t - d + 1] if t >= d - 1 else 0)
    return before


def group_sizes(ranks: int, suits: int) -> np.ndarray:
    """sizes[m, L]: count vectors of length L in layer m."""
    counts = composition_counts(ranks, suits)
    return np.array(counts, np.int64).T.copy()


@kernel
def _reverse(code, length, bits):
    """The code of the reversed vector."""
    mask = (np.int64(1) << bits) - 1
    out = np.int64(0)
    for j in range(length):
        out |= ((code >> (bits * j)) & mask) << (bits * (length - 1 - j))
    return out


@kernel
def _rank(code, length, dsum, bits, before):
    """Place of a code among the codes of its length and digit sum, in increasing order."""
    mask = (np.int64(1) << bits) - 1
    r = np.int64(0)
    t = dsum
    for j in range(length - 1, -1, -1):
        d = (code >> (bits * j)) & mask
        r += before[j, t, d]
        t -= d
    return r


@kernel
def _unrank(place, length, dsum, bits, before, suits):
    """The code at ``place`` among the codes of its length and digit sum (inverse of _rank)."""
    code = np.int64(0)
    t = dsum
    r = place
    for j in range(length - 1, -1, -1):
        d = 0
        while d + 1 < suits and d + 1 <= t and before[j, t, d + 1] <= r:
            d += 1
        r -= before[j, t, d]
        t -= d
        code |= np.int64(d) << (bits * j)
    return code


@kernel
def _next(code, length, bits, suits):
    """The next larger code of the same length and digit sum (-1 after the last)."""
    mask = (np.int64(1) << bits) - 1
    low_sum = code & mask
    for i in range(1, length):
        d = (code >> (bits * i)) & mask
        if d < suits - 1 and low_sum >= 1:
            out = (code >> (bits * (i + 1))) << (bits * (i + 1))
            out |= (d + 1) << (bits * i)
            rest = low_sum - 1
            for k in range(i):
                v = min(rest, suits - 1)
                out |= v << (bits * k)
                rest -= v
            return out
        low_sum += d
    return np.int64(-1)


def layer_bases(sizes: np.ndarray, m: int) -> np.ndarray:
    """bases[L]: where the W of length-L vectors start in layer m; bases[-1]: its size."""
    lengths = np.arange(sizes.shape[1])
    bases = np.zeros(sizes.shape[1] + 1, np.int64)
    bases[1:] = np.cumsum(sizes[m] * lengths)
    return bases
