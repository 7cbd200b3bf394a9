"""The last layer of a uniform deck (no card to come): each state's unconfirmed cards T and
its arrangement count log A.

A state with no refused slot is a multinomial coefficient.  Otherwise its A sums over the
ways to fill one slot, and each way leads to a state of the same layer with one unconfirmed
card less (T - 1), so the layer is solved in passes of T = 0..N (ranks.py's docstring):

- **a free slot** (a forgotten "no"): any type a fills it: a yes on a's code;
- **no free slot**: the first refused slot of the first refused type i holds some type
  j != i: i's code loses a refusal (p - 1) and j's takes a yes.  i's change is common to
  every j: it is made once on the state's codes (on the last position of i's code, which
  keeps them in order), and each j is then a yes on that sequence, whose own terms after
  the moved code are known (the sums ``low``).

Children are ranked from the parent's terms (walk.py), their feasibility read from how many
types are tight (a type whose refusals fill every other type's unconfirmed card: a child
with one card less overall is feasible only if no type but the ones it changes is tight).
The floats are ranks.py's first version's, term by term in the same order.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from solvers.card_guessing.state_codes import sort_desc
from solvers.card_guessing.uniform_deck import walk
from solvers.card_guessing.uniform_deck.ranks import (
    CHUNK,
    _logsumexp,
    _rank,
    inline_kernel,
    kernel,
    parallel_kernel,
)


@parallel_kernel
def unconfirmed(layer, lo, hi, m, r, big, weight, eq, le, offsets, n_p, count, refused):
    """T = sum of c for ranks [lo, hi) of ``layer`` (-1 if infeasible)."""
    size = hi - lo
    out = np.empty(size, np.int8)
    for chunk in prange((size + CHUNK - 1) // CHUNK):
        seq, wrem, base, ends = walk.walk_arrays(r)
        s0 = chunk * CHUNK
        e = walk.start(lo + s0, layer, m, r, big, weight, eq, le, offsets, seq, wrem, base, ends)
        for s in range(s0, min(size, s0 + CHUNK)):
            if s > s0:
                e, _ = walk.step(lo + s, e, layer, m, r, big, weight, eq, le, offsets, seq,
                                 wrem, base, ends)  # fmt: skip
            if not walk.feasible(seq, e, r, count, refused):
                out[s] = -1
                continue
            t = 0
            for j in range(e, r):
                t += count[seq[j]]
            out[s] = t
    return out


@parallel_kernel
def pass_logs(t, lo, unconf, logs, out, m, r, big, weight, eq, le, offsets, n_p, count, refused,
              logf):  # fmt: skip
    """log A of the ranks ``lo + s`` of the last layer with t unconfirmed cards
    (``unconf[s] == t``) into ``out[s]``, from ``logs``, the whole layer (those with t - 1
    are done); ``out``'s other entries are left as they are.

    One kernel for both solves (the dearest of the last layer to compile, ~16 s): in memory
    ``out`` is the layer itself (``lo`` 0, ``logs`` a read-only view of it); out of core a
    chunk's piece of the layer's file, mapped for writing, ``logs`` the file mapped
    read-only."""
    size = unconf.size
    for chunk in prange((size + CHUNK - 1) // CHUNK):
        seq, wrem, base, ends = walk.walk_arrays(r)
        work = _work(r)
        e = -1
        for s in range(chunk * CHUNK, min(size, (chunk + 1) * CHUNK)):
            if unconf[s] != t:
                continue
            i = lo + s
            e = _stand_on(i, e, m, r, big, weight, eq, le, offsets, seq, wrem, base, ends)
            out[s] = _last_log(i, seq, e, t, logs, m, r, big, weight, eq, le, offsets, n_p,
                               count, refused, logf, wrem, base, work)  # fmt: skip


@kernel
def _work(r):
    """The scratch of :func:`_last_log`: a child, the terms, the suffix sums, a sequence."""
    return np.empty(r, np.int64), np.empty(r), np.empty(r + 1, np.int64), np.empty(r, np.int64)


@inline_kernel
def _stand_on(i, e, m, r, big, weight, eq, le, offsets, seq, wrem, base, ends):
    """Walk to rank i of the last layer (afresh when e < 0: nothing walked yet)."""
    layer = m * r
    if e < 0:
        return walk.start(i, layer, m, r, big, weight, eq, le, offsets, seq, wrem, base, ends)
    return walk.step(i, e, layer, m, r, big, weight, eq, le, offsets, seq, wrem, base, ends)[0]


@inline_kernel
def _last_log(i, seq, e, t, logs, m, r, big, weight, eq, le, offsets, n_p, count, refused,
              logf, wrem, base, work):  # fmt: skip
    """log A of the last-layer state of rank i (its walk arrays filled) from the states with
    t - 1 unconfirmed cards."""
    n_refused = 0
    first = -1
    v = logf[t]
    for j in range(e, r):
        p = refused[seq[j]]
        n_refused += p
        if p > 0 and first < 0:
            first = j
        v -= logf[count[seq[j]]]
    if n_refused == 0:  # no refused slot: a multinomial coefficient
        return v
    if t - n_refused > 0:
        return _free_slot(i, seq, e, logs, m, r, big, weight, eq, le, offsets, n_p, count,
                          refused, wrem, base, work)  # fmt: skip
    return _refused_slot(i, first, seq, e, logs, m, r, big, weight, eq, le, offsets, n_p,
                         count, refused, wrem, base, work)  # fmt: skip


@inline_kernel
def _tight(seq, e, r, count, refused):
    """(total unconfirmed cards, tight types, the last tight position)."""
    total = 0
    for q in range(e, r):
        total += count[seq[q]]
    tight, at = 0, -1
    for q in range(e, r):
        if refused[seq[q]] == total - count[seq[q]]:
            tight += 1
            at = q
    return total, tight, at


@inline_kernel
def _free_slot(i, seq, e, logs, m, r, big, weight, eq, le, offsets, n_p, count, refused,
               wrem, base, work):  # fmt: skip
    """A free slot: log of the sum over types a of A(a in it), a yes on a's code each."""
    child, terms, low, _ = work
    layer = m * r
    table = eq if e == 0 else le
    k = r - e
    low[r] = 0  # the parent's terms from q on, one weight less left (a child weighs one more)
    for q in range(r - 1, e - 1, -1):
        w = wrem[q] - 1
        low[q] = low[q + 1] + (table[k - (q - e), seq[q], w] if w >= 0 else 0)
    total, tight, tight_at = _tight(seq, e, r, count, refused)
    nt = 0
    for a in range(e, r):
        if a > e and seq[a] == seq[a - 1]:  # the same child as the type before
            terms[nt] = terms[nt - 1]
        elif tight > 1 or (tight == 1 and tight_at != a):
            terms[nt] = -np.inf  # a type other than a is tight: infeasible
        elif seq[a] < n_p:  # a's type is exhausted
            terms[nt] = logs[walk.exhausted_rank(seq, a, e, layer, m, r, weight, le, offsets)]
        else:
            rank, q = walk.moved_prefix(a, seq[a] - n_p, e, r, table, weight, seq, base[a],
                                        wrem[a])  # fmt: skip
            terms[nt] = logs[rank + low[q + 1]]
        nt += 1
    return _logsumexp(terms, 0, nt)


@inline_kernel
def _refused_slot(i, first, seq, e, logs, m, r, big, weight, eq, le, offsets, n_p, count,
                  refused, wrem, base, work):  # fmt: skip
    """No free slot: log of the sum over types j != first of A(j in first's first refused
    slot): first's code loses a refusal, j's takes a yes."""
    child, terms, low, s1 = work
    layer = m * r
    table = eq if e == 0 else le
    k = r - e
    last = first  # first's change made on the last position of its code: s1, one weight less
    while last + 1 < r and seq[last + 1] == seq[first]:
        last += 1
    for q in range(r):
        s1[q] = seq[q]
    s1[last] -= 1
    # s1's own terms from q on: the parent's after ``last``; one weight less left up to it
    for q in range(last + 1, r + 1):
        low[q] = i - base[q]
    low[last] = low[last + 1] + table[k - (last - e), s1[last], wrem[last] - 1]
    for q in range(last - 1, e - 1, -1):
        low[q] = low[q + 1] + table[k - (q - e), seq[q], wrem[q] - 1]
    # a child's rank before position p (s1's codes, one weight more left than s1's): the
    # parent's own before ``last``'s end; after it, built on (rank, weight) ``beyond``
    beyond = base[last] + table[k - (last - e), s1[last], wrem[last]]
    total, tight, _ = _tight(seq, e, r, count, refused)
    first_tight = refused[seq[first]] == total - count[seq[first]]
    nt = 0
    for j in range(e, r):
        if j == first:
            continue
        x = seq[j]
        if tight - (refused[x] == total - count[x]) - first_tight > 0:
            terms[nt] = -np.inf  # a type other than first and j is tight: infeasible
        elif x < n_p:  # j's type is exhausted: ranked afresh
            for q in range(r):
                child[q] = s1[q]
            child[j if j != last else first] = big
            sort_desc(child)
            terms[nt] = logs[_rank(child, layer, m, r, big, weight, eq, le, offsets)]
        else:
            p = first if (x == seq[first] and last > first) else j  # a position of x in s1
            if p <= last:
                start_rank, start_w = base[p], wrem[p]
            else:
                start_rank = beyond
                for q in range(last + 1, p):
                    start_rank += table[k - (q - e), seq[q], wrem[q] + 1]
                start_w = wrem[p] + 1
            rank, q = walk.moved_prefix(p, x - n_p, e, r, table, weight, s1, start_rank,
                                        start_w)  # fmt: skip
            terms[nt] = logs[rank + low[q + 1]]
        nt += 1
    return _logsumexp(terms, 0, nt)
