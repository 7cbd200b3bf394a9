"""The composition posterior of the cards still to come in a yes/no state, as a float filter.

The exact ``info`` move (exact/entropy_weighted.py) needs the composition posterior of the
n cards still to come in a state (c, p).  Here it is computed as a *filter*: given the
posterior P over the composition k of the cards to come, the next card is a type ``b`` with
probability k_b / n (the cards to come are in uniform random order given k, no answer constrains
them), so

    the weight of k' = k - e_b among the cards after the next one is  P(k) * k_b.

Call C[k', b] that weight.  After naming ``a`` and hearing "yes" the posterior is C[., a];
after "no" it is sum over b != a of C[., b]; with no answer at all (a "no" to an exhausted
type), the sum over every b.  Only products and sums of non-negative numbers appear, so
every weight carries a relative rounding error of a few ulps per card, exact zeros stay
exact (the support is exact) and nothing cancels.  The posterior of any state (c, p) comes
from its own short history: start from the point mass at k = c with every unconfirmed card
to come, then p_i "no" answers to each type i and F free slots (the "no" slots of types that
are exhausted now).  Any history reaching a state gives the same posterior (the (c, p)
statistic is sufficient), and every prefix of a consistent history is consistent.

A composition k is indexed by its mixed-radix number (strides over the deck's counts); the
kernels keep a workspace of the posterior's rows and the next level's, grown as needed.
"""

from __future__ import annotations

import numpy as np

from solvers.card_guessing.exact import yes_no
from solvers.kit.compile_once import njit


@njit(cache=True)
def _strides(caps):
    out = np.empty(caps.size, np.int64)
    s = np.int64(1)
    for i in range(caps.size):
        out[i] = s
        s *= caps[i] + 1
    return out


DENSE_BOX = 1 << 22  # composition boxes up to this size index a dense position table


@njit(cache=True)
def _workspace(strides, caps, rows):
    """Buffers for the filter: posterior (ks, idx, w), next level (kids, kidx, C), positions."""
    r = strides.size
    box = strides[r - 1] * (caps[r - 1] + 1)
    dense = box <= DENSE_BOX
    size = box if dense else _pow2(2 * rows)
    return (
        np.empty((rows, r), np.int64),
        np.empty(rows, np.int64),
        np.empty(rows),
        np.empty((rows, r), np.int64),
        np.empty(rows, np.int64),
        np.empty((rows, r)),
        np.full(size, -1, np.int64),
        np.empty(rows, np.int64),
        dense,
    )


@njit(cache=True)
def _pow2(x):
    cap = 16
    while cap < x:
        cap <<= 1
    return cap


@njit(cache=True)
def _grown(ws, m, need):
    """The workspace with room for ``need`` rows (the posterior's first m rows kept)."""
    ks, idx, w, kids, kidx, C, pos, slots, dense = ws
    rows = ks.shape[0]
    if need <= rows:
        return ws
    while rows < need:
        rows *= 2
    r = ks.shape[1]
    nks = np.empty((rows, r), np.int64)
    nidx = np.empty(rows, np.int64)
    nw = np.empty(rows)
    nks[:m] = ks[:m]
    nidx[:m] = idx[:m]
    nw[:m] = w[:m]
    npos = pos if dense else np.full(_pow2(2 * rows), -1, np.int64)
    return (
        nks,
        nidx,
        nw,
        np.empty((rows, r), np.int64),
        np.empty(rows, np.int64),
        np.empty((rows, r)),
        npos,
        np.empty(rows, np.int64),
        dense,
    )


@njit(cache=True, inline="always")
def _child_row(ws, i, b, ci, mm):
    """The next level's row of composition index ``ci`` = row i minus one card of type b.

    A new composition gets row ``mm`` (the caller then counts it and clears its weights):
    its position is recorded (dense table, or open addressing on a hash of ci), its counts
    copied from row i with one fewer b.
    """
    ks, idx, w, kids, kidx, C, pos, slots, dense = ws
    if dense:
        h = ci
    else:
        mask = pos.size - 1
        h = np.int64((np.uint64(ci) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(20)) & mask
        while pos[h] != -1 and kidx[pos[h]] != ci:
            h = (h + 1) & mask
    j = pos[h]
    if j != -1:
        return j
    pos[h] = mm
    slots[mm] = h
    kidx[mm] = ci
    for t in range(ks.shape[1]):
        kids[mm, t] = ks[i, t]
    kids[mm, b] -= 1
    return mm


@njit(cache=True)
def _next_level(ws, m, strides):
    """Fill the next level: its compositions k' = k - e_b and C[k', b] = P(k) k_b; its size.

    The workspace must hold m * r rows (see :func:`_grown`).
    """
    ks, idx, w, kids, kidx, C, pos, slots, dense = ws
    r = strides.size
    mm = 0
    for i in range(m):
        for b in range(r):
            kb = ks[i, b]
            if kb == 0:
                continue
            j = _child_row(ws, i, b, idx[i] - strides[b], mm)
            if j == mm:
                for t in range(r):
                    C[j, t] = 0.0
                mm += 1
            C[j, b] += w[i] * kb
    for j in range(mm):
        pos[slots[j]] = -1
    return mm


@njit(cache=True)
def _advance(ws, m, strides, a, yes):
    """Make the posterior after naming ``a`` (-1: free) and the answer, without C; its size.

    "yes": k -> k - e_a with weight P(k) k_a, one to one (in place).  "no": the weights of
    k' = k - e_b summed over b != a in one column (the workspace must hold m * r rows).
    """
    ks, idx, w, kids, kidx, C, pos, slots, dense = ws
    r = strides.size
    total = 0.0
    if yes:
        m2 = 0
        for i in range(m):
            ka = ks[i, a]
            if ka == 0:
                continue
            for t in range(r):
                ks[m2, t] = ks[i, t]
            ks[m2, a] -= 1
            idx[m2] = idx[i] - strides[a]
            w[m2] = w[i] * ka
            total += w[m2]
            m2 += 1
        for j in range(m2):
            w[j] /= total
        return m2
    acc = C[:, 0]
    mm = 0
    for i in range(m):
        for b in range(r):
            kb = ks[i, b]
            if kb == 0 or b == a:
                continue
            j = _child_row(ws, i, b, idx[i] - strides[b], mm)
            if j == mm:
                acc[j] = 0.0
                mm += 1
            acc[j] += w[i] * kb
    for j in range(mm):
        pos[slots[j]] = -1
        total += acc[j]
    for j in range(mm):
        for t in range(r):
            ks[j, t] = kids[j, t]
        idx[j] = kidx[j]
        w[j] = acc[j] / total
    return mm


@njit(cache=True)
def _start(ws, cs, strides):
    """The point mass at k = c (every unconfirmed card still to come); its size (1)."""
    ks, idx, w = ws[0], ws[1], ws[2]
    idx[0] = 0
    for i in range(cs.size):
        ks[0, i] = cs[i]
        idx[0] += cs[i] * strides[i]
    w[0] = 1.0
    return 1


@njit(cache=True)
def _step(ws, m, strides, a, yes):
    """(workspace, size) after one card named ``a`` (-1: free) with the given answer."""
    ws = _grown(ws, m, m * strides.size)
    return ws, _advance(ws, m, strides, a, yes)


@njit(cache=True)
def _posterior(ws, cs, ps, n, strides):
    """(workspace, size): the composition posterior of the cards to come in state (c, p)."""
    m = _start(ws, cs, strides)
    unconfirmed = 0
    refused = 0
    for i in range(cs.size):
        unconfirmed += cs[i]
        if cs[i] > 0:
            refused += ps[i]
    for i in range(cs.size):
        if cs[i] == 0:
            continue
        for _ in range(ps[i]):
            ws, m = _step(ws, m, strides, i, False)
    for _ in range(unconfirmed - n - refused):
        ws, m = _step(ws, m, strides, -1, False)
    return ws, m


def float_posterior(state: yes_no.State) -> tuple[np.ndarray, np.ndarray]:
    """(compositions, probabilities) of the cards still to come in a labelled state."""
    n, pairs = state
    cs = np.array([c for c, _ in pairs], np.int64)
    ps = np.array([p if c else 0 for c, p in pairs], np.int64)
    strides = _strides(cs)
    ws, m = _posterior(_workspace(strides, cs, 64), cs, ps, n, strides)
    w = ws[2][:m]
    return ws[0][:m].copy(), w / w.sum()
