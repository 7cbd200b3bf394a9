"""A uniform deck solved out of core over Dask workers (uniform_deck/out_of_core.py) against
the in-memory solve (uniform_deck/in_memory.py), side by side in one run.

    python benchmarks/bench_ranked_layers.py                          # 8 and 9 types of 4
    python benchmarks/bench_ranked_layers.py --types 8 --workers 1,2  # scaling, 1 and 2 workers
    python benchmarks/bench_ranked_layers.py --types 10 --modes layers --workers 1 \\
        --folder /work/ranks10 --budget 4e9                           # a long run, resumable

Each solve runs in a fresh process (after a warm-up on a small deck: Numba's kernels are
compiled and cached).  ``single``: in_memory.solve in that process.  ``layers``: a
LocalCluster of ``--workers`` processes (one Dask thread each; the kernels' Numba threads use
every core, as the single solver's do) each limited to ``--budget`` bytes, the layers in
``--folder`` (default: a temporary folder).  CPU seconds are the user + system time of every
process of the solve (the driver and each worker, all their threads: getrusage), so they stay
comparable on a machine shared with other jobs, where wall time does not.  Prints one JSON
line per solve: ranks, feasible states, value, CPU and wall seconds, CPU microseconds per rank,
peak RSS of the driver and of each worker.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def usage() -> dict:
    """CPU seconds (user + system, every thread) and peak RSS (bytes) of this process."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"cpu": ru.ru_utime + ru.ru_stime, "peak_rss": ru.ru_maxrss * 1024}


def warm() -> None:
    from solvers.card_guessing.uniform_deck import in_memory, out_of_core

    in_memory.solve([2, 2])
    out_of_core.solve([2, 2], chunk=out_of_core.ALIGN)


def run_single(deck: list[int], policy: str, window: float) -> dict:
    from solvers.card_guessing.uniform_deck import in_memory

    warm()
    before, wall = usage(), time.perf_counter()
    sol = in_memory.solve(deck, policy, window=window)
    wall, after = time.perf_counter() - wall, usage()
    return {
        "cpu_s": after["cpu"] - before["cpu"],
        "wall_s": wall,
        "peak_rss_mb": [after["peak_rss"] / 1e6],
        "sol": sol,
    }


def run_layers(deck, policy, window, workers: int, budget: float, folder: str | None) -> dict:
    from distributed import Client, LocalCluster

    from solvers.card_guessing.uniform_deck import out_of_core
    from solvers.kit.checkpoints import Checkpoints

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",  # a free port: None still asks for 8787
            memory_limit=int(budget),
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(warm)
        warm()
        before = client.run(usage)
        mine, wall = usage(), time.perf_counter()
        tmp = None
        if folder is None:
            tmp = tempfile.TemporaryDirectory(prefix="bench-ranked-layers-", dir=ROOT)
            folder = tmp.name
        store = Checkpoints(Path(folder) / "task", root=folder)
        sol = out_of_core.solve(
            deck,
            policy,
            window,
            client=client,
            checkpoints=store,
            budget_bytes=int(budget),
            log=lambda text: print(text, file=sys.stderr, flush=True),
        )
        wall = time.perf_counter() - wall
        after, me = client.run(usage), usage()
        if tmp is not None:
            tmp.cleanup()
    cpu = sum(after[w]["cpu"] - before[w]["cpu"] for w in after) + me["cpu"] - mine["cpu"]
    return {
        "cpu_s": cpu,
        "wall_s": wall,
        "peak_rss_mb": [after[w]["peak_rss"] / 1e6 for w in sorted(after)],
        "driver_peak_rss_mb": me["peak_rss"] / 1e6,
        "sol": sol,
    }


def child(args) -> None:
    deck = [4] * args.types
    window = 0.1 if args.policy == "persistent" else 0.0
    if args.mode == "single":
        out = run_single(deck, args.policy, window)
    else:
        out = run_layers(deck, args.policy, window, args.workers, args.budget, args.folder)
    sol = out.pop("sol")
    print(
        json.dumps(
            {
                "mode": args.mode,
                "types": args.types,
                "policy": args.policy,
                "workers": args.workers if args.mode == "layers" else None,
                "ranks": sol.rank_space,
                "states": sol.n_states,
                "expected_score": sol.expected_score,
                "score_variance": sol.score_variance,
                **out,
                "cpu_us_per_rank": 1e6 * out["cpu_s"] / sol.rank_space,
            }
        ),
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--types", default="8,9", help="types of 4 cards, comma-separated")
    parser.add_argument("--modes", default="single,layers")
    parser.add_argument("--workers", default="1", help="worker counts for layers, e.g. 1,2")
    parser.add_argument("--policy", default="optimal")
    parser.add_argument("--budget", type=float, default=4e9, help="bytes per worker")
    parser.add_argument("--folder", default=None, help="checkpoint folder (kept)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.types, args.workers = int(args.types), int(args.workers)
        child(args)
        return
    for types in args.types.split(","):
        for mode in args.modes.split(","):
            for workers in args.workers.split(",") if mode == "layers" else ["1"]:
                cmd = [sys.executable, __file__, "--child", "--mode", mode, "--types", types]
                cmd += ["--workers", workers, "--policy", args.policy, "--budget", str(args.budget)]
                if args.folder:
                    cmd += ["--folder", args.folder]
                subprocess.run(cmd, check=True)


if __name__ == "__main__":
    main()
