"""Family no_repeat: Gural, Simper & So (2019)'s conjecture 3.1 (distinct cards, naming a refused
card again).

Source: Gural, Simper & So (2019), *Information Theory in a Card-Guessing Game*, section 3.1
(the conjecture, checked there for N <= 300; figure 1) and appendix A (the case analysis).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest

from solvers import TaskError, solve
from solvers.card_guessing.exact import entropy_weighted, yes_no
from solvers.no_repeat import closed_forms, tasks


def history_orders(N, n, k, m):
    """Every order of N distinct cards consistent with the conjecture's history.

    Card 0 is named with "no" (n-k-m times) then "yes", cards 1..k-1 are named right once
    each, then card a = k is named m times, all "no".
    """
    free, a = n - k - m, k
    for perm in itertools.permutations(range(N)):
        if perm[free] != 0 or any(perm[free + j] != j for j in range(1, k)):
            continue
        if any(perm[p] == a for p in range(free + k, n)) or 0 in perm[:free]:
            continue
        yield perm


def brute_entropy(orders, n, guess):
    """H(set of cards after position n | answer to naming ``guess`` at position n), nats."""
    h = 0.0
    for yes in (True, False):
        sub = [o for o in orders if (o[n] == guess) == yes]
        if sub:
            counts = Counter(frozenset(o[n + 1 :]) for o in sub)
            h += (
                len(sub)
                / len(orders)
                * -sum(c / len(sub) * math.log(c / len(sub)) for c in counts.values())
            )
    return h


@pytest.mark.parametrize("N", [4, 5, 6, 7])
def test_closed_forms_equal_enumeration_of_every_deck(N):
    """Appendix A's quantities, derived afresh, equal brute force over all N! orders."""
    n, k, m = closed_forms.valid_tuples(N)
    h_a, h_b = closed_forms.entropies(N, n, k, m)
    for i in range(len(n)):
        orders = list(history_orders(N, n[i], k[i], m[i]))
        assert h_a[i] == pytest.approx(brute_entropy(orders, n[i], k[i]), abs=1e-12)
        assert h_b[i] == pytest.approx(brute_entropy(orders, n[i], N - 1), abs=1e-12)


@pytest.mark.parametrize("N", [8, 9])
def test_closed_forms_equal_the_exact_card_guessing_posterior(N):
    """Independent check through the (c, p) statistic of the card_guessing family."""
    n, k, m = closed_forms.valid_tuples(N)
    h_a, h_b = closed_forms.entropies(N, n, k, m)
    h = entropy_weighted.posterior_entropy(1.0, 1.0, math.e)
    for i in range(len(n)):
        state = yes_no.initial_state((1,) * N)
        free = n[i] - k[i] - m[i]
        history = [(0, False)] * free + [(j, True) for j in range(k[i])]
        history += [(k[i], False)] * m[i]
        for guess, ok in history:
            state = (yes_no.after_yes if ok else yes_no.after_no)(state, guess)
        probs = yes_no.next_card_probabilities(state)
        for guess, want in ((k[i], h_a[i]), (N - 1, h_b[i])):
            got = entropy_weighted.expected_posterior_entropy(state, guess, probs[guess], h)
            assert got == pytest.approx(want, abs=1e-12)


def test_compiled_scan_equals_the_vectorised_formulas():
    for N in (6, 20, 45):
        n, k, m = closed_forms.valid_tuples(N)
        h_a, h_b = closed_forms.entropies(N, n, k, m)
        gap = (h_b - h_a)[m >= 1]
        row = tasks.scan(N)
        assert row["n_tuples"] == len(n)
        assert row["min_gap"] == pytest.approx(gap.min(), abs=1e-13)
        assert row["n_violations"] == int((gap < -tasks.TOLERANCE).sum())


def test_conjecture_holds_and_gap_shrinks_with_n():
    """Gural, Simper & So (2019), section 3.1 / figure 1: no violation; the gap at fixed (n, k, m)
    decreases."""
    rows = [solve({"family": "no_repeat", "N": N})[0] for N in (10, 20, 40, 80)]
    assert all(r["n_violations"] == 0 and r["min_gap"] > 0 for r in rows)
    fixed = [r["fixed_gap"] for r in rows]
    assert fixed == sorted(fixed, reverse=True) and fixed[-1] > 0


def test_figure_1a_curves_a_below_b():
    """Gural, Simper & So (2019), figure 1a: N = 20, k = 1, m = 1..14, n = m + 3: H(a) < H(b)
    everywhere."""
    row = solve({"family": "no_repeat", "N": 20})[0]
    assert row["curve_m"] == list(range(1, 16))  # the seed plots m up to 14; n = m + 3 <= 18
    assert all(a < b for a, b in zip(row["curve_h_a"], row["curve_h_b"], strict=True))


@pytest.mark.parametrize("N", [3, -1, 2.5, "many", 5000])
def test_bad_n_names_the_key(N):
    with pytest.raises(TaskError) as err:
        solve({"family": "no_repeat", "N": N})
    assert err.value.key == "N"
