"""The compiled side of count vectors as integer codes (``c[j] - 1`` in bit field ``j`` of an
int64, :mod:`.counting`): a code's place among the codes of its length and digit sum (a
ranking by digit sums, :func:`_rank`), its inverse, the next code, the reversed vector; and
how every compiled kernel of the float layers is built (:data:`kernel`)."""

from __future__ import annotations

import numpy as np

from solvers.kit.compile_once import njit

kernel = njit(cache=True, nogil=True)
parallel_kernel = njit(cache=True, nogil=True, parallel=True)


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
