"""A search's cost on top of its solves: guesslab's sweeper against a plain Optuna loop that
calls the same solver.

``python benchmarks/bench_search.py [--trials 1000] [--rounds 1] [--write]``

The objective: the entropy-weighted strategy's exact expected score on (3,3,3) with yes/no
feedback (Shannon in bits), as gamma varies in [0, 1] (about 10-30 ms of solver time a trial
on the benchmarks page's machine).  Three contenders, each a fresh process (Python's start
and imports counted for each alike), wall and CPU time (children included):

- ``loop``: an Optuna study (TPE, seed 0) optimising a function that calls
  ``solvers.solve``, nothing stored (the plain loop a researcher would write);
- ``sync``: ``python -m pipeline -m study=gamma_sweep hydra/sweeper=guesslab ...
  cluster=sync``, 8 trials asked at a time, every trial's row stored, the journal kept, the
  page, plots and summary written;
- ``local``: the same on a LocalCluster of 2 workers.

``--jobs N``: trials asked at a time (default 8).  ``--marginal K``: each contender also runs
``K`` trials, and the table gives the cost of a trial at the margin, (time at ``--trials`` -
time at ``K``) / (``--trials`` - ``K``), over the loop's: what a trial adds, without the costs
a search pays once (Python's start, Hydra, the cluster, the summary, the report and the
search's page at the end).  ``--write`` stores the table in
``docs/data/search_bench.yaml`` under ``jobs_N`` (the benchmarks page quotes it), with the
machine's load before and after and each contender's wall and CPU time over the loop's (on
a machine other work loads, the CPU ratio is the one that compares).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LOOP = """
import sys
import optuna
from solvers import solve

optuna.logging.set_verbosity(optuna.logging.WARNING)


def objective(trial):
    gamma = trial.suggest_float("gamma", 0.0, 1.0)
    task = {"family": "card_guessing", "deck": [3, 3, 3], "strategy": "info",
            "tie_break": "lowest", "entropy_r": 1.0, "entropy_t": 1.0, "log_base": 2.0,
            "gamma": gamma}
    return solve(task)[0]["expected_score"]


study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
study.optimize(objective, n_trials=int(sys.argv[1]))
print(study.best_value)
"""


def search_command(trials: int, cluster: str, outputs: Path, jobs: int = 8) -> list[str]:
    return [
        sys.executable, "-m", "pipeline", "-m", "study=gamma_sweep", "hydra/sweeper=guesslab",
        "study.grid.deck=[[3,3,3]]", "study.objective.relative_to=null",
        "study.strategies.info.gamma=interval(0,1)", f"hydra.sweeper.n_trials={trials}",
        f"hydra.sweeper.n_jobs={jobs}", f"cluster={cluster}", f"paths.outputs={outputs}",
        *(["cluster.n_workers=2"] if cluster == "local" else []),
    ]  # fmt: skip


def timed(command: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of ``command`` run to its end (CPU of its children included)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measured(trials: int, jobs: int, rounds: int) -> dict[str, tuple[float, float]]:
    """Each contender's best (wall, CPU) seconds over ``rounds`` runs of ``trials`` trials."""
    best: dict[str, tuple[float, float]] = {}
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            runs = {
                "loop": [sys.executable, "-c", LOOP, str(trials)],
                "sync": search_command(trials, "sync", Path(tmp) / "sync", jobs),
                "local": search_command(trials, "local", Path(tmp) / "local", jobs),
            }
            for name, command in runs.items():
                wall, cpu = timed(command)
                print(f"{trials} trials, {name}: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, cpu)
    return best


def marginal(best: dict, fewer: int, trials: int, jobs: int, rounds: int) -> dict:
    """The cost of a trial at the margin: each contender's time over the trials between
    ``fewer`` and ``trials``, a trial, in ms, and its ratio to the loop's."""
    few = measured(fewer, jobs, rounds)
    per = {
        name: tuple((best[name][i] - few[name][i]) / (trials - fewer) for i in (0, 1))
        for name in best
    }
    out: dict = {"fewer_trials": fewer}
    for name, (wall, cpu) in per.items():
        out[name] = {
            "wall_ms_a_trial": round(1000 * wall, 2),
            "cpu_ms_a_trial": round(1000 * cpu, 2),
            "ratio": round(wall / per["loop"][0], 2),
            "cpu_ratio": round(cpu / per["loop"][1], 2),
        }
        print(f"at the margin, {name}: {out[name]}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=8, help="trials asked at a time")
    parser.add_argument("--marginal", type=int, default=0, help="trials of a second run")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    best = measured(args.trials, args.jobs, args.rounds)
    loop, loop_cpu = best["loop"]
    for name, (wall, cpu) in best.items():
        print(f"{name}: {wall / loop:.2f}x the loop's wall time, {cpu / loop_cpu:.2f}x its CPU")
    margin = (
        marginal(best, args.marginal, args.trials, args.jobs, args.rounds) if args.marginal else {}
    )
    if args.write:
        import yaml

        data = {
            "trials": args.trials,
            "jobs": args.jobs,
            "rounds": args.rounds,
            "load_before": round(load_before, 2),
            "load_after": round(os.getloadavg()[0], 2),
            **{
                name: {
                    "wall_s": round(w, 1),
                    "cpu_s": round(c, 1),
                    "ratio": round(w / loop, 2),
                    "cpu_ratio": round(c / loop_cpu, 2),  # on a loaded machine, the fairer one
                }
                for name, (w, c) in best.items()
            },
        }
        if margin:
            data["marginal"] = margin
        path = ROOT / "docs" / "data" / "search_bench.yaml"
        found = yaml.safe_load(path.read_text()) if path.is_file() else {}
        found[f"jobs_{args.jobs}"] = data  # one entry per batch size measured
        path.write_text(yaml.safe_dump(found, sort_keys=False))
        print(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
