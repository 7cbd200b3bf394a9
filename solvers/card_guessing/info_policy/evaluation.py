"""``method: float`` for ``info``: the policy's score distribution over every state it reaches.

Forward over the labelled states the policy reaches, layer by layer (a layer = cards passed),
with each state's probability; a move is computed once per canonical state (the tied (c, p)
classes, moves.py), from the state's own posterior (posterior.py), then the tie-break picks
the lowest or highest labelled type.  The score so far is N - sum(c), so the last layer's
probabilities are the distribution.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from solvers import entropy
from solvers.card_guessing.exact import entropy_weighted
from solvers.card_guessing.info_policy.moves import (
    TOO_BIG,
    UNSURE,
    _scores,
    _tied_mask,
    empty_entropy_cache,
    encoding,
    exact_tied_mask,
)
from solvers.card_guessing.info_policy.posterior import (
    _grown,
    _next_level,
    _posterior,
    _strides,
    _workspace,
)
from solvers.card_guessing.state_codes import (
    codes_array,
    layer_key_codes,
    layer_keys,
    pairs_of,
    split_codes,
)
from solvers.kit.compile_once import njit


@njit(cache=True)
def _layer_decisions(
    ucodes, n, top, gamma, r_, t_, inv_lb, tol, bits_p, width, per_word, hcache, max_support
):
    """Per canonical state (rows of codes, n cards to come): tie mask over its slots (or
    UNSURE), P(yes) and P(no) per slot, and the largest posterior met.  ``top``: the
    largest count of the deck."""
    u, r = ucodes.shape
    masks = np.empty(u, np.int64)
    pyes = np.zeros((u, r))
    pno = np.zeros((u, r))
    cs = np.empty(r, np.int64)
    ps = np.empty(r, np.int64)
    largest = 1
    caps = np.full(r, top, np.int64)  # a canonical slot may hold any type: one box for all
    strides = _strides(caps)
    ws = _workspace(strides, caps, 64)
    for s in range(u):
        split_codes(ucodes[s], bits_p, cs, ps)
        ws, m = _posterior(ws, cs, ps, n, strides)
        largest = max(largest, m)
        if m > max_support:
            masks[:] = TOO_BIG
            return masks, pyes, pno, largest
        ws = _grown(ws, m, m * r)
        mm = _next_level(ws, m, strides)
        sc, er, py, pn = _scores(
            cs, ps, n, ws[5], mm, gamma, r_, t_, inv_lb, bits_p, width, per_word, hcache
        )
        masks[s] = _tied_mask(sc, er, tol)
        pyes[s] = py
        pno[s] = pn
    return masks, pyes, pno, largest


@dataclass
class InfoValue:
    """The float evaluation of an info policy: score distribution and what it took."""

    pmf: np.ndarray  # P(score = k), k = 0..N
    n_states: int  # labelled states reached under the policy (every layer)
    n_canonical: int  # canonical states whose move was computed
    exact_calls: int  # moves the floats could not decide safely (taken exactly)
    largest_support: int  # the largest composition posterior met
    layer_sizes: list[int]

    @property
    def expected_score(self) -> float:
        return float(np.arange(self.pmf.size) @ self.pmf)

    @property
    def score_pmf(self) -> list[float]:
        return self.pmf.tolist()

    @property
    def score_variance(self) -> float:
        k = np.arange(self.pmf.size)
        return float((k * k) @ self.pmf) - self.expected_score**2


Progress = Callable[[str], None]


def evaluate(
    deck: Sequence[int],
    gamma: float,
    r: float = 1.0,
    t: float = 1.0,
    log_base: float = 2.0,
    tie_break: str = "lowest",
    max_support: int = entropy_weighted.MAX_POSTERIOR,
    progress: Progress | None = None,
) -> InfoValue:
    """The info policy's score distribution on a shuffled ``deck``, in floats.

    Forward over the labelled states the policy reaches, layer by layer (a layer = cards
    passed), with each state's probability; a move is computed once per canonical state
    (the tied (c, p) classes), then the tie-break picks the lowest or highest labelled type.
    The score so far is N - sum(c), so the last layer's probabilities are the distribution.
    """
    if tie_break not in ("lowest", "highest"):
        raise ValueError(f"tie_break={tie_break!r}: method=float does lowest or highest")
    enc = encoding(deck)
    r, t, log_base = entropy.checked_point(r, t, log_base)
    exact = exact_tied_mask(gamma, r, t, log_base)
    n_cards, bits_p = enc.n_cards, enc.bits_p
    cs = np.array([enc.deck], np.int64)
    ps = np.zeros_like(cs)
    prob = np.ones(1)
    sizes, n_canonical, exact_calls, largest = [], 0, 0, 1
    for depth in range(n_cards):
        sizes.append(len(prob))
        n = n_cards - depth
        codes = codes_array(cs, ps, bits_p)
        ucodes, inv = _unique_rows(-np.sort(-codes, axis=1), enc.width)
        masks, pyes, pno, big = _layer_decisions(
            np.ascontiguousarray(ucodes),
            n,
            max(enc.deck),
            gamma,
            r,
            t,
            1.0 / math.log(log_base),
            entropy_weighted.TIE_TOLERANCE,
            bits_p,
            enc.width,
            enc.per_word,
            empty_entropy_cache(),
            max_support,
        )
        largest = max(largest, int(big))
        if np.any(masks == TOO_BIG):
            raise ValueError(
                f"deck {list(enc.deck)}: a composition posterior of {big:,} compositions "
                f"exceeds max_support={max_support:,}"
            )
        n_canonical += len(ucodes)
        for u in np.flatnonzero(masks == UNSURE):
            masks[u] = exact((n, pairs_of(ucodes[u], bits_p)))
            exact_calls += 1
        a, py, pn = _labelled_moves(codes, ucodes, inv, masks, pyes, pno, tie_break)
        cs, ps, prob = _children(cs, ps, prob, a, py, pn, bits_p, enc.width)
        if progress:
            progress(f"layer {depth + 1}: {len(prob):,} states, {len(ucodes):,} canonical")
    sizes.append(len(prob))
    pmf = np.bincount(n_cards - cs.sum(axis=1), weights=prob, minlength=n_cards + 1)
    return InfoValue(pmf, sum(sizes), n_canonical, exact_calls, largest, sizes)


def _labelled_moves(codes, ucodes, inv, masks, pyes, pno, tie_break):
    """(guess, P(yes), P(no)) per labelled state from its canonical state's decision."""
    slot_tied = (masks[:, None] >> np.arange(ucodes.shape[1])) & 1 == 1  # (U, r)
    tied_codes = np.where(slot_tied, ucodes, -1)[inv]  # (S, r): codes of the tied classes
    tied = (codes[:, :, None] == tied_codes[:, None, :]).any(axis=2) & (codes > 0)
    r = codes.shape[1]
    a = tied.argmax(axis=1) if tie_break == "lowest" else r - 1 - tied[:, ::-1].argmax(axis=1)
    chosen = codes[np.arange(len(a)), a]
    slot = (ucodes[inv] == chosen[:, None]).argmax(axis=1)
    return a, pyes[inv, slot], pno[inv, slot]


def _children(cs, ps, prob, a, py, pn, bits_p, width):
    """The next layer (distinct labelled states) and the probability of reaching each."""
    rows = np.arange(len(a))
    yc, yp = cs.copy(), ps.copy()
    yc[rows, a] -= 1
    yp[rows, a] = np.where(yc[rows, a] == 0, 0, yp[rows, a])
    np_ = ps.copy()
    np_[rows, a] += 1
    codes = np.concatenate([(yc << bits_p) | yp, (cs << bits_p) | np_])
    weight = np.concatenate([prob * py, prob * pn])
    keep = weight > 0
    states, inv = _unique_rows(codes[keep], width)
    out = np.bincount(inv, weights=weight[keep], minlength=len(states))
    return states >> bits_p, states & ((1 << bits_p) - 1), out


def _unique_rows(rows: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows, index of each row's distinct row): rows packed in one int64 if they fit."""
    r = rows.shape[1]
    if r * width > 63:
        out, inv = np.unique(rows, axis=0, return_inverse=True)
        return out, inv.reshape(-1)
    keys, inv = np.unique(layer_keys(rows, width), return_inverse=True)
    return layer_key_codes(keys, r, width), inv.reshape(-1)
