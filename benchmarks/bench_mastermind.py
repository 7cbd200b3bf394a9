"""Timings of the mastermind family: feedback table and exact strategy evaluation.

Run: python benchmarks/bench_mastermind.py  (prints one line per measurement)
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solvers import mastermind as M  # noqa: E402
from solvers.mastermind import codes as R  # noqa: E402

CASES = [
    ("minimax", 1.0, 1.0),
    ("expected_size", 1.0, 1.0),
    ("most_parts", 1.0, 1.0),
    ("first_feasible", 1.0, 1.0),
    ("sharma_mittal", 1.0, 1.0),
    ("sharma_mittal", 2.0, 2.0),
    ("sharma_mittal", 0.5, 3.0),
    ("sharma_mittal", math.inf, 1.0),
    ("sharma_mittal", 0.0, 1.0),
]


def seconds(fn) -> tuple[float, object]:
    """(wall seconds, result) of one call."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    for pegs, colours in [(4, 6), (5, 5), (4, 8)]:
        R.feedback_table.cache_clear()
        s, table = seconds(lambda p=pegs, c=colours: R.feedback_table(p, c))
        print(f"feedback table {pegs}x{colours}: {len(table)} codes, {s:.3f} s")
    R.feedback_table(4, 6)
    for strategy, r, t in CASES:
        s, row = seconds(lambda st=strategy, r=r, t=t: M.evaluate(4, 6, None, st, r, t))
        label = strategy if strategy != "sharma_mittal" else f"{strategy}(r={r}, t={t})"
        print(
            f"4x6 uniform {label}: {s:.2f} s, total {row['total_guesses']}, "
            f"max {row['max_guesses']}, first {row['first_guess']}, nodes {row['tree_nodes']}"
        )
    for pegs, colours in [(4, 8), (5, 5)]:
        s, row = seconds(lambda p=pegs, c=colours: M.evaluate(p, c, None, "minimax"))
        print(
            f"{pegs}x{colours} uniform minimax: {s:.2f} s, mean {row['expected_guesses']:.4f}, "
            f"max {row['max_guesses']}, first {row['first_guess']}"
        )
    for r, t in [(1.0, 1.0), (2.0, 2.0), (math.inf, 1.0)]:
        s, row = seconds(
            lambda r=r, t=t: M.evaluate(4, 6, [3, 2, 2, 1, 1, 1], "sharma_mittal", r, t)
        )
        print(
            f"4x6 jar 3,2,2,1,1,1 sharma_mittal(r={r}, t={t}): {s:.2f} s, "
            f"mean {row['expected_guesses']:.4f}"
        )
    s, row = seconds(lambda: M.evaluate(3, 4, [10, 6, 4, 2], "sharma_mittal"))
    print(f"3x4 jar 10,6,4,2 shannon: {s:.3f} s, mean {row['expected_guesses']:.4f}")


if __name__ == "__main__":
    main()
