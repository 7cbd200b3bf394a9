"""Monte Carlo play of yes/no card guessing on real shuffled decks (Gural, Simper & So 2019, any
strategy).

Two paths, both playing the *same* policies as the exact solvers:

* :func:`play_games`: any :class:`belief_players.Player` in Python (greedy, info, optimal, the
  playable strategies); decisions are exact (integer arrangement counts, Fractions).
* :func:`info_scores`: info compiled with Numba (info_policy/: the composition posterior is
  carried along each game as a float filter; unsure decisions go to the exact path).
* :func:`greedy_scores`: greedy compiled with Numba for big decks (52 cards).  The next-card
  probabilities come from a float version of the arrangement count (the rook-polynomial
  inclusion-exclusion of :func:`yes_no.arrangements`, see :func:`float_yes_weights`) with a
  rounding-error bound; whenever the best and another type are not separated by that bound
  (and are not interchangeable, which ties them exactly), the game is replayed exactly in
  Python, so the policy is exactly greedy with its tie-break.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solvers.card_guessing.exact.belief_players import Player, updater
from solvers.card_guessing.exact.yes_no import (
    after_no,
    after_yes,
    greedy_chooser,
    initial_state,
    yes_counts,
)
from solvers.card_guessing.info_policy.monte_carlo import InfoPlay
from solvers.card_guessing.state_codes import record_answer
from solvers.kit.compile_once import njit

Scores = np.ndarray  # int64 score per game
CHUNK = 8192  # games shuffled at once
REL_ERR = 1e-12  # bound on the relative rounding error of one float alternating sum
TIE_CODES = {"lowest": 0, "highest": 1, "uniform": 2}


def shuffled_orders(deck: Sequence[int], n_games: int, rng: np.random.Generator) -> np.ndarray:
    """(n_games, N) int8 array: uniformly shuffled type sequences of ``deck``."""
    base = np.repeat(np.arange(len(deck), dtype=np.int8), list(deck))
    return rng.permuted(np.tile(base, (n_games, 1)), axis=1)


def play_one(
    order: Sequence[int], deck: Sequence[int], player: Player, rng: np.random.Generator, memo: dict
) -> int:
    """The score of ``player`` on one order of ``deck`` (uniform ties drawn from ``rng``)."""
    deck = tuple(int(k) for k in deck)
    state, belief, score = initial_state(deck), player.start(deck), 0
    update = updater(player)
    for card in order:
        key = (state, belief)
        picks = memo.get(key)
        if picks is None:
            picks = memo[key] = player.guesses(state, belief)
        a = picks[0] if len(picks) == 1 else picks[int(rng.integers(len(picks)))]
        yes = int(card) == a
        score += yes
        belief = update(state, belief, a, yes)
        state = after_yes(state, a) if yes else after_no(state, a)
    return score


def play_games(
    deck: Sequence[int], player: Player, n_games: int, rng: np.random.Generator
) -> Scores:
    """Scores of ``player`` on ``n_games`` shuffled decks (Python; exact decisions)."""
    memo: dict = {}
    out = np.empty(n_games, dtype=np.int64)
    for start in range(0, n_games, CHUNK):
        orders = shuffled_orders(deck, min(CHUNK, n_games - start), rng)
        for i, order in enumerate(orders.tolist()):
            out[start + i] = play_one(order, deck, player, rng, memo)
    return out


def greedy_scores(
    deck: Sequence[int], n_games: int, rng: np.random.Generator, tie_break: str = "lowest"
) -> tuple[Scores, int]:
    """(scores, exact_calls): greedy on ``n_games`` shuffled decks, Numba fast path.

    ``exact_calls`` counts the decisions the float path could not make safely and that were
    made with exact integer counts in Python (the game then resumes in compiled code).
    """
    counts = np.asarray(deck, dtype=np.int64)
    out = np.empty(n_games, dtype=np.int64)
    exact_calls = 0
    decide = _exact_greedy(tie_break, rng)
    for start in range(0, n_games, CHUNK):
        orders = shuffled_orders(deck, min(CHUNK, n_games - start), rng)
        seed = int(rng.integers(2**31 - 1))
        scores, c, p, pos = _greedy_games(orders, counts, TIE_CODES[tie_break], seed)
        for g in np.flatnonzero(pos >= 0):
            at = int(pos[g])
            while at >= 0:
                exact_calls += 1
                guess = decide(len(orders[g]) - at, c[g], p[g])
                scores[g], at = _play_from(
                    orders[g], c[g], p[g], scores[g], at, guess, TIE_CODES[tie_break]
                )
        out[start : start + len(orders)] = scores
    return out, exact_calls


def info_scores(
    deck: Sequence[int],
    n_games: int,
    rng: np.random.Generator,
    gamma: float,
    r: float = 1.0,
    t: float = 1.0,
    log_base: float = 2.0,
    tie_break: str = "lowest",
) -> tuple[Scores, InfoPlay]:
    """(scores, play): info on ``n_games`` shuffled decks, Numba fast path (info_policy/).

    ``InfoPlay.exact_calls`` counts the decisions the floats could not make safely (taken from
    the exact Python path, exact/entropy_weighted.py); ``InfoPlay.largest_support`` the largest
    composition posterior met.  Decision and entropy caches are shared by every game of the call.
    """
    play = InfoPlay(deck, gamma, r, t, log_base, tie_break)
    out = np.empty(n_games, dtype=np.int64)
    for start in range(0, n_games, CHUNK):
        orders = shuffled_orders(deck, min(CHUNK, n_games - start), rng)
        seeds = rng.integers(2**31 - 1, size=len(orders))
        out[start : start + len(orders)] = play.scores(orders, seeds)
    return out, play


def _exact_greedy(tie_break: str, rng: np.random.Generator):
    """A function (cards to come, c, p) -> greedy's guess, from exact counts (memoised)."""
    chooser = greedy_chooser(tie_break)
    memo: dict = {}

    def decide(n: int, c: np.ndarray, p: np.ndarray) -> int:
        state = (n, tuple(zip(c.tolist(), p.tolist(), strict=True)))
        picks = memo.get(state)
        if picks is None:
            picks = memo[state] = chooser(state, yes_counts(state))
        return picks[0] if len(picks) == 1 else picks[int(rng.integers(len(picks)))]

    return decide


def float_yes_weights(c: Sequence[int], p: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(w, err): w[a] proportional to P(next is a | c, p) in floats, err its rounding bound."""
    w = np.zeros(len(c))
    err = np.zeros(len(c))
    _yes_weights(np.asarray(c, dtype=np.int64), np.asarray(p, dtype=np.int64), w, err)
    return w, err


# ------------------------------------------------------------------------- compiled core


@njit(cache=True)
def _block(c: int, p: int) -> np.ndarray:
    """Rook numbers of a c x p board as floats: C(c,k) C(p,k) k!."""
    m = min(c, p)
    out = np.empty(m + 1)
    out[0] = 1.0
    for k in range(m):
        out[k + 1] = out[k] * (c - k) * (p - k) / (k + 1)
    return out


@njit(cache=True)
def _rook_product(c: np.ndarray, p: np.ndarray, skip: int, c_skip: int) -> np.ndarray:
    """Rook polynomial of the forbidden board, block ``skip`` taken with count ``c_skip``."""
    poly = np.zeros(1)
    poly[0] = 1.0
    for i in range(len(c)):
        ci = c_skip if i == skip else c[i]
        if ci <= 0 or p[i] <= 0:
            continue
        b = _block(ci, p[i])
        out = np.zeros(len(poly) + len(b) - 1)
        for j in range(len(poly)):
            for k in range(len(b)):
                out[j + k] += poly[j] * b[k]
        poly = out
    return poly


@njit(cache=True)
def _alternating(poly: np.ndarray, total: int) -> tuple[float, float]:
    """(sum_k (-1)^k r_k (T-k)!/T!, rounding bound) for T = ``total`` cards."""
    s, mag, w = 0.0, 0.0, 1.0
    for k in range(len(poly)):
        if k:
            w /= total - k + 1
        term = poly[k] * w
        s += -term if k & 1 else term
        mag += abs(term)
    return s, mag * REL_ERR + 1e-300


@njit(cache=True)
def _yes_weights(c: np.ndarray, p: np.ndarray, w: np.ndarray, err: np.ndarray) -> None:
    """Fill w[a] = c_a N(c - e_a, p) (T-1)!/prod c! (0 if c_a = 0) and its error bound."""
    total = 0
    for i in range(len(c)):
        total += c[i]
    base_s, base_e = 0.0, -1.0  # shared by every type without "no" slots
    for a in range(len(c)):
        w[a] = 0.0
        err[a] = 0.0
        if c[a] <= 0:
            continue
        done = False
        for b in range(a):  # an interchangeable type was done: copy it exactly
            if c[b] == c[a] and p[b] == p[a]:
                w[a], err[a], done = w[b], err[b], True
                break
        if done:
            continue
        if p[a] == 0:
            if base_e < 0:
                base_s, base_e = _alternating(_rook_product(c, p, -1, 0), total - 1)
            s, e = base_s, base_e
        else:
            s, e = _alternating(_rook_product(c, p, a, c[a] - 1), total - 1)
        w[a] = c[a] * s
        err[a] = c[a] * e


@njit(cache=True)
def _greedy_guess(c: np.ndarray, p: np.ndarray, tie_code: int, w, err, tied) -> int:
    """Greedy's guess from float weights, or -1 if the floats cannot decide it safely."""
    _yes_weights(c, p, w, err)
    best = 0
    for a in range(1, len(c)):
        if w[a] > w[best] or (tie_code == 1 and w[a] == w[best]):
            best = a
    n_tied = 0
    for a in range(len(c)):
        if c[a] == c[best] and p[a] == p[best]:  # interchangeable: an exact tie
            tied[n_tied] = a
            n_tied += 1
        elif c[a] > 0 and abs(w[a] - w[best]) <= err[a] + err[best]:
            return -1  # too close to call in floats
    if tie_code == 2 and n_tied > 1:
        best = tied[np.random.randint(n_tied)]  # noqa: NPY002 (Numba: legacy API only)
    return best


@njit(cache=True)
def _play_from(
    order: np.ndarray, c: np.ndarray, p: np.ndarray, score: int, pos: int, guess: int, tie: int
) -> tuple[int, int]:
    """(score, stop): play greedy from ``pos`` (first guess given); stop = -1 or where unsure.

    ``c`` and ``p`` are updated in place; at a stop they hold the state before that guess.
    """
    types = len(c)
    w = np.zeros(types)
    err = np.zeros(types)
    tied = np.zeros(types, dtype=np.int64)
    for at in range(pos, len(order)):
        if at > pos or guess < 0:
            guess = _greedy_guess(c, p, tie, w, err, tied)
            if guess < 0:
                return score, at
        score += record_answer(c, p, guess, order[at] == guess)
    return score, -1


@njit(cache=True)
def _greedy_games(orders: np.ndarray, deck: np.ndarray, tie: int, seed: int):
    """(scores, c, p, stop) per game; games with stop >= 0 wait for an exact decision."""
    np.random.seed(seed)  # noqa: NPY002 (seeds Numba's own generator from the task)
    n_games = orders.shape[0]
    scores = np.zeros(n_games, dtype=np.int64)
    stops = np.zeros(n_games, dtype=np.int64)
    cs = np.zeros((n_games, len(deck)), dtype=np.int64)
    ps = np.zeros((n_games, len(deck)), dtype=np.int64)
    for g in range(n_games):
        cs[g] = deck
        scores[g], stops[g] = _play_from(orders[g], cs[g], ps[g], 0, 0, -1, tie)
    return scores, cs, ps, stops
