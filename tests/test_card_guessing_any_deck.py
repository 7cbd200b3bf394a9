"""Optimal and greedy play on any deck in floats (solvers/card_guessing/any_deck/).

Checked against the exact rational solver (exact/yes_no.py, itself checked by brute force
in test_card_guessing_exact_yes_no.py) to 1e-12 relative, on many decks including unequal
counts; the distributed mode (any_deck/split_layers.py) against the single-process result.
"""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from solvers import TaskError, solve
from solvers.card_guessing import state_codes
from solvers.card_guessing.any_deck import counts, layers
from solvers.card_guessing.any_deck.greedy import greedy
from solvers.card_guessing.any_deck.optimal import Solution, decision_tree, optimal
from solvers.card_guessing.exact import yes_no
from tests.helpers import commands

REL = 1e-12
DECKS = [
    (1,),
    (4,),
    (2, 1),
    (1, 1, 1),
    (2, 2),
    (3, 2, 1),
    (3, 3, 3),
    (2, 2, 2, 2),
    (5, 3, 2, 1),
    (4, 4, 4),
    (1, 2, 3, 4),
    (3, 3, 2, 2),
    (6, 1),
    (2, 1, 2, 1, 1),
    (7, 5),
]


def close(a: float, b: Fraction | float) -> bool:
    """True if ``a`` agrees with ``b`` to REL relative (absolute near zero)."""
    return abs(a - float(b)) <= REL * max(1.0, abs(float(b)))


def exact_variance(ev: yes_no.Evaluation, deck) -> Fraction:
    pmf, _ = yes_no.score_distribution(ev, deck)
    mean = sum(k * q for k, q in enumerate(pmf))
    return sum(k * k * q for k, q in enumerate(pmf)) - mean * mean


# ------------------------------------------------------------------- against exact


@pytest.mark.parametrize("deck", DECKS, ids=str)
def test_optimal_matches_exact(deck):
    ev = yes_no.evaluation("optimal")
    value, n_states = yes_no.expected_score(ev, deck)
    sol = optimal(deck)
    assert close(sol.expected_score, value)
    assert close(sol.score_variance, exact_variance(ev, deck))
    assert sol.n_states == n_states  # the same reachable canonical states


@pytest.mark.parametrize("tie_break", ["lowest", "highest"])
@pytest.mark.parametrize("deck", DECKS, ids=str)
def test_greedy_matches_exact(deck, tie_break):
    ev = yes_no.evaluation("greedy", tie_break)
    value, n_states = yes_no.expected_score(ev, deck)
    sol = greedy(deck, tie_break)
    assert close(sol.expected_score, value)
    assert close(sol.score_variance, exact_variance(ev, deck))
    assert sol.n_states == n_states  # the labelled states greedy reaches


PMF_DECKS = [(1,), (2, 2), (3, 2, 1), (3, 3, 3), (5, 3, 2, 1), (1, 2, 3, 4), (2, 1, 2, 1, 1)]


def exact_pmf(deck, strategy: str, tie_break: str = "lowest") -> list[float]:
    """The exact solver's score_pmf (method exact) for ``deck``."""
    task = {"family": "card_guessing", "deck": list(deck), "strategy": strategy}
    if strategy == "greedy":
        task["tie_break"] = tie_break
    return solve(task)[0]["score_pmf"]


def check_pmf(sol: Solution, expected: list[float]) -> None:
    """``sol``'s pmf equals ``expected`` to REL, sums to 1 and has the solver's mean."""
    assert len(sol.score_pmf) == len(expected)
    assert all(close(a, b) for a, b in zip(sol.score_pmf, expected, strict=True))
    assert close(sum(sol.score_pmf), 1.0)
    assert close(sum(k * q for k, q in enumerate(sol.score_pmf)), sol.expected_score)


@pytest.mark.parametrize("deck", PMF_DECKS, ids=str)
def test_optimal_pmf_matches_exact(deck):
    check_pmf(optimal(deck), exact_pmf(deck, "optimal"))


@pytest.mark.parametrize("tie_break", ["lowest", "highest"])
@pytest.mark.parametrize("deck", PMF_DECKS, ids=str)
def test_greedy_pmf_matches_exact(deck, tie_break):
    check_pmf(greedy(deck, tie_break), exact_pmf(deck, "greedy", tie_break))


def test_pmf_variance_is_the_solvers_variance():
    sol = optimal((4, 3, 2, 1))
    mean = sum(k * q for k, q in enumerate(sol.score_pmf))
    var = sum(k * k * q for k, q in enumerate(sol.score_pmf)) - mean * mean
    assert close(var, sol.score_variance)


def test_seed_figures():
    """Gural, Simper & So (2019), section on (3,3,3): greedy 475/112, lowest ties."""
    assert close(greedy((3, 3, 3), "lowest").expected_score, Fraction(475, 112))


@pytest.mark.slow
@pytest.mark.parametrize("deck", [(5, 5, 5), (4, 4, 4, 4), (6, 4, 3, 2), (3, 3, 3, 3, 3)], ids=str)
def test_larger_decks_match_exact(deck):
    value, _ = yes_no.expected_score(yes_no.evaluation("optimal"), deck)
    assert close(optimal(deck).expected_score, value)
    greedy_value, _ = yes_no.expected_score(yes_no.evaluation("greedy", "lowest"), deck)
    assert close(greedy(deck).expected_score, greedy_value)


# ------------------------------------------------------ counts, keys and feasibility


def random_pairs(rng: random.Random, r: int) -> list[tuple[int, int]]:
    """Random (c, p) for ``r`` types with no more refused slots than cards (as in any state)."""
    while True:
        pairs = [(rng.randint(1, 4), rng.randint(0, 6)) for _ in range(r)]
        if sum(p for _, p in pairs) <= sum(c for c, _ in pairs):
            return pairs


def test_log_counts_match_exact_arrangements():
    """The refused-slot recursion gives log A for arbitrary (c, p), also A = 0 as -inf."""
    rng = random.Random(7)
    enc = state_codes.layer_encoding([4, 4, 4, 4])
    for _ in range(300):
        pairs = random_pairs(rng, rng.randint(1, 4))
        exact = yes_no.arrangements(tuple(pairs))
        got = counts.log_counts(pairs, enc)
        if exact == 0:
            assert got == -np.inf
        else:
            assert abs(got - float(np.log(float(exact)))) <= 1e-13 * max(1.0, abs(got))


def test_feasible_means_some_arrangement():
    rng = random.Random(11)
    for _ in range(500):
        pairs = random_pairs(rng, rng.randint(1, 4))
        cs = np.array([c for c, _ in pairs], np.int64)
        ps = np.array([p for _, p in pairs], np.int64)
        assert layers._feasible(cs, ps, len(pairs)) == (yes_no.arrangements(tuple(pairs)) > 0)


def test_keys_round_trip_and_canonical():
    enc = state_codes.layer_encoding([5, 3, 2, 1])
    pairs = [(2, 1), (5, 0), (0, 0), (2, 3)]
    key = state_codes.encode(pairs, enc)
    assert state_codes.decode(key, enc) == ((5, 0), (2, 3), (2, 1), (0, 0))
    assert state_codes.encode(list(reversed(pairs)), enc) == key
    labelled = state_codes.encode(pairs, enc, canonical=False)
    assert state_codes.decode(labelled, enc) == tuple(pairs)


def test_keys_keep_their_bits():
    """Key order fixes the order of the score distribution's sums (and a key's hash its Dask
    partition), so keys keep the bits they had: a layer key, a labelled one, the start."""
    enc = state_codes.layer_encoding([5, 3, 2, 1])
    pairs = [(2, 1), (5, 0), (0, 0), (2, 3)]
    assert state_codes.encode(pairs, enc) == 545232
    assert state_codes.encode(pairs, enc, canonical=False) == 73410593
    assert state_codes.start_key(enc) == 34084944
    codes = np.empty(4, np.int64)
    cs, ps = np.array([2, 5, 0, 2]), np.array([1, 0, 0, 3])
    key = state_codes.canonical_cache_key(7, cs, ps, enc.bits_p, enc.width, enc.per_word, codes)
    assert key == (69789703, 0, 0, 0)


def test_one_state_encoding_serves_both_engines():
    """any_deck/'s layer keys and info_policy/'s cache keys pack the same codes of a state
    (state_codes.py): one Encoding per deck, and a cache key holds n in slot 0 and the layer
    key's codes in slots 1..r (over two words for 7 types of 4)."""
    from solvers.card_guessing.info_policy import moves

    deck = [4] * 7
    enc = state_codes.layer_encoding(deck)
    assert moves.encoding(deck) == enc
    mask = (1 << enc.width) - 1
    rng = random.Random(5)
    for _ in range(200):
        pairs = random_pairs(rng, 7)
        cs = np.array([c for c, _ in pairs], np.int64)
        ps = np.array([p for _, p in pairs], np.int64)
        n = rng.randint(1, enc.n_cards)
        codes = np.empty(7, np.int64)
        key = state_codes.canonical_cache_key(n, cs, ps, enc.bits_p, enc.width, enc.per_word, codes)
        assert key[1] != 0  # the last codes are in the second word
        word, shift = divmod(np.arange(8), enc.per_word)
        slots = [key[w] >> (enc.width * s) & mask for w, s in zip(word, shift, strict=True)]
        assert slots == [n, *codes.tolist()]
        assert state_codes.layer_key(codes, enc.width) == state_codes.encode(pairs, enc)
        assert state_codes.decode(state_codes.encode(pairs, enc), enc) == tuple(
            sorted(pairs, reverse=True)
        )


def test_partitions_cover_every_key():
    keys = np.arange(1000, dtype=np.int64) * 7919
    parts = layers.partition_of(keys, 3)
    assert set(parts.tolist()) == {0, 1, 2}
    assert np.array_equal(parts, layers.partition_of(keys, 3))


def test_distinct_and_find():
    """The hash-set kernels of the distributed mode against NumPy (sorting, searching)."""
    keys = np.random.default_rng(3).integers(0, 500, 2000).astype(np.int64)
    uniq = layers.distinct(keys)
    assert np.array_equal(np.sort(uniq), np.unique(keys))
    table = layers.hash_table(uniq)
    assert [layers.find(table, uniq, k) for k in (uniq[7], uniq[0], 10_000)] == [7, 0, -1]


def test_decision_tree_first_move():
    """(2,2): after a yes the other type is named (after the yes, the more likely)."""
    lines = decision_tree(optimal((2, 2)), (2, 2))
    assert lines[0].startswith("card 1: name A")
    assert lines[2].strip().startswith("card 2: name B")


# ------------------------------------------------------------------- the task contract


def float_row(deck, strategy="optimal", **params):
    (row,) = solve(
        {"family": "card_guessing", "deck": deck, "strategy": strategy, "method": "float", **params}
    )
    return row


def test_float_rows():
    row = float_row([5, 3, 2, 1])
    exact = solve({"family": "card_guessing", "deck": [5, 3, 2, 1]})[0]
    assert close(row["expected_score"], Fraction(exact["expected_score_exact"]))
    assert row["expected_score_exact"] is None
    assert all(close(a, b) for a, b in zip(row["score_pmf"], exact["score_pmf"], strict=True))
    assert row["n_states"] == exact["n_states"]
    assert row["first_moves"].startswith("card 1: name A")
    greedy_row = float_row([5, 3, 2, 1], "greedy")
    assert greedy_row["first_moves"] is None and greedy_row["tie_break"] == "lowest"
    assert close(sum(greedy_row["score_pmf"]), 1.0)


def test_float_ignores_exact_size_limit():
    row = float_row([3, 3, 3], max_states=10)
    assert row["status"] == "ok"


@pytest.mark.parametrize(
    ("params", "key"),
    [
        ({"strategy": "greedy", "tie_break": "uniform"}, "tie_break"),
        ({"strategy": "count_tracker"}, "strategy"),  # (info has its own float path)
        ({"feedback": "complete"}, "method"),
        ({"deck": [1] * 16}, "deck"),
        ({"workers": 0}, "workers"),
        ({"strategy": "greedy", "workers": 2}, "workers"),
    ],
)
def test_bad_float_tasks(params, key):
    task = {"family": "card_guessing", "deck": [3, 3], "method": "float", **params}
    with pytest.raises(TaskError) as err:
        solve(task)
    assert err.value.key == key


VALIDATE_WORKERS = """
import sys
from solvers import validate
task = validate({"family": "card_guessing", "deck": [3, 3], "method": "float", "workers": 2})
print(task["workers"], "distributed" in sys.modules)
"""


def test_a_workers_task_validates_whatever_was_imported():
    """The distributed mode is the family's (Scheduling.run_over_cluster), not a hook some import
    installs: a workers=2 task validates in a fresh interpreter that never loaded Dask."""
    assert commands.python_output(VALIDATE_WORKERS) == "2 False"


SPREAD_UNDER_SYNC = """
import sys
from pipeline.backends.sync import SyncExecutor
from pipeline.long_task_setup import LongTaskSetup
from pipeline.running.worker import batch_rows
from solvers import validate
task = validate({"family": "card_guessing", "deck": [3, 3], "method": "float", "workers": 2})
setup = LongTaskSetup(None, 1, None, progress=False)
(row,) = batch_rows([("t", task)], "s", None, SyncExecutor.spreading, setup)
print(row["status"], repr(row["expected_score"]), "distributed" in sys.modules)
"""


def test_a_workers_task_under_sync_spreads_in_this_process_and_starts_no_cluster():
    """Under cluster=sync a workers=2 task spreads its parts in the driver's process, as
    the sync executor hands it (threads, no port for another account to reach): Dask's
    distributed is never loaded, and the value is the single-process one."""
    status, value, loaded = commands.python_output(SPREAD_UNDER_SYNC).split()
    assert (status, loaded) == ("ok", "False")
    assert close(float(value), yes_no.optimal_value((3, 3))[0])


# -------------------------------------------------------------------- distributed mode


def same_solution(a: Solution, b: Solution) -> None:
    assert abs(a.expected_score - b.expected_score) <= REL * b.expected_score
    assert abs(a.score_variance - b.score_variance) <= REL * max(1.0, b.score_variance)
    assert a.n_states == b.n_states and a.layer_sizes == b.layer_sizes
    assert len(a.score_pmf) == len(b.score_pmf)
    assert all(abs(x - y) <= REL for x, y in zip(a.score_pmf, b.score_pmf, strict=True))


@pytest.fixture(scope="module")
def two_worker_processes():
    """A client of a LocalCluster of two single-thread worker processes, for this module."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def test_placement_with_no_worker_known_submits_anywhere():
    """A Dask spreader made while the cluster has no worker (starting, or its workers
    restarting) gives no hint: its parts run on whichever worker comes, instead of Dask
    refusing a submit that allows other workers but names none."""
    from distributed import Client, LocalCluster

    from pipeline.backends.spreading import OnDask

    with (
        LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        run = OnDask(client)
        assert [run.where(h) for h in range(2)] == [None, None]
        futures = [run.submit(abs, -h, place=h) for h in range(2)]
        cluster.scale(1)
        assert run.gather(futures) == [0, 1]


@pytest.mark.slow
def test_local_cluster_matches_single_process(two_worker_processes):
    from pipeline.backends.spreading import OnDask
    from solvers.card_guessing.any_deck import split_layers

    for deck, parts in [((5, 3, 2, 1), 2), ((3, 3, 3), 3), ((4, 2), 1), ((1,), 2)]:
        one = optimal(deck)
        many = split_layers.optimal(OnDask(two_worker_processes), deck, parts)
        same_solution(many, one)
        assert decision_tree(many, deck) == decision_tree(one, deck)


@pytest.mark.slow
@pytest.mark.parametrize("threads", [True, False])
def test_thread_and_process_spreaders_match_single_process(threads, two_worker_processes):
    """N threads of this process (cluster=sync's spreader) or N worker processes of a
    cluster: both split the layers the same way and give the single-process solution."""
    from contextlib import nullcontext

    from pipeline.backends.spreading import OnDask
    from solvers.card_guessing.any_deck import split_layers
    from solvers.kit.spread import in_process

    opened = in_process(2) if threads else nullcontext(OnDask(two_worker_processes))
    with opened as spread:
        assert (spread.places, spread.threads) == ((1, 2) if threads else (2, 1))
        deck = (4, 3, 2, 1)
        same_solution(split_layers.optimal(spread, deck, 2), optimal(deck))


@pytest.mark.slow
def test_address_cluster_matches_single_process(dask_address):
    """A scheduler and two workers started as processes, reached by address."""
    from distributed import Client

    from pipeline.backends.spreading import OnDask
    from solvers.card_guessing.any_deck import split_layers

    with Client(dask_address, timeout=60) as client:
        deck = (5, 3, 2, 1)
        same_solution(split_layers.optimal(OnDask(client), deck, 2), optimal(deck))


@pytest.mark.slow
def test_workers_task_outside_the_pipeline_runs_in_this_process():
    """A task with workers=2 outside the pipeline spreads its parts over 2 threads of this
    process (it starts no cluster: tests/test_architecture.py) and gives the exact values."""

    row = float_row([3, 3, 3], workers=2)
    assert close(row["expected_score"], yes_no.optimal_value((3, 3, 3))[0])
    expected = exact_pmf((3, 3, 3), "optimal")
    assert all(close(a, b) for a, b in zip(row["score_pmf"], expected, strict=True))


# ----------------------------------------------------------------------------- summary


def test_summary_section(tmp_path):
    """The suits52 section: gap table, plot, and the first moves of the largest deck."""
    import pandas as pd

    from solvers.card_guessing.summary import suits52

    rows = []
    for deck in ([2, 2, 2, 2], [3, 3, 3, 3], [3, 3, 3], [5, 3, 2, 1]):
        rows += float_row(deck, "optimal"), float_row(deck, "greedy")
    rows.append(solve({"family": "card_guessing", "deck": [3, 3, 3, 3]})[0])  # exact: ignored
    frame = pd.DataFrame(rows)
    table = suits52.gap_table(frame)
    assert table[["r", "m"]].values.tolist() == [[3, 3], [4, 2], [4, 3]]
    gap = table.set_index(["r", "m"]).loc[(3, 3), "gap"]
    assert close(
        gap, Fraction(2383, 560) - Fraction(475, 112)
    )  # Gural, Simper & So (2019): 2383/560 and 475/112
    text = "\n".join(suits52.sections(frame, tmp_path))
    assert "deck (3,3,3,3)" in text and "card 1: name A" in text
    assert (tmp_path / "card_guessing_suits_gap.png").stat().st_size > 0
    assert suits52.sections(frame[frame["method"] == "exact"], tmp_path) == []
    # greedy alone (as in the study ranks52): no table of empty gaps, no empty plot
    alone = tmp_path / "greedy_alone"
    alone.mkdir()
    assert suits52.sections(frame[frame["strategy"] == "greedy"], alone) == []
    assert list(alone.iterdir()) == []


@pytest.mark.slow
def test_workers_task_inside_a_dask_worker(two_worker_processes):
    """As in a study run: the task runs on a worker and borrows the cluster it runs on."""

    def run(task):  # nested: sent to the worker by value
        from pipeline.backends.executor import Executor
        from pipeline.long_task_setup import LongTaskSetup
        from solvers import solve as solve_on_worker
        from solvers.kit.current_task import using

        setup = LongTaskSetup(None, 2, None, progress=False)
        with using(setup.context("t", Executor.spreading)):  # what the pipeline hands in
            return solve_on_worker(task)

    task = {"family": "card_guessing", "deck": [4, 3, 2], "method": "float", "workers": 2}
    (row,) = two_worker_processes.submit(run, task).result()
    assert row["status"] == "ok"
    assert close(row["expected_score"], yes_no.optimal_value((4, 3, 2))[0])
    assert row["n_states"] == optimal((4, 3, 2)).n_states
