"""Higher/lower with a real deck in floating point, layer by layer: up to the full 13 x 4 deck.

The state of :mod:`solvers.high_low.deck` (remaining counts of the ranks below the card
showing, of its own rank, and above; ranks with no card left dropped) is stored here as a
*count vector* ``c`` (the nonzero counts in rank order, length ``L``) and a *position* of the
card showing in it: an entry ``j`` (its rank still has ``c[j]`` cards) or a gap ``j`` (its rank
has none left; it sits between entries ``j - 1`` and ``j``).  A count vector is one integer
code, ``c[j] - 1`` in bit field ``j``.  Layer ``m`` (``m`` cards left) holds the vectors of sum
``m``, grouped by length and in increasing code order inside a group; a vector's place in its
group is computed from its code (a ranking by digit sums, :func:`_rank`), so no table over
all codes is stored.  With ``mirror`` (the optimal policy) only the vector of each pair ``c``,
``reversed(c)`` with the smaller code is solved, and a reversed vector is read from it:
reading the ranks downwards swaps "higher" and "lower", which the best call does not mind.
The majority rule (call "higher" when at least as many cards are above) breaks an even split
upwards, so it is not mirror-symmetric and is solved without merging.

Per vector a layer stores ``L`` numbers, ``W[j] = c[j] * V(c - e_j, j)``: the weight of the
next card being of entry ``j`` times the chance of no wrong call after it.  With ``m`` cards
left, ``V(c, position) = (sum of W on the called side [+ W of the rank showing, when an equal
card is not a miss]) / m``, on the better side (optimal) or the side holding more cards
(majority).  Every step is a sum of non-negative terms, a product or a quotient: nothing
cancels, so a probability near 1e-8 keeps about 1e-13 relative precision.
``P(perfect game) = sum(W of the full deck) / (ranks * suits)``.

Sizes (:func:`size_estimate`, :func:`sizing`): ``sum_L suits**L`` vectors over all layers
(8.9e7 for 13 x 4, at most 8.2e6 in one layer); two layers of ``W`` are held at once (1.7 GB
for 13 x 4, 7.0 GB for 14 x 4, 29.2 GB for 15 x 4).

A long task (:mod:`solvers.kit.longtask`): the memory budget of where the solve runs decides where
the layers live (:func:`choose_storage`): both in memory, or, when only one fits, each layer a
file, written in order from a buffer of BUFFER values while the previous layer, memory-mapped,
is read through the page cache.  A
layer reads its children at random (a mirror image's values sit anywhere in the previous
layer, and the non-mirrored ones lie in ``2 L`` increasing streams), so the previous layer is
the smallest unit that can leave memory without random reads from disk: the out-of-core need
is one layer, not a bounded buffer.  Splitting by length group does not help: one group holds
up to 80% of a layer.  Each finished layer is committed as a checkpoint (``layer-037``: its
``W`` and the counts so far; only the last is kept) and a solve resumes after it; progress is
reported after every layer, in states.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numba import prange

from solvers.kit import longtask
from solvers.kit.compile_once import njit
from solvers.registry import TaskError

kernel = njit(cache=True, nogil=True)
parallel_kernel = njit(cache=True, nogil=True, parallel=True)

Ties = str  # "lose", "win" or "push"
Policy = str  # "optimal" or "majority"
State = tuple[tuple[int, ...], int, tuple[int, ...]]  # deck.State: (below, same, above)
# bytes a solving process holds besides its layers: Python, NumPy, Numba and its compiled
# kernels (measured: 0.17 GB on 2 x 2, 0.19 GB on 10 x 4; 13 x 4 peaks at 1.79 GB in memory
# with 1.68 GB of buffers, at 1.14 GB on disk with its largest layer of 0.84 GB mapped)
OVERHEAD = 300 * 10**6
BUFFER = 2**22  # on disk: W values computed before they are written to the file (32 MB)
STORAGES = ("auto", "memory", "disk")  # where the layers live (see :func:`choose_storage`)
CODE_BITS = 62  # a count vector's code is an int64: ranks x field_bits(suits) bits at most
MARGIN = 1e-12  # relative: a call is strictly better only by more than this
TOP = 12  # departures from the majority rule kept, likeliest first
CHUNKS = 256  # a layer's vectors of one length are solved in this many parts (in parallel)


# ----------------------------------------------------------------------------- sizes


def composition_counts(ranks: int, suits: int) -> list[list[int]]:
    """counts[L][m]: count vectors of L entries in 1..suits summing to m (exact integers)."""
    n = ranks * suits
    counts = [[0] * (n + 1) for _ in range(ranks + 1)]
    counts[0][0] = 1
    for length in range(1, ranks + 1):
        for m in range(n + 1):
            counts[length][m] = sum(counts[length - 1][m - v] for v in range(1, min(suits, m) + 1))
    return counts


@dataclass(frozen=True)
class Size:
    """What a solve holds: vectors, (vector, card showing) states, bytes."""

    vectors: int  # count vectors over all layers
    states: int  # (count vector, card showing) states over all layers, mirror pairs apart
    layer_values: int  # W numbers in the two largest adjacent layers
    largest_layer: int  # count vectors in the largest layer

    @property
    def total_bytes(self) -> int:
        """Estimated peak bytes of the solve (two layers of float64)."""
        return 8 * self.layer_values


def layer_states(ranks: int, suits: int) -> list[int]:
    """states[m]: (count vector, card showing) states with m cards left, mirror pairs apart
    (the last layer, the full deck before the first card is shown, holds none)."""
    counts = composition_counts(ranks, suits)
    n = ranks * suits
    out = []
    for m in range(n + 1):
        states = 0
        for length in range(ranks + 1 if m < n else 0):
            k = counts[length][m]
            full = counts[length - 1][m - suits] if length >= 1 and m >= suits else 0
            states += length * (k - full)  # entries that can hold the card showing
            states += (length + 1) * k if length < ranks else 0  # gaps
        out.append(states)
    return out


def size_estimate(ranks: int, suits: int) -> Size:
    """Exact vector, state and value counts of :func:`solve` (any deck size, no work)."""
    counts = composition_counts(ranks, suits)
    n = ranks * suits
    vectors = 0
    slots = []
    for m in range(n + 1):
        slots.append(sum(counts[length][m] * length for length in range(ranks + 1)))
        vectors += sum(counts[length][m] for length in range(ranks + 1))
    peak = max(a + b for a, b in zip(slots, slots[1:], strict=False)) if n > 1 else 1
    largest = max(sum(counts[length][m] for length in range(ranks + 1)) for m in range(n + 1))
    return Size(vectors, sum(layer_states(ranks, suits)), peak, largest)


@dataclass(frozen=True)
class Sizing:
    """Bytes a solve needs, by where its layers live."""

    in_memory: int  # per process: both layers in memory (the fastest)
    out_of_core: int  # per process: layers in files, the previous one read through the cache
    disk: int  # layer files at the peak (two layers), out of core or keeping checkpoints
    states: int  # (count vector, card showing) states, mirror pairs apart

    def describe(self) -> str:
        """The sizes for a message."""
        return (
            f"{self.states:,} states: {longtask.format_bytes(self.in_memory)} per process with "
            f"both layers in memory, {longtask.format_bytes(self.out_of_core)} with the layers "
            f"on disk ({longtask.format_bytes(self.disk)} of files)"
        )


def sizing(ranks: int, suits: int) -> Sizing:
    """What :func:`solve` needs for a ranks x suits deck (exact counts, no work).

    In memory, a solve holds two buffers the size of the largest layer.  Out of core, each
    layer is a file: the current one is written in order from a buffer, the previous one is
    mapped and read through the operating system's page cache (at random, for a mirror
    image's values), which should hold it for speed: its need is one largest layer and the
    buffer.
    """
    sizes = group_sizes(ranks, suits)
    layers = [int(layer_bases(sizes, m)[-1]) for m in range(ranks * suits + 1)]
    largest = 8 * max(layers)
    disk = 8 * max(a + b for a, b in zip(layers, layers[1:], strict=False))
    states = size_estimate(ranks, suits).states
    buffer = min(8 * BUFFER, largest)
    return Sizing(OVERHEAD + 2 * largest, OVERHEAD + largest + buffer, disk, states)


def check_deck(ranks: int, suits: int) -> None:
    """Refuse a deck whose count vectors do not fit the solver's 64-bit codes."""
    if ranks * field_bits(suits) > CODE_BITS:
        raise TaskError(
            "ranks",
            ranks,
            f"ranks x suits = {ranks}x{suits}: a count vector takes {ranks} x "
            f"{field_bits(suits)} bits, over the float path's {CODE_BITS}-bit codes (about "
            f"{float(suits) ** ranks:.1e} count vectors); use method=monte_carlo",
        )


def choose_storage(size: Sizing, budget: longtask.Budget, storage: str = "auto") -> str:
    """Where the layers live, "memory" or "disk": in memory when both layers fit the budget,
    else on disk when the out-of-core need fits; ``storage`` other than "auto" forces one.
    MemoryError naming the need and the budget when neither fits."""
    if storage not in STORAGES:
        raise ValueError(f"storage={storage!r}: one of {', '.join(STORAGES)}")
    if storage != "auto":
        return storage
    if size.in_memory <= budget.bytes:
        return "memory"
    if size.out_of_core <= budget.bytes:
        return "disk"
    raise MemoryError(
        f"needs {longtask.format_bytes(size.out_of_core)} of memory per process at the least "
        f"({size.describe()}), over the budget: {budget.source}"
    )


# ----------------------------------------------------------------------------- coding


def field_bits(suits: int) -> int:
    """Bits of one count field of a code (a count 1..suits is stored as count - 1)."""
    return max(1, (suits - 1).bit_length())


def rank_table(ranks: int, suits: int) -> np.ndarray:
    """before[j, t, d]: strings of j digits in 0..suits-1 after a digit below d, the j + 1
    digits summing to t (the ranking table of :func:`_rank`)."""
    top = ranks * (suits - 1)
    cnt = np.zeros((ranks + 1, top + 1), np.int64)
    cnt[0, 0] = 1
    for j in range(1, ranks + 1):
        for t in range(top + 1):
            cnt[j, t] = sum(cnt[j - 1, t - v] for v in range(min(suits - 1, t) + 1))
    before = np.zeros((ranks + 1, top + 1, suits), np.int64)
    for j in range(ranks + 1):
        for t in range(top + 1):
            for d in range(1, suits):
                before[j, t, d] = before[j, t, d - 1] + (cnt[j, t - d + 1] if t >= d - 1 else 0)
    return before


def group_sizes(ranks: int, suits: int) -> np.ndarray:
    """sizes[m, L]: count vectors of length L in layer m."""
    counts = composition_counts(ranks, suits)
    return np.array(counts, np.int64).T.copy()


@kernel
def _reverse(code, length, bits):
    """The code of the reversed vector."""
    mask = (np.int64(1) << bits) - 1
    out = np.int64(0)
    for j in range(length):
        out |= ((code >> (bits * j)) & mask) << (bits * (length - 1 - j))
    return out


@kernel
def _rank(code, length, dsum, bits, before):
    """Place of a code among the codes of its length and digit sum, in increasing order."""
    mask = (np.int64(1) << bits) - 1
    r = np.int64(0)
    t = dsum
    for j in range(length - 1, -1, -1):
        d = (code >> (bits * j)) & mask
        r += before[j, t, d]
        t -= d
    return r


@kernel
def _unrank(place, length, dsum, bits, before, suits):
    """The code at ``place`` among the codes of its length and digit sum (inverse of _rank)."""
    code = np.int64(0)
    t = dsum
    r = place
    for j in range(length - 1, -1, -1):
        d = 0
        while d + 1 < suits and d + 1 <= t and before[j, t, d + 1] <= r:
            d += 1
        r -= before[j, t, d]
        t -= d
        code |= np.int64(d) << (bits * j)
    return code


@kernel
def _next(code, length, bits, suits):
    """The next larger code of the same length and digit sum (-1 after the last)."""
    mask = (np.int64(1) << bits) - 1
    low_sum = code & mask
    for i in range(1, length):
        d = (code >> (bits * i)) & mask
        if d < suits - 1 and low_sum >= 1:
            out = (code >> (bits * (i + 1))) << (bits * (i + 1))
            out |= (d + 1) << (bits * i)
            rest = low_sum - 1
            for k in range(i):
                v = min(rest, suits - 1)
                out |= v << (bits * k)
                rest -= v
            return out
        low_sum += d
    return np.int64(-1)


def layer_bases(sizes: np.ndarray, m: int) -> np.ndarray:
    """bases[L]: where the W of length-L vectors start in layer m; bases[-1]: its size."""
    lengths = np.arange(sizes.shape[1])
    bases = np.zeros(sizes.shape[1] + 1, np.int64)
    bases[1:] = np.cumsum(sizes[m] * lengths)
    return bases


# ----------------------------------------------------------------------------- layers


@kernel
def _side_sums(w, base, length, pos, gap):
    """(W below the position, W above it, W of its own entry) of one stored vector."""
    lower = 0.0
    higher = 0.0
    for i in range(pos):
        lower += w[base + i]
    first = pos if gap else pos + 1
    for i in range(first, length):
        higher += w[base + i]
    own = 0.0 if gap else w[base + pos]
    return lower, higher, own


@kernel
def _positions(code, length, ranks, bits, suits, merged):
    """Positions of a vector that can hold the card showing (gaps, entries below suits);
    ``merged``: a palindrome's mirror-image positions counted once."""
    mask = (np.int64(1) << bits) - 1
    n = 0
    last = length if merged else 2 * length  # positions 0..2L: gap j = 2j, entry j = 2j + 1
    for p in range(last + 1):
        if p % 2 == 0:
            n += length < ranks
        elif (code >> (bits * (p // 2))) & mask < suits - 1:
            n += 1
    return n


@kernel
def _rank_parts(code, length, bits, before, a, b, c, sums):
    """Partial rank sums of a vector, so that each child's rank costs O(1) (:func:`_child`).

    With term_i = before[i, s_i, d_i] (s_i: digits 0..i summed), the rank is the sum of the
    terms; a[j] sums terms below j, b[j] the terms from j up with s_i lowered by 1 (one card
    fewer below them), c[j] the terms from j up moved one field down (field j - 1 removed);
    sums[j] = s_j."""
    mask = (np.int64(1) << bits) - 1
    s = 0
    a[0] = 0
    for i in range(length):
        d = (code >> (bits * i)) & mask
        s += d
        sums[i] = s
        a[i + 1] = a[i] + before[i, s, d]
    b[length] = 0
    c[length] = 0
    for i in range(length - 1, -1, -1):
        d = (code >> (bits * i)) & mask
        b[i] = b[i + 1] + (before[i, s - 1, d] if s >= 1 else 0)
        c[i] = c[i + 1] + (before[i - 1, s, d] if i >= 1 else 0)
        s -= d


@kernel
def _child(code, j, bits, before, a, b, c, sums):
    """(code, rank in its group) of the vector with one card fewer in field j (its field
    removed when that was its last card), from the parent's partial sums."""
    mask = (np.int64(1) << bits) - 1
    shift = bits * j
    d = (code >> shift) & mask
    if d >= 1:
        return code - (np.int64(1) << shift), a[j] + before[j, sums[j] - 1, d - 1] + b[j + 1]
    low = code & ((np.int64(1) << shift) - 1)
    return low | ((code >> (shift + bits)) << shift), a[j] + c[j + 1]


@parallel_kernel
def _layer(m, ranks, suits, bits, tie_ok, optimal, before, sizes, prev, pbase, cur, cbase,
           departures, lgam, top, found, length_lo, length_hi, ch_lo, ch_hi):  # fmt: skip
    """Fill layer m's W from layer m - 1's (``prev``); returns the states of layer m solved.

    Only the vectors of lengths ``length_lo..length_hi - 1`` and chunks ``ch_lo..ch_hi - 1``
    of each (a vector's W lands at ``cur[cbase[length] + place * length]``: a caller may hand
    a buffer for part of a layer with ``cbase`` shifted).  ``departures``: also count where
    the best call beats the majority's (see :func:`_vector_departures`; ``top`` and ``found``
    have one row per chunk)."""
    mask = (np.int64(1) << bits) - 1
    states = 0
    chunks = top.shape[0]
    for length in range(length_lo, length_hi):
        size = sizes[m, length]
        for ch in prange(ch_lo, ch_hi):
            scratch = np.empty((8, ranks + 2), np.int64)
            a, b, c, sums = scratch[0], scratch[1], scratch[2], scratch[3]
            ra, rb, rc, rsums = scratch[4], scratch[5], scratch[6], scratch[7]
            wsums = np.empty((2, ranks + 2))
            first = ch * size // chunks
            code = np.int64(0)
            for t in range(first, (ch + 1) * size // chunks):
                if t == first:
                    code = _unrank(t, length, m - length, bits, before, suits)
                else:
                    code = _next(code, length, bits, suits)
                rcode = _reverse(code, length, bits)
                if optimal and rcode < code:
                    continue  # its mirror image is solved instead
                states += _positions(code, length, ranks, bits, suits, rcode == code and optimal)
                out = cbase[length] + t * length
                if m == 1:
                    for j in range(length):
                        cur[out + j] = 1.0
                else:
                    _rank_parts(code, length, bits, before, a, b, c, sums)
                    if optimal:
                        _rank_parts(rcode, length, bits, before, ra, rb, rc, rsums)
                    below = 0
                    for j in range(length):
                        cj = ((code >> (bits * j)) & mask) + 1
                        gap = cj == 1
                        clen = length - 1 if gap else length
                        child, place = _child(code, j, bits, before, a, b, c, sums)
                        pos = j
                        flipped = False
                        if optimal:
                            rj = length - 1 - j
                            rchild, rplace = _child(rcode, rj, bits, before, ra, rb, rc, rsums)
                            if rchild < child:
                                place = rplace
                                flipped = True
                                pos = clen - j if gap else clen - 1 - j
                        base = pbase[clen] + place * clen
                        lower, higher, own = _side_sums(prev, base, clen, pos, gap)
                        if flipped:
                            lower, higher = higher, lower
                        if optimal:
                            best = max(lower, higher)
                        else:
                            above = m - below - cj
                            best = higher if above >= below else lower
                        if tie_ok:
                            best += own
                        cur[out + j] = cj * best / (m - 1)
                        below += cj
                if departures:
                    _vector_departures(m, ranks, suits, bits, tie_ok, code, rcode, length, cur,
                                       out, lgam, top, found, ch, wsums)  # fmt: skip
    return states


# ----------------------------------------------------------------------------- departures


@kernel
def _log_comb(n, k, lgam):
    """log C(n, k) from a table of log-factorials."""
    return lgam[n] - lgam[k] - lgam[n - k]


@kernel
def _occurrence(ranks, suits, bits, m, length, code, pos, gap, lgam):
    """P(a random deal passes through this state): counts, card showing, m cards left."""
    n = ranks * suits
    drawn = n - m
    mask = (np.int64(1) << bits) - 1
    ways = _log_comb(ranks, length + 1 if gap else length, lgam)
    for j in range(length):
        ways += _log_comb(suits, suits - 1 - ((code >> (bits * j)) & mask), lgam)
    shown = suits if gap else suits - 1 - ((code >> (bits * pos)) & mask)
    return math.exp(ways + math.log(shown / drawn) - _log_comb(n, drawn, lgam))


@kernel
def _keep(top, row, first, stop, occ, m, length, code, pos, gap, flipped, loss):
    """Put a departure into ``top[row, first:stop]`` in place of the least likely one."""
    low = first
    for r in range(first + 1, stop):
        if top[row, r, 0] < top[row, low, 0]:
            low = r
    if occ > top[row, low, 0]:
        top[row, low, 0] = occ
        top[row, low, 1] = m
        top[row, low, 2] = length
        top[row, low, 3] = code
        top[row, low, 4] = pos
        top[row, low, 5] = gap
        top[row, low, 6] = flipped
        top[row, low, 7] = loss


@kernel
def _vector_departures(m, ranks, suits, bits, tie_ok, code, rcode, length, w, base, lgam, top,
                       found, c, sums):  # fmt: skip
    """Count one vector's states where the best call is strictly better than the majority's
    (both orientations of a merged pair counted) and keep the likeliest in ``top[c]``.

    found[c] += (states, departures, departures where the cards above and below differ);
    top[c] rows (the first half: any departure, the second: uneven splits only): (occurrence,
    m, L, code, position, gap, flipped, relative loss of P(no wrong call) by the majority
    call); ``sums``: scratch of
    2 x (length + 1) floats."""
    mask = (np.int64(1) << bits) - 1
    turns = 1 if rcode == code else 2
    below_w = sums[0]  # below_w[i]: W of entries 0..i-1; above_w[i]: W of entries i..L-1
    above_w = sums[1]
    below_w[0] = 0.0
    above_w[length] = 0.0
    for i in range(length):
        below_w[i + 1] = below_w[i] + w[base + i]
        above_w[length - 1 - i] = above_w[length - i] + w[base + length - 1 - i]
    below = 0
    for p in range(2 * length + 1):
        gap = p % 2 == 0
        pos = p // 2
        own_cards = 0 if gap else ((code >> (bits * pos)) & mask) + 1
        if (gap and length == ranks) or own_cards == suits:
            below += own_cards
            continue
        lower = below_w[pos]
        higher = above_w[pos] if gap else above_w[pos + 1]
        own = 0.0 if gap else w[base + pos]
        above = m - below - own_cards
        side = 0
        if higher > lower * (1 + MARGIN):
            side = 1
        elif lower > higher * (1 + MARGIN):
            side = -1
        best = max(lower, higher) + (own if tie_ok else 0.0)
        loss = abs(higher - lower) / best if best > 0 else 0.0
        for flipped in range(turns):
            found[c, 0] += 1
            if side == 0:
                continue
            if flipped == 0:
                majority = 1 if above >= below else -1
            else:  # the mirror image breaks an even split the other way
                majority = -1 if below >= above else 1
            if majority != side:
                found[c, 1] += 1
                occ = _occurrence(ranks, suits, bits, m, length, code, pos, gap, lgam)
                half = top.shape[1] // 2
                _keep(top, c, 0, half, occ, m, length, code, pos, gap, flipped, loss)
                if above != below:
                    found[c, 2] += 1
                    _keep(top, c, half, 2 * half, occ, m, length, code, pos, gap, flipped, loss)
        below += own_cards


# ----------------------------------------------------------------------------- solve


@dataclass(frozen=True)
class Departure:
    """A state where the best call strictly beats the majority rule's call."""

    state: State  # (below, same, above) as in deck.py; same = 0: the rank showing is spent
    occurrence: float  # P(a random deal passes through the state), whatever the calls
    loss: float  # relative loss of P(no wrong call from here) by the majority's call
    call: str  # the best call: "higher" or "lower"

    @property
    def cards_left(self) -> int:
        """Cards still face down in the state."""
        below, same, above = self.state
        return sum(below) + same + sum(above)


@dataclass
class Result:
    """P(no wrong call) and what the solve held."""

    p: float
    states: int  # (count vector, card showing) states solved (mirror pairs merged)
    vectors: int  # count vectors over all layers (before mirror merging)
    peak_values: int  # W numbers held at once (two adjacent layers)
    departures: int | None = None  # states where the best call beats majority's (unmerged)
    checked: int | None = None  # states examined for departures (unmerged)
    uneven: int | None = None  # departures where the cards above and below differ in number
    top: list[Departure] = field(default_factory=list)  # the likeliest departures
    top_uneven: list[Departure] = field(default_factory=list)  # the likeliest uneven ones
    storage: str = "memory"  # where the layers lived: "memory" or "disk"
    resumed_from: int = 0  # the checkpointed layer the solve started from (0: none)
    layers_solved: int = 0  # layers computed by this call


def as_state(length: int, code: int, pos: int, gap: bool, flipped: bool, suits: int) -> State:
    """deck.State (below, same, above) of a stored position, reversed when ``flipped``."""
    bits = field_bits(suits)
    cards = tuple(((code >> (bits * j)) & ((1 << bits) - 1)) + 1 for j in range(length))
    if gap:
        below, same, above = cards[:pos], 0, cards[pos:]
    else:
        below, same, above = cards[:pos], cards[pos], cards[pos + 1 :]
    return (above[::-1], same, below[::-1]) if flipped else (below, same, above)


def solve(
    ranks: int,
    suits: int,
    ties: Ties = "lose",
    policy: Policy = "optimal",
    departures: bool = False,
    storage: str = "auto",
    context: longtask.TaskContext | None = None,
) -> Result:
    """P(no wrong call) of a ranks x suits deck in float64; sizes: :func:`sizing`.

    ``departures`` (optimal policy only) also counts the states where the best call strictly
    beats the majority rule's and keeps the likeliest of them.  ``context`` (default: the
    running task's, :func:`solvers.kit.longtask.current`) gives the memory budget that decides
    where the layers live (:func:`choose_storage`; ``storage`` forces it), the checkpoints
    (each finished layer is kept; a solve finding them resumes after the last) and the
    progress reports (states done, after each layer).
    """
    if departures and policy != "optimal":
        raise ValueError("departures are found while solving the optimal policy")
    check_deck(ranks, suits)
    ctx = context if context is not None else longtask.current()
    size = sizing(ranks, suits)
    try:
        where = choose_storage(size, ctx.budget, storage)
    except MemoryError as err:
        raise TaskError("ranks", ranks, f"ranks x suits = {ranks}x{suits} {err}") from None
    optimal = policy == "optimal"
    n = ranks * suits
    bits = field_bits(suits)
    before = rank_table(ranks, suits)
    sizes = group_sizes(ranks, suits)
    per_layer = layer_states(ranks, suits)
    done = np.cumsum(per_layer[:-1])  # states of the layers up to m - 1 (the last holds none)
    lgam = np.array([math.lgamma(i + 1) for i in range(n + 1)])
    identity = {
        "format": 1,
        "ranks": ranks,
        "suits": suits,
        "tie_ok": ties != "lose",
        "optimal": optimal,
        "departures": departures,
        "chunks": CHUNKS,
        "top": TOP,
    }
    with _layer_store(where, ctx.checkpoints, identity, sizes, size, ranks, ctx.warn) as store:
        start, prev, states, top, found = store.resume()
        pbase = layer_bases(sizes, start)
        if start:
            ctx.progress(done[start], done[-1], "states", f"layer {start} of {n}, resumed")
        for m in range(start + 1, n + 1):
            cbase = layer_bases(sizes, m)

            def part(cur, base, lo, hi, ch_lo, ch_hi, m=m, prev=prev, pbase=pbase):
                return _layer(m, ranks, suits, bits, ties != "lose", optimal, before, sizes,
                              prev, pbase, cur, base, departures and m < n, lgam, top, found,
                              lo, hi, ch_lo, ch_hi)  # fmt: skip

            cur, count = store.compute(m, cbase, part)
            if m < n:
                states += count
                store.finish(m, cur, states, top, found)
            ctx.progress(done[min(m, n - 1)], done[-1], "states", f"layer {m} of {n}, {where}")
            prev, pbase = cur, cbase
        p = float(np.asarray(prev[:ranks]).sum() / n)
    counted = size_estimate(ranks, suits)
    result = Result(p, states, counted.vectors, counted.layer_values, storage=where,
                    resumed_from=start, layers_solved=n - start)  # fmt: skip
    if departures:
        result.checked, result.departures, result.uneven = (int(v) for v in found.sum(axis=0))
        result.top = top_departures(top[:, :TOP].reshape(-1, 8), suits)
        result.top_uneven = top_departures(top[:, TOP:].reshape(-1, 8), suits)
    return result


# ----------------------------------------------------------------------------- layer storage

_PIECE = re.compile(r"layer-(\d+)")
_VALUES = "w.f64"  # a layer's W, float64 in the machine's byte order, in layer order
_META = "meta.npz"  # the counts so far: states, departures found, the likeliest kept


def _write_at(fd: int, values: np.ndarray, offset: int) -> None:
    """Write an array's bytes to a file at a byte offset (pwrite, until all are written)."""
    data = memoryview(values).cast("B")
    while data:
        done = os.pwrite(fd, data, offset)
        data, offset = data[done:], offset + done


@contextlib.contextmanager
def _layer_store(
    where: str,
    checkpoints: longtask.Checkpoints | None,
    identity: dict,
    sizes: np.ndarray,
    size: Sizing,
    ranks: int,
    warn: Callable[[str], None],
) -> Iterator[_Layers]:
    """The layers of one solve, in memory or in files; with ``checkpoints``, each finished
    layer is kept there (out of core without checkpoints: in a temporary folder); a kept
    layer that fails its seal is set aside with one line to ``warn``."""
    if where == "memory":
        store: _Layers = _Layers(checkpoints, identity, sizes, in_memory=True, warn=warn)
        try:
            yield store
        finally:
            store.close()
        return
    if checkpoints is not None:
        _check_disk(checkpoints.folder, size, ranks)
        store = _Layers(checkpoints, identity, sizes, in_memory=False, warn=warn)
        try:
            yield store
        finally:
            store.close()
        return
    with tempfile.TemporaryDirectory(prefix="high_low_layers-") as folder:
        _check_disk(Path(folder), size, ranks)
        spill = longtask.Checkpoints(Path(folder) / "layers", root=folder)
        store = _Layers(spill, identity, sizes, in_memory=False, warn=warn)
        try:
            yield store
        finally:
            store.close()


def _check_disk(folder: Path, size: Sizing, ranks: int) -> None:
    """Refuse layers on disk when the folder's file system has less room than they need."""
    here = folder
    while not here.exists():
        here = here.parent
    free = shutil.disk_usage(here).free
    if free < size.disk:
        raise TaskError(
            "ranks",
            ranks,
            f"the layers on disk need {longtask.format_bytes(size.disk)}, {here} has "
            f"{longtask.format_bytes(free)} free",
        )


class _Layers:
    """Two layers of W: the previous one (read) and the one being computed.

    In memory: two buffers the size of the largest layer; a finished layer is written to its
    checkpoint by a thread while the next one is computed.  On disk: each layer is computed
    part by part into a buffer written to its checkpoint piece's file (``layer-037/w.f64``),
    then memory-mapped to be read as the previous layer, and committed by a thread.  Either
    way only the last committed layer is kept: a solve resumes from it if it matches its
    seal (solvers/kit/longtask.py), else from the start, the layer set aside with one line.
    """

    def __init__(
        self,
        checkpoints: longtask.Checkpoints | None,
        identity: dict,
        sizes: np.ndarray,
        in_memory: bool,
        warn: Callable[[str], None] | None = None,
    ):
        self.checkpoints, self.identity, self.sizes = checkpoints, identity, sizes
        self.warn = warn
        self.in_memory = in_memory
        self.ranks = int(identity["ranks"])
        largest = max(int(layer_bases(sizes, m)[-1]) for m in range(sizes.shape[0]))
        self.buffers = [np.empty(largest), np.empty(largest)] if in_memory else []
        self.maps: dict[int, np.memmap] = {}
        self.pending: dict[int, tuple[Path, int]] = {}  # on disk: layer m's folder and file
        self.writer: threading.Thread | None = None
        self.failure: BaseException | None = None

    def resume(self) -> tuple[int, np.ndarray, int, np.ndarray, np.ndarray]:
        """(layer, its W, states so far, top, found) of the last committed layer that
        belongs to this solve, or the empty deck's layer 0."""
        top = np.zeros((CHUNKS, 2 * TOP, 8))
        found = np.zeros((CHUNKS, 3), np.int64)
        empty = np.empty(1)
        for m in sorted(self._committed(sealed=True), reverse=True):
            if not self.checkpoints.trusted(f"layer-{m:03d}", self.warn):
                continue
            meta = self._meta(m)
            if meta is None:
                continue
            values = self.checkpoints.load_path(f"layer-{m:03d}") / _VALUES
            count = int(layer_bases(self.sizes, m)[-1])
            if values.stat().st_size != 8 * count:
                continue
            top[...], found[...] = meta["top"], meta["found"]
            if self.in_memory:
                w = self.buffers[m % 2][:count]
                with open(values, "rb") as fh:
                    fh.readinto(memoryview(w).cast("B"))
            else:
                w = np.memmap(values, np.float64, "r", shape=(count,))
                self.maps[m] = w
            return m, np.asarray(w), int(meta["states"]), top, found
        return 0, empty, 1, top, found  # the empty deck: one state, no W

    def compute(self, m: int, cbase: np.ndarray, part) -> tuple[np.ndarray, int]:
        """(layer m's W, states solved): ``part(cur, cbase, lengths, chunks)`` runs the
        kernel.  In memory, over the whole layer into a buffer (its last writer was joined by
        finish(m - 1)); on disk, one part of one length at a time into a buffer of at most
        BUFFER values, each written to the layer's file, which is then mapped to be read."""
        if self.in_memory:
            cur = self.buffers[m % 2]
            return cur, part(cur, cbase, 1, self.ranks + 1, 0, CHUNKS)
        for old in [k for k in self.maps if k < m - 1]:
            del self.maps[old]  # unmapped: only layer m - 1 is read (the kernel's prev)
        folder = self.checkpoints.path(f"layer-{m:03d}")
        folder.mkdir()
        count = int(cbase[-1])
        fd = os.open(folder / _VALUES, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.pending[m] = (folder, fd)
        os.ftruncate(fd, 8 * count)
        states = 0
        for length in range(1, self.ranks + 1):
            size = int(self.sizes[m, length])
            if not size:
                continue
            step = max(1, CHUNKS * BUFFER // (size * length))  # chunks a buffer holds
            for lo in range(0, CHUNKS, step):
                hi = min(CHUNKS, lo + step)
                first, stop = lo * size // CHUNKS, hi * size // CHUNKS
                if first == stop:
                    continue
                offset = int(cbase[length]) + first * length
                buffer = np.empty((stop - first) * length)
                base = cbase.copy()
                base[length] -= offset
                states += part(buffer, base, length, length + 1, lo, hi)
                _write_at(fd, buffer, 8 * offset)
        w = np.memmap(folder / _VALUES, np.float64, "r", shape=(count,))
        self.maps[m] = w
        return np.asarray(w), states

    def finish(self, m: int, w: np.ndarray, states: int, top: np.ndarray, found: np.ndarray):
        """Keep finished layer m (m < ranks x suits) as a checkpoint, drop older ones: a
        thread writes (in memory) or flushes (on disk) it and commits it while the next
        layer is computed (which only reads it)."""
        if self.checkpoints is None:
            return
        counts = (states, top.copy(), found.copy())
        self._join()  # layer m - 1's writer: its buffer is the next layer's
        if self.in_memory:
            count = int(layer_bases(self.sizes, m)[-1])
            args = (m, w[:count], None, None, *counts)
        else:
            args = (m, None, *self.pending.pop(m), *counts)
        self.writer = threading.Thread(
            target=self._write, args=args, name=f"layer-{m:03d}", daemon=True
        )
        self.writer.start()

    def close(self) -> None:
        """Wait for the last checkpoint being written (its failure raised); close the files
        of layers never committed (the last one)."""
        try:
            self._join()
        finally:
            for _, fd in self.pending.values():
                os.close(fd)
            self.pending.clear()
            self.maps.clear()

    # -- helpers

    def _write(self, m, w, folder, fd, states, top, found) -> None:
        """Write layer m's values (in memory) or close its written file (on disk), commit
        (which syncs it to disk)."""
        try:
            if w is not None:
                folder = self.checkpoints.path(f"layer-{m:03d}")
                folder.mkdir()
                with open(folder / _VALUES, "wb") as fh:
                    fh.write(memoryview(w).cast("B"))
            else:
                os.close(fd)
            self._commit(m, folder, states, top, found)
        except BaseException as err:  # raised in the solving thread by _join
            self.failure = err

    def _commit(self, m, folder, states, top, found) -> None:
        name = f"layer-{m:03d}"
        np.savez(
            folder / _META,
            identity=np.array(json.dumps(self.identity, sort_keys=True)),
            states=np.int64(states),
            top=top,
            found=found,
        )
        self.checkpoints.commit(name)
        for old in self._committed(sealed=True):
            if old < m:
                self.checkpoints.drop(f"layer-{old:03d}")

    def _join(self) -> None:
        if self.writer is not None:
            self.writer.join()
            self.writer = None
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure

    def _committed(self, sealed: bool = False) -> list[int]:
        """The layers committed (``sealed``: or whose seal is left, the layer deleted)."""
        if self.checkpoints is None:
            return []
        names = self.checkpoints.finished()
        if sealed:
            names |= self.checkpoints.sealed()
        return [int(x.group(1)) for x in map(_PIECE.fullmatch, names) if x]

    def _meta(self, m: int) -> dict | None:
        """The counts kept with layer m, or None when they belong to another solve."""
        try:
            path = self.checkpoints.load_path(f"layer-{m:03d}") / _META
            with np.load(path, allow_pickle=False) as meta:
                if json.loads(str(meta["identity"])) != self.identity:
                    return None
                if meta["top"].shape != (CHUNKS, 2 * TOP, 8) or meta["found"].shape != (CHUNKS, 3):
                    return None
                return {k: meta[k] for k in ("states", "top", "found")}
        except (OSError, ValueError, KeyError):
            return None


def top_departures(top: np.ndarray, suits: int) -> list[Departure]:
    """The kept departures as records, likeliest first (at most TOP)."""
    out = []
    for occ, _, length, code, pos, gap, flipped, loss in top[np.argsort(-top[:, 0])][:TOP]:
        if occ <= 0:
            continue
        state = as_state(int(length), int(code), int(pos), bool(gap), bool(flipped), suits)
        below, _, above = state
        call = "lower" if sum(above) >= sum(below) else "higher"  # not the majority's call
        out.append(Departure(state, float(occ), float(loss), call))
    return out


def p_perfect(ranks: int, suits: int, ties: Ties = "lose", policy: Policy = "optimal") -> float:
    """P(no wrong call) in float64 (relative error about 1e-13); size: :func:`size_estimate`."""
    return solve(ranks, suits, ties, policy).p
