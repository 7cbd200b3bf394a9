"""Tests of the float solver for real decks, ``solvers/high_low/float_layers/`` (family high_low).

Higher/lower as in Norvig (2020), *Flipping Cards: A Guessing Game*, played with a real deck
(ranks x suits, equal ranks can meet); the float path is checked against the exact rational
solver (``deck.py``) and against brute force over every order of tiny decks.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from solvers import solve
from solvers.high_low import deck
from solvers.high_low.float_layers import coding, counting, solver
from solvers.high_low.float_layers.departures import _occurrence
from solvers.high_low.float_layers.sizes import size_estimate
from solvers.registry import validate
from solvers.task_ids import task_id

TINY = [(2, 2), (3, 2), (2, 3), (1, 3), (4, 2), (2, 4)]
SMALL = [(5, 3), (4, 4), (6, 3), (3, 5), (2, 6), (13, 1), (9, 2)]
POLICIES = ("optimal", "majority")


def close(value: float, exact: Fraction, rel: float = 1e-12) -> bool:
    """value equals the exact fraction to ``rel`` relative (or both are zero)."""
    return value == 0 if exact == 0 else abs(value / float(exact) - 1) <= rel


@pytest.mark.parametrize("ranks, suits", TINY + SMALL)
@pytest.mark.parametrize("ties", deck.TIES)
@pytest.mark.parametrize("policy", POLICIES)
def test_float_equals_exact(ranks, suits, ties, policy):
    """P(no wrong call) in float64 = the exact fraction to 1e-12 relative; same states."""
    exact, exact_states = deck.p_perfect(ranks, suits, ties, policy)
    result = solver.solve(ranks, suits, ties, policy)
    assert close(result.p, exact)
    assert result.states == exact_states + 1  # the float layers also hold the empty deck
    if policy == "majority":  # nothing merged: every (counts, card showing) state
        assert result.states == size_estimate(ranks, suits).states


@pytest.mark.slow
@pytest.mark.parametrize("policy", POLICIES)
def test_float_equals_exact_eight_by_four(policy):
    """The largest deck the exact solver holds by default, 8 x 4, ties lose."""
    exact, _ = deck.p_perfect(8, 4, "lose", policy)
    assert close(solver.p_perfect(8, 4, "lose", policy), exact)


EIGHT_CARDS = {(4, 2), (2, 4)}  # brute force takes seconds on these: slow


@pytest.mark.parametrize(
    "ranks, suits",
    [pytest.param(*d, marks=pytest.mark.slow) if d in EIGHT_CARDS else d for d in TINY],
)
@pytest.mark.parametrize("ties", deck.TIES)
def test_float_against_brute_force(ranks, suits, ties):
    """Optimal: plain game-tree search; majority: every order of the labelled cards."""
    brute = deck.brute_force(ranks, suits, ties)[0]
    assert close(solver.p_perfect(ranks, suits, ties), brute)
    majority = deck.majority_by_orders(ranks, suits, ties)
    assert close(solver.p_perfect(ranks, suits, ties, "majority"), majority)


def test_rank_and_unrank_are_inverse():
    """A vector's place in its layer group and back, over every group of 5 x 3."""
    before = counting.rank_table(5, 3)
    sizes = counting.group_sizes(5, 3)
    bits = counting.field_bits(3)
    for m in range(16):
        for length in range(6):
            codes = [
                coding._unrank(t, length, m - length, bits, before, 3)
                for t in range(sizes[m, length])
            ]
            assert codes == sorted(set(codes))
            assert [coding._rank(c, length, m - length, bits, before) for c in codes] == list(
                range(len(codes))
            )


def test_size_estimate_counts_vectors():
    """13 x 4: sum of 4**L vectors (L <= 13) and its largest layer, 8,246,242 vectors."""
    size = size_estimate(13, 4)
    assert size.vectors == sum(4**length for length in range(14))
    assert size.largest_layer == 8_246_242
    assert 1.1e9 < size.states < 1.2e9


# ------------------------------------------------------------------ departures


def exact_departures(ranks: int, suits: int, ties: str) -> tuple[int, int, int]:
    """(states, states where the best call is strictly better than the majority's, those of
    them with unequal cards above and below), exact.

    Every state reachable after the first card, mirror images apart, with the integer
    perfect-order counts of each call from a plain memoised recursion.
    """
    memo: dict = {}
    equal_ok = ties != "lose"

    def sides(state) -> tuple[int, int]:
        """(orders with no miss after calling higher, after calling lower)."""
        higher = lower = 0
        for cards, side, child in deck.children(state):
            v = cards * best(child)
            higher += v if side == "a" or (side == "e" and equal_ok) else 0
            lower += v if side == "b" or (side == "e" and equal_ok) else 0
        return higher, lower

    def best(state) -> int:
        if state not in memo:
            memo[state] = max(sides(state)) if sum(state[0]) + state[1] + sum(state[2]) else 1
        return memo[state]

    seen, todo = set(), list(deck.start_states(ranks, suits))
    while todo:
        state = todo.pop()
        if state not in seen and sum(state[0]) + state[1] + sum(state[2]):
            seen.add(state)
            todo += [child for _, _, child in deck.children(state)]
    departures = uneven = 0
    for state in seen:
        higher, lower = sides(state)
        majority_higher = deck.majority_higher(state)
        departs = (higher > lower and not majority_higher) or (lower > higher and majority_higher)
        departures += departs
        uneven += departs and sum(state[0]) != sum(state[2])
    return len(seen), departures, uneven


@pytest.mark.parametrize("ranks, suits", [(5, 3), (4, 4), (6, 2), (3, 4)])
@pytest.mark.parametrize("ties", ["lose", "win"])
def test_departures_equal_exact_count(ranks, suits, ties):
    """The float path's count of states where optimal departs from majority is exact."""
    states, departures, uneven = exact_departures(ranks, suits, ties)
    result = solver.solve(ranks, suits, ties, departures=True)
    assert (result.checked, result.departures, result.uneven) == (states, departures, uneven)
    assert (departures > 0) == (
        deck.p_perfect(ranks, suits, ties, "majority")[0] < deck.p_perfect(ranks, suits, ties)[0]
    )


def test_departure_records_are_states_of_the_deck():
    """The likeliest departures on 6 x 4: real states, likeliest first, majority call worse."""
    result = solver.solve(6, 4, "lose", departures=True)
    assert result.top and result.departures >= len(result.top)
    occurrences = [d.occurrence for d in result.top]
    assert occurrences == sorted(occurrences, reverse=True) and 0 < occurrences[0] < 1
    for d in result.top:
        below, same, above = d.state
        assert 0 < d.loss <= 1 and 0 < d.cards_left < 24 and same < 4
        assert d.call == ("lower" if sum(above) >= sum(below) else "higher")
    assert result.top_uneven and all(sum(d.state[0]) != sum(d.state[2]) for d in result.top_uneven)


def test_occurrence_is_a_probability_per_layer():
    """Summed over every state with m cards left, the chance a deal passes through is 1."""
    ranks, suits = 4, 3
    lgam = np.array([math.lgamma(i + 1) for i in range(ranks * suits + 1)])
    bits = counting.field_bits(suits)
    for m in range(1, ranks * suits):
        total = 0.0
        for length in range(ranks + 1):
            for code in range(1 << (bits * length)):
                counts = [((code >> (bits * j)) & ((1 << bits) - 1)) + 1 for j in range(length)]
                if max(counts, default=1) > suits or sum(counts) != m:
                    continue
                for pos in range(length + 1):  # gaps
                    if length < ranks:
                        total += _occurrence(ranks, suits, bits, m, length, code, pos, True, lgam)
                for pos in range(length):  # entries
                    if counts[pos] < suits:
                        total += _occurrence(ranks, suits, bits, m, length, code, pos, False, lgam)
        assert total == pytest.approx(1.0, rel=1e-12)


# ------------------------------------------------------------------ the family's method=float


def test_method_float_row_equals_exact_row():
    """solve() with method=float on a real deck: the exact row's P, departures for optimal."""
    for strategy in POLICIES:
        task = dict(family="high_low", ranks=5, suits=3, ties="lose", strategy=strategy)
        exact = solve(task)[0]
        row = solve({**task, "method": "float"})[0]
        assert row["p_perfect"] == pytest.approx(exact["p_perfect"], rel=1e-12)
        assert row["n_states"] == exact["n_states"] + 1
        assert row["expected_correct_exact"] == exact["expected_correct_exact"]
    assert row["departures"] is None  # majority
    optimal = solve({**task, "method": "float", "strategy": "optimal"})[0]
    assert optimal["departures"] == exact_departures(5, 3, "lose")[1] > 0
    top = json.loads(optimal["departures_top"])
    assert top and {"below", "same", "above", "occurrence", "loss", "call"} <= set(top[0])


def test_float_keeps_existing_task_ids():
    """A real-deck exact task keeps its id, ``method=exact`` given or not; the float method
    is another task."""
    task = validate({"family": "high_low", "ranks": 5, "suits": 3})
    assert task["method"] == "exact"
    assert task_id(task) != task_id(validate({**task, "method": "float"}))
    assert task_id(task) == task_id(
        validate({"family": "high_low", "ranks": 5, "suits": 3, "method": "exact", "ties": "lose"})
    )


@pytest.mark.parametrize("ranks, suits", [(13, 4), (14, 4), (15, 4), (13, 5), (27, 2)])
def test_large_decks_are_accepted_by_the_float_path(ranks, suits):
    """No fixed size limit at validation: a deck's memory is weighed against the budget of
    where it runs (Scheduling.needs; tests/test_high_low_checkpoints.py)."""
    task = validate({"family": "high_low", "ranks": ranks, "suits": suits, "method": "float"})
    assert task["method"] == "float"


# ------------------------------------------------------------------ Monte Carlo and summary


@pytest.mark.parametrize("ties", deck.TIES)
def test_monte_carlo_agrees_with_float_majority(ties):
    """The importance-sampled Monte Carlo behind the README's 13 x 4 figures lands within
    three standard errors of the majority rule's value computed exactly on 8 x 4."""
    exact = solver.p_perfect(8, 4, ties, "majority")
    task = dict(family="high_low", ranks=8, suits=4, ties=ties, strategy="majority")
    mc = solve({**task, "method": "monte_carlo", "n_games": 20_000})[0]
    assert 0 < mc["p_perfect_se"] < 0.05 * exact
    assert abs(mc["p_perfect"] - exact) < 3 * mc["p_perfect_se"]


def test_summary_shows_gap_and_departures(tmp_path):
    """The study summary: optimum, majority and gap per tie rule; where they part."""
    import pandas as pd

    from solvers.high_low import summary
    from solvers.registry import family_summary

    rows = [
        solve(dict(family="high_low", ranks=5, suits=3, ties=t, strategy=s, method="float"))[0]
        for t in ("lose", "win")
        for s in POLICIES
    ]
    rows.append(
        solve(
            dict(
                family="high_low",
                ranks=5,
                suits=3,
                strategy="majority",
                n_games=2000,
                method="monte_carlo",
            )
        )[0]  # fmt: skip
    )
    frame = pd.DataFrame(rows)
    text = family_summary("high_low")(frame, tmp_path)
    assert "departs from the majority rule" in text and "majority_loss" in text
    gaps = summary.gap_table(frame).set_index("ties")
    for ties in ("lose", "win"):
        exact_gap = deck.p_perfect(5, 3, ties)[0] - deck.p_perfect(5, 3, ties, "majority")[0]
        assert gaps.loc[ties, "gap"] == pytest.approx(float(exact_gap), rel=1e-9)
    assert abs(gaps.loc["lose", "mc_z"]) < 4
    counts = summary.departure_table(frame).set_index("ties")
    assert counts.loc["lose", "departures"] == exact_departures(5, 3, "lose")[1]
    plot = tmp_path / summary.TIE_PLOT  # optimal against majority per tie rule, drawn and linked
    assert plot.read_bytes().startswith(b"\x89PNG") and f"/{summary.TIE_PLOT})" in text


def test_next_code_walks_a_group_in_order():
    """_next from a group's first code visits exactly the codes _unrank gives, in order."""
    before, bits = counting.rank_table(6, 4), counting.field_bits(4)
    sizes = counting.group_sizes(6, 4)
    for m in range(1, 25):
        for length in range(1, 7):
            if not sizes[m, length]:
                continue
            code, walked = coding._unrank(0, length, m - length, bits, before, 4), []
            while code >= 0:
                walked.append(code)
                code = coding._next(code, length, bits, 4)
            expected = [
                coding._unrank(t, length, m - length, bits, before, 4)
                for t in range(sizes[m, length])
            ]
            assert walked == expected


def test_full_deck_study_keeps_its_monte_carlo_seeds():
    """conf/study/high_low_full_deck.yaml: 6 float tasks added, the Monte Carlo tasks (ties
    lose, win, push; 10^6 games) hashed at version 1 as the stored tasks were (their seeds):
    they draw the games of the stored rows."""
    from pathlib import Path

    import yaml

    from pipeline.study import plan
    from solvers.task_ids import seed_id

    path = Path(__file__).resolve().parent.parent / "conf/study/high_low_full_deck.yaml"
    planned = plan(yaml.safe_load(path.read_text()))
    ids = {seed_id(t.task) for t in planned}
    assert {"504d7489f3e9b3e82dff", "606ee7cc4eb3f6a7f775", "6541f5cde6364d7590a9"} <= ids
    methods = sorted((t.task["method"], t.task["strategy"]) for t in planned)
    assert methods.count(("float", "optimal")) == methods.count(("float", "majority")) == 3


def test_push_reuses_the_win_solution():
    """Ties win and push give the same perfect games: one float solve serves both rows."""
    task = dict(family="high_low", ranks=6, suits=3, method="float")
    win = solve({**task, "ties": "win"})[0]
    push = solve({**task, "ties": "push"})[0]
    assert push["p_perfect"] == win["p_perfect"] and push["departures"] == win["departures"]
    assert push["p_perfect"] == pytest.approx(float(deck.p_perfect(6, 3, "push")[0]), rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize(
    "ties, published, se", [("lose", 2.924e-8, 7.5e-11), ("win", 1.727e-6, 5e-9)]
)
def test_full_deck_majority_agrees_with_published_monte_carlo(ties, published, se):
    """This project's README (study high_low_full_deck, 10^6 importance-sampled games): the
    majority rule on 13 x 4 wins 2.924e-8 +- 7.5e-11 (ties lose), 1.727e-6 +- 5e-9 (ties
    win or push).  The float layers' value is within three standard errors (plus rounding of
    the printed figure)."""
    majority = solver.solve(13, 4, ties, "majority").p
    rounding = 5e-4 * 10 ** math.floor(math.log10(published))
    assert abs(majority - published) < 3 * se + rounding
