"""Timings of family ``high_low``: run as ``python benchmarks/bench_high_low.py [--full]``.

Distinct cards: the NumPy float path against the seed-style memoised recursion (baseline) and
the exact integer layers; the majority-rule optimality check for n <= 200; real decks: exact
states and seconds, the exact expected right calls and Monte Carlo for the full 13 x 4 deck.
``--full`` adds the baseline at n = 1000 and the 8 x 4 exact deck (a minute or more).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solvers.high_low import deck, distinct  # noqa: E402


def best_time(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """(fastest seconds of ``repeat`` runs, the last result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def bench_distinct(full: bool) -> None:
    print("distinct cards: P(every call right), optimal play")
    print(f"{'n':>6} {'float s':>9} {'baseline s':>11} {'exact s':>9} {'states':>8}  p")
    for n in (100, 200, 400, 1000):
        t_float, (p, _) = best_time(lambda n=n: distinct.p_perfect_float(n))
        if n <= 400 or full:
            t_base, (p_base, _) = best_time(lambda n=n: distinct.p_perfect_memo(n), repeat=1)
            assert abs(p_base / p - 1) < 1e-9
            base = f"{t_base:11.3f}"
        else:
            base = f"{'(--full)':>11}"
        t_exact, exact = best_time(lambda n=n: distinct.p_perfect(n), repeat=1)
        assert abs(float(exact) / p - 1) < 1e-10
        print(f"{n:6d} {t_float:9.4f} {base} {t_exact:9.3f} {distinct.n_states(n):8d}  {p:.6e}")
    t, (p, log10_p) = best_time(lambda: distinct.p_perfect_float(10_000), repeat=1)
    print(f"n = 10,000 by the float path: {t:.2f} s, log10 P = {log10_p:.3f}")
    t, (worse, strict, checked) = best_time(lambda: distinct.majority_optimality(200), repeat=1)
    print(
        f"majority rule optimal for every n <= 200: {worse} (strictly better whenever the "
        f"counts differ: {strict}); {checked:,} states, {t:.3f} s"
    )


def bench_decks(full: bool) -> None:
    print("\nreal decks, exact P(no wrong call), ties = lose")
    print(f"{'deck':>6} {'policy':>9} {'states':>9} {'estimate':>9} {'s':>7}  p")
    sizes = [(13, 2), (8, 3), (6, 4), (7, 4)] + ([(8, 4)] if full else [])
    for ranks, suits in sizes:
        for policy in ("optimal", "majority"):
            t, (p, states) = best_time(
                lambda r=ranks, s=suits, pol=policy: deck.p_perfect(r, s, "lose", pol), repeat=1
            )
            est = deck.estimated_states(ranks, suits)
            print(
                f"{ranks:>3}x{suits:<2} {policy:>9} {states:9d} {est:9d} {t:7.2f}  {float(p):.6e}"
            )
    print(f"full deck 13x4 would need about {deck.estimated_states(13, 4):,} states")
    for ties in deck.TIES:
        t, e = best_time(lambda ties=ties: deck.expected_correct(13, 4, ties), repeat=1)
        print(f"13x4 exact expected right calls, ties {ties}: {float(e):.12f} ({t:.2f} s)")
    n_games = 200_000
    for ties in deck.TIES:
        rng = np.random.default_rng(2020)
        t, (p, se) = best_time(
            lambda ties=ties, rng=rng: deck.p_perfect_monte_carlo(13, 4, ties, n_games, rng),
            repeat=1,
        )
        print(
            f"13x4 majority rule, ties {ties}: P = {p:.4e} +- {se:.1e} "
            f"({n_games:,} games, {t:.1f} s)"
        )


if __name__ == "__main__":
    full = "--full" in sys.argv
    sys.setrecursionlimit(20_000)  # the baseline recurses about n deep
    bench_distinct(full)
    bench_decks(full)
