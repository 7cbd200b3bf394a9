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

Sizes (:func:`size_estimate`): ``sum_L suits**L`` vectors over all layers (8.9e7 for 13 x 4,
at most 8.2e6 in one layer); two layers of ``W`` are held at once (1.7 GB for 13 x 4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit, prange

kernel = njit(cache=True, nogil=True)
parallel_kernel = njit(cache=True, nogil=True, parallel=True)

Ties = str  # "lose", "win" or "push"
Policy = str  # "optimal" or "majority"
State = tuple[tuple[int, ...], int, tuple[int, ...]]  # deck.State: (below, same, above)
MEMORY_LIMIT = 6 * 10**9  # bytes: decks needing more are refused (the house limit per process)
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


def size_estimate(ranks: int, suits: int) -> Size:
    """Exact vector, state and value counts of :func:`solve` (any deck size, no work)."""
    counts = composition_counts(ranks, suits)
    n = ranks * suits
    vectors = states = 0
    slots = []
    for m in range(n + 1):
        slots.append(sum(counts[length][m] * length for length in range(ranks + 1)))
        vectors += sum(counts[length][m] for length in range(ranks + 1))
        for length in range(ranks + 1 if m < n else 0):
            k = counts[length][m]
            full = counts[length - 1][m - suits] if length >= 1 and m >= suits else 0
            states += length * (k - full)  # entries that can hold the card showing
            states += (length + 1) * k if length < ranks else 0  # gaps
    peak = max(a + b for a, b in zip(slots, slots[1:], strict=False)) if n > 1 else 1
    largest = max(sum(counts[length][m] for length in range(ranks + 1)) for m in range(n + 1))
    return Size(vectors, states, peak, largest)


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
           departures, lgam, top, found):  # fmt: skip
    """Fill layer m's W from layer m - 1's (``prev``); returns the states of layer m solved.

    ``departures``: also count where the best call beats the majority's (see
    :func:`_vector_departures`; ``top`` and ``found`` have one row per chunk)."""
    mask = (np.int64(1) << bits) - 1
    states = 0
    chunks = top.shape[0]
    for length in range(1, ranks + 1):
        size = sizes[m, length]
        for ch in prange(chunks):
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
) -> Result:
    """P(no wrong call) of a ranks x suits deck in float64; size limit: :func:`size_estimate`.

    ``departures`` (optimal policy only) also counts the states where the best call strictly
    beats the majority rule's and keeps the likeliest of them.
    """
    if departures and policy != "optimal":
        raise ValueError("departures are found while solving the optimal policy")
    optimal = policy == "optimal"
    n = ranks * suits
    bits = field_bits(suits)
    before = rank_table(ranks, suits)
    sizes = group_sizes(ranks, suits)
    size = size_estimate(ranks, suits)
    largest = max(int(layer_bases(sizes, m)[-1]) for m in range(n + 1))
    buffers = [np.empty(largest), np.empty(largest)]
    prev, pbase = buffers[0], layer_bases(sizes, 0)
    states = 1  # the empty deck
    lgam = np.array([math.lgamma(i + 1) for i in range(n + 1)])
    top = np.zeros((CHUNKS, 2 * TOP, 8))
    found = np.zeros((CHUNKS, 3), np.int64)
    for m in range(1, n + 1):
        cbase = layer_bases(sizes, m)
        cur = buffers[m % 2]
        count = _layer(m, ranks, suits, bits, ties != "lose", optimal, before, sizes, prev, pbase,
                       cur, cbase, departures and m < n, lgam, top, found)  # fmt: skip
        if m < n:
            states += count
        prev, pbase = cur, cbase
    result = Result(float(prev[:ranks].sum() / n), states, size.vectors, size.layer_values)
    if departures:
        result.checked, result.departures, result.uneven = (int(v) for v in found.sum(axis=0))
        result.top = top_departures(top[:, :TOP].reshape(-1, 8), suits)
        result.top_uneven = top_departures(top[:, TOP:].reshape(-1, 8), suits)
    return result


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
