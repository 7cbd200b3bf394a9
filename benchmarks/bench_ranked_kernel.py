"""The ranked solver (card_guessing, method ranked) of a git revision against the working tree,
side by side, alternating: CPU seconds per rank and the ratio.

    python benchmarks/bench_ranked_kernel.py --against REV    # 8, 9 in memory; 8 out of core
    python benchmarks/bench_ranked_kernel.py --against REV --memory 8 --disk 8 --rounds 5

Cases:

- **in memory**: ``solvers.solve({"family": "card_guessing", "feedback": "partial",
  "strategy": "optimal", "method": "ranked", "deck": [4] * n})`` in a fresh process, after a
  warm-up solve of 2 types (Numba compiles and caches the kernels, per tree); CPU is the
  process's user + system time (every thread) around the solve.
- **out of core**: ``python -m pipeline study=ranks_exact`` on ``[4] * n`` (the optimum
  alone), ``cluster=local cluster.n_workers=2``, ``run.memory_budget`` below the in-memory
  need (so the layers go to disk, split into chunks over both workers); CPU is that of every
  process of the run (the driver, the nannies, the workers: the benchmark's children, after
  they exit), less that of the same run on 2 types (the pipeline's and the cluster's own
  start and stop), so it is the solve's.

Each round runs every case for the revision, then for the working tree; each tree is a copy
(``git archive``) with its own Numba cache, warmed by one solve before the first round.  The
trees run in this environment's virtual environment, whose editable install serves the
configs (``pipeline.conf``) of the checkout it was made from to both: the study's config, not
the code measured.
Prints one JSON line per run (the value and the states, which must agree between the two
trees to the last bit, and the CPU), then a table: per case and tree, the CPU microseconds
per rank (min / median / max over the rounds) and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

IN_MEMORY = r"""
import json, sys, time
from solvers import solve
def task(n):
    return {"family": "card_guessing", "feedback": "partial", "strategy": "optimal",
            "method": "ranked", "deck": [4] * n}
solve(task(2))
cpu, wall = time.process_time(), time.perf_counter()
row = solve(task(int(sys.argv[1])))[0]
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps({"cpu_s": cpu, "wall_s": wall, "value": row["expected_score"].hex(),
                  "states": int(row["n_states"])}))
"""


def ranks_of(n: int) -> int:
    """Ranks of all layers of n types of 4 (the working tree's rank space; the same at any
    revision of the ranked solver)."""
    sys.path.insert(0, str(ROOT))
    from solvers.card_guessing.uniform_deck.ranks import layer_sizes

    return sum(layer_sizes([4] * n))


def tree_of(rev: str | None, parent: Path) -> Path:
    """A copy of the working tree (rev None) or of ``rev``, as files."""
    out = parent / (rev or "working-tree").replace("/", "_")
    out.mkdir()
    if rev is None:
        files = subprocess.run(
            ["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=True,
        ).stdout
        for name in filter(None, files.decode().split("\0")):
            src, dst = ROOT / name, out / name
            if src.is_file():
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.write_bytes(src.read_bytes())
    else:
        archive = subprocess.run(["git", "-C", ROOT, "archive", rev], capture_output=True,
                                 check=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", out], input=archive, check=True)
    return out


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def env_of(tree: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "0"}


def in_memory(tree: Path, n: int) -> dict:
    done = subprocess.run([sys.executable, "-c", IN_MEMORY, str(n)], cwd=tree, env=env_of(tree),
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def through_pipeline(tree: Path, n: int, outputs: Path, budget: str) -> dict:
    """One pipeline run (the optimum of n types of 4 out of core on 2 workers): the CPU of
    every process of it, its wall time and the stored value."""
    deck = "[[" + ",".join(["4"] * n) + "]]"
    cmd = [sys.executable, "-m", "pipeline", "study=ranks_exact", f"study.grids.0.grid.deck={deck}",
           "~study.grids.0.strategies.greedy", "~study.grids.0.strategies.persistent",
           "cluster=local", "cluster.n_workers=2", f"run.memory_budget={budget}",
           "run.progress=false", "stage=run", f"paths.outputs={outputs}"]  # fmt: skip
    before, wall = children_cpu(), time.perf_counter()
    subprocess.run(cmd, cwd=tree, env=env_of(tree), capture_output=True, text=True, check=True)
    cpu, wall = children_cpu() - before, time.perf_counter() - wall
    import pandas as pd

    row = pd.read_parquet(outputs / "ranks_exact" / "results").iloc[0]
    return {"cpu_s": cpu, "wall_s": wall, "value": float(row["expected_score"]).hex(),
            "states": int(row["n_states"])}  # fmt: skip


def out_of_core(tree: Path, n: int, scratch: Path, budget: str) -> dict:
    runs = {}
    for size in (2, n):
        folder = Path(tempfile.mkdtemp(dir=scratch))
        runs[size] = through_pipeline(tree, size, folder, budget)
        subprocess.run(["rm", "-rf", str(folder)], check=True)
    return {**runs[n], "cpu_s": runs[n]["cpu_s"] - runs[2]["cpu_s"], "raw_cpu_s": runs[n]["cpu_s"],
            "start_stop_cpu_s": runs[2]["cpu_s"]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", required=True, help="the git revision to compare with")
    parser.add_argument("--memory", default="8,9", help="types of 4 solved in memory")
    parser.add_argument("--disk", default="8", help="types of 4 solved out of core")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", default="600MB", help="run.memory_budget out of core")
    args = parser.parse_args()
    cases = [("memory", int(n)) for n in args.memory.split(",") if n]
    cases += [("disk", int(n)) for n in args.disk.split(",") if n]
    results: dict[tuple, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-ranked-kernel-") as tmp:
        scratch = Path(tmp)
        trees = {
            args.against: tree_of(args.against, scratch),
            "working tree": tree_of(None, scratch),
        }
        for tree in trees.values():  # compile and cache each tree's kernels
            in_memory(tree, 4)
        for k in range(args.rounds):
            for kind, n in cases:
                values = {}
                for name, tree in trees.items():
                    run = in_memory(tree, n) if kind == "memory" else out_of_core(
                        tree, n, scratch, args.budget)  # fmt: skip
                    per_rank = run["cpu_s"] / ranks_of(n) * 1e6
                    results.setdefault((kind, n, name), []).append(per_rank)
                    values[name] = (run["value"], run["states"])
                    print(
                        json.dumps(
                            {
                                "round": k,
                                "case": kind,
                                "types": n,
                                "tree": name,
                                "us_per_rank": round(per_rank, 4),
                                **run,
                            }
                        ),
                        flush=True,
                    )
                assert len(set(values.values())) == 1, f"the trees disagree: {values}"
    print(f"\n{'case':<18}{'tree':<16}{'us/rank min':>12}{'median':>9}{'max':>9}{'ratio':>8}")
    for kind, n in cases:
        old = statistics.median(results[(kind, n, args.against)])
        for name in trees:
            xs = results[(kind, n, name)]
            ratio = f"{old / statistics.median(xs):.2f}x" if name != args.against else ""
            print(
                f"{kind + f' {n} types':<18}{name:<16}{min(xs):>12.3f}"
                f"{statistics.median(xs):>9.3f}{max(xs):>9.3f}{ratio:>8}"
            )


if __name__ == "__main__":
    main()
