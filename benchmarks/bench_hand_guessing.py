"""Timings of the hand_guessing family: feedback table, whole tables, four-card runs.

Run: python benchmarks/bench_hand_guessing.py          (1-3 cards, about a minute)
     python benchmarks/bench_hand_guessing.py --four   (adds 4 cards: minutes)
Prints one line per measurement (wall seconds; the machine may be shared).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solvers import solve  # noqa: E402
from solvers.hand_guessing import strategies as S  # noqa: E402
from solvers.hand_guessing import table as T  # noqa: E402
from solvers.hand_guessing.cards import Deck  # noqa: E402

FULL = Deck()
FOUR_FIRST = ["5C", "6C", "7D", "JD"]  # the min_expected_size search result for 4 cards


def seconds(fn) -> tuple[float, object]:
    """(wall seconds, result) of one call."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def bench_features() -> None:
    for cards in (2, 3, 4):
        T.features.cache_clear()
        s, f = seconds(lambda c=cards: T.features(FULL, c))
        print(f"features {cards} cards: {len(f):,} hands, {s:.2f} s")
    f = T.features(FULL, 3)
    g, a = np.arange(500), np.arange(len(f))
    s, _ = seconds(lambda: T.codes(f, g, a))
    print(f"feedback codes 500 x {len(a):,}: {s:.3f} s, {s / (len(g) * len(a)) * 1e9:.1f} ns/pair")


def bench_tables() -> None:
    cases = [("min_expected_size", None), ("sharma_mittal", 1.0), ("sharma_mittal", 2.0)]
    for cards in (1, 2, 3):
        for strategy, t in cases:
            task = {"family": "hand_guessing", "cards": cards, "strategy": strategy}
            if t is not None:
                task["entropy_t"] = t
            S.searched_first_guess.cache_clear()
            s, rows = seconds(lambda task=task: solve(task))
            row = rows[0]
            print(
                f"{cards} cards {strategy}{'' if t is None else f'(t={t:g})'}: whole table "
                f"{s:.2f} s (first-guess search included), first {row['first_guess']}, "
                f"average {row['average_guesses_exact']} = {row['average_guesses']:.4f}, "
                f"max {row['max_guesses']}, histogram {row['histogram']}"
            )


def bench_four() -> None:
    f = T.features(FULL, 4)
    S.searched_first_guess.cache_clear()
    s, first = seconds(lambda: S.searched_first_guess(FULL, 4, "min_expected_size", 1.0))
    print(f"4 cards first-guess search: {FULL.hand_name(f.hands[first].tolist())}, {s:.1f} s")
    task = {"family": "hand_guessing", "cards": 4, "first_guess": FOUR_FIRST}
    s, rows = seconds(lambda: solve({**task, "sample": 1000}))
    row = rows[0]
    print(
        f"4 cards sample of 1000: {s:.1f} s, mean {row['average_guesses']:.4f} "
        f"± {row['standard_error']:.4f}"
    )
    s, rows = seconds(lambda: solve({**task, "n_chunks": 12, "answer_chunk": 5}))
    print(f"4 cards one chunk of 12 ({rows[0]['answers']:,} answers): {s:.1f} s")
    s, result = seconds(lambda: S.play(f, first, S.Rule()))
    g = result.guesses
    print(
        f"4 cards whole table in one process: {s:.1f} s, total {int(g.sum()):,} over {len(g):,}, "
        f"average {g.mean():.6f}, max {g.max()}, histogram {np.bincount(g)[1:].tolist()}"
    )


def main() -> None:
    bench_features()
    bench_tables()
    if "--four" in sys.argv:
        bench_four()


if __name__ == "__main__":
    main()
