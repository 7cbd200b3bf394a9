"""Departures from the majority rule: the states where the best call strictly beats the
majority's (call "higher" when at least as many cards are above), counted while a layer is
solved (:func:`_vector_departures`), the likeliest kept and read back as records
(:func:`top_departures`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from solvers.high_low.float_layers.coding import kernel
from solvers.high_low.float_layers.counting import field_bits

State = tuple[tuple[int, ...], int, tuple[int, ...]]  # deck.State: (below, same, above)
MARGIN = 1e-12  # relative: a call is strictly better only by more than this
TOP = 12  # departures from the majority rule kept, likeliest first


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


def as_state(length: int, code: int, pos: int, gap: bool, flipped: bool, suits: int) -> State:
    """deck.State (below, same, above) of a stored position, reversed when ``flipped``."""
    bits = field_bits(suits)
    cards = tuple(((code >> (bits * j)) & ((1 << bits) - 1)) + 1 for j in range(length))
    if gap:
        below, same, above = cards[:pos], 0, cards[pos:]
    else:
        below, same, above = cards[:pos], cards[pos], cards[pos + 1 :]
    return (above[::-1], same, below[::-1]) if flipped else (below, same, above)


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
