"""Timings for family ``triples``: exact win probabilities and the exact chain computations.

Run: ``python benchmarks/bench_triples.py`` (prints one line per measurement).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solvers.triples import chain, simulate, win  # noqa: E402


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of ``repeat`` wall-clock timings of ``fn()``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def fresh_win_probabilities(ranks: int, suits: int, k: int):
    """Exact p_win for every level, bypassing the cache."""
    win.quartet_moment_law.cache_clear()
    return win.win_probabilities(ranks, suits, k)


def main() -> None:
    p = fresh_win_probabilities(13, 4, 3)
    mat = chain.transition_matrix(p)
    rows = [
        (
            "p_win, all 14 levels, forward tally pass (13x4, k=3)",
            lambda: fresh_win_probabilities(13, 4, 3),
            5,
        ),
        (
            "p_win, level 13 only, backward recursion (13x4, k=3)",
            lambda: win.win_probability_recursive(13, 4, 3, 13),
            5,
        ),
        (
            "p_win, all 14 levels, backward recursion level by level",
            lambda: [win.win_probability_recursive(13, 4, 3, n) for n in range(15)],
            3,
        ),
        (
            "p_win, all levels, 13x6 k=4 (2380 tallies)",
            lambda: fresh_win_probabilities(13, 6, 4),
            3,
        ),
        (
            "p_win, all levels, 52x4 k=3 (26235 tallies)",
            lambda: fresh_win_probabilities(52, 4, 3),
            1,
        ),
        (
            "hitting times from 4 to every level, birth-death sums",
            lambda: chain.hitting_times_from(p, 4),
            5,
        ),
        (
            "hitting times, all 14x14, Fraction Gaussian elimination",
            lambda: [chain.hitting_times_to(mat, t) for t in range(1, 15)],
            3,
        ),
        ("distribution after j = 0..40 rounds from 4", lambda: chain.distributions(p, 4, 40), 3),
        ("distribution after j = 0..200 rounds from 4", lambda: chain.distributions(p, 4, 200), 1),
        ("stationary law", lambda: chain.stationary(p), 5),
    ]
    import numpy as np

    rng = np.random.default_rng(0)
    rows.append(
        (
            "Monte Carlo, 100,000 shuffled 52-card decks",
            lambda: simulate.count_wins(rng, 13, 4, 3, 4, 100_000),
            1,
        )
    )
    for label, fn, repeat in rows:
        print(f"{label:<62} {best_of(fn, repeat) * 1000:10.2f} ms")
    law, states = win.quartet_moment_law(13, 4, 3)
    print(f"tally states visited for 13x4, k=3: {states}")


if __name__ == "__main__":
    main()
