"""Benchmark of the ranked float solver against the hashed one
(solvers/card_guessing/: uniform_deck/in_memory.py, any_deck/).

    python benchmarks/bench_ranked.py                                # (8,8,8,8), both solvers
    python benchmarks/bench_ranked.py --deck 13,13,13,13 --solver ranked
    python benchmarks/bench_ranked.py --deck 4,4,4,4,4,4,4,4 --solver ranked --policy greedy

Each solve runs in a fresh process (so peak RSS is that solver's alone) after a warm-up on a
small deck (Numba compiles and caches the kernels).  Prints one JSON line per solve: wall and
CPU (user + system, all threads) seconds, peak RSS, states per CPU second and bytes of peak
RSS per state.  uniform_deck/'s kernels use both cores (Numba prange); any_deck/'s one.

Measured 2026-11-23 on the 2-core machine, shared with three other engineers' jobs (load
average 5 to 18 on 2 cores: wall times are several times the CPU times):

- (13,13,13,13) optimal, ranked: 15.531637252574 (any_deck/'s value to 1e-12), 64,485,032
  feasible states (any_deck/ reaches the same 64,485,032) in a rank space of 67,392,949; CPU
  60.2 s, wall 115 s at 51% of one core, peak RSS 574 MB: 1.07 million states per CPU second,
  8.9 bytes per state.  any_deck/ (2026-11-22, same machine, one process): 209.7 s,
  1.48 GB: about 0.31 million states per second, 23 bytes per state.
- n types of 4, optimal, ranked, CPU / peak RSS: n = 7: 10.8 s / 267 MB; n = 8: 60.7 s /
  594 MB (40,073,599 states); n = 9: 368 s / 2.19 GB (203,622,150 states; wall 36 min).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def solve_once(solver: str, deck: list[int], policy: str) -> dict:
    """One solve in this process, after a warm-up: value, states, time and peak memory."""
    from solvers.card_guessing.any_deck import greedy, optimal
    from solvers.card_guessing.uniform_deck import in_memory

    if solver == "ranked":
        in_memory.solve([2, 2], policy)
        run = lambda: in_memory.solve(deck, policy)  # noqa: E731
    else:
        (optimal.optimal if policy == "optimal" else greedy.greedy)([2, 2])
        run = lambda: (optimal.optimal if policy == "optimal" else greedy.greedy)(deck)  # noqa: E731
    wall, cpu = time.perf_counter(), time.process_time()
    sol = run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "solver": solver,
        "deck": deck,
        "policy": policy,
        "expected_score": sol.expected_score,
        "n_states": sol.n_states,
        "wall_seconds": wall,
        "cpu_seconds": cpu,
        "peak_rss_mb": rss / 2**20,
        "states_per_cpu_second": sol.n_states / cpu,
        "bytes_per_state": rss / sol.n_states,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deck", default="8,8,8,8")
    parser.add_argument("--solver", default="ranked,fast", help="ranked, fast or both")
    parser.add_argument("--policy", default="optimal", choices=("optimal", "greedy"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    deck = [int(c) for c in args.deck.split(",")]
    if args.child:
        print(json.dumps(solve_once(args.solver, deck, args.policy)), flush=True)
        return
    for solver in args.solver.split(","):
        cmd = [sys.executable, __file__, "--child", "--solver", solver, "--deck", args.deck]
        subprocess.run([*cmd, "--policy", args.policy], check=True)


if __name__ == "__main__":
    main()
