"""The kernel that fills one layer's ``W`` from the previous layer's (:func:`_layer`), in
parallel over chunks of the vectors of one length."""

from __future__ import annotations

import numpy as np
from numba import prange

from solvers.high_low.float_layers.coding import _next, _reverse, _unrank, kernel, parallel_kernel
from solvers.high_low.float_layers.departures import _vector_departures

CHUNKS = 256  # a layer's vectors of one length are solved in this many parts (in parallel)


@kernel
def _side_sums(w, base, length, pos, gap):
    """(W below the position, W above it, W of its own entry) of one stored vector."""
    lower = 0.0
    higher = 0.0
    for i in range(pos):
        lower += w[base + i]
    first = pos if gap else pos + 1
    for i in range(first, length):
        higher += w[base + i]
    own = 0.0 if gap else w[base + pos]
    return lower, higher, own


@kernel
def _positions(code, length, ranks, bits, suits, merged):
    """Positions of a vector that can hold the card showing (gaps, entries below suits);
    ``merged``: a palindrome's mirror-image positions counted once."""
    mask = (np.int64(1) << bits) - 1
    n = 0
    last = length if merged else 2 * length  # positions 0..2L: gap j = 2j, entry j = 2j + 1
    for p in range(last + 1):
        if p % 2 == 0:
            n += length < ranks
        elif (code >> (bits * (p // 2))) & mask < suits - 1:
            n += 1
    return n


@kernel
def _rank_parts(code, length, bits, before, a, b, c, sums):
    """Partial rank sums of a vector, so that each child's rank costs O(1) (:func:`_child`).

    With term_i = before[i, s_i, d_i] (s_i: digits 0..i summed), the rank is the sum of the
    terms; a[j] sums terms below j, b[j] the terms from j up with s_i lowered by 1 (one card
    fewer below them), c[j] the terms from j up moved one field down (field j - 1 removed);
    sums[j] = s_j."""
    mask = (np.int64(1) << bits) - 1
    s = 0
    a[0] = 0
    for i in range(length):
        d = (code >> (bits * i)) & mask
        s += d
        sums[i] = s
        a[i + 1] = a[i] + before[i, s, d]
    b[length] = 0
    c[length] = 0
    for i in range(length - 1, -1, -1):
        d = (code >> (bits * i)) & mask
        b[i] = b[i + 1] + (before[i, s - 1, d] if s >= 1 else 0)
        c[i] = c[i + 1] + (before[i - 1, s, d] if i >= 1 else 0)
        s -= d


@kernel
def _child(code, j, bits, before, a, b, c, sums):
    """(code, rank in its group) of the vector with one card fewer in field j (its field
    removed when that was its last card), from the parent's partial sums."""
    mask = (np.int64(1) << bits) - 1
    shift = bits * j
    d = (code >> shift) & mask
    if d >= 1:
        return code - (np.int64(1) << shift), a[j] + before[j, sums[j] - 1, d - 1] + b[j + 1]
    low = code & ((np.int64(1) << shift) - 1)
    return low | ((code >> (shift + bits)) << shift), a[j] + c[j + 1]


@parallel_kernel
def _layer(m, ranks, suits, bits, tie_ok, optimal, before, sizes, prev, pbase, cur, cbase,
           departures, lgam, top, found, length_lo, length_hi, ch_lo, ch_hi):  # fmt: skip
    """Fill layer m's W from layer m - 1's (``prev``); returns the states of layer m solved.

    Only the vectors of lengths ``length_lo..length_hi - 1`` and chunks ``ch_lo..ch_hi - 1``
    of each (a vector's W lands at ``cur[cbase[length] + place * length]``: a caller may hand
    a buffer for part of a layer with ``cbase`` shifted).  ``departures``: also count where
    the best call beats the majority's (see :func:`_vector_departures`; ``top`` and ``found``
    have one row per chunk)."""
    mask = (np.int64(1) << bits) - 1
    states = 0
    chunks = top.shape[0]
    for length in range(length_lo, length_hi):
        size = sizes[m, length]
        for ch in prange(ch_lo, ch_hi):
            scratch = np.empty((8, ranks + 2), np.int64)
            a, b, c, sums = scratch[0], scratch[1], scratch[2], scratch[3]
            ra, rb, rc, rsums = scratch[4], scratch[5], scratch[6], scratch[7]
            wsums = np.empty((2, ranks + 2))
            first = ch * size // chunks
            code = np.int64(0)
            for t in range(first, (ch + 1) * size // chunks):
                if t == first:
                    code = _unrank(t, length, m - length, bits, before, suits)
                else:
                    code = _next(code, length, bits, suits)
                rcode = _reverse(code, length, bits)
                if optimal and rcode < code:
                    continue  # its mirror image is solved instead
                states += _positions(code, length, ranks, bits, suits, rcode == code and optimal)
                out = cbase[length] + t * length
                if m == 1:
                    for j in range(length):
                        cur[out + j] = 1.0
                else:
                    _rank_parts(code, length, bits, before, a, b, c, sums)
                    if optimal:
                        _rank_parts(rcode, length, bits, before, ra, rb, rc, rsums)
                    below = 0
                    for j in range(length):
                        cj = ((code >> (bits * j)) & mask) + 1
                        gap = cj == 1
                        clen = length - 1 if gap else length
                        child, place = _child(code, j, bits, before, a, b, c, sums)
                        pos = j
                        flipped = False
                        if optimal:
                            rj = length - 1 - j
                            rchild, rplace = _child(rcode, rj, bits, before, ra, rb, rc, rsums)
                            if rchild < child:
                                place = rplace
                                flipped = True
                                pos = clen - j if gap else clen - 1 - j
                        base = pbase[clen] + place * clen
                        lower, higher, own = _side_sums(prev, base, clen, pos, gap)
                        if flipped:
                            lower, higher = higher, lower
                        if optimal:
                            best = max(lower, higher)
                        else:
                            above = m - below - cj
                            best = higher if above >= below else lower
                        if tie_ok:
                            best += own
                        cur[out + j] = cj * best / (m - 1)
                        below += cj
                if departures:
                    _vector_departures(m, ranks, suits, bits, tie_ok, code, rcode, length, cur,
                                       out, lgam, top, found, ch, wsums)  # fmt: skip
    return states
