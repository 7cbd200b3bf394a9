"""How many arrangements of the cards to come respect a state: log A, from sums of positive terms.

Probabilities come from arrangement counts A (exact/yes_no.py's ``arrangements``) kept as
logarithms and only ever built from sums of positive terms:

- a state with a card still to come: the next slot holds some type, so
  A(state) = sum over types a of A(yes child for a), read from the next layer (optimal.py);
- the last layer (no card to come, here): the first refused slot of a type i holds some other
  type j, so A = sum over j != i of A(c_j - 1, p_i - 1), down to states without refused slots
  where A is a multinomial coefficient (from a table of log-factorials).

P(next card is a) = A(yes child) / A(state) and P(not a) = A(no child) / A(state) are then
exponentials of differences of logs: no huge factorials and no cancellation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from solvers.card_guessing.any_deck.layers import (
    NO_STATE,
    Keys,
    _feasible,
    _grown,
    _pack,
    _scratch,
    _set_insert,
    _set_of,
    find,
    hash_table,
)
from solvers.card_guessing.state_codes import Encoding, encode, kernel, unpack_layer_key
from solvers.kit.compile_once import njit


def log_factorials(n: int) -> np.ndarray:
    """log(k!) for k = 0..n, each correctly rounded from the exact integer."""
    return np.array([math.log(math.factorial(k)) for k in range(n + 1)])


@kernel
def _refused_closure(keys, r, width, bits_p):
    """``keys`` and every canonical key reached from them by refused-slot moves (unsorted)."""
    table, work, m = _set_of(keys, 8)
    cs, ps, tc, tp, codes = _scratch(r)
    found = np.empty(r, np.int64)
    done = 0
    while done < m:
        unpack_layer_key(work[done], r, width, bits_p, cs, ps)
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
    return _pack(tc, tp, width, bits_p, True, codes)


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
        unpack_layer_key(keys[s], r, width, bits_p, cs, ps)
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
    cs, ps, tc, tp, codes = _scratch(r)
    terms = np.empty(r, np.float64)
    for s in order:
        unpack_layer_key(keys[s], r, width, bits_p, cs, ps)
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


def last_layer_log_counts(keys: Keys, enc: Encoding) -> np.ndarray:
    """log A for canonical states with no card to come, by the refused-slot recursion."""
    closure = np.sort(_refused_closure(np.unique(keys), enc.r, enc.width, enc.bits_p))
    order = np.argsort(_refused_total(closure, enc.r, enc.width, enc.bits_p), kind="stable")
    logf = log_factorials(enc.n_cards)
    values = _closure_log_counts(closure, order, enc.r, enc.width, enc.bits_p, logf)
    return values[np.searchsorted(closure, keys)]


def log_counts(pairs: Sequence[tuple[int, int]], enc: Encoding) -> float:
    """log A for one state given its (c, p) pairs (a check on the recursions; small decks)."""
    key = np.array([encode(pairs, enc)], np.int64)
    return float(last_layer_log_counts(key, enc)[0])


def start_log_count(enc: Encoding) -> float:
    """log A of the start: the multinomial coefficient N! / prod(c!)."""
    logf = log_factorials(enc.n_cards)
    return float(logf[-1] - sum(logf[c] for c in enc.deck))
