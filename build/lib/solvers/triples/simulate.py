"""Monte Carlo play of the real game: shuffled decks of ``ranks`` x ``suits`` cards."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Shuffles = np.ndarray  # games x cards array of card ids 0..N-1 (rank = id // suits)


def shuffled_decks(rng: np.random.Generator, ranks: int, suits: int, games: int) -> Shuffles:
    """``games`` independent uniform shuffles of the card ids 0..ranks*suits-1."""
    cards = np.tile(np.arange(ranks * suits, dtype=np.int16), (games, 1))
    return rng.permuted(cards, axis=1)


def play(deck: Sequence[int], suits: int, k: int, n: int) -> bool:
    """Whether A wins one round dealt from ``deck`` (card ids), card by card."""
    held: dict[int, int] = {}
    kinds = 0
    for card in deck:
        if kinds >= n:
            return True
        rank = int(card) // suits
        held[rank] = held.get(rank, 0) + 1
        if held[rank] == k + 1:
            return False
        kinds += held[rank] == k
    return kinds >= n


def kinds_at_first_excess(decks: Shuffles, ranks: int, suits: int, k: int) -> np.ndarray:
    """Per game, M = ranks holding k cards when the first rank reaches k+1 (vectorised).

    A wins at level n exactly when M >= n (see :mod:`solvers.triples.win`).
    """
    rank_of = decks // suits  # games x cards
    games, cards = rank_of.shape
    # position (0-based) of the j-th card of each rank: sort positions by rank, stably
    order = np.argsort(rank_of, axis=1, kind="stable").reshape(games, ranks, suits)
    kth = order[:, :, k - 1]  # where each rank gets its k-th card
    excess = order[:, :, k].min(axis=1)  # where the first rank gets its (k+1)-th card
    return (kth < excess[:, None]).sum(axis=1)


def estimate_win(wins: int, games: int) -> tuple[float, float]:
    """(estimate, standard error) of a win probability from ``wins`` out of ``games``."""
    p = wins / games
    return p, math.sqrt(p * (1 - p) / games)


def z_score(estimate: float, exact: float, games: int) -> float:
    """(estimate - exact) in units of the exact binomial standard error; 0 or inf if p is 0/1."""
    if 0 < exact < 1:
        return (estimate - exact) / math.sqrt(exact * (1 - exact) / games)
    return 0.0 if estimate == exact else math.inf


def count_wins(rng: np.random.Generator, ranks: int, suits: int, k: int, n: int, games: int) -> int:
    """A's wins at level ``n`` over ``games`` shuffled decks, dealt in chunks to bound memory."""
    chunk = max(1, 2_000_000 // (ranks * suits))
    wins = 0
    for done in range(0, games, chunk):
        decks = shuffled_decks(rng, ranks, suits, min(chunk, games - done))
        wins += int((kinds_at_first_excess(decks, ranks, suits, k) >= n).sum())
    return wins
