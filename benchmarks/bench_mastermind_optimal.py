"""Timings of the optimal Mastermind strategy (branch and bound): time, nodes searched.

Run: python benchmarks/bench_mastermind_optimal.py [--with-4x7]  (one line per measurement;
wall and CPU seconds of this process, candidate sets searched, queries scored).  The first
call compiles the Numba kernel unless its cache is warm; it is timed separately.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solvers.mastermind import codes as R  # noqa: E402
from solvers.mastermind.optimal.optimum import optimum, subtree_optimum  # noqa: E402

CASES = [
    (3, 4, None, None),
    (3, 4, [10, 6, 4, 2], None),
    (4, 4, [10, 6, 4, 2], None),
    (4, 4, [5, 1, 1, 1], None),
    (3, 6, None, None),
    (4, 6, None, None),  # Koyama & Lai (1993): 5625
    (4, 6, None, 5),  # Koyama & Lai (1993): 5626 with at most five guesses
]
SUBTREES_4X7 = [("1234", (0, 0)), ("1234", (0, 3)), ("1234", (1, 0)), ("1234", (0, 1))]


def timed(fn):
    """(wall seconds, CPU seconds, result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def main() -> None:
    wall, cpu, _ = timed(lambda: optimum(2, 3))
    print(f"warm-up (Numba compile or cache load): {wall:.1f} s wall, {cpu:.1f} s CPU")
    for pegs, colours, jar, limit in CASES:
        wall, cpu, opt = timed(lambda p=pegs, c=colours, j=jar, g=limit: optimum(p, c, j, g))
        name = f"{pegs}x{colours} {'uniform' if jar is None else ','.join(map(str, jar))}"
        name += "" if limit is None else f" at most {limit} guesses"
        print(
            f"{name}: total {opt.total} / {opt.weight} = {float(opt.expected):.6f}, "
            f"max {opt.guesses.max()}, {wall:.1f} s wall, {cpu:.1f} s CPU, "
            f"{opt.nodes:,} sets searched, {opt.queries:,} queries scored",
            flush=True,
        )
    if "--with-4x7" in sys.argv:
        for guess, answer in SUBTREES_4X7:
            q = sum((int(d) - 1) * 7 ** (3 - i) for i, d in enumerate(guess))
            a = R.feedbacks(4).index(answer)
            wall, cpu, opt = timed(lambda q=q, a=a: subtree_optimum(4, 7, None, None, q, a))
            print(
                f"4x7 subtree {guess}:{answer[0]},{answer[1]}: {len(opt.codes)} codes, "
                f"total {opt.total}, {wall:.1f} s wall, {cpu:.1f} s CPU, "
                f"{opt.nodes:,} sets searched",
                flush=True,
            )


if __name__ == "__main__":
    main()
