"""Playable policies of the ranked solver on real shuffled decks: Monte Carlo, paired with greedy.

``persistent`` (window w): of the types at least (1 - w) times as likely to be next as the
likeliest, name the one refused most often (ties: the smallest (c, p) pair).  It keeps naming
a type after a "no" while that type stays nearly as likely as the likeliest, which is what
the exact optimum does on decks of 4 to 9 types of 4 and greedy does not (see the manual page
card_guessing_ranks52.md).  ``pairs`` is greedy with ties to the smallest (c, p) pair (w = 0).
uniform_deck/ evaluates both exactly; here they are played on
shuffled decks.

The next-card probabilities come from the float rook-polynomial weights of shuffled_decks.py
(with their rounding bound); a decision whose admitted set or refusal order is closer to a
threshold than that bound is counted as *unsure* (reported, not replayed: the policy played
is the float one).  Games use the same shuffles as shuffled_decks.greedy_scores from the same
seed, so a policy and greedy are compared game by game (paired standard error).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from solvers.card_guessing.simulation import shuffled_decks
from solvers.card_guessing.state_codes import record_answer
from solvers.kit.compile_once import njit

TIE = 1e-12
POLICY_CODES = {"pairs": 1, "persistent": 2}


@njit(cache=True)
def _choice(c, p, window, policy, w, err):
    """(guess, unsure) of the policy in state (c, p) from float weights."""
    shuffled_decks._yes_weights(c, p, w, err)
    top, top_err = 0.0, 0.0
    for a in range(c.size):
        if w[a] > top:
            top, top_err = w[a], err[a]
    floor = top * (1.0 - window) * (1.0 - TIE)
    pick = -1
    unsure = False
    for a in range(c.size):
        if c[a] <= 0 or w[a] <= 0.0:
            continue
        if abs(w[a] - floor) <= err[a] + top_err and abs(w[a] - floor) > TIE * top:
            unsure = True
        if w[a] < floor:
            continue
        if pick < 0:
            pick = a
            continue
        if policy == 2 and p[a] != p[pick]:
            if p[a] > p[pick]:
                pick = a
        elif c[a] < c[pick] or (c[a] == c[pick] and p[a] < p[pick]):
            pick = a  # the smallest (c, p) pair
    return pick, unsure


@njit(cache=True)
def _games(orders, deck, window, policy):
    """(scores, unsure decisions) of the policy on each order."""
    n_games, n = orders.shape
    scores = np.zeros(n_games, np.int64)
    unsure = 0
    types = deck.size
    w = np.zeros(types)
    err = np.zeros(types)
    c = np.zeros(types, np.int64)
    p = np.zeros(types, np.int64)
    for g in range(n_games):
        c[:] = deck
        p[:] = 0
        for at in range(n):
            guess, doubt = _choice(c, p, window, policy, w, err)
            unsure += doubt
            scores[g] += record_answer(c, p, guess, orders[g, at] == guess)
    return scores, unsure


class ChoicePlayer:
    """The policy of :func:`_choice` in a labelled (c, p) state of exact/yes_no.py, as a
    belief_players.Player (no belief of its own): what the terminal game and exact counts
    of a game tree play, decision for decision the one :func:`policy_scores` plays."""

    def __init__(self, policy: str = "persistent", window: float = 0.1):
        self.code, self.window = POLICY_CODES[policy], float(window)

    def start(self, deck: Sequence[int]) -> None:
        return None

    def guesses(self, state, belief=None) -> list[int]:
        c = np.array([pair[0] for pair in state[1]], np.int64)
        p = np.array([pair[1] for pair in state[1]], np.int64)
        guess, _ = _choice(c, p, self.window, self.code, np.zeros(c.size), np.zeros(c.size))
        return [int(guess)]

    def update(self, belief, a: int, yes: bool) -> None:
        return None


def policy_scores(
    deck: Sequence[int], n_games: int, rng: np.random.Generator, policy: str, window: float
) -> tuple[np.ndarray, int]:
    """(scores, unsure decisions) of ``policy`` on ``n_games`` shuffles, drawn from ``rng``
    exactly as shuffled_decks.greedy_scores draws them (same seed: the same decks)."""
    counts = np.asarray(deck, dtype=np.int64)
    out = np.empty(n_games, dtype=np.int64)
    unsure = 0
    for start in range(0, n_games, shuffled_decks.CHUNK):
        orders = shuffled_decks.shuffled_orders(
            deck, min(shuffled_decks.CHUNK, n_games - start), rng
        )
        rng.integers(2**31 - 1)  # greedy_scores draws a seed per chunk: stay in step
        scores, doubt = _games(orders, counts, window, POLICY_CODES[policy])
        out[start : start + len(orders)] = scores
        unsure += doubt
    return out, unsure


def paired_comparison(
    deck: Sequence[int], n_games: int, seed: int, policy: str = "persistent", window: float = 0.1
) -> dict:
    """The policy and greedy (lowest-index ties) on the same ``n_games`` seeded shuffles:
    means, standard errors, the mean difference with its paired standard error, seconds per
    game and unsure decisions."""
    start = time.process_time()
    ours, unsure = policy_scores(deck, n_games, np.random.default_rng(seed), policy, window)
    mid = time.process_time()
    greedy, exact_calls = shuffled_decks.greedy_scores(deck, n_games, np.random.default_rng(seed))
    end = time.process_time()
    diff = ours - greedy
    return {
        "policy_mean": float(ours.mean()),
        "policy_se": float(ours.std(ddof=1) / np.sqrt(n_games)),
        "greedy_mean": float(greedy.mean()),
        "greedy_se": float(greedy.std(ddof=1) / np.sqrt(n_games)),
        "difference": float(diff.mean()),
        "difference_se": float(diff.std(ddof=1) / np.sqrt(n_games)),
        "policy_cpu_per_game": (mid - start) / n_games,
        "greedy_cpu_per_game": (end - mid) / n_games,
        "unsure_decisions": unsure,
        "greedy_exact_calls": exact_calls,
        "policy_scores": ours,
    }
