"""A uniform deck (r types of m cards) solved in one process: two layers' values in memory.

Backward over the layers of the rank space (ranks.py), each a plain array indexed by rank:
optimal play, greedy with ties to the smallest (c, p) pair (within a window), or persistent
play (see :func:`_layer`); then the policy's score distribution forward.  The same values as
any_deck/ to 1e-12 (tests; any_deck/ is tested against the exact rational solver
exact/yes_no.py).  any_deck/ packs a state into a 63-bit key and so stops at 7 types of 4;
ranks have no such limit: memory is (see :func:`estimated_bytes`), and out_of_core.py runs the
same solve with its layers on disk.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numba import prange

from solvers.card_guessing.uniform_deck import ranks
from solvers.card_guessing.uniform_deck.ranks import (
    CHUNK,
    POLICIES,
    TIE_TOLERANCE,
    Codes,
    codes,
    kernel,
    log_factorials,
    parallel_kernel,
)

VALUE_BYTES = 24  # log A, E[future], E[future^2] per state of a layer
Progress = Callable[[str], None]


def estimated_bytes(deck: Sequence[int], with_pmf: bool = True) -> int:
    """Peak bytes of arrays :func:`solve` holds: two layers' values, and for the score's
    distribution a code per state of every layer and the last layer's log A."""
    sizes = codes(deck).sizes
    pairs = max(int(sizes[i]) + int(sizes[i + 1]) for i in range(sizes.size - 1))
    extra = int(sizes.sum()) + 9 * int(sizes[-1]) if with_pmf else 2 * int(sizes[-1])
    return VALUE_BYTES * pairs + extra


# ------------------------------------------------------------------ the last layer: log A


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
            e = ranks._unrank(i, layer, m, r, big, weight, eq, le, offsets, seq)
            logs[i] = ranks._last_log(seq, e, t, logs, m, r, big, weight, eq, le, offsets, n_p,
                                      logf, child, terms)  # fmt: skip


def last_layer_log_counts(cd: Codes) -> np.ndarray:
    """log A of every rank of the last layer (-inf where infeasible), in order of T."""
    n = cd.n_cards
    size = int(cd.sizes[n])
    args = (cd.m, cd.r, cd.exhausted, cd.weight, cd.eq, cd.le, cd.offsets, cd.n_p)
    unconfirmed = ranks._unconfirmed(n, 0, size, *args)
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
    smallest (c, p) pair, as in any_deck/optimal.py and exact/yes_no.py), 1 greedy by pairs: of the
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
        seq, child, ylog, yrank = ranks._layer_work(r)
        for i in range(chunk * CHUNK, min(size, (chunk + 1) * CHUNK)):
            e = ranks._unrank(i, layer, m, r, big, weight, eq, le, offsets, seq)
            if not ranks._feasible(seq, e, r, n_p):
                continue
            for j in range(e, r):  # the yes children (equal neighbours share one)
                if j > e and seq[j] == seq[j - 1]:
                    ylog[j], yrank[j] = ylog[j - 1], yrank[j - 1]
                    continue
                ranks._moved(seq, j, ranks._yes_code(seq[j], n_p, big), r, child)
                yrank[j] = ranks._rank(child, layer + 1, m, r, big, weight, eq, le, offsets)
                ylog[j] = nlog[yrank[j]]
            lg = ranks._logsumexp(ylog, e, r)
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
                    ranks._moved(seq, j, seq[j] + 1, r, child)
                    k = ranks._rank(child, layer + 1, m, r, big, weight, eq, le, offsets)
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
        ranks._unrank(i, layer, m, r, big, weight, eq, le, offsets, seq)
        j = best[i]
        ranks._moved(seq, j, ranks._yes_code(seq[j], n_p, big), r, child)
        npaths[ranks._rank(child, layer + 1, m, r, big, weight, eq, le, offsets)] += paths[i]
        if seq[j] % n_p + 1 < n_p:
            ranks._moved(seq, j, seq[j] + 1, r, child)
            npaths[ranks._rank(child, layer + 1, m, r, big, weight, eq, le, offsets)] += paths[i]


def policy_pmf(cd: Codes, bests: list, last_logs: np.ndarray) -> list[float]:
    """P(final score = k), k = 0..N, of the policy ``bests`` (a chosen position per rank).

    P(reach s) = paths(s) A(s) / A(start) (the products of probabilities telescope;
    any_deck/optimal.py);
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
    unconfirmed = ranks._unconfirmed(n, 0, paths.size, *args)
    hit = (paths > 0) & (last_logs > -np.inf)
    logf = log_factorials(n)
    log_start = logf[n] - cd.r * logf[cd.m]
    prob = np.exp(np.log(paths[hit]) + last_logs[hit] - log_start)
    return np.bincount(
        n - unconfirmed[hit].astype(np.int64), weights=prob, minlength=n + 1
    ).tolist()


# ------------------------------------------------------------------------------ the solve


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
    # (``keep_layers``): what decision_tree.py draws the first moves from
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
