"""What each state of a layer is worth, from the next layer's values, and where the policy's
paths go: the two sweeps over a uniform deck's layers below the last.

One kernel serves the solve in one process (in_memory.py, a layer at a time) and the solve
on disk (chunks.py, a chunk of a layer at a time): each rank's row (log A, E[future score],
E[future score^2]) and chosen position, from the next layer's rows ``nxt`` (rank-indexed,
(log A, E, E^2) together, so a child costs one cache line; the last layer: log A alone).
States are walked in rank order (walk.py): a state from the one before, its children's ranks
from its own terms.

Policies: 0 optimal (the best expected score; ties within TIE_TOLERANCE go to the smallest
(c, p) pair, as in any_deck/optimal.py and exact/yes_no.py); 1 greedy by pairs: of the types
at least (1 - window) times as likely as the likeliest, the smallest (c, p) pair (window 0:
greedy with ties to the smallest pair); 2 persistent: of the same admitted types, the one
refused most often (ties: the smallest pair), which keeps naming a type after a "no" while it
stays nearly as likely as the likeliest.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from solvers.card_guessing.uniform_deck import walk
from solvers.card_guessing.uniform_deck.ranks import (
    CHUNK,
    TIE_TOLERANCE,
    _logsumexp,
    kernel,
    parallel_kernel,
)


# The shape of a compiled kernel is what its speed needs: one loop over a chunk's ranks,
# the walk's arrays allocated once per chunk.
@parallel_kernel
def layer_values(layer, lo, hi, policy, window, m, r, big, weight, eq, le, offsets, n_p,
                 count, refused, nxt):  # fmt: skip
    """(rows, chosen positions) of ranks [lo, hi) of ``layer`` < N: rows (log A, E[future],
    E[future^2]) from the next layer's ``nxt`` ((size, 3), or (size, 1) for the last layer,
    whose E and E^2 are 0); chosen position -1 for an infeasible or impossible state."""
    size = hi - lo
    out = np.zeros((size, 3))
    best = np.full(size, -1, np.int8)
    full = nxt.shape[1] == 3
    for chunk in prange((size + CHUNK - 1) // CHUNK):
        seq, wrem, base, ends = walk.walk_arrays(r)
        pre = np.empty(r + 1, np.int64)
        ylog = np.empty(r)
        yrank = np.empty(r, np.int64)
        s0 = chunk * CHUNK
        e = walk.start(lo + s0, layer, m, r, big, weight, eq, le, offsets, seq, wrem, base, ends)
        dirty = 0  # the first position whose code changed since pre was filled
        for s in range(s0, min(size, s0 + CHUNK)):
            i = lo + s
            if s > s0:
                e, changed = walk.step(i, e, layer, m, r, big, weight, eq, le, offsets, seq,
                                       wrem, base, ends)  # fmt: skip
                dirty = min(dirty, changed)
            out[s, 0] = -np.inf
            if not walk.feasible(seq, e, r, count, refused):
                continue
            table = eq if e == 0 else le
            walk.prefixes(e, layer, m, r, table, offsets, seq, wrem, pre, dirty)
            dirty = r
            for j in range(e, r):  # the yes children (equal neighbours share one)
                if j > e and seq[j] == seq[j - 1]:
                    ylog[j], yrank[j] = ylog[j - 1], yrank[j - 1]
                    continue
                yrank[j] = walk.yes_rank(i, j, e, layer, m, r, n_p, weight, table, le, offsets,
                                         seq, wrem, base, pre)  # fmt: skip
                ylog[j] = nxt[yrank[j], 0]
            lg = _logsumexp(ylog, e, r)
            out[s, 0] = lg
            if lg == -np.inf:
                continue
            floor = -np.inf  # greedy by pairs: the least log P(yes) admitted
            if policy >= 1:
                for j in range(e, r):
                    floor = max(floor, ylog[j])
                floor += math.log1p(-window) + math.log1p(-TIE_TOLERANCE)
            top = -1.0
            for j in range(r - 1, e - 1, -1):  # smallest pair first
                if ylog[j] == -np.inf or (j > e and seq[j] == seq[j - 1]):
                    continue  # impossible, or the same as the type before
                q = math.exp(ylog[j] - lg)
                yv = nxt[yrank[j], 1] if full else 0.0
                ysq = nxt[yrank[j], 2] if full else 0.0
                v = q * (1.0 + yv)
                sq = q * (1.0 + 2.0 * yv + ysq)
                if refused[seq[j]] + 1 < n_p:
                    k = walk.no_rank(i, j, e, r, table, seq, wrem, base, pre)
                    if nxt[k, 0] > -np.inf:
                        qn = math.exp(nxt[k, 0] - lg)
                        v += qn * (nxt[k, 1] if full else 0.0)
                        sq += qn * (nxt[k, 2] if full else 0.0)
                if policy >= 1 and ylog[j] < floor:
                    continue
                crit = v if policy == 0 else (refused[seq[j]] if policy == 2 else 0.0)
                if best[s] < 0 or crit > top * (1.0 + TIE_TOLERANCE):
                    top = crit
                    out[s, 1] = v
                    out[s, 2] = sq
                    best[s] = j
    return out, best


@kernel
def policy_edges(layer, lo, best, paths, m, r, big, weight, eq, le, offsets, n_p, refused):
    """The policy's edges out of ranks [lo, lo + paths.size) of ``layer`` reached by some
    path (``paths`` > 0): (child rank, path count), the yes child of each state before its
    no child, in rank order."""
    n = 0
    for s in range(paths.size):
        if paths[s] != 0.0 and best[s] >= 0:
            n += 2
    ranks = np.empty(n, np.int64)
    weights = np.empty(n)
    seq, wrem, base, ends = walk.walk_arrays(r)
    pre = np.empty(r + 1, np.int64)
    k, e = 0, -1
    for s in range(paths.size):
        if paths[s] == 0.0 or best[s] < 0:
            continue
        i = lo + s
        if e < 0:
            e = walk.start(i, layer, m, r, big, weight, eq, le, offsets, seq, wrem, base, ends)
        else:
            e, _ = walk.step(i, e, layer, m, r, big, weight, eq, le, offsets, seq, wrem, base,
                             ends)  # fmt: skip
        j = best[s]
        table = eq if e == 0 else le
        walk.prefixes(e, layer, m, r, table, offsets, seq, wrem, pre, 0)
        ranks[k] = walk.yes_rank(i, j, e, layer, m, r, n_p, weight, table, le, offsets, seq, wrem,
                                 base, pre)  # fmt: skip
        weights[k] = paths[s]
        k += 1
        if refused[seq[j]] + 1 < n_p:
            ranks[k] = walk.no_rank(i, j, e, r, table, seq, wrem, base, pre)
            weights[k] = paths[s]
            k += 1
    return ranks[:k], weights[:k]
