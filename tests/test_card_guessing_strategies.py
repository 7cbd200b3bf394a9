"""card_guessing, partial feedback: the info strategy and the playable strategies
(exact/entropy_weighted.py, exact/belief_players.py), exactly and by Monte Carlo
(simulation/shuffled_decks.py).

Published figures are from Gural, Simper & So (2019, "Information Theory in a
Card-Guessing Game").
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import factorial, prod

import numpy as np
import pytest

from solvers import TaskError, solve, task_ids
from solvers.card_guessing.brute_force import yes_no_orders
from solvers.card_guessing.exact import belief_players, entropy_weighted, yes_no
from solvers.card_guessing.simulation import shuffled_decks
from solvers.card_guessing.tasks import yes_no_tasks
from solvers.registry import validate
from tests.helpers.decks import compositions

FAMILY = "card_guessing"


def row(deck, strategy, **params):
    """The single row of one task."""
    (out,) = solve({"family": FAMILY, "deck": list(deck), "strategy": strategy, **params})
    return out


def exact_value(deck, strategy, **params) -> Fraction:
    return Fraction(row(deck, strategy, **params)["expected_score_exact"])


def paper_example_state():
    """Gural, Simper & So (2019), section 2.3: (3,3,3) after yes to a, three no to b, then two yes
    to b."""
    state = yes_no.initial_state((3, 3, 3))
    for guess, ok in [(0, True), (1, False), (1, False), (1, False), (1, True), (1, True)]:
        state = (yes_no.after_yes if ok else yes_no.after_no)(state, guess)
    return state


def as_brute_policy(deck, player):
    """A Player as a brute-force Policy: replay the history to get its state and belief."""

    def policy(history, belief, position):
        state, own = yes_no.initial_state(deck), player.start(tuple(deck))
        for guess, ok in history:
            state = (yes_no.after_yes if ok else yes_no.after_no)(state, guess)
            own = player.update(own, guess, ok)
        return player.guesses(state, own)[0]

    return policy


def task_player(deck, strategy, **params):
    task = validate({"family": FAMILY, "deck": list(deck), "strategy": strategy, **params})
    return yes_no_tasks.player(task)


# ------------------------------------------------------------------ published figures


def test_info_with_shannon_bits_at_gamma_015_reaches_the_optimum_on_333():
    """Gural, Simper & So (2019), section 5.6 (and README known traps: entropy in bits):
    2383/560."""
    assert exact_value((3, 3, 3), "info", gamma=0.15, log_base=2) == Fraction(2383, 560)
    assert exact_value((3, 3, 3), "optimal") == Fraction(2383, 560)


def test_info_at_gamma_zero_is_greedy():
    """Gural, Simper & So (2019), sections 5.4 and 5.6: gamma = 0 is greedy, 475/112 on (3,3,3)
    (lowest ties)."""
    assert exact_value((3, 3, 3), "info", gamma=0) == Fraction(475, 112)
    for deck in [(4, 4, 4), (3, 2, 2), (2, 2, 2, 2), (5, 1)]:
        for tie_break in ("lowest", "highest", "uniform"):
            got = exact_value(deck, "info", gamma=0, tie_break=tie_break)
            assert got == exact_value(deck, "greedy", tie_break=tie_break), (deck, tie_break)


def test_conditional_entropies_of_the_paper_s_example():
    """Gural, Simper & So (2019), section 2.3: H(c_8 | X_7(a)) = 1.777, 1.079, 1.643 for a, b, c.

    They are Shannon entropies in bits of the composition of the cards still to come after
    the answer, averaged over the answer: P(yes) H(after yes) + P(no) H(after no).
    """
    state = paper_example_state()
    h = entropy_weighted.posterior_entropy(1.0, 1.0, 2.0)
    probs = yes_no.next_card_probabilities(state)
    got = [entropy_weighted.expected_posterior_entropy(state, a, probs[a], h) for a in range(3)]
    assert [round(x, 3) for x in got] == [1.777, 1.079, 1.643]


def test_playable_strategies_match_the_paper_to_its_four_decimals():
    """Gural, Simper & So (2019), section 6: count tracker 4.2387, constant decrement 0.55: 4.2482
    on (3,3,3).

    Exactly: 7121/1680 = 4.238690... and 2379/560 = 4.248214...; the source's numbers are
    these rounded (its simulation agreed to four decimals).
    """
    tracker = exact_value((3, 3, 3), "count_tracker")
    decrement = exact_value((3, 3, 3), "constant_decrement", decrement=0.55)
    assert tracker == Fraction(7121, 1680) and round(float(tracker), 4) == 4.2387
    assert decrement == Fraction(2379, 560) and round(float(decrement), 4) == 4.2482


def test_playable_rules_left_open_by_the_paper_do_not_matter_on_333():
    """Clipping at zero and skipping exhausted types leave both values unchanged on (3,3,3)."""
    for clip in (True, False):
        for skip in (True, False):
            rules = {"clip": clip, "skip_exhausted": skip}
            mean = _mean(
                belief_players.exact_distribution((3, 3, 3), belief_players.count_tracker(**rules))
            )
            assert mean == Fraction(7121, 1680)
            pl = belief_players.constant_decrement(0.55, **rules)
            assert _mean(belief_players.exact_distribution((3, 3, 3), pl)) == Fraction(2379, 560)


def _mean(result):
    pmf, _ = result
    return sum(k * q for k, q in enumerate(pmf))


# ------------------------------------------------------------ brute-force cross-checks

SMALL = [d for n in range(2, 7) for d in compositions(n)]
CASES = [
    ("info", {"gamma": 0.15}),
    ("info", {"gamma": 0.6, "entropy_r": 2, "entropy_t": 0.5, "tie_break": "highest"}),
    ("info", {"gamma": 1.0, "entropy_r": math.inf, "log_base": math.e}),
    ("count_tracker", {}),
    ("constant_decrement", {"decrement": 0.3, "tie_break": "highest"}),
]


@pytest.mark.parametrize("deck", SMALL, ids=str)
def test_exact_values_equal_play_on_every_order(deck):
    """Every deck of 2..6 cards: value and pmf equal playing the policy on every deck order."""
    for strategy, params in CASES:
        got = row(deck, strategy, **params)
        mean, pmf = yes_no_orders.policy_value(
            deck, as_brute_policy(deck, task_player(deck, strategy, **params))
        )
        assert Fraction(got["expected_score_exact"]) == mean, (strategy, params)
        assert got["score_pmf"] == pytest.approx([float(q) for q in pmf], abs=1e-15)


@pytest.mark.parametrize("deck", [(3, 3, 3), (4, 2, 1), (2, 2, 2, 1)], ids=str)
def test_info_through_players_equals_the_evaluation(deck):
    """Two exact evaluations of info (Evaluation chooser; Player memo) agree, with uniform."""
    for tie_break in ("lowest", "uniform"):
        pl = task_player(deck, "info", gamma=0.3, tie_break=tie_break)
        assert _mean(belief_players.exact_distribution(deck, pl)) == exact_value(
            deck, "info", gamma=0.3, tie_break=tie_break
        )


def test_info_uses_the_posterior_of_both_answers():
    """In the source's example state info with a large gamma names b (the informative guess),
    and with gamma = 0 names c (the likeliest)."""
    state = paper_example_state()
    ys = yes_no.yes_counts(state)
    assert entropy_weighted.info_chooser(0.0)(state, ys) == [2]
    assert entropy_weighted.info_chooser(1.0)(state, ys) == [1]


def test_float_noise_does_not_break_exact_ties():
    """Scores equal up to rounding are tied, so the tie-break decides (documented tolerance)."""
    assert entropy_weighted.tied_best([0.5, 0.5 + 1e-15, 0.2]) == [0, 1]
    assert entropy_weighted.tied_best([0.5, 0.5 + 1e-6, 0.2]) == [1]
    # symmetric deck: the first guess is a tie among all three types
    chooser_low = entropy_weighted.info_chooser(0.15, tie_break="lowest")
    chooser_high = entropy_weighted.info_chooser(0.15, tie_break="highest")
    start = yes_no.initial_state((3, 3, 3))
    ys = yes_no.yes_counts(start)
    assert chooser_low(start, ys) == [0] and chooser_high(start, ys) == [2]


# -------------------------------------------------------------------------- Monte Carlo


@pytest.mark.parametrize(
    ("deck", "strategy", "params"),
    [
        ((3, 3, 3), "greedy", {}),
        ((4, 3, 2), "greedy", {"tie_break": "uniform"}),
        ((2, 2, 2, 2), "greedy", {"tie_break": "highest"}),
        ((3, 3, 3), "info", {"gamma": 0.15}),
        ((3, 3, 3), "optimal", {}),
        ((3, 3, 3), "count_tracker", {}),
        ((4, 2, 2), "constant_decrement", {}),
    ],
    ids=str,
)
def test_monte_carlo_agrees_with_the_exact_value(deck, strategy, params):
    """Within 4 standard errors; the histogram sums to one and matches the exact pmf."""
    exact = row(deck, strategy, **params)
    mc = row(deck, strategy, method="monte_carlo", n_games=4000, **params)
    assert mc["std_error"] > 0 and mc["expected_score_exact"] is None
    assert abs(mc["expected_score"] - exact["expected_score"]) < 4 * mc["std_error"]
    assert sum(mc["score_pmf"]) == pytest.approx(1.0)
    assert len(mc["score_pmf"]) == sum(deck) + 1
    assert mc["score_variance"] == pytest.approx(exact["score_variance"], rel=0.15)


def test_monte_carlo_games_are_seeded_by_the_task_id(monkeypatch):
    """The same task plays the same games, also written with its default tie-break (the same
    id); seeded by another task's id instead, it plays other games."""
    task = {"family": FAMILY, "deck": [3, 3, 3], "strategy": "greedy", "method": "monte_carlo"}
    task["n_games"] = 500

    def games(**params):
        (out,) = solve({**task, **params})
        return out["expected_score"], out["score_pmf"]

    first = games()
    assert games() == first and games(tie_break="lowest") == first
    another = validate({**task, "n_games": 501})
    monkeypatch.setattr(yes_no_tasks, "task_rng", lambda _: task_ids.task_rng(another))
    assert games() != first


def test_float_yes_weights_equal_exact_counts_within_their_bound():
    """The fast float arrangement ratios match exact integer counts on states met in play of
    52-card decks (13 ranks x 4, 4 suits x 13), and the rounding bound holds."""
    rng = np.random.default_rng(7)
    for deck in ([4] * 13, [13] * 4, [6, 5, 3, 1]):
        for order in shuffled_decks.shuffled_orders(deck, 3, rng).tolist():
            state = yes_no.initial_state(deck)
            for pos, card in enumerate(order):
                c = [x for x, _ in state[1]]
                p = [y for _, y in state[1]]
                w, err = shuffled_decks.float_yes_weights(c, p)
                scale = Fraction(prod(factorial(x) for x in c), factorial(sum(c) - 1))
                for a, y in enumerate(yes_no.yes_counts(state)):
                    assert abs(Fraction(w[a]) - y * scale) <= Fraction(err[a])
                guess = int(np.argmax(w))
                hit = guess == card
                state = (yes_no.after_yes if hit else yes_no.after_no)(state, guess)
                if pos > 30:
                    break


def test_fast_greedy_plays_exactly_greedy():
    """The Numba path's scores equal exact greedy play (Python) on the same shuffled decks."""
    deck = [3, 3, 2, 2]
    for tie_break in ("lowest", "highest"):
        fast, _ = shuffled_decks.greedy_scores(deck, 300, np.random.default_rng(3), tie_break)
        orders = shuffled_decks.shuffled_orders(deck, 300, np.random.default_rng(3))
        pl = belief_players.StatePlayer(yes_no.greedy_chooser(tie_break))
        slow = [shuffled_decks.play_one(o, deck, pl, None, {}) for o in orders.tolist()]
        assert fast.tolist() == slow


# ------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ({"strategy": "info", "gamma": -0.1}, "gamma"),
        ({"strategy": "info", "gamma": math.nan}, "gamma"),
        ({"strategy": "info", "gamma": math.inf}, "gamma"),
        ({"strategy": "info", "gamma": "lots"}, "gamma"),
        ({"strategy": "info", "entropy_r": -1}, "entropy_r"),
        ({"strategy": "info", "entropy_r": math.nan}, "entropy_r"),
        ({"strategy": "info", "entropy_t": -0.5}, "entropy_t"),
        ({"strategy": "info", "entropy_t": math.nan}, "entropy_t"),
        ({"strategy": "info", "log_base": 1}, "log_base"),
        ({"strategy": "info", "entropy": "boltzmann"}, "entropy"),
        ({"strategy": "info", "entropy": "collision", "entropy_r": 3}, "entropy_r"),
        ({"strategy": "greedy", "gamma": 0.1}, "gamma"),
        ({"strategy": "constant_decrement", "decrement": -1}, "decrement"),
        ({"strategy": "greedy", "method": "monte_carlo", "n_games": 0}, "n_games"),
        ({"strategy": "greedy", "method": "monte_carlo"}, "n_games"),
        ({"strategy": "greedy", "n_games": 10}, "n_games"),
        ({"strategy": "greedy", "method": "simulate"}, "method"),
    ],
)
def test_bad_parameters_name_the_key(params, key):
    with pytest.raises(TaskError) as err:
        solve({"family": FAMILY, "deck": [3, 3, 3], **params})
    assert err.value.key == key and key in str(err.value)


def test_unknown_preset_lists_the_valid_ones_and_presets_set_r_and_t():
    with pytest.raises(TaskError, match="shannon"):
        solve({"family": FAMILY, "deck": [3, 3], "strategy": "info", "entropy": "nope"})
    out = row((3, 3, 3), "info", entropy="collision")
    assert (out["entropy_r"], out["entropy_t"], out["entropy"]) == (2.0, 1.0, "collision")


def test_min_entropy_order_infinity_is_allowed():
    out = row((3, 3, 3), "info", entropy_r=math.inf, gamma=0.15)
    assert out["entropy_r"] == math.inf and out["status"] == "ok"


def test_rows_carry_the_new_columns():
    out = row((3, 3, 3), "constant_decrement")
    assert out["decrement"] == 0.55 and out["gamma"] is None and out["std_error"] is None
    assert out["n_games"] is None and out["score_variance"] > 0
    out = row((3, 3, 3), "info")
    assert (out["gamma"], out["entropy_r"], out["entropy_t"], out["log_base"]) == (
        0.15,
        1.0,
        1.0,
        2.0,
    )


def test_compositions_are_exactly_the_capped_ones():
    """yes_no._compositions (pruned so big decks' posteriors stay cheap) lists every capped
    composition once."""
    import itertools

    for caps in ([3, 0, 2], [4] * 5, [1, 2, 3], [2, 2]):
        for n in range(sum(caps) + 2):
            got = sorted(map(tuple, yes_no._compositions(n, caps)))
            ranges = [range(c + 1) for c in caps]
            assert got == sorted(c for c in itertools.product(*ranges) if sum(c) == n)


def test_monte_carlo_runs_on_52_card_decks_and_refuses_optimal_there():
    """Greedy plays full 52-card decks (13 ranks x 4, 4 suits x 13); the optimal policy needs
    the exact solver, so it is refused there before any work."""
    for deck in ([4] * 13, [13] * 4):
        out = row(deck, "greedy", method="monte_carlo", n_games=200)
        assert 1 <= out["expected_score"] <= 52 and out["std_error"] > 0
    with pytest.raises(TaskError) as err:
        row([13] * 4, "optimal", method="monte_carlo", n_games=10)
    assert err.value.key == "deck"
