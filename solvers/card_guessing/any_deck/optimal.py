"""The optimal policy on any deck in floats: its values by backward induction, its first moves
and its score distribution.

Backward over the layers (layers.py): a state's log A is the log-sum of its yes children's
(counts.py for the last layer), and its value the best over the types it may name of
P(yes) (1 + E[yes child]) + P(no) E[no child], ties within :data:`TIE_TOLERANCE` going to the
smallest (c, p) pair, as exact/yes_no.py breaks them.  :func:`layer_values` solves a layer or
any part of one from the whole next layer, so split_layers.py can split it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from solvers.card_guessing import first_moves
from solvers.card_guessing.any_deck.counts import (
    _logsumexp,
    last_layer_log_counts,
    start_log_count,
)
from solvers.card_guessing.any_deck.layers import (
    NO_STATE,
    Keys,
    Progress,
    _child,
    _scratch,
    all_layers,
    find,
    hash_table,
)
from solvers.card_guessing.state_codes import (
    Encoding,
    decode,
    encode,
    kernel,
    layer_encoding,
    unpack_layer_key,
)

LayerValues = tuple[np.ndarray, np.ndarray, np.ndarray]  # log A, E[future], E[future^2]
TIE_TOLERANCE = 1e-12  # relative: values (greedy: probabilities) closer than this tie


# --------------------------------------------------------------------------- backward induction


@kernel
def _optimal_layer(keys, r, width, bits_p, nkeys, ntable, nlog, nval, nsq, with_values):
    """log A, best value, its second moment and the best slot for each state of a layer."""
    size = keys.size
    logs = np.empty(size)
    vals = np.zeros(size)
    sqs = np.zeros(size)
    best = np.full(size, -1, np.int8)
    cs, ps, tc, tp, codes = _scratch(r)
    ylog = np.empty(r)
    yidx = np.empty(r, np.int64)
    for s in range(size):
        unpack_layer_key(keys[s], r, width, bits_p, cs, ps)
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
    keys: Keys, enc: Encoding, next_keys: Keys, next_values: LayerValues | None, n_left: int
) -> tuple[LayerValues, np.ndarray]:
    """((log A, E[future score], E[future score^2]), best slot) of the optimal policy.

    ``keys`` is a layer (or part of one) with ``n_left`` cards to come; ``next_keys`` and
    ``next_values`` are the whole next layer (any order).  ``n_left = 0``: the last layer.
    """
    if n_left == 0:
        logs = last_layer_log_counts(keys, enc)
        zeros = np.zeros(keys.size)
        return (logs, zeros, zeros.copy()), np.full(keys.size, -1, np.int8)
    nlog, nval, nsq = next_values
    table = hash_table(next_keys)
    logs, vals, sqs, best = _optimal_layer(
        keys, enc.r, enc.width, enc.bits_p, next_keys, table, nlog, nval, nsq, True
    )
    return (logs, vals, sqs), best


# ------------------------------------------------------------------------ the score distribution
#
# P(reach s) under a fixed policy is a sum over policy paths of products of A(child)/A(parent);
# the products telescope to A(s)/A(start), so P(reach s) = paths(s) * A(s) / A(start) where
# paths(s) counts the policy's paths from the start to s.  Path counts add along the policy's
# yes and no edges (positive sums, no probabilities needed before the last layer), and the
# score is fixed by the state: the cards confirmed so far, N minus the sum of c.


@kernel
def _policy_children(key, slot, r, width, bits_p, work, kids):
    """Fill ``kids`` with the keys of the yes and the no child of a state after naming ``slot``
    (NO_STATE where impossible); ``work``: :func:`layers._scratch`."""
    cs, ps, tc, tp, codes = work
    unpack_layer_key(key, r, width, bits_p, cs, ps)
    kids[0] = _child(cs, ps, slot, True, r, width, bits_p, True, tc, tp, codes)
    kids[1] = _child(cs, ps, slot, False, r, width, bits_p, True, tc, tp, codes)


@kernel
def add_policy_paths(keys, best, paths, r, width, bits_p, nkeys, ntable, npaths):
    """Add each state's path count to its policy children (yes and no of ``best``) in npaths."""
    work = _scratch(r)
    kids = np.empty(2, np.int64)
    for s in range(keys.size):
        if paths[s] != 0.0 and best[s] >= 0:
            _policy_children(keys[s], best[s], r, width, bits_p, work, kids)
            for k in kids:
                if k != NO_STATE:
                    npaths[find(ntable, nkeys, k)] += paths[s]


@kernel
def confirmed(keys: Keys, r: int, width: int, bits_p: int, n_cards: int) -> np.ndarray:
    """Cards confirmed by a yes (the score so far) in each state: n_cards minus the sum of c."""
    out = np.empty(keys.size, np.int64)
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    for s in range(keys.size):
        unpack_layer_key(keys[s], r, width, bits_p, cs, ps)
        out[s] = n_cards - cs.sum()
    return out


def score_mass(
    keys: Keys, paths: np.ndarray, logs: np.ndarray, log_start: float, enc: Encoding
) -> np.ndarray:
    """P(final score = k), k = 0..N, from the last layer's path counts and log A (or a part)."""
    hit = paths > 0
    prob = np.exp(np.log(paths[hit]) + logs[hit] - log_start)
    score = confirmed(keys[hit], enc.r, enc.width, enc.bits_p, enc.n_cards)
    return np.bincount(score, weights=prob, minlength=enc.n_cards + 1)


def policy_pmf(enc: Encoding, layers: list, bests: list, last_logs: np.ndarray) -> list[float]:
    """The final score's distribution under the policy ``bests`` (best slot per state, per layer).

    Consumes ``layers`` (deleting each layer once passed) to keep at most two layers' counts.
    """
    paths = np.ones(1)
    for depth in range(enc.n_cards):
        nxt = layers[depth + 1]
        npaths = np.zeros(nxt.size)
        add_policy_paths(
            layers[depth], bests[depth], paths, enc.r, enc.width, enc.bits_p,
            nxt, hash_table(nxt), npaths,
        )  # fmt: skip
        layers[depth] = None
        paths = npaths
    return score_mass(layers[-1], paths, last_logs, start_log_count(enc), enc).tolist()


@kernel
def policy_edges(keys, best, paths, r, width, bits_p):
    """(child keys, path counts) of the policy's yes and no edges from ``keys`` (2 per state)."""
    out_keys = np.empty(2 * keys.size, np.int64)
    out_paths = np.empty(2 * keys.size)
    work = _scratch(r)
    kids = np.empty(2, np.int64)
    m = 0
    for s in range(keys.size):
        if paths[s] != 0.0 and best[s] >= 0:
            _policy_children(keys[s], best[s], r, width, bits_p, work, kids)
            for k in kids:
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


# ------------------------------------------------------------------------------ the solve


@dataclass
class Solution:
    """A float solve: expected score, its variance, states, and the policy's first moves."""

    expected_score: float
    score_variance: float
    n_states: int
    layer_sizes: list[int]
    first_moves: dict[int, dict[int, tuple[int, float, float]]]  # layer -> key -> (slot, log A, E)
    score_pmf: list[float] | None = None  # P(score = k), k = 0..N


def optimal(
    deck: Sequence[int], tree_depth: int = first_moves.TREE_DEPTH, progress: Progress | None = None
) -> Solution:
    """The optimal policy's expected score (and variance) on a shuffled ``deck``, in floats."""
    enc = layer_encoding(deck)
    layers = all_layers(enc, True, progress)
    sizes = [keys.size for keys in layers]
    values: LayerValues | None = None
    first: dict[int, dict[int, tuple[int, float, float]]] = {}
    bests: list = [None] * len(layers)  # the policy: an int8 slot per state
    for depth in range(enc.n_cards, -1, -1):
        n_left = enc.n_cards - depth
        nxt = layers[depth + 1] if n_left else None
        values, bests[depth] = layer_values(layers[depth], enc, nxt, values, n_left)
        if depth < tree_depth:
            rows = zip(bests[depth].tolist(), values[0].tolist(), values[1].tolist(), strict=True)
            first[depth] = dict(zip(layers[depth].tolist(), rows, strict=True))
        if depth == enc.n_cards:
            last_logs = values[0]
        if progress:
            progress(f"values of layer {depth}")
    _, vals, sqs = values
    mean = float(vals[0])
    pmf = policy_pmf(enc, layers, bests, last_logs)
    return Solution(mean, float(sqs[0]) - mean * mean, sum(sizes), sizes, first, pmf)


def decision_tree(sol: Solution, deck: Sequence[int], names: str = "ABCDEFGHIJ") -> list[str]:
    """The optimal first moves as indented lines: what to name after each answer so far."""
    enc = layer_encoding(deck)

    def lookup(depth: int, pairs: list[tuple[int, int]]):
        key = encode(pairs, enc)
        entry = sol.first_moves.get(depth, {}).get(key)
        if entry is None:
            return None
        slot, log_a, value = entry
        return decode(key, enc)[slot], log_a, value

    return first_moves.tree_lines(deck, lookup, names)
