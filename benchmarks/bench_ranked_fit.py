"""The ranked cost model of ``stage=plan`` (solvers/card_guessing/tasks/ranked_tasks.py) fitted
on out-of-core solves of the working tree: CPU per rank and type of each part of a solve.

    python benchmarks/bench_ranked_fit.py                   # 8, 9, 10 types of 4
    python benchmarks/bench_ranked_fit.py --types 8,9,10,11 --budget 4GB
    python benchmarks/bench_ranked_fit.py --types 11 --keep /scratch/fit   # resumable

Each solve is ``out_of_core.solve([4] * n, "optimal", client=...)`` on a LocalCluster of 2
worker processes of one thread (what ``cluster=local cluster.n_workers=2`` starts for the
study ``ranks_exact``), after a 3-type solve that compiles the kernels in each worker.  Its
CPU is that of the workers (``getrusage`` through ``client.run``) and of this process, split
by the solve's own lines: the value layers (the CPU of their chunks), the last layer (T and
log A, shared by a deck's policies) and the rest (the score pass, the driver, the commits).

Prints one JSON line per solve (with the peak resident memory of the busiest worker,
``getrusage``'s ru_maxrss, beside its budget; the solve's own lines go to stderr as they
come), then the least-squares constants ``c`` of ``CPU = c x r x ranks`` (r types) for
the policy's part (value layers and the rest, over every rank) and for the last layer (over
its ranks), the fit's error on each solve, and the 13 x 4 figures the constants give:
CPU-hours per policy, for the last layer, and for three policies sharing it.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dask.utils import parse_bytes  # noqa: E402

from solvers.card_guessing.uniform_deck import out_of_core  # noqa: E402
from solvers.card_guessing.uniform_deck.ranks import layer_sizes  # noqa: E402

CPU_OF_LINE = re.compile(r"^layer (\d+)( \(last\))?: .*, ([0-9.]+) s CPU")


def _own_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _workers_cpu(client) -> float:
    return sum(client.run(_own_cpu).values())


def _peak_bytes() -> int:
    """This process's peak resident memory (what the nanny compares with the budget)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def measured(n: int, budget: str, keep: Path | None = None) -> dict:
    """One solve of n types of 4: its value, wall time, and CPU by part.  ``keep``: a folder
    for its checkpoints, kept after and resumed from (else a temporary one)."""
    from dask.distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=budget) as cluster,
        Client(cluster) as client,
    ):
        out_of_core.solve([4] * 3, client=client, with_pmf=True)  # compile in each worker
        lines: list[str] = []
        checkpoints = None
        if keep is not None:
            from solvers.kit.checkpoints import Checkpoints

            checkpoints = Checkpoints(keep / f"{n}x4", root=keep)
        workers, driver, wall = _workers_cpu(client), _own_cpu(), time.perf_counter()
        sol = out_of_core.solve(
            [4] * n,
            client=client,
            budget_bytes=parse_bytes(budget),
            log=lambda line: (lines.append(line), print(line, file=sys.stderr, flush=True)),
            checkpoints=checkpoints,
            warn=lines.append,
        )
        wall = time.perf_counter() - wall
        total = _workers_cpu(client) - workers + _own_cpu() - driver
        peak = max(client.run(_peak_bytes).values())
    value = last = 0.0
    for line in lines:
        if (hit := CPU_OF_LINE.match(line)) is not None:
            if hit.group(2):
                last += float(hit.group(3))
            else:
                value += float(hit.group(3))
    sizes = layer_sizes([4] * n)
    return {
        "types": n,
        "value": sol.expected_score.hex(),
        "expected_score": sol.expected_score,
        "ranks": int(sum(sizes)),
        "last_ranks": int(sizes[-1]),
        "wall_s": round(wall, 1),
        "cpu_s": round(total, 1),
        "value_layers_cpu_s": round(value, 1),
        "last_layer_cpu_s": round(last, 1),
        "rest_cpu_s": round(total - value - last, 1),
        "peak_worker_mb": round(peak / 2**20),
        "budget_mb": round(parse_bytes(budget) / 2**20),
    }


def fitted(xs: list[float], ys: list[float]) -> float:
    """The least-squares c of y = c x."""
    return sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--types", default="8,9,10", help="types of 4, comma-separated")
    parser.add_argument("--budget", default="4GB", help="memory limit of each worker")
    parser.add_argument("--keep", type=Path, help="keep checkpoints here (a rerun resumes)")
    args = parser.parse_args()
    runs = []
    for n in (int(t) for t in args.types.split(",")):
        runs.append(measured(n, args.budget, args.keep))
        print(json.dumps(runs[-1]), flush=True)
    policy_x = [r["types"] * r["ranks"] for r in runs]
    policy_y = [r["cpu_s"] - r["last_layer_cpu_s"] for r in runs]
    last_x = [r["types"] * r["last_ranks"] for r in runs]
    last_y = [r["last_layer_cpu_s"] for r in runs]
    per_policy, per_last = fitted(policy_x, policy_y), fitted(last_x, last_y)
    print(f"\npolicy's part: {per_policy:.4e} s per rank and type (every rank of the solve)")
    print(f"last layer:    {per_last:.4e} s per rank and type (the last layer's ranks)")
    print(f"{'types':>6}{'measured s':>12}{'fit s':>10}{'error':>8}")
    for run, px, lx in zip(runs, policy_x, last_x, strict=True):
        fit = per_policy * px + per_last * lx
        print(f"{run['types']:>6}{run['cpu_s']:>12.1f}{fit:>10.1f}{fit / run['cpu_s'] - 1:>8.1%}")
    sizes = layer_sizes([4] * 13)
    policy_h = per_policy * 13 * sum(sizes) / 3600
    last_h = per_last * 13 * sizes[-1] / 3600
    print(
        f"\n13 x 4: {policy_h + last_h:.1f} CPU-hours for a policy alone ({last_h:.1f} of them "
        f"the last layer); three policies sharing the last layer: {3 * policy_h + last_h:.1f}"
    )


if __name__ == "__main__":
    main()
