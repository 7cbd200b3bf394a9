"""Which states each layer of a deck holds, and how a state is found: layer keys, hash tables.

Layer L holds the canonical states after L cards, each a layer key (state_codes.py: n is the
layer's, so a key holds only the codes); greedy also walks *labelled* keys, slot k always
type k (its choices with lowest-index ties see labels).  A layer is enumerated from the one
before it (every guess, every answer) as sorted distinct keys; a state of a layer is found
through an open-addressing hash table of the layer's keys.  The kernels work on any part of
a layer, so a caller may split a layer over processes (split_layers.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from solvers.card_guessing.state_codes import (
    Encoding,
    codes_of,
    kernel,
    layer_key,
    record_answer,
    sort_desc,
    start_key,
    unpack_layer_key,
)
from solvers.kit.compile_once import njit

Keys = np.ndarray  # int64 layer keys of one layer (or part of one)
NO_STATE = -1
Progress = Callable[[str], None]


# ---------------------------------------------------------------------------- a state's moves


@kernel
def _pack(cs, ps, width, bits_p, canonical, codes):
    """The layer key of the state (c, p): its codes, sorted when ``canonical`` (``codes``:
    scratch)."""
    codes_of(cs, ps, bits_p, codes)
    if canonical:
        sort_desc(codes)
    return layer_key(codes, width)


@njit(cache=True, nogil=True, inline="always")  # the allocations stay in the caller
def _scratch(r):
    """The work arrays of a kernel that walks states: (cs, ps, tc, tp, codes), r each."""
    return (
        np.empty(r, np.int64),
        np.empty(r, np.int64),
        np.empty(r, np.int64),
        np.empty(r, np.int64),
        np.empty(r, np.int64),
    )


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
    """Key of the state after naming ``a`` and hearing yes/no; NO_STATE if impossible.

    The copy is written out, not a call: a helper taking the four arrays made next_layer
    20-35% slower (the largest layer of (8,8,8,8): 0.23-0.27 s of CPU against 0.18-0.19 s)."""
    for k in range(r):
        tc[k] = cs[k]
        tp[k] = ps[k]
    record_answer(tc, tp, a, yes)
    if not _feasible(tc, tp, r):
        return NO_STATE
    return _pack(tc, tp, width, bits_p, canonical, codes)


@kernel
def _canonical_of(key, r, width, bits_p, cs, ps, codes):
    """The canonical key of a labelled key."""
    unpack_layer_key(key, r, width, bits_p, cs, ps)
    return _pack(cs, ps, width, bits_p, True, codes)


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
    cs, ps, tc, tp, codes = _scratch(r)
    for s in range(keys.size):
        unpack_layer_key(keys[s], r, width, bits_p, cs, ps)
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


def children(keys: Keys, enc: Encoding) -> Keys:
    """Distinct canonical keys (unsorted) of every possible child of ``keys``."""
    return _children_keys(keys, enc.r, enc.width, enc.bits_p, True)


def next_layer(keys: Keys, enc: Encoding, canonical: bool = True) -> Keys:
    """Sorted distinct keys of every possible child of ``keys`` (any guess, any answer)."""
    out = np.sort(_children_keys(keys, enc.r, enc.width, enc.bits_p, canonical))
    return out


@kernel
def distinct(keys: Keys) -> Keys:
    """The distinct keys of ``keys`` in order of first appearance (a hash set, no sort)."""
    _, out, m = _set_of(keys, 2)
    return out[:m]


def all_layers(enc: Encoding, canonical: bool = True, progress: Progress | None = None) -> list:
    """Sorted keys of every reachable layer, from the start (layer 0) to no card left."""
    layers = [np.array([start_key(enc, canonical)], np.int64)]
    for depth in range(enc.n_cards):
        layers.append(next_layer(layers[-1], enc, canonical))
        if progress:
            progress(f"layer {depth + 1}: {layers[-1].size:,} states")
    return layers
