"""Start-up: what a study costs from the command to its stored rows, small and large, against
``cluster=sync`` and against the usual ways of running the same tasks on two cores.

``python benchmarks/bench_startup.py [--rounds 3] [--sizes 1000,10000,100000] [--write]``

Every run is a fresh process (Python's start, imports and planning counted for every
contender alike, in the environment of a user's shell: compiled modules kept), timed wall
and CPU (its children included), in rounds that alternate the contenders so that a machine
that speeds up or slows down weighs on all; each contender's best round is kept.  Two
comparisons, and what lies under the second:

- the default study (``python -m pipeline``, 2 tasks) on the default cluster against
  ``cluster=sync``;
- the load benchmark's ``info`` grid (``benchmarks/bench_load.py``: about 0.5 ms of solver
  time a task) at each size: guesslab on the default cluster (2 workers, rows stored as
  Parquet) against a plain loop over ``solvers.solve`` in one process, joblib's ``Parallel``
  (2 processes), ``dask.bag`` (2 processes) and ``client.map`` on a 2-worker LocalCluster
  (rows returned to the caller, nothing stored).  ``client.map`` is left out above 10,000
  tasks unless ``--client-map-all`` (one future a task: minutes at 100,000);
- the pieces guesslab pays and the loop does not (Hydra, pandas, the cluster), each timed
  inside a fresh process, beside the loop's own solving at each size up to 10,000, in one
  process and split over two forked ones (the most a second core can save).

``--write`` stores the table in ``docs/data/startup.yaml`` (the faults-and-load page quotes
it), with the machine's load (``os.getloadavg``) before and after; the parts measured (the
default study, each size; ``--sizes ""`` for the default study alone) replace their last
measurement there.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "docs" / "data" / "startup.yaml"
N_WORKERS = 2

# Each peer: a fresh process that plans the grid the way the load benchmark does, then runs
# every task with solvers.solve(task, canonical=True) (the call guesslab's workers make).
PLAN = """
import sys
sys.path.insert(0, {bench!r})
from bench_load import load_study
from pipeline.running.plan import plan
from solvers import solve
tasks = [t.task for t in plan(load_study({n}))]
"""
PEERS = {
    "loop": "rows = [solve(t, canonical=True) for t in tasks]\n",
    "joblib": (
        "from joblib import Parallel, delayed\n"
        "rows = Parallel(n_jobs=2)(delayed(solve)(t, canonical=True) for t in tasks)\n"
    ),
    "dask.bag": (
        "import dask.bag as db\n"
        "from functools import partial\n"
        "if __name__ == '__main__':\n"
        "    bag = db.from_sequence(tasks, npartitions=2 * 8)\n"
        "    rows = bag.map(partial(solve, canonical=True)).compute(\n"
        "        scheduler='processes', num_workers=2)\n"
    ),
    "client.map": (
        "from distributed import Client, LocalCluster\n"
        "from functools import partial\n"
        "if __name__ == '__main__':\n"
        "    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,\n"
        "                      dashboard_address=':0') as lc, Client(lc) as c:\n"
        "        rows = c.gather(c.map(partial(solve, canonical=True), tasks))\n"
    ),
}


# What guesslab pays beyond the loop, each piece timed inside a fresh process after the
# imports both share (bench_load, pipeline.run, solvers): wall and CPU seconds of the piece.
SHARED = "import sys, time\nsys.path.insert(0, {bench!r})\nimport bench_load\n"
PIECES = {
    # Hydra imported and the default config composed (the loop has no config)
    "hydra": (
        "from pathlib import Path\n"
        "t, c = time.perf_counter(), time.process_time()\n"
        "bench_load.pipeline_config(bench_load.load_study(1000), Path('/nonexistent'), 'run')\n"
    ),
    # pandas, which pyarrow imports on its first array (the first batch's Parquet encoding)
    "pandas": "t, c = time.perf_counter(), time.process_time()\nimport pandas\n",
    # Dask's distributed imported, a 2-worker LocalCluster started (TLS, as a run starts it:
    # pandas already imported, as it is by then) and closed
    "cluster": (
        "import pandas\n"
        "from types import SimpleNamespace\n"
        "from pipeline.backends import local\n"
        "t, c = time.perf_counter(), time.process_time()\n"
        "conf = SimpleNamespace(tls=True, dashboard=False, start_method='auto',\n"
        "                       threads_per_worker=1, memory_limit='2GiB')\n"
        "with local._open(conf, 2, local.worker_deaths.WorkerDeaths()):\n"
        "    pass\n"
    ),
}
REPORT = "print(time.perf_counter() - t, time.process_time() - c)\n"
# the loop's own work: its tasks solved, timed inside the process after planning
WORK = (
    "from pipeline.running.plan import plan\n"
    "from solvers import solve\n"
    "tasks = [t.task for t in plan(bench_load.load_study({n}))]\n"
    "t, c = time.perf_counter(), time.process_time()\n"
    "rows = [solve(t, canonical=True) for t in tasks]\n"
)
# the same solving split over two forked processes (each half of the tasks, as two workers
# would share them, nothing sent back): the most that a second core can save, from the fork
# to the last one's end (CPU: both children's)
WORK_TWO = (
    "import multiprocessing, resource\n"
    "from pipeline.running.plan import plan\n"
    "from solvers import solve\n"
    "tasks = [t.task for t in plan(bench_load.load_study({n}))]\n"
    "def half(k):\n"
    "    for task in tasks[k::2]:\n"
    "        solve(task, canonical=True)\n"
    "ctx = multiprocessing.get_context('fork')\n"
    "before = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "t = time.perf_counter()\n"
    "procs = [ctx.Process(target=half, args=(k,)) for k in (0, 1)]\n"
    "for proc in procs:\n"
    "    proc.start()\n"
    "for proc in procs:\n"
    "    proc.join()\n"
    "after = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(time.perf_counter() - t, after.ru_utime + after.ru_stime - before.ru_utime"
    " - before.ru_stime)\n"
    "raise SystemExit\n"  # its own line: REPORT counts this process's CPU, not its children's
)


def users_environment() -> dict[str, str]:
    """This process's environment as a user's shell has it: without PYTHONDONTWRITEBYTECODE
    (set on some CI machines: every process would compile the project's source again,
    ~0.1 s each) and PYTHONUNBUFFERED; the first run keeps the compiled modules, as a
    user's first run does."""
    drop = ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")
    return {k: v for k, v in os.environ.items() if k not in drop}


def piece_seconds(code: str) -> tuple[float, float]:
    """(wall, CPU) seconds of the piece ``code`` times, in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", SHARED.format(bench=str(ROOT / "benchmarks")) + code + REPORT],
        check=True,
        cwd=ROOT,
        env=users_environment(),
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[-2]), float(out[-1])


def fixed_costs(rounds: int, sizes: list[int]) -> dict:
    """Each piece's best (wall, CPU) over ``rounds`` fresh processes (:func:`best_of`), and
    the loop's own work at each size (its solving only), in one process and split over two."""
    codes = dict(PIECES)
    for n in sizes:
        codes[f"loop_work_{n}"] = WORK.format(n=n)
        codes[f"loop_work_two_processes_{n}"] = WORK_TWO.format(n=n)
    pieces = {name: (lambda _tmp, code=code: code) for name, code in codes.items()}
    best = best_of(rounds, pieces, piece_seconds)
    return {name: {"wall_s": round(w, 2), "cpu_s": round(c, 2)} for name, (w, c) in best.items()}


def timed(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``command`` in a fresh process, its children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        command, check=True, cwd=ROOT, env=users_environment(), stdout=subprocess.DEVNULL
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def peer_command(peer: str, n: int) -> list[str]:
    code = PLAN.format(bench=str(ROOT / "benchmarks"), n=n) + PEERS[peer]
    return [sys.executable, "-c", code]


def guesslab_command(n: int, outputs: Path) -> list[str]:
    """The load grid of ``n`` tasks through ``run_study`` on the default cluster, the
    process ending as the command's does (``pipeline.heap.frozen_for_exit``)."""
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r})\n"
        "from bench_load import frozen_for_exit, load_study, pipeline_config\n"
        "from pipeline.run import run_study\n"
        f"cfg = pipeline_config(load_study({n}), __import__('pathlib').Path({str(outputs)!r}),"
        " 'run')\n"
        "run_study(cfg, log=lambda *_: None)\n"
        "frozen_for_exit()\n"
    )
    return [sys.executable, "-c", code]


def default_command(kind: str, outputs: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pipeline",
        *(["cluster=sync"] if kind == "sync" else []),
        f"paths.outputs={outputs}",
        "run.progress=false",
    ]


def best_of(
    rounds: int, contenders: dict, seconds: Callable[[Any], tuple[float, float]] = timed
) -> dict[str, tuple[float, float]]:
    """Each contender's best (wall, CPU) over ``rounds``, run alternately (a fresh output
    folder each time: nothing stored before); ``seconds`` times what a contender makes of
    its folder (a command, by default)."""
    best: dict[str, tuple[float, float]] = {}
    for r in range(rounds):
        order = list(contenders) if r % 2 == 0 else list(reversed(contenders))
        for name in order:
            with tempfile.TemporaryDirectory() as tmp:
                wall, cpu = seconds(contenders[name](Path(tmp)))
            print(f"  round {r + 1}: {name:12} {wall:7.2f} s wall {cpu:7.2f} s CPU", flush=True)
            if name not in best or wall < best[name][0]:
                best[name] = (wall, cpu)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--large-rounds", type=int, default=1, help="rounds at 100,000 and up")
    parser.add_argument("--client-map-all", action="store_true")
    parser.add_argument("--write", action="store_true", help=f"store the table in {DATA}")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    out: dict = {}
    print("the default study: cluster=local (default) against cluster=sync")
    best = best_of(
        args.rounds, {k: (lambda tmp, k=k: default_command(k, tmp)) for k in ("local", "sync")}
    )
    local_s, sync_s = round(best["local"][0], 2), round(best["sync"][0], 2)
    out["default_study"] = {  # ratios of the times as stored
        "local_s": local_s,
        "sync_s": sync_s,
        "ratio": round(local_s / sync_s, 3),
        "rounds": args.rounds,
    }
    print(f"  local / sync: {out['default_study']['ratio']:.3f}")
    for n in [int(size) for size in args.sizes.split(",") if size]:
        contenders = {"guesslab": lambda tmp, n=n: guesslab_command(n, tmp)}
        for peer in PEERS:
            if peer == "client.map" and n > 10_000 and not args.client_map_all:
                continue
            contenders[peer] = lambda tmp, peer=peer, n=n: peer_command(peer, n)
        rounds = args.large_rounds if n >= 100_000 else args.rounds
        print(f"{n:,} info tasks, best of {rounds}:")
        best = best_of(rounds, contenders)
        loop = round(best["loop"][0], 2)
        out[f"tasks_{n}"] = {  # keys without dots: the manual's quotes are dotted paths
            name.replace(".", "_"): {
                "wall_s": round(w, 2),
                "cpu_s": round(c, 2),
                "vs_loop": round(round(w, 2) / loop, 3),
            }
            for name, (w, c) in best.items()
        }
        out[f"tasks_{n}"]["rounds"] = rounds
        for name, (w, _) in sorted(best.items(), key=lambda kv: kv[1][0]):
            print(f"  {name:12} {w:7.2f} s  {w / loop:.3f} x the loop")
    sizes = [int(size) for size in args.sizes.split(",") if size and int(size) <= 10_000]
    print(f"guesslab's pieces the loop does without, fresh processes, best of {args.rounds}:")
    out["fixed_costs"] = {**fixed_costs(args.rounds, sizes), "rounds": args.rounds}
    out["machine"] = {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }
    if args.write:
        import yaml

        header = "# benchmarks/bench_startup.py --write: best wall seconds of alternating rounds\n"
        kept = yaml.safe_load(DATA.read_text()) if DATA.exists() else {}
        kept.update(out)  # the parts measured now replace their last measurement
        DATA.write_text(header + yaml.safe_dump(kept, sort_keys=False))
        print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
