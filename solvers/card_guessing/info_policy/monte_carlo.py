"""Monte Carlo play of ``info`` in floats: games on shuffled decks, the posterior carried along.

Each game carries its composition posterior as the filter of posterior.py, one card at a
time; a move is computed once per canonical state (moves.py) and kept in a decision cache
across the games and the chunks of a task.  A game whose move the floats cannot decide
safely stops; the exact path decides that state, and the game is replayed from the start
with the same seed (so the same random ties).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from solvers import entropy
from solvers.card_guessing.exact import entropy_weighted
from solvers.card_guessing.info_policy.moves import (
    TIE_CODES,
    TOO_BIG,
    UNSURE,
    _canonical_mask,
    _labelled_mask,
    _pick,
    _scores,
    _tied_mask,
    empty_decision_cache,
    empty_entropy_cache,
    encoding,
    exact_tied_mask,
)
from solvers.card_guessing.info_policy.posterior import (
    _advance,
    _grown,
    _next_level,
    _start,
    _strides,
    _workspace,
)
from solvers.card_guessing.state_codes import canonical_cache_key, record_answer
from solvers.kit.compile_once import njit


@njit(cache=True)
def _play_games(
    orders,
    deck,
    seeds,
    gamma,
    r_,
    t_,
    inv_lb,
    tol,
    tie,
    bits_p,
    width,
    per_word,
    hcache,
    dcache,
    max_support,
    err_scale,
):
    """(scores, stop, c, p, largest support): play info on each order; stop >= 0 = unsure there.

    A posterior with more than ``max_support`` compositions stops everything (stop TOO_BIG).

    A stopped game's c, p hold the state where the exact decision is needed; once it is in
    ``dcache`` the game is replayed from the start (same seed, so the same random ties).
    """
    n_games, n_cards = orders.shape
    r = deck.size
    scores = np.zeros(n_games, np.int64)
    stops = np.full(n_games, -1, np.int64)
    cs_out = np.zeros((n_games, r), np.int64)
    ps_out = np.zeros((n_games, r), np.int64)
    strides = _strides(deck)
    codes = np.empty(r, np.int64)
    largest = 1
    ws = _workspace(strides, deck, 64)
    for g in range(n_games):
        np.random.seed(seeds[g])  # noqa: NPY002 (per game: replays draw the same ties)
        cs = deck.copy()
        ps = np.zeros(r, np.int64)
        m = _start(ws, cs, strides)
        score = 0
        for pos in range(n_cards):
            n = n_cards - pos
            if m > max_support:
                stops[g] = TOO_BIG
                return scores, stops, cs_out, ps_out, m
            ws = _grown(ws, m, m * r)
            largest = max(largest, m)
            key = canonical_cache_key(n, cs, ps, bits_p, width, per_word, codes)
            if key in dcache:
                cmask = dcache[key]
            else:
                mm = _next_level(ws, m, strides)
                sc, er, _, _ = _scores(
                    cs, ps, n, ws[5], mm, gamma, r_, t_, inv_lb, bits_p, width, per_word, hcache
                )
                mask = _tied_mask(sc, er * err_scale, tol)
                if mask == UNSURE:
                    stops[g] = pos
                    cs_out[g] = cs
                    ps_out[g] = ps
                    break
                cmask = _canonical_mask(cs, ps, bits_p, mask, codes)
                dcache[key] = cmask
            a = _pick(_labelled_mask(cs, ps, bits_p, cmask, codes), tie)
            yes = orders[g, pos] == a
            m = _advance(ws, m, strides, a, yes)
            score += record_answer(cs, ps, a, yes)
        scores[g] = score
    return scores, stops, cs_out, ps_out, largest


@dataclass
class InfoPlay:
    """Monte Carlo play of ``info``: the kernels' caches, kept across the chunks of a task."""

    deck: Sequence[int]
    gamma: float
    r: float = 1.0
    t: float = 1.0
    log_base: float = 2.0
    tie_break: str = "lowest"
    max_support: int = entropy_weighted.MAX_POSTERIOR
    err_scale: float = 1.0  # widen the rounding bounds (tests: force exact decisions)

    def __post_init__(self) -> None:
        self.enc = encoding(self.deck)
        self.r, self.t, self.log_base = entropy.checked_point(self.r, self.t, self.log_base)
        self.hcache = empty_entropy_cache()
        self.dcache = empty_decision_cache()
        self.exact = exact_tied_mask(self.gamma, self.r, self.t, self.log_base)
        self.exact_calls = 0
        self.largest_support = 1

    def scores(self, orders: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        """Scores of info on ``orders`` (one seed per game for its random ties)."""
        deck = np.asarray(self.enc.deck, np.int64)
        todo = np.arange(len(orders))
        out = np.zeros(len(orders), np.int64)
        while todo.size:
            scores, stops, cs, ps, largest = _play_games(
                np.ascontiguousarray(orders[todo]),
                deck,
                np.asarray(seeds, np.int64)[todo],
                self.gamma,
                self.r,
                self.t,
                1.0 / math.log(self.log_base),
                entropy_weighted.TIE_TOLERANCE,
                TIE_CODES[self.tie_break],
                self.enc.bits_p,
                self.enc.width,
                self.enc.per_word,
                self.hcache,
                self.dcache,
                self.max_support,
                self.err_scale,
            )
            self.largest_support = max(self.largest_support, int(largest))
            if np.any(stops == TOO_BIG):
                raise ValueError(
                    f"deck {list(self.enc.deck)}: a composition posterior of {largest:,} "
                    f"compositions exceeds max_support={self.max_support:,}"
                )
            out[todo] = scores
            stopped = np.flatnonzero(stops >= 0)
            for g in stopped:
                self._decide_exactly(self.enc.n_cards - int(stops[g]), cs[g], ps[g])
            todo = todo[stopped]
        return out

    def _decide_exactly(self, n: int, cs: np.ndarray, ps: np.ndarray) -> None:
        """Store the exact path's decision for the state (n, c, p) in the decision cache."""
        state = (n, tuple(zip(cs.tolist(), ps.tolist(), strict=True)))
        mask = self.exact(state)
        self.exact_calls += 1
        enc = self.enc
        codes = np.empty(enc.r, np.int64)
        key = canonical_cache_key(n, cs, ps, enc.bits_p, enc.width, enc.per_word, codes)
        self.dcache[key] = _canonical_mask(cs, ps, enc.bits_p, np.int64(mask), codes)
