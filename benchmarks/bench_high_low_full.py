"""Timings of the high_low float layers for real decks (solvers/high_low/float_layers/).

Run as ``python benchmarks/bench_high_low_full.py [--study] [--ranks 10,11,12,13]``:

- per deck ``ranks`` x 4: (counts, card showing) states, count vectors, the largest layer,
  the W values held at once, wall and CPU seconds of one solve (ties lose, optimal policy,
  no departures), its P(no wrong call);
- ``--study``: the six float tasks of study ``high_low_full_deck`` through ``solvers.solve``
  in one process (ties win and push share one solve), wall and CPU seconds;
- at the end the process's peak resident memory.

The Numba kernels are compiled (or loaded from the cache) on a small deck first, outside the
timings.  CPU seconds count every thread (the layer kernel runs on all cores).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from solvers import solve  # noqa: E402
from solvers.high_low.float_layers import sizes, solver  # noqa: E402


def timed(fn):
    """(wall seconds, CPU seconds of all threads, result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def peak_rss_gb() -> float:
    """Peak resident memory of this process so far, in GB (Linux: ru_maxrss is in kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def bench_decks(ranks_list: list[int], suits: int = 4) -> None:
    print(f"one solve per deck, ties lose, optimal policy (mirror images merged), {suits} suits")
    head = f"{'deck':>6} {'states':>14} {'vectors':>12} {'largest':>10} {'W held':>12}"
    print(head + f" {'GB':>5} {'wall s':>7} {'CPU s':>7}  p")
    for ranks in ranks_list:
        size = sizes.size_estimate(ranks, suits)
        wall, cpu, res = timed(lambda r=ranks: solver.solve(r, suits, "lose", "optimal"))
        print(
            f"{ranks:>3}x{suits:<2} {size.states:14,d} {size.vectors:12,d} "
            f"{size.largest_layer:10,d} {size.layer_values:12,d} {size.total_bytes / 1e9:5.2f} "
            f"{wall:7.1f} {cpu:7.1f}  {res.p:.12e}  (solved {res.states:,d} merged states)"
        )


def bench_study() -> None:
    print("\nstudy high_low_full_deck, float tasks through solvers.solve (one process)")
    total_wall = total_cpu = 0.0
    for ties in ("lose", "win", "push"):
        for strategy in ("optimal", "majority"):
            task = dict(family="high_low", ranks=13, suits=4, ties=ties, method="float")
            wall, cpu, rows = timed(lambda t=task, s=strategy: solve({**t, "strategy": s}))
            total_wall, total_cpu = total_wall + wall, total_cpu + cpu
            row = rows[0]
            extra = f", departures {row['departures']:,}" if row["departures"] is not None else ""
            print(
                f"  ties {ties:4} {strategy:8} P = {row['p_perfect']:.12e}  "
                f"{wall:6.1f} s wall {cpu:6.1f} s CPU{extra}"
            )
    print(f"  all six: {total_wall:.1f} s wall, {total_cpu:.1f} s CPU")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="10,11,12,13", help="ranks of the decks timed")
    parser.add_argument("--study", action="store_true", help="also the six study tasks")
    args = parser.parse_args()
    solver.solve(5, 3, "lose", "optimal", departures=True)  # compile or load the kernels
    solver.solve(5, 3, "lose", "majority")
    bench_decks([int(r) for r in args.ranks.split(",") if r])
    if args.study:
        bench_study()
    print(f"\npeak resident memory of this process: {peak_rss_gb():.2f} GB")
