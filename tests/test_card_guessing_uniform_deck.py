"""Uniform decks in floats with ranked states (solvers/card_guessing/uniform_deck/), in memory.

Checked against brute-force enumeration of every deck order (brute_force/yes_no_orders.py) on
tiny decks, the exact rational solver (exact/yes_no.py) to 1e-12 relative, and the hashed float
solver (any_deck/); the state ranks against a brute-force listing of each layer's code
sequences.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from solvers import TaskError, solve
from solvers.card_guessing.any_deck import optimal
from solvers.card_guessing.brute_force import yes_no_orders
from solvers.card_guessing.exact import yes_no
from solvers.card_guessing.simulation import persistent
from solvers.card_guessing.tasks import float_tasks
from solvers.card_guessing.uniform_deck import in_memory, ranks
from solvers.registry import validate
from solvers.task_ids import seed_id
from tests.helpers.pages import ranks_table

REL = 1e-12
DECKS = [(1,), (4,), (1, 1), (2, 2), (1, 1, 1), (3, 3), (2, 2, 2), (3, 3, 3), (4, 4), (2, 2, 2, 2)]


def close(a: float, b: Fraction | float) -> bool:
    """True if ``a`` agrees with ``b`` to REL relative (absolute near zero)."""
    return abs(a - float(b)) <= REL * max(1.0, abs(float(b)))


def pair_greedy(window: Fraction) -> yes_no.Evaluation:
    """Exact greedy by pairs: of the types at least (1 - window) times as likely as the
    likeliest, the smallest (c, p) pair (canonical states sort pairs ascending)."""

    def choose(state, ys: list[int]) -> list[int]:
        floor = max(ys) * (1 - window)
        return [next(a for a, y in enumerate(ys) if y > 0 and y >= floor)]

    return yes_no.Evaluation(choose, canonical_states=True)


def exact(ev: yes_no.Evaluation, deck) -> tuple[Fraction, Fraction, list[Fraction]]:
    """(mean, variance, pmf) of ``ev``'s policy, exactly."""
    pmf, _ = yes_no.score_distribution(ev, deck)
    mean = sum(k * q for k, q in enumerate(pmf))
    return mean, sum(k * k * q for k, q in enumerate(pmf)) - mean * mean, pmf


def check_solution(sol: in_memory.Solution, mean, var, pmf) -> None:
    assert close(sol.expected_score, mean)
    assert close(sol.score_variance, var)
    assert len(sol.score_pmf) == len(pmf)
    assert all(close(a, b) for a, b in zip(sol.score_pmf, pmf, strict=True))


@pytest.mark.parametrize("deck", DECKS, ids=str)
def test_optimal_matches_exact(deck):
    check_solution(in_memory.solve(deck), *exact(yes_no.evaluation("optimal"), deck))


@pytest.mark.parametrize("window", [Fraction(0), Fraction(1, 20), Fraction(1, 5)], ids=str)
@pytest.mark.parametrize("deck", DECKS, ids=str)
def test_greedy_by_pairs_matches_exact(deck, window):
    sol = in_memory.solve(deck, "greedy", window=float(window))
    check_solution(sol, *exact(pair_greedy(window), deck))


@pytest.mark.parametrize("deck", [(1, 1), (2, 2), (1, 1, 1), (2, 2, 2)], ids=str)
def test_against_brute_force(deck):
    """Every order of the deck played out (yes_no_orders.py, tiny decks only)."""
    assert close(in_memory.solve(deck).expected_score, yes_no_orders.optimal_value(deck))


@pytest.mark.slow
@pytest.mark.parametrize("deck", [(4, 4, 4, 4), (5, 5, 5), (3, 3, 3, 3, 3), (7, 7)], ids=str)
def test_optimal_matches_fast(deck):
    sol, ref = in_memory.solve(deck), optimal.optimal(deck)
    assert abs(sol.expected_score - ref.expected_score) <= REL * ref.expected_score
    assert abs(sol.score_variance - ref.score_variance) <= 1e-10 * ref.score_variance
    assert np.allclose(sol.score_pmf, ref.score_pmf, rtol=1e-10, atol=1e-14)
    assert sol.n_states >= ref.n_states  # every reachable state, and feasible unreachable ones


def sequences(deck, layer: int) -> set[tuple[int, ...]]:
    """Brute force: the non-increasing code sequences of ``layer`` (module docstring)."""
    cd = ranks.codes(deck)
    weight = cd.weight.tolist()
    out = set()
    for seq in itertools.combinations_with_replacement(range(cd.exhausted, -1, -1), cd.r):
        e = seq.count(cd.exhausted)
        w = sum(weight[x] for x in seq)
        if (e == 0 and w == layer) or (e > 0 and w <= layer):
            out.add(seq)
    return out


@pytest.mark.parametrize("deck", [(2, 2), (3, 3, 3), (2, 2, 2, 2)], ids=str)
def test_ranks_are_a_bijection(deck):
    """Each layer's ranks 0..size-1 unrank to distinct sequences of that layer and back."""
    cd = ranks.codes(deck)
    args = (cd.m, cd.r, cd.exhausted, cd.weight, cd.eq, cd.le, cd.offsets)
    for layer in range(cd.n_cards + 1):
        expected = sequences(deck, layer)
        assert int(cd.sizes[layer]) == len(expected)
        seen = set()
        seq = np.empty(cd.r, np.int64)
        for i in range(int(cd.sizes[layer])):
            ranks._unrank(i, layer, *args, seq)
            assert ranks._rank(seq, layer, *args) == i
            seen.add(tuple(seq.tolist()))
        assert seen == expected


def test_unequal_deck_is_refused():
    with pytest.raises(ValueError, match="r types of m"):
        ranks.codes([3, 2])


def test_estimated_bytes_grow_with_the_deck():
    small, large = in_memory.estimated_bytes([4] * 5), in_memory.estimated_bytes([4] * 9)
    assert 0 < small < large
    assert sum(ranks.layer_sizes([4] * 5)) * 24 < in_memory.estimated_bytes([4] * 5) * 2


# --------------------------------------------------------------- the family's tasks


def task(**params) -> dict:
    return {"family": "card_guessing", **params}


def test_family_runs_ranked_tasks():
    row = solve(task(deck=[3, 3, 3], method="ranked"))[0]
    exact_value, _ = yes_no.optimal_value((3, 3, 3))
    assert close(row["expected_score"], exact_value)
    row = solve(task(deck=[3, 3, 3], method="ranked", strategy="persistent"))[0]
    assert close(row["expected_score"], exact(persistent_exact(Fraction(1, 10)), (3, 3, 3))[0])


@pytest.mark.parametrize(
    ("params", "key", "words"),
    [
        ({"deck": [4, 3], "method": "ranked"}, "deck", "r types of m"),
        ({"deck": [4, 4], "method": "ranked", "strategy": "greedy"}, "tie_break", "pair"),
        ({"deck": [4, 4], "strategy": "persistent"}, "method", "ranked or monte_carlo"),
        ({"deck": [4, 4], "method": "ranked", "feedback": "complete"}, "feedback", "partial"),
    ],
)
def test_out_of_reach_is_refused_up_front(params, key, words):
    with pytest.raises(TaskError) as err:
        validate(task(**params))
    assert err.value.key == key
    assert words in str(err.value)


def persistent_exact(window: Fraction) -> yes_no.Evaluation:
    """Exact persistent policy: of the types at least (1 - window) times as likely as the
    likeliest, the one refused most often (ties: the smallest (c, p) pair)."""

    def choose(state, ys: list[int]) -> list[int]:
        floor = max(ys) * (1 - window)
        admitted = [a for a, y in enumerate(ys) if y > 0 and y >= floor]
        return [max(admitted, key=lambda a: (state[1][a][1], -a))]

    return yes_no.Evaluation(choose, canonical_states=True)


@pytest.mark.parametrize("deck", [(2, 2), (3, 3, 3), (2, 2, 2, 2), (4, 4, 4)], ids=str)
def test_persistent_matches_exact(deck):
    sol = in_memory.solve(deck, "persistent", window=0.1)
    check_solution(sol, *exact(persistent_exact(Fraction(1, 10)), deck))


@pytest.mark.slow
def test_persistent_monte_carlo_agrees_with_ranked():
    """Seeded play on 4 types of 4 within 4 standard errors of the exact value, and its paired
    difference from greedy (lowest ties) within 4 paired standard errors of the exact one."""
    got = persistent.paired_comparison([4] * 4, 20_000, seed=7)
    exact_value = in_memory.solve([4] * 4, "persistent", window=0.1).expected_score
    greedy = solve(task(deck=[4] * 4, method="float", strategy="greedy", tie_break="lowest"))
    assert abs(got["policy_mean"] - exact_value) < 4 * got["policy_se"]
    exact_difference = exact_value - greedy[0]["expected_score"]
    assert abs(got["difference"] - exact_difference) < 4 * got["difference_se"]
    assert got["unsure_decisions"] == 0


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"deck": [3, 3, 3]}, "a828fc15d92cf56ba3e3"),
        (
            {"deck": [4] * 13, "method": "monte_carlo", "n_games": 20000, "tie_break": "lowest",
             "strategy": "greedy"},
            "2883c30187fd045a59e8",
        ),
        ({"deck": [13] * 4, "method": "float"}, "5d26420c921c27886402"),
    ],
)  # fmt: skip
def test_existing_task_ids_are_unchanged(params, expected):
    """The ids of tasks of the policies registered at commit 511625c (version 1) are the ids
    computed there, made again at version 1 (each task's seed): the policies registered since
    (ranked, persistent, pair) change none."""
    assert seed_id(validate(task(**params))) == expected


@pytest.fixture(scope="module")
def ranks_rows():
    """Rows of a ranks52-like study: n = 2..4 types of 4 by the ranked solver (optimal, greedy
    with pair ties, persistent), greedy by the float solver, and 13 x 4 by Monte Carlo."""
    import pandas as pd

    rows = []
    for n in (2, 3, 4):
        for strategy, extra in (("optimal", {}), ("greedy", {"tie_break": "pair"}),
                                ("persistent", {})):  # fmt: skip
            params = {"deck": [4] * n, "method": "ranked", "strategy": strategy, **extra}
            rows.append(solve(task(**params))[0])
        rows.append(solve(task(deck=[4] * n, method="float", strategy="greedy"))[0])
    mc = {"deck": [4] * 13, "method": "monte_carlo", "n_games": 500, "strategy": "persistent"}
    rows.append(solve(task(**mc))[0])
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_summary_section(tmp_path, ranks_rows):
    """The ranks52 section: table per n, plot with extrapolation, and Monte Carlo rows."""
    from solvers.card_guessing.summary import ranks52

    frame = ranks_rows
    table = ranks52.ranks_table(frame).set_index("n")
    assert table.index.tolist() == [2, 3, 4]
    assert close(table.loc[3, "optimal"], yes_no.optimal_value((4, 4, 4))[0])
    # greedy with lowest-index ties on 3 x 4 (any_deck/greedy.py) is below greedy with pair ties
    assert table.loc[3, "greedy_lowest"] < table.loc[3, "greedy_pair"]
    assert close(table.loc[4, "gap"], table.loc[4, "optimal"] - table.loc[4, "greedy_pair"])
    text = "\n".join(ranks52.sections(frame, tmp_path))
    assert "Extrapolation" in text and "13 ranks x 4, Monte Carlo" in text
    assert (tmp_path / "card_guessing_ranks.png").stat().st_size > 0
    assert ranks52.sections(frame[frame["method"] == "float"], tmp_path) == []
    # a study of the optimum alone (ranks_exact run for one strategy): no greedy, no gap
    alone = frame[(frame["strategy"] == "optimal") & (frame["method"] == "ranked")]
    text = "\n".join(ranks52.sections(alone, tmp_path))
    assert "optimal ~" in text and "greedy_pair ~" not in text and "gap ~" not in text
    one = "\n".join(ranks52.sections(alone[alone["deck"] == "4,4,4"], tmp_path))
    assert "Extrapolation" not in one  # one value of n: nothing to fit


@pytest.mark.parametrize("values", [[5.0, 5.2, 5.3, 5.35, 5.5], [5.0, 5.2, 5.3, 5.3, 5.3]])
def test_the_shrinking_steps_fit_is_left_out_where_the_steps_do_not_shrink(values):
    """The n = 13 range drawn for a policy takes the steps fit only where the last two steps
    shrink with one sign; otherwise (a step growing, or a zero step) the range is the line's
    and the quadratic's, each with its standard error."""
    from solvers.card_guessing.summary import ranks52

    fits = ranks52.fits_at_full(pd.DataFrame({"n": range(2, 7), "optimal": values}), "optimal")
    assert math.isnan(fits["steps"])
    ends = [fits[f] + sign * fits[f"{f}_se"] for f in ("line", "quadratic") for sign in (-1, 1)]
    assert (fits["low"], fits["high"]) == (min(ends), max(ends))


SUBSETS = [
    s for k in (1, 2) for s in itertools.combinations(("optimal", "greedy", "persistent"), k)
]


@pytest.mark.slow
@pytest.mark.parametrize("kept", SUBSETS, ids="+".join)
def test_the_summary_renders_any_subset_of_the_ranked_strategies(kept, ranks_rows, tmp_path):
    """The card-guessing summary of a ranks study holding only some of its strategies (a
    study run with the others removed) is written whole: its table has a column per kept
    policy and no gap without both ends, and every figure passes its readability check."""
    from solvers.card_guessing.summary import ranks52
    from solvers.kit.summary_parts import saved_check
    from solvers.registry import family_summary

    rows = ranks_rows[ranks_rows["strategy"].isin(kept)]
    text = family_summary("card_guessing")(rows, tmp_path)
    assert "n types of 4 cards" in text
    table = ranks52.ranks_table(rows)
    labels = {"greedy": "greedy_pair"}
    assert {labels.get(s, s) for s in kept} <= set(table)
    assert ("gap" in table) == ({"optimal", "greedy"} <= set(kept))
    assert "persistent_share_of_gap" not in table  # needs all three
    for png in sorted(tmp_path.glob("*.png")):
        assert saved_check(png)[0] == "ok", (png.name, saved_check(png)[0])


# ------------------------------------------------- method: float runs the faster engine


@pytest.mark.parametrize(
    "deck", [[1], [2], [1, 1, 1], [2, 2, 2], [3, 3, 3], [1, 1, 1, 1], [4, 4, 4, 4]]
)
def test_float_optimal_on_a_uniform_deck_runs_ranked_with_the_same_row(deck, monkeypatch):
    """method=float, optimal, uniform deck: the ranked engine's row equals the hashed layers'
    to 1e-12, first moves (the decision tree) included, and the hashed solver is not run."""
    task = {"family": "card_guessing", "deck": deck, "method": "float"}
    hashed = optimal.optimal(deck)
    expected = float_tasks.tree_row(hashed, optimal.decision_tree(hashed, deck))
    monkeypatch.setattr(optimal, "optimal", lambda *a, **k: pytest.fail("hashed ran"))
    (row,) = solve(task)
    assert row["first_moves"] == expected["first_moves"]
    assert row["n_states"] == expected["n_states"]
    assert row["expected_score"] == pytest.approx(expected["expected_score"], rel=1e-12)
    assert row["score_variance"] == pytest.approx(expected["score_variance"], rel=1e-9, abs=1e-12)
    assert row["score_pmf"] == pytest.approx(expected["score_pmf"], abs=1e-12)


def test_float_tasks_the_ranked_engine_does_not_solve_stay_on_the_hashed_layers():
    base = {"deck": [3, 3, 3], "method": "float", "strategy": "optimal", "workers": 1}
    assert float_tasks.runs_ranked(base)
    assert not float_tasks.runs_ranked({**base, "deck": [3, 2, 2]})
    assert not float_tasks.runs_ranked({**base, "deck": [3, 3]})  # n_states would differ
    assert not float_tasks.runs_ranked({**base, "strategy": "greedy"})
    assert not float_tasks.runs_ranked({**base, "workers": 2})


@pytest.mark.parametrize("n", range(1, 8))
def test_the_ranks_page_s_rows_are_what_the_solver_computes(n):
    """The ranks page's values and states for n <= 7 types of 4, recomputed by the ranked
    solver (to the 12 decimals printed; 8 types: the out-of-core capped-worker test)."""
    from solvers.card_guessing.tasks.ranked_tasks import PERSISTENT_WINDOW

    row = ranks_table()[n]
    for policy, window in (("optimal", 0.0), ("greedy", 0.0), ("persistent", PERSISTENT_WINDOW)):
        sol = in_memory.solve((4,) * n, policy, window=window)
        assert abs(sol.expected_score - row[policy]) <= 5e-13, (policy, sol.expected_score)
        assert sol.n_states == row["states"]


TIE_STRATEGIES = ("greedy", "info", "count_tracker", "constant_decrement")


@pytest.mark.parametrize("strategy", TIE_STRATEGIES)
@pytest.mark.parametrize("method", ["exact", "monte_carlo", "ranked"])
def test_pair_ties_are_accepted_exactly_where_the_parameter_table_says(strategy, method):
    """``tie_break: pair`` is accepted for the strategies and methods the table's words name
    (made from the same constants), and a refusal names what the task set: the tie rule for
    another strategy, the method for greedy on another method."""
    from solvers.card_guessing.rules import check_tie_break
    from solvers.card_guessing.tasks.ranked_tasks import PAIR_METHODS, PAIR_STRATEGIES

    params = {"deck": [4, 4], "strategy": strategy, "tie_break": "pair", "method": method}
    if method == "monte_carlo":
        params["n_games"] = 10
    words = check_tie_break.markdown
    said = strategy in words.partition("also `pair`")[0] and f"`{method}`" in words
    assert said == (strategy in PAIR_STRATEGIES and method in PAIR_METHODS)
    if said:
        assert validate(task(**params))["tie_break"] == "pair"
        return
    with pytest.raises(TaskError) as refused:
        validate(task(**params))
    if strategy not in PAIR_STRATEGIES:
        assert refused.value.key == "tie_break" and f"{strategy} breaks ties by" in str(
            refused.value
        )
    else:
        assert refused.value.key == "method" and refused.value.value == method
    assert "method=ranked" not in str(refused.value) or method == "ranked"


def test_ctrl_c_inside_a_layer_kernel_is_raised_once_the_kernel_returns():
    """A compiled layer kernel calls back into Python for its run-time constants
    (``_numba_unpickle``); Ctrl-C whose handler would run there is raised as
    KeyboardInterrupt once the kernel has returned, never inside it (where it became
    ``SystemError: ... returned a result with an exception set``, or a segmentation fault)."""
    import os
    import signal
    import sys

    in_memory.solve([2, 2])  # compiled, or loaded from the cache, before the test proper
    sent: list[str] = []

    def ctrl_c_in_the_kernel(frame, event, arg) -> None:
        caller = frame.f_back.f_code.co_name if frame.f_back else ""
        if event == "call" and frame.f_code.co_name == "_numba_unpickle" and caller == "solve":
            sys.setprofile(None)
            sent.append(caller)
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, its handler run in the callback

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        sys.setprofile(ctrl_c_in_the_kernel)
        with pytest.raises(KeyboardInterrupt) as stop:
            in_memory.solve([4, 4, 4, 4])
    finally:
        sys.setprofile(None)
        signal.signal(signal.SIGINT, before)
    assert sent == ["solve"]
    assert stop.value.__cause__ is None and stop.value.__context__ is None
