"""card_guessing, partial feedback: the compiled (float) info move of info_policy/.

Checks: the composition posterior behind info (the generating-function identity for the past
"no" slots against yes_no.arrangements; the float filter against the exact posterior), its
Sharma-Mittal entropies against solvers.entropy, and Monte Carlo play of the compiled path
against the exact Python path on the same shuffled decks.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from solvers import entropy, solve
from solvers.card_guessing.exact import belief_players, entropy_weighted, yes_no
from solvers.card_guessing.info_policy import moves, posterior
from solvers.card_guessing.info_policy.monte_carlo import InfoPlay
from solvers.card_guessing.simulation import shuffled_decks

FAMILY = "card_guessing"
POINTS = [(1, 1), (2, 0.5), (0, 1), (0, 0), (math.inf, 2), (0.7, 1.3), (3, 1), (1.2, 4), (0.3, 1)]


def states_in_play(deck, n_orders: int, seed: int):
    """Labelled states met while naming random possible types on shuffled orders of ``deck``."""
    rng = np.random.default_rng(seed)
    out = []
    for order in shuffled_decks.shuffled_orders(deck, n_orders, rng).tolist():
        state = yes_no.initial_state(deck)
        for card in order:
            out.append(state)
            possible = [a for a, y in enumerate(yes_no.yes_counts(state)) if y]
            a = possible[int(rng.integers(len(possible)))]
            state = (yes_no.after_yes if a == card else yes_no.after_no)(state, a)
    return out


# ------------------------------------------------------- the posterior and its identity


def past_fillings(m, p, free) -> int:
    """[x^m] prod_j (S - x_j)^{p_j} S^free with S = sum_i x_i: exact integers, by expansion."""
    r = len(m)
    poly = Counter({(0,) * r: 1})
    factors = [[i for i in range(r) if i != j] for j in range(r) for _ in range(p[j])]
    factors += [list(range(r))] * free
    for allowed in factors:  # multiply by the sum of the allowed x_i, cut beyond m
        out: Counter = Counter()
        for mono, coef in poly.items():
            for i in allowed:
                if mono[i] < m[i]:
                    out[mono[:i] + (mono[i] + 1,) + mono[i + 1 :]] += coef
        poly = out
    return poly[tuple(m)]


def test_generating_function_counts_the_fillings_of_the_past_slots():
    """A(m, p) = [x^m] prod_j (S - x_j)^{p_j} S^F equals yes_no.arrangements on small cases."""
    for m in itertools.product(range(4), repeat=3):
        for p in itertools.product(range(3), repeat=3):
            free = sum(m) - sum(p)
            if free < 0:
                continue
            pairs = tuple(zip(m, p, strict=True))
            # arrangements() counts the slots refused by i as p_i, the rest free
            assert past_fillings(m, p, free) == yes_no.arrangements(pairs), (m, p)


def exact_posterior_by_identity(state) -> dict:
    """P(k) proportional to multinomial(n; k) A(c - k, p), A from :func:`past_fillings`."""
    n, pairs = state
    c = [x for x, _ in pairs]
    p = [y if x else 0 for x, y in pairs]
    free = sum(c) - n - sum(p)
    weights = {}
    for k in itertools.product(*(range(x + 1) for x in c)):
        if sum(k) != n:
            continue
        multinomial = math.factorial(n) // math.prod(math.factorial(x) for x in k)
        a = past_fillings([x - y for x, y in zip(c, k, strict=True)], p, free)
        if a:
            weights[k] = multinomial * a
    total = sum(weights.values())
    return {k: Fraction(v, total) for k, v in weights.items()}


@pytest.mark.parametrize("deck", [(3, 3, 3), (5, 3, 2, 1), (2, 2, 2, 2), (4, 1)], ids=str)
def test_float_posterior_is_the_exact_composition_posterior(deck):
    """The float filter's posterior equals yes_no.composition_posterior (and the identity)."""
    for state in states_in_play(deck, 6, seed=1):
        exact = yes_no.composition_posterior(state)
        ks, probs = posterior.float_posterior(state)
        got = {tuple(k): q for k, q in zip(ks.tolist(), probs.tolist(), strict=True)}
        assert set(got) == set(exact), state
        for k, q in exact.items():
            assert got[k] == pytest.approx(float(q), rel=1e-13), (state, k)
    for state in states_in_play(deck, 1, seed=2)[:8]:
        assert exact_posterior_by_identity(state) == yes_no.composition_posterior(state)


@pytest.mark.parametrize("deck", [(3, 3, 3), (5, 3, 2, 1), (4, 4, 2), (2, 2, 2, 2)], ids=str)
def test_float_posterior_entropy_equals_the_exact_one(deck):
    """H_{r,t} from the float posterior = entropy.sharma_mittal of the exact posterior, 1e-12."""
    for state in states_in_play(deck, 5, seed=3):
        exact = [float(q) for q in yes_no.composition_posterior(state).values()]
        for r, t in POINTS:
            for base in (2.0, math.e):
                want = entropy.sharma_mittal(exact, r, t, base, normalize=True)
                got = moves.float_posterior_entropy(state, r, t, base)
                assert got == pytest.approx(want, rel=1e-12, abs=1e-14), (state, r, t)


def test_tied_mask_flags_scores_at_the_tie_threshold():
    """Scores clearly apart or clearly tied decide; one within the bound of the threshold
    (best - 1e-9) is unsure; impossible types (-inf) never count."""
    err = np.full(3, 1e-12)
    scores = np.array([0.5, 0.5 - 1e-12, -np.inf])
    assert moves._tied_mask(scores, err, entropy_weighted.TIE_TOLERANCE) == 0b11
    scores = np.array([0.5, 0.4, 0.1])
    assert moves._tied_mask(scores, err, entropy_weighted.TIE_TOLERANCE) == 0b1
    scores = np.array([0.5, 0.5 - 1e-9, 0.1])
    assert moves._tied_mask(scores, err, entropy_weighted.TIE_TOLERANCE) == moves.UNSURE


# ----------------------------------------------------------------------- Monte Carlo


def python_play(deck, orders, gamma, r, t, base, tie_break):
    """Scores of the exact Python info player on the given orders."""
    pl = belief_players.StatePlayer(entropy_weighted.info_chooser(gamma, r, t, base, tie_break))
    memo: dict = {}
    return [shuffled_decks.play_one(o, deck, pl, None, memo) for o in orders.tolist()]


@pytest.mark.parametrize(
    ("deck", "gamma", "r", "t", "tie_break"),
    [
        ((3, 3, 2, 2), 0.15, 1, 1, "lowest"),
        ((5, 3, 2, 1), 0.6, 2, 0.5, "highest"),
        ((4, 4, 4), 0.3, math.inf, 1, "lowest"),
        ((3, 3, 3), 0.0, 1, 1, "highest"),
        ((2, 2, 2, 1), 1.0, 0, 1, "lowest"),
    ],
    ids=str,
)
def test_compiled_info_plays_exactly_the_exact_policy(deck, gamma, r, t, tie_break):
    """Same shuffled decks, same scores as the Python info player (lowest/highest ties)."""
    fast, play = shuffled_decks.info_scores(
        deck, 300, np.random.default_rng(5), gamma, r, t, 2.0, tie_break
    )
    orders = shuffled_decks.shuffled_orders(deck, 300, np.random.default_rng(5))
    assert fast.tolist() == python_play(deck, orders, gamma, r, t, 2.0, tie_break)
    assert play.largest_support >= 1


def test_unsure_decisions_go_to_the_exact_path_and_play_stays_exact():
    """With the rounding bounds widened a million-fold many decisions are taken exactly (and
    the games replayed): the scores are still those of the exact policy."""
    deck = (4, 3, 2, 2)
    orders = shuffled_decks.shuffled_orders(deck, 200, np.random.default_rng(6))
    seeds = np.arange(200)
    play = InfoPlay(deck, 0.15, err_scale=1e6)
    assert play.scores(orders, seeds).tolist() == python_play(deck, orders, 0.15, 1, 1, 2, "lowest")
    assert play.exact_calls > 0


def test_uniform_ties_agree_with_the_exact_value():
    """Uniform tie-breaks (random among the tied types, seeded per game): within 4 SE."""
    task = {"family": FAMILY, "deck": [3, 3, 3], "strategy": "info", "tie_break": "uniform"}
    (exact,) = solve(task)
    (mc,) = solve({**task, "method": "monte_carlo", "n_games": 4000})
    assert abs(mc["expected_score"] - exact["expected_score"]) < 4 * mc["std_error"]


def test_monte_carlo_rows_of_info_use_the_compiled_path(monkeypatch):
    """yes_no_tasks sends info Monte Carlo to shuffled_decks.info_scores, not the Python players."""

    def refuse(*args, **kwargs):
        raise AssertionError("the Python path was used")

    monkeypatch.setattr(shuffled_decks, "play_games", refuse)
    task = {"family": FAMILY, "deck": [13] * 4, "strategy": "info", "gamma": 0.15}
    (out,) = solve({**task, "method": "monte_carlo", "n_games": 100})
    assert out["status"] == "ok" and 10 < out["expected_score"] < 25 and out["std_error"] > 0


def test_a_posterior_beyond_the_support_limit_is_a_clear_error():
    play = InfoPlay([4] * 13, 0.15, max_support=200)
    orders = shuffled_decks.shuffled_orders([4] * 13, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="max_support=200"):
        play.scores(orders, np.zeros(1, np.int64))


def test_info_monte_carlo_on_13_ranks_is_refused_before_it_runs():
    """13 ranks x 4: exact posteriors can hold 94,309,099 compositions; refused up front,
    naming the deck, the bound and the limit (the run never starts)."""
    from solvers import TaskError

    task = {"family": FAMILY, "deck": [4] * 13, "strategy": "info", "method": "monte_carlo"}
    with pytest.raises(TaskError) as err:
        solve({**task, "n_games": 10})
    assert err.value.key == "deck" and "94,309,099" in str(err.value)
    assert "200,000" in str(err.value)


@pytest.mark.parametrize("deck", [(1, 1), (2, 3), (3, 3, 3), (2, 1, 2, 1)])
def test_largest_posterior_is_the_largest_slice_of_the_composition_box(deck):
    """Brute force: count the compositions k <= c with each sum n; the bound is the largest."""
    boxes = itertools.product(*(range(c + 1) for c in deck))
    sizes = Counter(sum(k) for k in boxes)
    assert entropy_weighted.largest_posterior(deck) == max(sizes.values())


def test_multinomial_helper_sanity():
    """The brute helper's multinomial-free slots: no "no" at all gives a multinomial."""
    assert past_fillings([2, 1, 1], [0, 0, 0], 4) == comb(4, 2) * 2


# ------------------------------------------------------------------- method: float


FLOAT_CASES = [
    ({"gamma": 0.15}, [(3, 3, 3), (5, 3, 2, 1), (4, 4, 2), (2, 2, 2, 2), (3, 3, 3, 3)]),
    ({"gamma": 0.6, "entropy_r": 2, "entropy_t": 0.5, "tie_break": "highest"}, [(4, 4, 4)]),
    ({"gamma": 0.3, "entropy_r": math.inf, "log_base": math.e}, [(5, 3, 2, 1), (4, 3, 3)]),
    ({"gamma": 1.0, "entropy": "hartley"}, [(3, 3, 2, 1)]),
    ({"gamma": 0.0}, [(4, 4, 4), (6, 2, 1)]),
]


@pytest.mark.parametrize(("params", "decks"), FLOAT_CASES, ids=str)
def test_float_info_equals_the_exact_evaluation(params, decks):
    """method=float for info: expected score, variance and pmf equal the exact rows (1e-12),
    and it visits exactly the labelled states of the exact evaluation."""
    for deck in decks:
        task = {"family": FAMILY, "deck": list(deck), "strategy": "info", **params}
        (exact,) = solve(task)
        (got,) = solve({**task, "method": "float"})
        assert got["status"] == "ok" and got["expected_score_exact"] is None
        assert got["expected_score"] == pytest.approx(exact["expected_score"], rel=1e-12)
        assert got["score_variance"] == pytest.approx(exact["score_variance"], rel=1e-12)
        assert got["score_pmf"] == pytest.approx(exact["score_pmf"], abs=1e-13)
        assert got["n_states"] == exact["n_states"]


def test_float_info_goes_beyond_the_exact_solver():
    """(6,6,6,6) in floats (the exact info evaluation is far slower there); a sane value
    between greedy's and the optimum's neighbourhood, distribution summing to one."""
    (got,) = solve(
        {"family": FAMILY, "deck": [6] * 4, "strategy": "info", "gamma": 0.15, "method": "float"}
    )
    assert sum(got["score_pmf"]) == pytest.approx(1.0, abs=1e-12)
    assert 7.5 < got["expected_score"] < 8.0 and got["n_states"] > 10_000


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ({"tie_break": "uniform"}, "tie_break"),
        ({"workers": 2}, "workers"),
        ({"deck": [1] * 70}, "deck"),
    ],
)
def test_float_info_refuses_what_it_cannot_do(params, key):
    from solvers import TaskError

    task = {"family": FAMILY, "deck": [3, 3, 3], "strategy": "info", "method": "float"}
    with pytest.raises(TaskError) as err:
        solve({**task, **params})
    assert err.value.key == key


def test_suits52_summary_gives_the_best_info_over_the_gamma_grid(tmp_path):
    """The suits52 table: best info over gamma per deck.  On (3,3,3) info with Shannon bits
    reaches the optimum 2383/560 at gamma = 0.15 (Gural, Simper & So 2019, section 5.6), not at 0
    or 0.5."""
    import pandas as pd

    from solvers.card_guessing.summary import suits52

    rows = []
    for deck in ([3, 3, 3], [2, 2, 2, 2]):
        base = {"family": FAMILY, "deck": deck, "method": "float"}
        rows += solve({**base, "strategy": "optimal"}) + solve({**base, "strategy": "greedy"})
        for gamma in (0.0, 0.15, 0.5):
            rows += solve({**base, "strategy": "info", "gamma": gamma})
    table = suits52.gap_table(pd.DataFrame(rows)).set_index(["r", "m"])
    assert table.loc[(3, 3), "best_info"] == pytest.approx(2383 / 560, rel=1e-12)
    assert table.loc[(3, 3), "best_gamma"] == 0.15 and table.loc[(3, 3), "gammas"] == 3
    text = "\n".join(suits52.sections(pd.DataFrame(rows), tmp_path))
    assert "best_info" in text and (tmp_path / "card_guessing_suits_gap.png").stat().st_size
