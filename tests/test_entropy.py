"""Tests of the shared Sharma-Mittal entropy module (Hofer & Nelson 2016, section 3.2.3)."""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import entropy as E

# ----------------------------------------------------------------------------- helpers


def reference(p: list[float], r: float, t: float) -> float:
    """H_{r,t}(p) in nats straight from the defining formula, with 60-digit decimals."""
    with localcontext() as ctx:
        ctx.prec = 60
        ps = [Decimal(x) / sum(Decimal(y) for y in p) for x in p if x > 0]
        dr, dt = Decimal(r), Decimal(t)
        if r == 1:
            renyi = -sum(x * x.ln() for x in ps)
        else:
            renyi = sum((dr * x.ln()).exp() for x in ps).ln() / (1 - dr)
        if t == 1:
            return float(renyi)
        return float((1 - (-(dt - 1) * renyi).exp()) / (dt - 1))


distributions = st.lists(
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=1, max_size=12
).filter(lambda w: sum(w) > 1e-6)
orders = st.one_of(
    st.floats(min_value=0.0, max_value=30.0), st.sampled_from([0.0, 1.0, 2.0, math.inf])
)
degrees = st.one_of(st.floats(min_value=0.0, max_value=30.0), st.sampled_from([0.0, 1.0, 2.0]))


def probs(w: list[float]) -> list[float]:
    total = sum(w)
    return [x / total for x in w]


P = [0.5, 0.2, 0.15, 0.1, 0.05, 0.0]


# ------------------------------------------------------------------ closed forms of members


def test_named_members_match_their_closed_forms() -> None:
    """Shannon, Hartley, origin, min-entropy, error, quadratic and collision entropies."""
    q = [x for x in P if x > 0]
    shannon = -sum(x * math.log(x) for x in q)
    cases = {
        "shannon": shannon,
        "hartley": math.log(len(q)),
        "origin": len(q) - 1,
        "quadratic": 1 - sum(x * x for x in q),
        "gini_simpson": 1 - sum(x * x for x in q),
        "collision": -math.log(sum(x * x for x in q)),
        "min_entropy": -math.log(max(q)),
        "bayes_error": 1 - max(q),
    }
    assert set(cases) == set(E.PRESETS)
    for name, expected in cases.items():
        assert E.sharma_mittal(P, *E.preset(name)) == pytest.approx(expected, rel=1e-13), name


@pytest.mark.parametrize("order", [0.3, 0.5, 0.999, 1.5, 2.0, 3.0, 7.5])
def test_families_match_their_closed_forms(order: float) -> None:
    """Renyi, Tsallis, Arimoto, power and Gaussian entropies at one order each."""
    q = [x for x in P if x > 0]
    power_sum = sum(x**order for x in q)
    shannon = -sum(x * math.log(x) for x in q)
    cases = {
        "renyi": math.log(power_sum) / (1 - order),
        "tsallis": (1 - power_sum) / (order - 1),
        "arimoto": order / (order - 1) * (1 - power_sum ** (1 / order)),
        "power": 1 - power_sum ** (1 / (order - 1)),
        "gaussian": (1 - math.exp(-(order - 1) * shannon)) / (order - 1),
    }
    for name, expected in cases.items():
        if name == "arimoto" and order < 0.5:
            continue
        got = E.sharma_mittal(P, *E.preset(f"{name}:{order}"))
        assert got == pytest.approx(expected, rel=1e-9), name
    assert E.renyi(P, order) == pytest.approx(cases["renyi"], rel=1e-9)
    assert E.tsallis(P, order) == pytest.approx(cases["tsallis"], rel=1e-9)


def test_shannon_in_bits_of_a_fair_coin_and_a_die() -> None:
    assert E.shannon([0.5, 0.5], log_base=2) == pytest.approx(1.0, rel=1e-15)
    assert E.sharma_mittal([1 / 8] * 8, 1, 1, 2) == pytest.approx(3.0, rel=1e-15)


def test_log_base_rescales_every_member_by_the_same_constant() -> None:
    for r, t in [(1, 1), (2, 1), (0, 1), (2, 2), (0.5, 3.0), (math.inf, 2)]:
        nats = E.sharma_mittal(P, r, t)
        assert E.sharma_mittal(P, r, t, log_base=2) == pytest.approx(nats / math.log(2))


# --------------------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None)
@given(distributions, orders, degrees)
def test_agrees_with_the_defining_formula_in_high_precision(w, r, t) -> None:
    if r == math.inf:
        renyi = -math.log(max(probs(w)))
        expected = renyi if t == 1 else -math.expm1(-(t - 1) * renyi) / (t - 1)
    elif r == 0:
        n = sum(1 for x in w if x > 0)
        expected = reference([1.0] * n, 1.0, t)
    else:
        expected = reference(w, r, t)
    got = E.sharma_mittal(w, r, t, normalize=True)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 20), st.integers(0, 19), orders, degrees)
def test_zero_for_a_point_mass(n, k, r, t) -> None:
    p = [0.0] * n
    p[k % n] = 1.0
    assert E.sharma_mittal(p, r, t) == 0.0


@settings(max_examples=150, deadline=None)
@given(distributions, orders, degrees)
def test_maximal_at_the_uniform_distribution(w, r, t) -> None:
    n = len(w)
    top = E.sharma_mittal([1 / n] * n, r, t)
    assert E.sharma_mittal(w, r, t, normalize=True) <= top * (1 + 1e-12) + 1e-15
    assert E.sharma_mittal([1 / n] * n, r, t) == pytest.approx(
        math.log(n) if t == 1 else math.expm1((1 - t) * math.log(n)) / (1 - t), rel=1e-12
    )


@settings(max_examples=100, deadline=None)
@given(distributions, degrees, st.sampled_from([1e-9, -1e-9, 1e-12, -1e-6]))
def test_continuous_across_r_equal_one(w, t, eps) -> None:
    at_limit = E.sharma_mittal(w, 1.0, t, normalize=True)
    near = E.sharma_mittal(w, 1.0 + eps, t, normalize=True)
    assert near == pytest.approx(at_limit, rel=max(1e-7, 10 * abs(eps)), abs=1e-12)
    assert near == pytest.approx(reference(w, 1.0 + eps, t), rel=1e-9, abs=1e-14)


@settings(max_examples=100, deadline=None)
@given(distributions, orders, st.sampled_from([1e-9, -1e-9, 1e-12, -1e-6]))
def test_continuous_across_t_equal_one(w, r, eps) -> None:
    at_limit = E.sharma_mittal(w, r, 1.0, normalize=True)
    near = E.sharma_mittal(w, r, 1.0 + eps, normalize=True)
    assert near == pytest.approx(at_limit, rel=max(1e-7, 10 * abs(eps)), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(distributions, degrees)
def test_continuous_at_r_zero_and_r_infinity(w, t) -> None:
    assert E.sharma_mittal(w, 1e-12, t, normalize=True) == pytest.approx(
        E.sharma_mittal(w, 0.0, t, normalize=True), rel=1e-7, abs=1e-12
    )
    assert E.sharma_mittal(w, 1e9, t, normalize=True) == pytest.approx(
        E.sharma_mittal(w, math.inf, t, normalize=True), rel=1e-7, abs=1e-12
    )


def test_no_cancellation_very_close_to_one() -> None:
    """At r = t = 1 + 1e-13 the value is Shannon's to double precision (no 1e-3 noise)."""
    shannon = E.shannon(P)
    for r, t in [(1 + 1e-13, 1), (1, 1 + 1e-13), (1 - 1e-13, 1 - 1e-13)]:
        assert E.sharma_mittal(P, r, t) == pytest.approx(shannon, rel=1e-11)


# ------------------------------------------------------------------------- vectorised


@settings(max_examples=40, deadline=None)
@given(st.lists(distributions, min_size=1, max_size=5), orders, degrees)
def test_rows_match_the_scalar_function(rows, r, t) -> None:
    width = max(map(len, rows))
    matrix = np.array([w + [0.0] * (width - len(w)) for w in rows])
    got = E.sharma_mittal_rows(matrix, r, t, log_base=2)
    for row, value in zip(matrix, got, strict=True):
        assert value == pytest.approx(
            E.sharma_mittal(row, r, t, 2, normalize=True), rel=1e-12, abs=1e-15
        )


def test_grouped_scores_each_cell_of_each_partition() -> None:
    weights = np.array([1.0, 2.0, 3.0, 4.0, 0.0])
    labels = np.array([[0, 0, 1, 1, 2], [2, 2, 2, 2, 2]])
    for r, t in [(1, 1), (2, 2), (0, 1), (math.inf, 1), (0.7, 1.3)]:
        h, mass = E.sharma_mittal_grouped(weights, labels, 3, r, t)
        assert mass.tolist() == [[3, 7, 0], [0, 0, 10]]
        assert h[0, 0] == pytest.approx(E.sharma_mittal([1, 2], r, t, normalize=True))
        assert h[0, 1] == pytest.approx(E.sharma_mittal([3, 4], r, t, normalize=True))
        assert h[0, 2] == 0.0 and h[1, 0] == 0.0
        assert h[1, 2] == pytest.approx(E.sharma_mittal(weights, r, t, normalize=True))


def test_an_all_zero_row_has_entropy_zero() -> None:
    assert E.sharma_mittal_rows(np.zeros((2, 3)), 2, 2).tolist() == [0.0, 0.0]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("r", "t", "key"),
    [
        (-0.1, 1, "entropy_r"),
        (math.nan, 1, "entropy_r"),
        ("x", 1, "entropy_r"),
        (1, -1, "entropy_t"),
        (1, math.nan, "entropy_t"),
        (1, math.inf, "entropy_t"),
    ],
)
def test_bad_order_or_degree_names_the_key(r, t, key) -> None:
    with pytest.raises(ValueError, match=key):
        E.sharma_mittal([0.5, 0.5], r, t)


@pytest.mark.parametrize("base", [1, 0, -2, math.inf, math.nan])
def test_bad_log_base_names_the_key(base) -> None:
    with pytest.raises(ValueError, match="log_base"):
        E.sharma_mittal([0.5, 0.5], 1, 1, base)


@pytest.mark.parametrize("p", [[], [0.5, -0.5, 1.0], [0.3, 0.3], [0.0, 0.0], [math.nan, 1]])
def test_bad_probabilities_are_refused(p) -> None:
    with pytest.raises(ValueError, match="p must"):
        E.sharma_mittal(p, 1, 1)


def test_unknown_preset_lists_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="shannon.*min_entropy.*renyi:<order>"):
        E.preset("boltzmann")
    for bad in ["renyi:x", "renyi:-1", "arimoto:0.2", "tsallis:inf", "renyi:"]:
        with pytest.raises(ValueError, match="entropy"):
            E.preset(bad)


def test_presets_are_points_of_the_plane() -> None:
    assert E.preset("Shannon") == (1.0, 1.0)
    assert E.preset("renyi:2") == E.preset("collision")
    assert E.preset("tsallis:2") == E.preset("quadratic")
    assert E.preset("arimoto:inf") == E.preset("bayes_error")
    assert E.preset("renyi:inf") == E.preset("min_entropy")
    assert E.preset("tsallis:0") == E.preset("origin")


@pytest.mark.parametrize("t", [0.0, 0.5, 1.0, 1 + 1e-10, 2.0, 7.0])
def test_uniform_entropy_matches_the_general_function_for_every_order(t) -> None:
    sizes = np.array([0, 1, 2, 3, 10, 1296])
    got = E.uniform_entropy(sizes, t, log_base=2)
    assert got[0] == 0.0 and got[1] == 0.0
    for n, value in zip(sizes[1:], got[1:], strict=True):
        for r in [0.0, 0.5, 1.0, 3.0, math.inf]:
            assert value == pytest.approx(E.sharma_mittal([1 / n] * n, r, t, 2), rel=1e-12)
