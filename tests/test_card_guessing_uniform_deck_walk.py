"""The walk over a uniform deck's rank space (solvers/card_guessing/uniform_deck/walk.py)
against the definitions it shortcuts, and the last layer's log A against brute force.

The kernels step from one state to the next and rank children from the parent's terms;
ranks.py's ``_unrank`` and ``_rank`` (with ``_moved`` building a child) are the plain
definitions.  Every rank of every layer of small decks is walked both ways, every child is
ranked both ways, and the last layer's arrangement counts are counted by enumerating the
arrangements themselves.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from solvers.card_guessing.uniform_deck import last_layer, walk
from solvers.card_guessing.uniform_deck.ranks import (
    _feasible,
    _moved,
    _rank,
    _unrank,
    _yes_code,
    codes,
    log_factorials,
)
from solvers.kit.compile_once import read_only

DECKS = [(4,) * 4, (3,) * 5, (2,) * 6, (1,) * 7, (5,) * 3, (4,) * 5]


def walked(cd, layer, ranks):
    """(rank, codes, e, walk arrays copy) for each rank of ``ranks`` (increasing), walked."""
    seq, wrem, base, ends = walk.walk_arrays(cd.r)
    e = -1
    for i in ranks:
        if e < 0:
            e = walk.start(i, layer, *cd.rank_args(), seq, wrem, base, ends)
        else:
            e, _ = walk.step(i, e, layer, *cd.rank_args(), seq, wrem, base, ends)
        yield i, seq, e, wrem, base


@pytest.mark.parametrize("deck", DECKS, ids=str)
def test_the_walk_stands_on_each_rank_s_state(deck):
    cd = codes(deck)
    plain = np.empty(cd.r, np.int64)
    rng = np.random.default_rng(7)
    for layer in range(cd.n_cards + 1):
        size = int(cd.sizes[layer])
        every = range(size)
        jumps = np.unique(rng.integers(0, size, min(size, 300)))  # forward jumps
        for ranks in (every, jumps):
            for i, seq, e, _, _ in walked(cd, layer, ranks):
                assert _unrank(i, layer, *cd.rank_args(), plain) == e
                assert np.array_equal(seq, plain), (layer, i)
                assert walk.feasible(seq, e, cd.r, cd.count, cd.refused) == _feasible(
                    seq, e, cd.r, cd.n_p
                )


@pytest.mark.parametrize("deck", DECKS, ids=str)
def test_children_ranked_from_the_parent_s_terms_are_their_ranks(deck):
    cd = codes(deck)
    args = cd.rank_args()
    child = np.empty(cd.r, np.int64)
    pre = np.empty(cd.r + 1, np.int64)
    checked = 0
    for layer in range(cd.n_cards):
        for i, seq, e, wrem, base in walked(cd, layer, range(int(cd.sizes[layer]))):
            table = cd.eq if e == 0 else cd.le
            walk.prefixes(e, layer, cd.m, cd.r, table, cd.offsets, seq, wrem, pre, 0)
            for j in range(e, cd.r):
                if j > e and seq[j] == seq[j - 1]:
                    continue  # the kernels rank a code's first position only
                _moved(seq, j, _yes_code(seq[j], cd.n_p, cd.exhausted), cd.r, child)
                yes = walk.yes_rank(i, j, e, layer, cd.m, cd.r, cd.n_p, cd.weight, table,
                                    cd.le, cd.offsets, seq, wrem, base, pre)  # fmt: skip
                assert yes == _rank(child, layer + 1, *args), (layer, i, j)
                if cd.refused[seq[j]] + 1 < cd.n_p:
                    _moved(seq, j, seq[j] + 1, cd.r, child)
                    no = walk.no_rank(i, j, e, cd.r, table, seq, wrem, base, pre)
                    assert no == _rank(child, layer + 1, *args), (layer, i, j)
                checked += 1
    assert checked > 100


def arrangements(count: list[int], refused_slots: list[list[int]], free: int) -> int:
    """Brute force: the ways to lay the unconfirmed cards (count[i] of type i) in the
    remaining slots, type i never in one of its refused slots: every distinct ordering of
    the cards over the slots, checked."""
    slots = [i for i, slots_i in enumerate(refused_slots) for _ in slots_i]  # whose refusal
    slots += [-1] * free
    cards = [i for i, c in enumerate(count) for _ in range(c)]
    assert len(cards) == len(slots)
    return sum(
        all(card != owner for card, owner in zip(order, slots, strict=True))
        for order in set(itertools.permutations(cards))
    )


@pytest.mark.parametrize("deck", [(2,) * 3, (3,) * 3, (2,) * 4, (4,) * 3, (1,) * 5], ids=str)
def test_the_last_layer_s_log_a_counts_the_arrangements(deck):
    cd = codes(deck)
    n = cd.n_cards
    size = int(cd.sizes[n])
    args = cd.kernel_args()
    unconf = last_layer.unconfirmed(n, 0, size, *args)
    logf = log_factorials(n)
    logs = np.full(size, -np.inf)
    pieces = np.full(size, -np.inf)
    cut = max(1, size // 3)
    for t in range(n + 1):
        last_layer.pass_logs(t, 0, unconf, read_only(logs), logs, *args, logf)
        for lo in range(0, size, cut):  # as out of core: a piece of the layer at a time
            hi = min(size, lo + cut)
            out = pieces[lo:hi]
            last_layer.pass_logs(t, lo, unconf[lo:hi], read_only(pieces), out, *args, logf)
    assert np.array_equal(logs, pieces)  # the whole layer's pass and its pieces'
    seq = np.empty(cd.r, np.int64)
    counted = 0
    for i in range(size):
        e = _unrank(i, n, *cd.rank_args(), seq)
        active = seq[e:]
        count = [int(cd.count[x]) for x in active]
        refusals = [int(cd.refused[x]) for x in active]
        if not _feasible(seq, e, cd.r, cd.n_p):
            assert unconf[i] == -1 and logs[i] == -np.inf
            continue
        t = sum(count)
        assert unconf[i] == t
        if t > 8:
            continue  # too many orderings to enumerate here
        slots, k = [], 0
        for p in refusals:
            slots.append(list(range(k, k + p)))
            k += p
        truth = arrangements(count, slots, t - sum(refusals))
        if truth == 0:
            assert logs[i] == -np.inf
        else:
            assert math.isclose(math.exp(logs[i]), truth, rel_tol=1e-12), (i, count, refusals)
        counted += 1
    assert counted > 20
