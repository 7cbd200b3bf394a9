"""The rank space of a uniform deck (r types of m cards): every state of a layer at a computed
index, its moves, and log A of the last layer's states.

The state is exact/yes_no.py's (c, p) statistic, canonical (types are interchangeable).  Here each
type's pair is a *code*: active codes ``(c - 1) * (P + 1) + p`` for c = 1..m, p = 0..P
(P = N - 1), ordered by (c, p), and one code K (the largest) for an exhausted type.  A
canonical state is the non-increasing sequence of its r codes (exhausted types first).  These
codes are dense (every code 0..K is some pair), unlike the bit-field codes of state_codes.py,
which is what lets a state's index be computed.

The weight of a code is the cards it has used up: m - c + p for an active code (its yeses
and its "no"s) and m for an exhausted one (its "no"s are forgotten: once a type is gone, the
slots refused to it are open to every other type).  After L cards a state's weight W is L if
no type is exhausted, and at most L otherwise (the L - W forgotten "no"s).  So layer L is the
set of code sequences with

    (no exhausted type and W = L) or (e >= 1 exhausted types and W <= L),

and a state's index in its layer is *computed*, not searched: the combinatorial number system
for non-increasing sequences of bounded weight, from tables of how many sequences of k codes,
all below a code x, weigh w (or at most w).  Ranks are dense: a layer's log A, E[future
score], E[future score^2] and chosen code are plain arrays indexed by rank, with no keys and
no hash tables.  The rank space also holds infeasible sequences (a type refused more often than
the other types have unconfirmed cards: log A = -inf, skipped) and feasible ones that no play
reaches (solved anyway, never read): :func:`layer_sizes` counts the space.

Probabilities come from arrangement counts A kept as logarithms, built from positive sums only
(as in any_deck/counts.py):

- a state with n >= 1 cards to come: A = sum over types a of A(yes child for a);
- the last layer (n = 0): a free slot (a forgotten "no") is filled first, A = sum over types a
  of A(a in that slot); with no free slot, the first refused slot of a type i holds some other
  type j: A = sum over j != i of A(j in it).  Both recursions stay in the last layer and lower
  the unconfirmed cards T = sum of c by one, so the last layer is solved in order of T; a
  state without "no"s is a multinomial coefficient (last_layer.py).

The kernels walk the rank space in rank order (walk.py) rather than unranking each state and
ranking each child afresh: :func:`_rank` and :func:`_unrank` are the definitions the walk is
tested against, and rank single states (first moves, tests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from solvers.kit.compile_once import njit

TIE_TOLERANCE = 1e-12  # relative: values closer than this tie (the smallest pair wins)
POLICIES = {"optimal": 0, "greedy": 1, "persistent": 2}
kernel = njit(cache=True, nogil=True)
parallel_kernel = njit(cache=True, nogil=True, parallel=True)
# a helper of the layer kernels, compiled into each caller: a call of a compiled function
# with array arguments counts references to each (atomic increments and decrements), which
# took 16% of a 7-type solve's CPU (perf, cpu-clock samples)
inline_kernel = njit(cache=True, nogil=True, inline="always")


# ------------------------------------------------------------------------------ the codes


@dataclass(frozen=True)
class Codes:
    """The code alphabet of a uniform deck, its count tables and its layers' offsets."""

    m: int  # cards per type
    r: int  # types
    n_p: int  # P + 1: "no" counts 0..P per active code
    weight: np.ndarray  # weight of each code 0..K (K = exhausted)
    eq: np.ndarray  # eq[k, x, w]: non-increasing k-sequences of active codes < x weighing w
    le: np.ndarray  # le[k, x, w]: the same weighing at most w
    offsets: np.ndarray  # offsets[L, e]: first rank of layer L with e exhausted types
    sizes: np.ndarray  # sizes[L]: the rank space of layer L
    count: np.ndarray  # count[x]: c of code x (x // n_p + 1)
    refused: np.ndarray  # refused[x]: p of code x (x % n_p)

    @property
    def n_cards(self) -> int:
        return self.m * self.r

    @property
    def exhausted(self) -> int:
        return self.m * self.n_p

    def rank_args(self) -> tuple:
        """What the rank kernels take after a layer: m, r, K, weight, eq, le, offsets."""
        return (self.m, self.r, self.exhausted, self.weight, self.eq, self.le, self.offsets)

    def kernel_args(self) -> tuple:
        """What the layer kernels take: :meth:`rank_args`, P + 1, and the code tables."""
        return (*self.rank_args(), self.n_p, self.count, self.refused)


def codes(deck: Sequence[int]) -> Codes:
    """The codes and count tables of a uniform ``deck``; ValueError for any other deck."""
    deck = [int(c) for c in deck]
    if not deck or min(deck) != max(deck) or deck[0] < 1:
        raise ValueError(f"deck {deck}: the ranked solver needs r types of m >= 1 cards each")
    m, r = deck[0], len(deck)
    n = m * r
    n_p = n  # p = 0..N-1: a type is refused at most N - 1 times
    active = [m - (x // n_p + 1) + x % n_p for x in range(m * n_p)]
    eq, le = _count_tables(active, r, n)
    offsets, sizes = _layer_offsets(eq, le, m, r, n)
    weight = np.array([*active, m], np.int64)
    x = np.arange(m * n_p + 1, dtype=np.int64)
    return Codes(m, r, n_p, weight, eq, le, offsets, sizes, x // n_p + 1, x % n_p)


def _count_tables(weight: list[int], r: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(eq, le) of :class:`Codes`, counted in Python integers and checked to fit int64."""
    k_codes = len(weight)
    eq = np.zeros((r + 1, k_codes + 1, n + 1), dtype=object)
    eq[0, :, 0] = 1
    for k in range(1, r + 1):
        for x in range(1, k_codes + 1):  # first code x - 1, then k - 1 codes <= x - 1
            wt = weight[x - 1]
            eq[k, x] = eq[k, x - 1]
            if wt <= n:
                eq[k, x, wt:] = eq[k, x, wt:] + eq[k - 1, x, : n + 1 - wt]
    le = np.cumsum(eq, axis=2)
    if max(le.max(), 1) >= 2**62:
        raise ValueError("too many states for 64-bit ranks")
    return eq.astype(np.int64), le.astype(np.int64)


def _layer_offsets(eq, le, m: int, r: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(offsets[L, e], sizes[L]) of every layer's rank space (see the module docstring)."""
    k_codes = eq.shape[1] - 1
    offsets = np.zeros((n + 1, r + 2), np.int64)
    for layer in range(n + 1):
        at = int(eq[r, k_codes, layer])
        for e in range(1, r + 1):
            offsets[layer, e] = at
            if layer - m * e >= 0:
                at += int(le[r - e, k_codes, layer - m * e])
        offsets[layer, r + 1] = at
    return offsets, offsets[:, r + 1].copy()


def layer_sizes(deck: Sequence[int]) -> list[int]:
    """The rank space of each layer 0..N of a uniform deck (feasible or not)."""
    return [int(s) for s in codes(deck).sizes]


# ------------------------------------------------------------------- ranking, unranking

CHUNK = 4096  # states per parallel work item (scratch arrays are allocated per item)


@kernel
def _rank(seq, layer, m, r, big, weight, eq, le, offsets):
    """Index of the canonical code sequence ``seq`` in the rank space of ``layer``."""
    e = 0
    while e < r and seq[e] == big:
        e += 1
    if e == 0:
        table, w, rank = eq, layer, np.int64(0)
    else:
        table, w, rank = le, layer - m * e, offsets[layer, e]
    k = r - e
    for j in range(k):
        x = seq[e + j]
        rank += table[k - j, x, w]
        w -= weight[x]
    return rank


def rank_of(seq: np.ndarray, layer: int, m, r, big, weight, eq, le, offsets) -> int:
    """Index of the canonical code sequence ``seq`` in the rank space of ``layer``."""
    return int(_rank(seq, layer, m, r, big, weight, eq, le, offsets))


@inline_kernel
def largest_code(table, kk, w, top, left):
    """The largest code x <= top with table[kk, x, w] <= left (a binary search)."""
    lo, hi = 0, top
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if table[kk, mid, w] <= left:
            lo = mid
        else:
            hi = mid - 1
    return lo


@kernel
def _unrank(i, layer, m, r, big, weight, eq, le, offsets, seq):
    """Fill ``seq`` with the code sequence of rank ``i`` in ``layer``; return its exhausted
    types."""
    if i < offsets[layer, 1]:
        e, table, w = 0, eq, layer
    else:
        e = 1
        while e < r and i >= offsets[layer, e + 1]:
            e += 1
        i -= offsets[layer, e]
        table, w = le, layer - m * e
    for j in range(e):
        seq[j] = big
    ub = big - 1
    k = r - e
    for j in range(k):
        kk = k - j
        lo = largest_code(table, kk, w, ub, i)
        i -= table[kk, lo, w]
        seq[e + j] = lo
        w -= weight[lo]
        ub = lo
    return e


@kernel
def _feasible(seq, e, r, n_p):
    """Some arrangement respects every "no": each type's refused slots fit the other cards."""
    total = 0
    for j in range(e, r):
        total += seq[j] // n_p + 1
    ok = True
    for j in range(e, r):
        ok = ok and seq[j] % n_p <= total - (seq[j] // n_p + 1)
    return ok


@kernel
def _moved(seq, j, y, r, out):
    """``seq`` with position j set to code y, kept non-increasing, in ``out``."""
    for k in range(r):
        out[k] = seq[k]
    out[j] = y
    while j > 0 and out[j - 1] < out[j]:
        out[j - 1], out[j] = out[j], out[j - 1]
        j -= 1
    while j < r - 1 and out[j + 1] > out[j]:
        out[j + 1], out[j] = out[j], out[j + 1]
        j += 1


@kernel
def _yes_code(x, n_p, big):
    """The code after a yes on code x (c - 1, or exhausted)."""
    return big if x < n_p else x - n_p


@inline_kernel
def _logsumexp(terms, lo, hi):
    """log of the sum of exp(terms[lo:hi]), the largest factored out.  A term equal to the
    one before it (equal types' children) adds the same exp again, not computed twice: the
    same floats added in the same order."""
    top = -np.inf
    for t in range(lo, hi):
        if terms[t] > top:
            top = terms[t]
    if top == -np.inf:
        return top
    acc = 0.0
    x = 0.0
    for t in range(lo, hi):
        if t == lo or terms[t] != terms[t - 1]:
            x = math.exp(terms[t] - top)
        acc += x
    return top + math.log(acc)


def log_factorials(n: int) -> np.ndarray:
    """log(k!) for k = 0..n, each correctly rounded from the exact integer."""
    return np.array([math.log(math.factorial(k)) for k in range(n + 1)])
