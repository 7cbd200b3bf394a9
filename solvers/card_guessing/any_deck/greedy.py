"""Greedy play on any deck in floats: name a type most likely to be next, ties to the lowest or
the highest type.

Its choices see labels (the lowest or highest *type*), so it walks labelled states forward
from the start, each with its probability, looking each one's log A up in its canonical
state (all_log_counts); the values then run backward over the labelled layers it reached.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from solvers.card_guessing.any_deck.counts import last_layer_log_counts
from solvers.card_guessing.any_deck.layers import (
    NO_STATE,
    Keys,
    Progress,
    _canonical_of,
    _child,
    _scratch,
    all_layers,
    find,
    hash_table,
)
from solvers.card_guessing.any_deck.optimal import (
    TIE_TOLERANCE,
    Solution,
    _optimal_layer,
    confirmed,
)
from solvers.card_guessing.state_codes import (
    Encoding,
    kernel,
    layer_encoding,
    start_key,
    unpack_layer_key,
)


def all_log_counts(enc: Encoding, layers: list) -> list:
    """log A of every canonical state, layer by layer (``layers`` from :func:`all_layers`)."""
    logs = [np.empty(0)] * len(layers)
    logs[-1] = last_layer_log_counts(layers[-1], enc)
    for depth in range(len(layers) - 2, -1, -1):
        nxt = layers[depth + 1]
        empty = np.empty(0)
        logs[depth] = _optimal_layer(
            layers[depth],
            enc.r,
            enc.width,
            enc.bits_p,
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
    cs, ps, tc, tp, codes = _scratch(r)
    for s in range(size):
        lg = clog[find(ctable, ckeys, _canonical_of(keys[s], r, width, bits_p, tc, tp, codes))]
        unpack_layer_key(keys[s], r, width, bits_p, cs, ps)
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
    enc = layer_encoding(deck)
    layers = all_layers(enc, True, progress)
    logs = all_log_counts(enc, layers)
    tables = {0: hash_table(layers[0])}
    steps = []
    keys = np.array([start_key(enc, False)], np.int64)
    reach = np.ones(1)  # P(reach) of each labelled state of the current layer
    for depth in range(enc.n_cards):
        tables[depth + 1] = hash_table(layers[depth + 1])
        tables.pop(depth - 1, None)
        step = _greedy_step(
            keys,
            enc.r,
            enc.width,
            enc.bits_p,
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
    score = confirmed(keys, enc.r, enc.width, enc.bits_p, enc.n_cards)
    pmf = np.bincount(score, weights=reach, minlength=enc.n_cards + 1).tolist()
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
