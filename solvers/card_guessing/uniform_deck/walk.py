"""Walking a layer's rank space in rank order: each state from the one before it, and its
children's ranks from its own terms, with few table reads (ranks.py has the rank space).

A state's rank is a sum of terms, one per active position q: ``table[k - q', x_q, w_q]``
(k active codes, q' = q - e, x_q the code at q, w_q the weight left before q), plus the
offset of its exhausted types' block.  The walk keeps, for the state it stands on, its
codes ``seq``, the weight left before each position ``wrem``, the rank reached before each
position ``base`` (so the terms from q on sum to ``i - base[q]``) and the end ``hi`` of the
ranks sharing its codes up to q.

- **The next state** (:func:`step`): consecutive ranks share all their codes up to the
  deepest position q with ``i < hi[q]``; only the positions after it are searched again
  (``ranks._unrank`` searches them all), most often the last one alone.
- **A child's rank**: a yes on the code at position j (c - 1: one weight more) or a no
  (p + 1: one weight more) in the next layer keeps the codes before j, each with one more
  weight left (``prefixes``); a no keeps every code after j in place with the same weight
  left, so its rank is the prefix, one term and the parent's own terms after j; a yes's
  smaller code moves past the codes above it (a few terms), after which the codes and
  weights are the parent's again.  A yes that exhausts the type moves it to the front: its
  rank is summed afresh (:func:`exhausted_rank`).

Every rank is an exact integer, so ranks found this way are the ranks ``ranks._rank`` finds
(tests compare the two over whole layers), and a kernel that reads its children through them
computes the same floats in the same order.  On 8 types of 4 a layer's state costs about half
the CPU of unranking it and ranking each child afresh (benchmarks/bench_ranked.py).

Each code's c and p come from tables (``Codes.count``, ``Codes.refused``), not from a
division by P + 1: a feasibility check divided 3r times, and the divisions took a quarter
of a layer kernel's time.
"""

from __future__ import annotations

import numpy as np

from solvers.card_guessing.uniform_deck.ranks import inline_kernel, kernel, largest_code


@kernel
def walk_arrays(r):
    """A walk's arrays: codes, weight left before each position, rank before each position,
    end of each position's range."""
    return (
        np.empty(r, np.int64),
        np.empty(r + 1, np.int64),
        np.empty(r + 1, np.int64),
        np.empty(r, np.int64),
    )


@inline_kernel
def _descend(i, p, e, r, table, weight, seq, wrem, base, hi):
    """Codes at positions p..r-1 of rank ``i`` given those before p (``base[p]``,
    ``wrem[p]`` set): the binary searches of ranks._unrank, each position's base, weight
    left and range end recorded."""
    k = r - e
    top = seq[p - 1] if p > e else weight.size - 2  # no code above the exhausted one's
    for q in range(p, r):
        kk = k - (q - e)
        w = wrem[q]
        lo = largest_code(table, kk, w, top, i - base[q])
        seq[q] = lo
        hi[q] = base[q] + table[kk, lo + 1, w]
        base[q + 1] = base[q] + table[kk, lo, w]
        wrem[q + 1] = w - weight[lo]
        top = lo


# not inlined (each layer kernel calls it once per chunk, and step when a block of exhausted
# types ends): inlined, each caller compiled two more copies of the descent, ~36% of the
# uniform-deck kernels' compile (35.1 -> 22.4 s on 2 x 2), at the same speed per rank
@kernel
def start(i, layer, m, r, big, weight, eq, le, offsets, seq, wrem, base, hi):
    """Stand on rank ``i`` of ``layer`` (unranked afresh); returns its exhausted types e."""
    if i < offsets[layer, 1]:
        e = 0
    else:
        e = 1
        while e < r and i >= offsets[layer, e + 1]:
            e += 1
    for j in range(e):
        seq[j] = big
    base[e] = offsets[layer, e] if e else 0
    wrem[e] = layer - m * e
    _descend(i, e, e, r, eq if e == 0 else le, weight, seq, wrem, base, hi)
    return e


@inline_kernel
def step(i, e, layer, m, r, big, weight, eq, le, offsets, seq, wrem, base, hi):
    """Move from the rank the arrays stand on to a later rank ``i`` of the same layer;
    returns (i's exhausted types, the first position whose code may have changed: 0 when
    the walk started afresh)."""
    if e == r or i >= offsets[layer, e + 1]:  # another block of exhausted types
        return start(i, layer, m, r, big, weight, eq, le, offsets, seq, wrem, base, hi), 0
    p = r - 2
    while p >= e and i >= hi[p]:
        p -= 1
    _descend(i, p + 1, e, r, eq if e == 0 else le, weight, seq, wrem, base, hi)
    return e, p + 1


@inline_kernel
def feasible(seq, e, r, count, refused):
    """ranks._feasible from the code tables: each type's refused slots fit the other
    types' unconfirmed cards."""
    total = 0
    for j in range(e, r):
        total += count[seq[j]]
    for j in range(e, r):  # noqa: SIM110 - a compiled kernel: no generator into all()
        if refused[seq[j]] > total - count[seq[j]]:
            return False
    return True


@inline_kernel
def prefixes(e, layer, m, r, table, offsets, seq, wrem, pre, first):
    """pre[q]: the rank in ``layer + 1`` reached before position q by a child that keeps
    the codes before q (each with one more weight left); q = e..r.  Positions before
    ``first`` kept their codes since pre was last filled (0: fill it all)."""
    k = r - e
    if first <= e:
        pre[e] = offsets[layer + 1, e] if e else 0
        first = e
    for q in range(first, r):
        pre[q + 1] = pre[q] + table[k - (q - e), seq[q], wrem[q] + 1]


@inline_kernel
def no_rank(i, j, e, r, table, seq, wrem, base, pre):
    """Rank in the next layer of the no child at position j (code x + 1; j is the first
    position of its code, so the code stays in place)."""
    return pre[j] + table[r - j, seq[j] + 1, wrem[j] + 1] + (i - base[j + 1])


@inline_kernel
def moved_prefix(j, y, e, r, table, weight, seq, start_rank, start_w):
    """(rank, q): the state ``seq`` with position j's code replaced by a smaller code ``y``,
    which moves right past the codes above it to position q; the rank summed up to and with
    y's term, from the rank reached before j (``start_rank``) and the weight left there
    (``start_w``).  The terms after q are those of ``seq`` (the caller's to add)."""
    k = r - e
    rank = start_rank
    w = start_w
    q = j
    while q + 1 < r and seq[q + 1] > y:
        c = seq[q + 1]
        rank += table[k - (q - e), c, w]
        w -= weight[c]
        q += 1
    return rank + table[k - (q - e), y, w], q


@inline_kernel
def exhausted_rank(seq, j, e, layer, m, r, weight, le, offsets):
    """Rank in ``layer`` of ``seq`` (e exhausted types) with position j's type exhausted
    (its code moved to the front), summed afresh."""
    rank = offsets[layer, e + 1]
    w = layer - m * (e + 1)
    kk = r - e - 1
    for q in range(e, r):
        if q == j:
            continue
        rank += le[kk, seq[q], w]
        w -= weight[seq[q]]
        kk -= 1
    return rank


@inline_kernel
def yes_rank(i, j, e, layer, m, r, n_p, weight, table, le, offsets, seq, wrem, base, pre):
    """Rank in the next layer of the yes child at position j (the first of its code)."""
    x = seq[j]
    if x < n_p:  # c = 1: the type is exhausted
        return exhausted_rank(seq, j, e, layer + 1, m, r, weight, le, offsets)
    rank, q = moved_prefix(j, x - n_p, e, r, table, weight, seq, pre[j], wrem[j] + 1)
    return rank + (i - base[q + 1])  # then the parent's codes, with its weights
