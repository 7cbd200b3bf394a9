"""Yes/no card guessing in floating point, layer by layer: decks too large for exact/yes_no.py.

The state is the (c, p) statistic of exact/yes_no.py: n cards to come and, per type, c = cards not
yet confirmed by a yes and p = "no" answers to it.  Here a state is one int64 *key*: each
type's pair is a code ``c << bits_p | p`` in a fixed-width slot.  In *canonical* mode the
codes are sorted (types are interchangeable, exhausted types vanish); in *labelled* mode
slot k is always type k (needed by greedy with lowest-index ties, whose choices see labels).
Layer L holds the states after L cards; within a layer n is fixed, so keys omit it.

Probabilities come from arrangement counts A (partial.arrangements) kept as logarithms and
only ever built from sums of positive terms:

- a state with a card still to come: the next slot holds some type, so
  A(state) = sum over types a of A(yes child for a), read from the next layer;
- the last layer (no card to come): the first refused slot of a type i holds some other
  type j, so A = sum over j != i of A(c_j - 1, p_i - 1), down to states without refused slots
  where A is a multinomial coefficient (from a table of log-factorials).

P(next card is a) = A(yes child) / A(state) and P(not a) = A(no child) / A(state) are then
exponentials of differences of logs: no huge factorials and no cancellation.

The kernels here are pure NumPy/Numba functions on arrays of keys (a layer or any part of
one), so a caller may split a layer over processes: the family's
floating/dask_layers.py does so with Dask.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numba import njit

from solvers.card_guessing import first_moves

Keys = np.ndarray  # int64 state keys of one layer (or part of one)
LayerValues = tuple[np.ndarray, np.ndarray, np.ndarray]  # log A, E[future], E[future^2]

NO_STATE = -1
kernel = njit(cache=True, nogil=True)  # nogil: a Dask worker keeps serving its data meanwhile
TIE_TOLERANCE = 1e-12  # relative: probabilities closer than this count as a greedy tie


# ----------------------------------------------------------------------------- encoding


@dataclass(frozen=True)
class Layout:
    """How a deck's states are packed into int64 keys."""

    deck: tuple[int, ...]
    r: int  # types (slots per key)
    bits_p: int  # bits of a "no" count
    width: int  # bits per slot: bits of c plus bits_p

    @property
    def n_cards(self) -> int:
        return sum(self.deck)


def layout(deck: Sequence[int]) -> Layout:
    """The key layout for ``deck``; ValueError if a state does not fit in 63 bits."""
    deck = tuple(int(c) for c in deck)
    bits_p = max(1, sum(deck).bit_length())
    width = max(deck).bit_length() + bits_p
    if width * len(deck) > 63:
        raise ValueError(
            f"a state of deck {list(deck)} needs {width * len(deck)} bits; the float solver "
            "packs states into 63 (fewer types or smaller counts)"
        )
    return Layout(deck, len(deck), bits_p, width)


def encode(pairs: Sequence[tuple[int, int]], lay: Layout, canonical: bool = True) -> int:
    """The key of a state given its (c, p) per type (exhausted types: c = 0)."""
    cs = np.array([c for c, _ in pairs] + [0] * (lay.r - len(pairs)), np.int64)
    ps = np.array([p if c else 0 for c, p in pairs] + [0] * (lay.r - len(pairs)), np.int64)
    return int(_pack(cs, ps, lay.r, lay.width, lay.bits_p, canonical, np.empty(lay.r, np.int64)))


def decode(key: int, lay: Layout) -> tuple[tuple[int, int], ...]:
    """The (c, p) per slot of a key (canonical keys: largest pair first, then empties)."""
    cs = np.empty(lay.r, np.int64)
    ps = np.empty(lay.r, np.int64)
    _unpack(np.int64(key), lay.r, lay.width, lay.bits_p, cs, ps)
    return tuple((int(c), int(p)) for c, p in zip(cs, ps, strict=True))


def start_key(lay: Layout, canonical: bool = True) -> int:
    """The key of the state before the first card."""
    return encode([(c, 0) for c in lay.deck], lay, canonical)


@kernel
def _unpack(key, r, width, bits_p, cs, ps):
    mask = (np.int64(1) << width) - 1
    pmask = (np.int64(1) << bits_p) - 1
    for k in range(r):
        code = (key >> (width * k)) & mask
        cs[k] = code >> bits_p
        ps[k] = code & pmask


@kernel
def _pack(cs, ps, r, width, bits_p, canonical, codes):
    for k in range(r):
        codes[k] = (cs[k] << bits_p) | ps[k] if cs[k] > 0 else 0
    if canonical:  # insertion sort, largest code first (empty slots last)
        for k in range(1, r):
            v = codes[k]
            j = k - 1
            while j >= 0 and codes[j] < v:
                codes[j + 1] = codes[j]
                j -= 1
            codes[j + 1] = v
    key = np.int64(0)
    for k in range(r):
        key |= codes[k] << (width * k)
    return key


@kernel
def _feasible(cs, ps, r):
    """Some arrangement respects every "no": each type's refused slots fit the other cards."""
    total = 0
    for k in range(r):
        total += cs[k]
    ok = True
    for k in range(r):
        ok = ok and (cs[k] == 0 or ps[k] <= total - cs[k])
    return ok


@kernel
def _child(cs, ps, a, yes, r, width, bits_p, canonical, tc, tp, codes):
    """Key of the state after naming ``a`` and hearing yes/no; NO_STATE if impossible."""
    for k in range(r):
        tc[k] = cs[k]
        tp[k] = ps[k]
    if yes:
        tc[a] -= 1
        if tc[a] == 0:
            tp[a] = 0
    else:
        tp[a] += 1
    if not _feasible(tc, tp, r):
        return NO_STATE
    return _pack(tc, tp, r, width, bits_p, canonical, codes)


@kernel
def _canonical_of(key, r, width, bits_p, cs, ps, codes):
    _unpack(key, r, width, bits_p, cs, ps)
    return _pack(cs, ps, r, width, bits_p, True, codes)


# --------------------------------------------------------------------------- hash tables


@njit(cache=True, inline="always")
def _slot(key, mask):
    h = np.uint64(key) * np.uint64(0x9E3779B97F4A7C15)
    return np.int64(h >> np.uint64(24)) & mask


@kernel
def hash_table(keys: Keys) -> np.ndarray:
    """An open-addressing table (int32 positions into ``keys``, -1 empty) for :func:`find`."""
    cap = 2
    while cap < 2 * keys.size:
        cap <<= 1
    table = np.full(cap, -1, np.int32)
    mask = cap - 1
    for i in range(keys.size):
        h = _slot(keys[i], mask)
        while table[h] != -1:
            h = (h + 1) & mask
        table[h] = i
    return table


@kernel
def find(table, keys, key):
    """Position of ``key`` in ``keys`` (via its hash table), or -1."""
    mask = table.size - 1
    h = _slot(key, mask)
    while True:
        i = table[h]
        if i == -1:
            return -1
        if keys[i] == key:
            return i
        h = (h + 1) & mask


@kernel
def partition_of(keys: Keys, parts: int) -> np.ndarray:
    """The partition (0..parts-1) of each key: a hash, so parts get similar shares."""
    out = np.empty(keys.size, np.int64)
    for i in range(keys.size):
        h = np.uint64(keys[i]) * np.uint64(0xD6E8FEB86659FD93)
        out[i] = np.int64((h >> np.uint64(32)) % np.uint64(parts))
    return out


# ------------------------------------------------------------------------ enumeration


@kernel
def _set_insert(table, key):
    """Insert ``key`` into an open-addressing set (-1 empty); True if it was new."""
    mask = table.size - 1
    h = _slot(key, mask)
    while table[h] != -1:
        if table[h] == key:
            return False
        h = (h + 1) & mask
    table[h] = key
    return True


@kernel
def _set_of(keys, room):
    """(set, distinct, m): an open-addressing set of ``keys`` with room for ``room`` times as
    many, and the m distinct keys in order of first appearance (a buffer of keys.size)."""
    cap = 16
    while cap < room * keys.size:
        cap <<= 1
    table = np.full(cap, -1, np.int64)
    out = np.empty(keys.size, np.int64)
    m = 0
    for k in keys:
        if _set_insert(table, k):
            out[m] = k
            m += 1
    return table, out, m


@kernel
def _grown(table):
    bigger = np.full(table.size * 2, -1, np.int64)
    for key in table:
        if key != -1:
            _set_insert(bigger, key)
    return bigger


@kernel
def _children_keys(keys, r, width, bits_p, canonical):
    """Distinct keys (unsorted) of the children of ``keys`` under every possible guess."""
    cap = 16
    while cap < 4 * keys.size:
        cap <<= 1
    table = np.full(cap, -1, np.int64)
    m = 0
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    tc = np.empty(r, np.int64)
    tp = np.empty(r, np.int64)
    codes = np.empty(r, np.int64)
    for s in range(keys.size):
        _unpack(keys[s], r, width, bits_p, cs, ps)
        for a in range(r):
            if cs[a] == 0 or (canonical and a > 0 and cs[a] == cs[a - 1] and ps[a] == ps[a - 1]):
                continue
            k = _child(cs, ps, a, True, r, width, bits_p, canonical, tc, tp, codes)
            if k == NO_STATE:  # ``a`` cannot be next: naming it is never considered
                continue
            m += _set_insert(table, k)
            k = _child(cs, ps, a, False, r, width, bits_p, canonical, tc, tp, codes)
            if k != NO_STATE:
                m += _set_insert(table, k)
            if 2 * m > table.size:
                table = _grown(table)
    return table[table != -1]


def children(keys: Keys, lay: Layout) -> Keys:
    """Distinct canonical keys (unsorted) of every possible child of ``keys``."""
    return _children_keys(keys, lay.r, lay.width, lay.bits_p, True)


def next_layer(keys: Keys, lay: Layout, canonical: bool = True) -> Keys:
    """Sorted distinct keys of every possible child of ``keys`` (any guess, any answer)."""
    out = np.sort(_children_keys(keys, lay.r, lay.width, lay.bits_p, canonical))
    return out


# ------------------------------------------------------------- the last layer: log A


def log_factorials(n: int) -> np.ndarray:
    """log(k!) for k = 0..n, each correctly rounded from the exact integer."""
    return np.array([math.log(math.factorial(k)) for k in range(n + 1)])


@kernel
def _refused_closure(keys, r, width, bits_p):
    """``keys`` and every canonical key reached from them by refused-slot moves (unsorted)."""
    table, work, m = _set_of(keys, 8)
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    tc = np.empty(r, np.int64)
    tp = np.empty(r, np.int64)
    codes = np.empty(r, np.int64)
    found = np.empty(r, np.int64)
    done = 0
    while done < m:
        _unpack(work[done], r, width, bits_p, cs, ps)
        done += 1
        nf = _refused_child_keys(cs, ps, r, width, bits_p, tc, tp, codes, found, 0)
        for t in range(nf):
            if _set_insert(table, found[t]):
                if m == work.size:
                    bigger = np.empty(2 * work.size, np.int64)
                    bigger[:m] = work[:m]
                    work = bigger
                work[m] = found[t]
                m += 1
                if 2 * m > table.size:
                    table = _grown(table)
    return work[:m]


@kernel
def _first_refused(cs, ps, r):
    for i in range(r):
        if cs[i] > 0 and ps[i] > 0:
            return i
    return -1


@kernel
def _refused_child(cs, ps, i, j, r, width, bits_p, tc, tp, codes):
    for k in range(r):
        tc[k] = cs[k]
        tp[k] = ps[k]
    tp[i] -= 1
    tc[j] -= 1
    if tc[j] == 0:
        tp[j] = 0  # its refused slots are now open to every remaining type
    if not _feasible(tc, tp, r):
        return NO_STATE
    return _pack(tc, tp, r, width, bits_p, True, codes)


@kernel
def _refused_child_keys(cs, ps, r, width, bits_p, tc, tp, codes, out, m):
    i = _first_refused(cs, ps, r)
    if i < 0:
        return m
    for j in range(r):
        if j != i and cs[j] > 0:
            k = _refused_child(cs, ps, i, j, r, width, bits_p, tc, tp, codes)
            if k != NO_STATE:
                out[m] = k
                m += 1
    return m


@kernel
def _refused_total(keys, r, width, bits_p):
    out = np.empty(keys.size, np.int64)
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    for s in range(keys.size):
        _unpack(keys[s], r, width, bits_p, cs, ps)
        t = 0
        for k in range(r):
            t += ps[k]
        out[s] = t
    return out


@kernel
def _closure_log_counts(keys, order, r, width, bits_p, logf):
    """log A for ``keys`` (closed under refused-slot moves), filled in ``order``."""
    table = hash_table(keys)
    out = np.full(keys.size, -np.inf)
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    tc = np.empty(r, np.int64)
    tp = np.empty(r, np.int64)
    codes = np.empty(r, np.int64)
    terms = np.empty(r, np.float64)
    for s in order:
        _unpack(keys[s], r, width, bits_p, cs, ps)
        i = _first_refused(cs, ps, r)
        if i < 0:  # no refused slot: a multinomial coefficient
            total = 0
            v = 0.0
            for k in range(r):
                total += cs[k]
                v -= logf[cs[k]]
            out[s] = v + logf[total]
            continue
        nt = 0
        for j in range(r):
            if j != i and cs[j] > 0:
                k = _refused_child(cs, ps, i, j, r, width, bits_p, tc, tp, codes)
                if k != NO_STATE:
                    terms[nt] = out[find(table, keys, k)]
                    nt += 1
        out[s] = _logsumexp(terms, nt)
    return out


@njit(cache=True, inline="always")
def _logsumexp(terms, nt):
    top = -np.inf
    for t in range(nt):
        if terms[t] > top:
            top = terms[t]
    if top == -np.inf:
        return top
    acc = 0.0
    for t in range(nt):
        acc += math.exp(terms[t] - top)
    return top + math.log(acc)


def last_layer_log_counts(keys: Keys, lay: Layout) -> np.ndarray:
    """log A for canonical states with no card to come, by the refused-slot recursion."""
    closure = np.sort(_refused_closure(np.unique(keys), lay.r, lay.width, lay.bits_p))
    order = np.argsort(_refused_total(closure, lay.r, lay.width, lay.bits_p), kind="stable")
    logf = log_factorials(lay.n_cards)
    values = _closure_log_counts(closure, order, lay.r, lay.width, lay.bits_p, logf)
    return values[np.searchsorted(closure, keys)]


def log_counts(pairs: Sequence[tuple[int, int]], lay: Layout) -> float:
    """log A for one state given its (c, p) pairs (a check on the recursions; small decks)."""
    key = np.array([encode(pairs, lay)], np.int64)
    return float(last_layer_log_counts(key, lay)[0])


# --------------------------------------------------------------- backward induction


@kernel
def _optimal_layer(keys, r, width, bits_p, nkeys, ntable, nlog, nval, nsq, with_values):
    """log A, best value, its second moment and the best slot for each state of a layer."""
    size = keys.size
    logs = np.empty(size)
    vals = np.zeros(size)
    sqs = np.zeros(size)
    best = np.full(size, -1, np.int8)
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    tc = np.empty(r, np.int64)
    tp = np.empty(r, np.int64)
    codes = np.empty(r, np.int64)
    ylog = np.empty(r)
    yidx = np.empty(r, np.int64)
    for s in range(size):
        _unpack(keys[s], r, width, bits_p, cs, ps)
        for a in range(r):  # the yes children (equal neighbours share one)
            yidx[a] = -1
            ylog[a] = -np.inf
            if cs[a] == 0:
                continue
            if a > 0 and cs[a] == cs[a - 1] and ps[a] == ps[a - 1]:
                yidx[a] = yidx[a - 1]
                ylog[a] = ylog[a - 1]
                continue
            k = _child(cs, ps, a, True, r, width, bits_p, True, tc, tp, codes)
            if k != NO_STATE:
                yidx[a] = find(ntable, nkeys, k)
                ylog[a] = nlog[yidx[a]]
        lg = _logsumexp(ylog, r)
        logs[s] = lg
        if not with_values:
            continue
        top = -1.0
        for a in range(r - 1, -1, -1):  # smallest pair first, as exact/yes_no.py breaks ties
            if yidx[a] < 0 or (a > 0 and cs[a] == cs[a - 1] and ps[a] == ps[a - 1]):
                continue  # impossible, or the same as the type before
            q = math.exp(ylog[a] - lg)
            v = q * (1.0 + nval[yidx[a]])
            sq = q * (1.0 + 2.0 * nval[yidx[a]] + nsq[yidx[a]])
            k = _child(cs, ps, a, False, r, width, bits_p, True, tc, tp, codes)
            if k != NO_STATE:
                i = find(ntable, nkeys, k)
                q = math.exp(nlog[i] - lg)
                v += q * nval[i]
                sq += q * nsq[i]
            if v > top * (1.0 + TIE_TOLERANCE):  # near-ties go to the smallest pair
                top = v
                vals[s] = v
                sqs[s] = sq
                best[s] = a
    return logs, vals, sqs, best


def layer_values(
    keys: Keys, lay: Layout, next_keys: Keys, next_values: LayerValues | None, n_left: int
) -> tuple[LayerValues, np.ndarray]:
    """((log A, E[future score], E[future score^2]), best slot) of the optimal policy.

    ``keys`` is a layer (or part of one) with ``n_left`` cards to come; ``next_keys`` and
    ``next_values`` are the whole next layer (any order).  ``n_left = 0``: the last layer.
    """
    if n_left == 0:
        logs = last_layer_log_counts(keys, lay)
        zeros = np.zeros(keys.size)
        return (logs, zeros, zeros.copy()), np.full(keys.size, -1, np.int8)
    nlog, nval, nsq = next_values
    table = hash_table(next_keys)
    logs, vals, sqs, best = _optimal_layer(
        keys, lay.r, lay.width, lay.bits_p, next_keys, table, nlog, nval, nsq, True
    )
    return (logs, vals, sqs), best


# ------------------------------------------------------------ the score distribution
#
# P(reach s) under a fixed policy is a sum over policy paths of products of A(child)/A(parent);
# the products telescope to A(s)/A(start), so P(reach s) = paths(s) * A(s) / A(start) where
# paths(s) counts the policy's paths from the start to s.  Path counts add along the policy's
# yes and no edges (positive sums, no probabilities needed before the last layer), and the
# score is fixed by the state: the cards confirmed so far, N minus the sum of c.


@kernel
def add_policy_paths(keys, best, paths, r, width, bits_p, nkeys, ntable, npaths):
    """Add each state's path count to its policy children (yes and no of ``best``) in npaths."""
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    tc = np.empty(r, np.int64)
    tp = np.empty(r, np.int64)
    codes = np.empty(r, np.int64)
    for s in range(keys.size):
        if paths[s] == 0.0 or best[s] < 0:
            continue
        _unpack(keys[s], r, width, bits_p, cs, ps)
        for yes in (True, False):
            k = _child(cs, ps, best[s], yes, r, width, bits_p, True, tc, tp, codes)
            if k != NO_STATE:
                npaths[find(ntable, nkeys, k)] += paths[s]


@kernel
def confirmed(keys: Keys, r: int, width: int, bits_p: int, n_cards: int) -> np.ndarray:
    """Cards confirmed by a yes (the score so far) in each state: n_cards minus the sum of c."""
    out = np.empty(keys.size, np.int64)
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    for s in range(keys.size):
        _unpack(keys[s], r, width, bits_p, cs, ps)
        out[s] = n_cards - cs.sum()
    return out


def score_mass(
    keys: Keys, paths: np.ndarray, logs: np.ndarray, log_start: float, lay: Layout
) -> np.ndarray:
    """P(final score = k), k = 0..N, from the last layer's path counts and log A (or a part)."""
    hit = paths > 0
    prob = np.exp(np.log(paths[hit]) + logs[hit] - log_start)
    score = confirmed(keys[hit], lay.r, lay.width, lay.bits_p, lay.n_cards)
    return np.bincount(score, weights=prob, minlength=lay.n_cards + 1)


def policy_pmf(lay: Layout, layers: list, bests: list, last_logs: np.ndarray) -> list[float]:
    """The final score's distribution under the policy ``bests`` (best slot per state, per layer).

    Consumes ``layers`` (deleting each layer once passed) to keep at most two layers' counts.
    """
    paths = np.ones(1)
    for depth in range(lay.n_cards):
        nxt = layers[depth + 1]
        npaths = np.zeros(nxt.size)
        add_policy_paths(
            layers[depth], bests[depth], paths, lay.r, lay.width, lay.bits_p,
            nxt, hash_table(nxt), npaths,
        )  # fmt: skip
        layers[depth] = None
        paths = npaths
    return score_mass(layers[-1], paths, last_logs, start_log_count(lay), lay).tolist()


def start_log_count(lay: Layout) -> float:
    """log A of the start: the multinomial coefficient N! / prod(c!)."""
    logf = log_factorials(lay.n_cards)
    return float(logf[-1] - sum(logf[c] for c in lay.deck))


@kernel
def policy_edges(keys, best, paths, r, width, bits_p):
    """(child keys, path counts) of the policy's yes and no edges from ``keys`` (2 per state)."""
    out_keys = np.empty(2 * keys.size, np.int64)
    out_paths = np.empty(2 * keys.size)
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    tc = np.empty(r, np.int64)
    tp = np.empty(r, np.int64)
    codes = np.empty(r, np.int64)
    m = 0
    for s in range(keys.size):
        if paths[s] == 0.0 or best[s] < 0:
            continue
        _unpack(keys[s], r, width, bits_p, cs, ps)
        for yes in (True, False):
            k = _child(cs, ps, best[s], yes, r, width, bits_p, True, tc, tp, codes)
            if k != NO_STATE:
                out_keys[m] = k
                out_paths[m] = paths[s]
                m += 1
    return out_keys[:m], out_paths[:m]


@kernel
def add_paths(keys, table, edge_keys, edge_paths, paths):
    """Add the path counts of edges into ``paths`` (one per key of ``keys``, via its table)."""
    for e in range(edge_keys.size):
        paths[find(table, keys, edge_keys[e])] += edge_paths[e]


@kernel
def distinct(keys: Keys) -> Keys:
    """The distinct keys of ``keys`` in order of first appearance (a hash set, no sort)."""
    _, out, m = _set_of(keys, 2)
    return out[:m]


# ------------------------------------------------------------------------- drivers


@dataclass
class Solution:
    """A float solve: expected score, its variance, states, and the policy's first moves."""

    expected_score: float
    score_variance: float
    n_states: int
    layer_sizes: list[int]
    first_moves: dict[int, dict[int, tuple[int, float, float]]]  # layer -> key -> (slot, log A, E)
    score_pmf: list[float] | None = None  # P(score = k), k = 0..N


Progress = Callable[[str], None]


def all_layers(lay: Layout, canonical: bool = True, progress: Progress | None = None) -> list:
    """Sorted keys of every reachable layer, from the start (layer 0) to no card left."""
    layers = [np.array([start_key(lay, canonical)], np.int64)]
    for depth in range(lay.n_cards):
        layers.append(next_layer(layers[-1], lay, canonical))
        if progress:
            progress(f"layer {depth + 1}: {layers[-1].size:,} states")
    return layers


def optimal(deck: Sequence[int], tree_depth: int = 4, progress: Progress | None = None) -> Solution:
    """The optimal policy's expected score (and variance) on a shuffled ``deck``, in floats."""
    lay = layout(deck)
    layers = all_layers(lay, True, progress)
    sizes = [keys.size for keys in layers]
    values: LayerValues | None = None
    first: dict[int, dict[int, tuple[int, float, float]]] = {}
    bests: list = [None] * len(layers)  # the policy: an int8 slot per state
    for depth in range(lay.n_cards, -1, -1):
        n_left = lay.n_cards - depth
        nxt = layers[depth + 1] if n_left else None
        values, bests[depth] = layer_values(layers[depth], lay, nxt, values, n_left)
        if depth < tree_depth:
            rows = zip(bests[depth].tolist(), values[0].tolist(), values[1].tolist(), strict=True)
            first[depth] = dict(zip(layers[depth].tolist(), rows, strict=True))
        if depth == lay.n_cards:
            last_logs = values[0]
        if progress:
            progress(f"values of layer {depth}")
    _, vals, sqs = values
    mean = float(vals[0])
    pmf = policy_pmf(lay, layers, bests, last_logs)
    return Solution(mean, float(sqs[0]) - mean * mean, sum(sizes), sizes, first, pmf)


# ----------------------------------------------------------------------- greedy


def all_log_counts(lay: Layout, layers: list) -> list:
    """log A of every canonical state, layer by layer (``layers`` from :func:`all_layers`)."""
    logs = [np.empty(0)] * len(layers)
    logs[-1] = last_layer_log_counts(layers[-1], lay)
    for depth in range(len(layers) - 2, -1, -1):
        nxt = layers[depth + 1]
        empty = np.empty(0)
        logs[depth] = _optimal_layer(
            layers[depth],
            lay.r,
            lay.width,
            lay.bits_p,
            nxt,
            hash_table(nxt),
            logs[depth + 1],
            empty,
            empty,
            False,
        )[0]
    return logs


@kernel
def _greedy_step(keys, r, width, bits_p, ckeys, ctable, clog, nkeys, ntable, nlog, highest):
    """For labelled states: the greedy guess's P(yes), P(no) and labelled child keys."""
    size = keys.size
    qy = np.zeros(size)
    qn = np.zeros(size)
    ychild = np.full(size, NO_STATE, np.int64)
    nchild = np.full(size, NO_STATE, np.int64)
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    tc = np.empty(r, np.int64)
    tp = np.empty(r, np.int64)
    codes = np.empty(r, np.int64)
    for s in range(size):
        lg = clog[find(ctable, ckeys, _canonical_of(keys[s], r, width, bits_p, tc, tp, codes))]
        _unpack(keys[s], r, width, bits_p, cs, ps)
        pick = -1
        top = 0.0
        for a in range(r):
            if cs[a] == 0:
                continue
            k = _child(cs, ps, a, True, r, width, bits_p, True, tc, tp, codes)
            if k == NO_STATE:
                continue
            q = math.exp(nlog[find(ntable, nkeys, k)] - lg)
            if pick < 0 or q > top * (1.0 + TIE_TOLERANCE):
                pick, top = a, q
            elif highest and q >= top * (1.0 - TIE_TOLERANCE):
                pick, top = a, max(q, top)
        qy[s] = top
        ychild[s] = _child(cs, ps, pick, True, r, width, bits_p, False, tc, tp, codes)
        k = _child(cs, ps, pick, False, r, width, bits_p, True, tc, tp, codes)
        if k != NO_STATE:
            qn[s] = math.exp(nlog[find(ntable, nkeys, k)] - lg)
            nchild[s] = _child(cs, ps, pick, False, r, width, bits_p, False, tc, tp, codes)
    return qy, qn, ychild, nchild


def greedy(deck: Sequence[int], tie_break: str = "lowest", progress: Progress | None = None):
    """The greedy policy's expected score (and variance), ties to the lowest/highest type."""
    if tie_break not in ("lowest", "highest"):
        raise ValueError(f"tie_break={tie_break!r}: the float solver does lowest or highest")
    lay = layout(deck)
    layers = all_layers(lay, True, progress)
    logs = all_log_counts(lay, layers)
    tables = {0: hash_table(layers[0])}
    steps = []
    keys = np.array([start_key(lay, False)], np.int64)
    reach = np.ones(1)  # P(reach) of each labelled state of the current layer
    for depth in range(lay.n_cards):
        tables[depth + 1] = hash_table(layers[depth + 1])
        tables.pop(depth - 1, None)
        step = _greedy_step(
            keys,
            lay.r,
            lay.width,
            lay.bits_p,
            layers[depth],
            tables[depth],
            logs[depth],
            layers[depth + 1],
            tables[depth + 1],
            logs[depth + 1],
            tie_break == "highest",
        )
        steps.append((keys, *step))
        keys, reach = labelled_children(step, reach)
    del layers, logs, tables
    score = confirmed(keys, lay.r, lay.width, lay.bits_p, lay.n_cards)
    pmf = np.bincount(score, weights=reach, minlength=lay.n_cards + 1).tolist()
    sizes = [s[0].size for s in steps] + [keys.size]
    vals = np.zeros(keys.size)
    sqs = np.zeros(keys.size)
    for lkeys, qy, qn, ychild, nchild in reversed(steps):
        iy = np.searchsorted(keys, ychild).clip(0, max(keys.size - 1, 0))
        ino = np.searchsorted(keys, nchild).clip(0, max(keys.size - 1, 0))
        vy, sy = vals[iy], sqs[iy]
        vn, sn = vals[ino] * (nchild != NO_STATE), sqs[ino] * (nchild != NO_STATE)
        vals, sqs = qy * (1 + vy) + qn * vn, qy * (1 + 2 * vy + sy) + qn * sn
        keys = lkeys
    mean = float(vals[0])
    return Solution(mean, float(sqs[0]) - mean * mean, sum(sizes), sizes, {}, pmf)


def labelled_children(step: tuple, reach: np.ndarray) -> tuple[Keys, np.ndarray]:
    """(sorted distinct child keys, their P(reach)) after one greedy step from a layer."""
    qy, qn, ychild, nchild = step
    children = np.concatenate([ychild, nchild])
    mass = np.concatenate([reach * qy, reach * qn])
    hit = children != NO_STATE
    keys = np.unique(children[hit])
    where = np.searchsorted(keys, children[hit])
    return keys, np.bincount(where, weights=mass[hit], minlength=keys.size)


# ------------------------------------------------------------------ the first moves


def decision_tree(sol: Solution, deck: Sequence[int], names: str = "ABCDEFGHIJ") -> list[str]:
    """The optimal first moves as indented lines: what to name after each answer so far."""
    lay = layout(deck)

    def lookup(depth: int, pairs: list[tuple[int, int]]):
        key = encode(pairs, lay)
        entry = sol.first_moves.get(depth, {}).get(key)
        if entry is None:
            return None
        slot, log_a, value = entry
        return decode(key, lay)[slot], log_a, value

    return first_moves.tree_lines(deck, lookup, names)


# ------------------------------------------------------------ the family's float rows

FLOAT_STRATEGIES = ("optimal", "greedy")


def check_float_task(task: dict) -> None:
    """Refuse, before any work, a ``method: float`` task this solver cannot do."""
    from solvers.registry import TaskError

    if task["feedback"] != "partial":
        raise TaskError("method", "float", "the float solver is for feedback=partial")
    if task["strategy"] not in FLOAT_STRATEGIES:
        raise TaskError(
            "strategy", task["strategy"], f"method=float solves {', '.join(FLOAT_STRATEGIES)}"
        )
    if task["strategy"] == "greedy" and task["tie_break"] not in ("lowest", "highest"):
        raise TaskError("tie_break", task["tie_break"], "method=float does lowest or highest")
    try:
        layout(task["deck"])
    except ValueError as exc:
        raise TaskError("deck", task["deck"], str(exc)) from None
    workers = task.get("workers") or 1
    if workers > 1 and task["strategy"] != "optimal":
        raise TaskError("workers", workers, "the distributed mode solves strategy=optimal only")


def float_rows(task: dict, sol: Solution | None = None) -> list[dict]:
    """One row of the float solver: expected score, variance and score pmf (no exact columns).

    ``sol``: the task's solution when it was computed elsewhere (over Dask:
    floating/dask_layers.py).
    """
    deck = task["deck"]
    if sol is None and task["strategy"] == "optimal":
        sol = optimal(deck)
    elif sol is None:
        sol = greedy(deck, task["tie_break"])
    first_moves = "\n".join(decision_tree(sol, deck)) if sol.first_moves else None
    return [{**solution_row(sol), "first_moves": first_moves}]


def solution_row(sol) -> dict:
    """The row columns of a float solution (any solver's with these fields): no exact ones."""
    return {
        "expected_score": sol.expected_score,
        "expected_score_exact": None,
        "score_variance": sol.score_variance,
        "score_variance_exact": None,
        "score_pmf": sol.score_pmf,
        "n_states": sol.n_states,
    }
