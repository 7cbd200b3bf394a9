"""Yes/no card guessing on a uniform deck (r types of m cards) with ranked states: no hashing.

The state is exact/yes_no.py's (c, p) statistic, canonical (types are interchangeable).  Here each
type's pair is a *code*: active codes ``(c - 1) * (P + 1) + p`` for c = 1..m, p = 0..P
(P = N - 1), ordered by (c, p), and one code K (the largest) for an exhausted type.  A
canonical state is the non-increasing sequence of its r codes (exhausted types first).

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
(as in floating/layer_kernels.py):

- a state with n >= 1 cards to come: A = sum over types a of A(yes child for a);
- the last layer (n = 0): a free slot (a forgotten "no") is filled first, A = sum over types a
  of A(a in that slot); with no free slot, the first refused slot of a type i holds some other
  type j: A = sum over j != i of A(j in it).  Both recursions stay in the last layer and lower
  the unconfirmed cards T = sum of c by one, so the last layer is solved in order of T; a
  state without "no"s is a multinomial coefficient.

The same values as layer_kernels.py to 1e-12 (tests; layer_kernels.py is tested against the exact
rational solver exact/yes_no.py).  layer_kernels.py packs a state into a 63-bit key and so stops
at 7 types of 4; ranks have no such limit: memory is (see :func:`estimated_bytes`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numba import njit, prange

TIE_TOLERANCE = 1e-12  # relative: values closer than this tie (the smallest pair wins)
POLICIES = {"optimal": 0, "greedy": 1, "persistent": 2}
VALUE_BYTES = 24  # log A, E[future], E[future^2] per state of a layer
kernel = njit(cache=True, nogil=True)
parallel_kernel = njit(cache=True, nogil=True, parallel=True)
Progress = Callable[[str], None]


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

    @property
    def n_cards(self) -> int:
        return self.m * self.r

    @property
    def exhausted(self) -> int:
        return self.m * self.n_p


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
    return Codes(m, r, n_p, weight, eq, le, offsets, sizes)


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


def estimated_bytes(deck: Sequence[int], with_pmf: bool = True) -> int:
    """Peak bytes of arrays :func:`solve` holds: two layers' values, and for the score's
    distribution a code per state of every layer and the last layer's log A."""
    sizes = codes(deck).sizes
    pairs = max(int(sizes[i]) + int(sizes[i + 1]) for i in range(sizes.size - 1))
    extra = int(sizes.sum()) + 9 * int(sizes[-1]) if with_pmf else 2 * int(sizes[-1])
    return VALUE_BYTES * pairs + extra


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
        lo, hi = 0, ub  # the largest code x <= ub with table[kk, x, w] <= i
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if table[kk, mid, w] <= i:
                lo = mid
            else:
                hi = mid - 1
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


@kernel
def _logsumexp(terms, lo, hi):
    top = -np.inf
    for t in range(lo, hi):
        if terms[t] > top:
            top = terms[t]
    if top == -np.inf:
        return top
    acc = 0.0
    for t in range(lo, hi):
        acc += math.exp(terms[t] - top)
    return top + math.log(acc)


# ------------------------------------------------------------------ the last layer: log A


@parallel_kernel
def _unconfirmed(layer, lo, hi, m, r, big, weight, eq, le, offsets, n_p):
    """T = sum of c for ranks [lo, hi) of ``layer`` (-1 if infeasible)."""
    size = hi - lo
    out = np.empty(size, np.int8)
    for chunk in prange((size + CHUNK - 1) // CHUNK):
        seq = np.empty(r, np.int64)
        for s in range(chunk * CHUNK, min(size, (chunk + 1) * CHUNK)):
            e = _unrank(lo + s, layer, m, r, big, weight, eq, le, offsets, seq)
            if not _feasible(seq, e, r, n_p):
                out[s] = -1
                continue
            t = 0
            for j in range(e, r):
                t += seq[j] // n_p + 1
            out[s] = t
    return out


@parallel_kernel
def _last_logs_of(t, unconfirmed, logs, m, r, big, weight, eq, le, offsets, n_p, logf):
    """Fill log A of the last layer's states with t unconfirmed cards (those below are done)."""
    layer = m * r
    size = logs.size
    for chunk in prange((size + CHUNK - 1) // CHUNK):
        seq = np.empty(r, np.int64)
        child = np.empty(r, np.int64)
        terms = np.empty(r, np.float64)
        for i in range(chunk * CHUNK, min(size, (chunk + 1) * CHUNK)):
            if unconfirmed[i] != t:
                continue
            e = _unrank(i, layer, m, r, big, weight, eq, le, offsets, seq)
            logs[i] = _last_log(seq, e, t, logs, m, r, big, weight, eq, le, offsets, n_p, logf,
                                child, terms)  # fmt: skip


@kernel
def _last_log(seq, e, t, logs, m, r, big, weight, eq, le, offsets, n_p, logf, child, terms):
    """log A of one last-layer state from states with t - 1 unconfirmed cards."""
    layer = m * r
    refused = 0
    first = -1
    v = logf[t]
    for j in range(e, r):
        p = seq[j] % n_p
        refused += p
        if p > 0 and first < 0:
            first = j
        v -= logf[seq[j] // n_p + 1]
    if refused == 0:  # no refused slot: a multinomial coefficient
        return v
    nt = 0
    if t - refused > 0:  # a free slot: any type a fills it
        for a in range(e, r):
            _moved(seq, a, _yes_code(seq[a], n_p, big), r, child)
            terms[nt] = _child_log(child, layer, m, r, big, weight, eq, le, offsets, n_p, logs)
            nt += 1
        return _logsumexp(terms, 0, nt)
    for j in range(e, r):  # the first refused slot of type ``first`` holds a type j != first
        if j == first:
            continue
        for k in range(r):
            child[k] = seq[k]
        child[first] -= 1
        child[j] = _yes_code(child[j], n_p, big)
        _sort_down(child, r)
        terms[nt] = _child_log(child, layer, m, r, big, weight, eq, le, offsets, n_p, logs)
        nt += 1
    return _logsumexp(terms, 0, nt)


@kernel
def _child_log(child, layer, m, r, big, weight, eq, le, offsets, n_p, logs):
    """log A of a child sequence in ``layer`` (-inf if infeasible)."""
    e = 0
    while e < r and child[e] == big:
        e += 1
    if not _feasible(child, e, r, n_p):
        return -np.inf
    return logs[_rank(child, layer, m, r, big, weight, eq, le, offsets)]


@kernel
def _sort_down(seq, r):
    for k in range(1, r):
        v = seq[k]
        j = k - 1
        while j >= 0 and seq[j] < v:
            seq[j + 1] = seq[j]
            j -= 1
        seq[j + 1] = v


def log_factorials(n: int) -> np.ndarray:
    """log(k!) for k = 0..n, each correctly rounded from the exact integer."""
    return np.array([math.log(math.factorial(k)) for k in range(n + 1)])


def last_layer_log_counts(cd: Codes) -> np.ndarray:
    """log A of every rank of the last layer (-inf where infeasible), in order of T."""
    n = cd.n_cards
    size = int(cd.sizes[n])
    args = (cd.m, cd.r, cd.exhausted, cd.weight, cd.eq, cd.le, cd.offsets, cd.n_p)
    unconfirmed = _unconfirmed(n, 0, size, *args)
    logs = np.full(size, -np.inf)
    logf = log_factorials(n)
    for t in range(n + 1):
        _last_logs_of(t, unconfirmed, logs, *args, logf)
    return logs


# --------------------------------------------------------------------- backward induction


@parallel_kernel
def _layer(layer, size, policy, window, m, r, big, weight, eq, le, offsets, n_p,
           nlog, nval, nsq):  # fmt: skip
    """(log A, E[future], E[future^2], chosen position) for each rank of ``layer`` < N.

    ``policy`` 0 is optimal (the best expected score; ties within TIE_TOLERANCE go to the
    smallest (c, p) pair, as in layer_kernels.py and exact/yes_no.py), 1 greedy by pairs: of the
    types at least (1 - window) times as likely as the likeliest, the smallest (c, p) pair
    (window 0:
    greedy with ties to the smallest pair); 2 persistent: of the same admitted types, the one
    refused most often (ties: the smallest pair), which keeps naming a type after a "no" while
    it stays nearly as likely as the likeliest.
    """
    logs = np.full(size, -np.inf)
    vals = np.zeros(size)
    sqs = np.zeros(size)
    best = np.full(size, -1, np.int8)
    for chunk in prange((size + CHUNK - 1) // CHUNK):
        seq = np.empty(r, np.int64)
        child = np.empty(r, np.int64)
        ylog = np.empty(r, np.float64)
        yrank = np.empty(r, np.int64)
        for i in range(chunk * CHUNK, min(size, (chunk + 1) * CHUNK)):
            e = _unrank(i, layer, m, r, big, weight, eq, le, offsets, seq)
            if not _feasible(seq, e, r, n_p):
                continue
            for j in range(e, r):  # the yes children (equal neighbours share one)
                if j > e and seq[j] == seq[j - 1]:
                    ylog[j], yrank[j] = ylog[j - 1], yrank[j - 1]
                    continue
                _moved(seq, j, _yes_code(seq[j], n_p, big), r, child)
                yrank[j] = _rank(child, layer + 1, m, r, big, weight, eq, le, offsets)
                ylog[j] = nlog[yrank[j]]
            lg = _logsumexp(ylog, e, r)
            logs[i] = lg
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
                v = q * (1.0 + nval[yrank[j]])
                sq = q * (1.0 + 2.0 * nval[yrank[j]] + nsq[yrank[j]])
                if seq[j] % n_p + 1 < n_p:
                    _moved(seq, j, seq[j] + 1, r, child)
                    k = _rank(child, layer + 1, m, r, big, weight, eq, le, offsets)
                    if nlog[k] > -np.inf:
                        qn = math.exp(nlog[k] - lg)
                        v += qn * nval[k]
                        sq += qn * nsq[k]
                if policy >= 1 and ylog[j] < floor:
                    continue
                crit = v if policy == 0 else (seq[j] % n_p if policy == 2 else 0.0)
                if best[i] < 0 or crit > top * (1.0 + TIE_TOLERANCE):
                    top = crit
                    vals[i] = v
                    sqs[i] = sq
                    best[i] = j
    return logs, vals, sqs, best


# ------------------------------------------------------------ the score distribution


@kernel
def _add_paths(layer, best, paths, npaths, m, r, big, weight, eq, le, offsets, n_p):
    """Add each state's policy path count to its yes and no children in ``npaths``."""
    seq = np.empty(r, np.int64)
    child = np.empty(r, np.int64)
    for i in range(paths.size):
        if paths[i] == 0.0 or best[i] < 0:
            continue
        _unrank(i, layer, m, r, big, weight, eq, le, offsets, seq)
        j = best[i]
        _moved(seq, j, _yes_code(seq[j], n_p, big), r, child)
        npaths[_rank(child, layer + 1, m, r, big, weight, eq, le, offsets)] += paths[i]
        if seq[j] % n_p + 1 < n_p:
            _moved(seq, j, seq[j] + 1, r, child)
            npaths[_rank(child, layer + 1, m, r, big, weight, eq, le, offsets)] += paths[i]


def policy_pmf(cd: Codes, bests: list, last_logs: np.ndarray) -> list[float]:
    """P(final score = k), k = 0..N, of the policy ``bests`` (a chosen position per rank).

    P(reach s) = paths(s) A(s) / A(start) (the products of probabilities telescope;
    layer_kernels.py);
    the score of a last-layer state is N - T.  Consumes ``bests``.
    """
    n = cd.n_cards
    args = (cd.m, cd.r, cd.exhausted, cd.weight, cd.eq, cd.le, cd.offsets, cd.n_p)
    paths = np.ones(1)
    for layer in range(n):
        npaths = np.zeros(int(cd.sizes[layer + 1]))
        _add_paths(layer, bests[layer], paths, npaths, *args)
        bests[layer] = None
        paths = npaths
    unconfirmed = _unconfirmed(n, 0, paths.size, *args)
    hit = (paths > 0) & (last_logs > -np.inf)
    logf = log_factorials(n)
    log_start = logf[n] - cd.r * logf[cd.m]
    prob = np.exp(np.log(paths[hit]) + last_logs[hit] - log_start)
    return np.bincount(
        n - unconfirmed[hit].astype(np.int64), weights=prob, minlength=n + 1
    ).tolist()


# ------------------------------------------------------------------------------ drivers


@dataclass
class Solution:
    """A ranked solve: expected score, variance, states, and the score's distribution."""

    expected_score: float
    score_variance: float
    n_states: int  # feasible canonical states (reachable or not) over all layers
    rank_space: int  # ranks allotted over all layers (feasible or not)
    layer_sizes: list[int] = field(default_factory=list)  # feasible states per layer
    score_pmf: list[float] | None = None
    # the first layers' (log A, E[future], chosen position) by rank, when asked for
    # (``keep_layers``): what :mod:`ranked_tree` draws the first moves from
    top_layers: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)


def solve(
    deck: Sequence[int],
    policy: str = "optimal",
    with_pmf: bool = True,
    progress: Progress | None = None,
    window: float = 0.0,
    keep_layers: int = 0,
) -> Solution:
    """The expected score (and variance, and pmf) of the optimal or greedy-by-pairs policy
    (see :func:`_layer`; ``window`` in [0, 1)) on a uniform ``deck``, in floats; memory about
    :func:`estimated_bytes`.  ``keep_layers``: keep layers 0 .. keep_layers - 1 whole
    (:attr:`Solution.top_layers`)."""
    cd = codes(deck)
    n = cd.n_cards
    args = (cd.m, cd.r, cd.exhausted, cd.weight, cd.eq, cd.le, cd.offsets, cd.n_p)
    logs = last_layer_log_counts(cd)
    last_logs = logs if with_pmf else None
    feasible = [int(np.count_nonzero(logs > -np.inf))]
    zeros = np.zeros(logs.size)
    nlog, nval, nsq = logs, zeros, zeros
    bests: list = [None] * n
    top: list = [None] * min(keep_layers, n)
    for layer in range(n - 1, -1, -1):
        size = int(cd.sizes[layer])
        nlog, nval, nsq, best = _layer(
            layer, size, POLICIES[policy], window, *args, nlog, nval, nsq
        )
        if layer < len(top):
            top[layer] = (nlog, nval, best)
        feasible.append(int(np.count_nonzero(nlog > -np.inf)))
        if with_pmf:
            bests[layer] = best
        if progress:
            progress(f"layer {layer}: {size:,} ranks, {feasible[-1]:,} feasible")
    mean = float(nval[0])
    pmf = policy_pmf(cd, bests, last_logs) if with_pmf else None
    feasible.reverse()
    return Solution(
        mean, float(nsq[0]) - mean * mean, sum(feasible), int(cd.sizes.sum()), feasible, pmf, top
    )
