"""Load: a study of 100,000 small tasks on the 2-worker LocalCluster against a plain loop.

``python benchmarks/bench_load.py [--tasks N] [--sample N] [--summary]``
``python benchmarks/bench_load.py --pairs ROUNDS`` (end to end, order-balanced)
``python benchmarks/bench_load.py --instructions`` (counted, not timed)
``python benchmarks/bench_load.py --scale --tasks 1000000 --plan-tasks 10000000`` (memory)

The study is a dense grid of the card_guessing ``info`` strategy (gamma x Sharma-Mittal
order r x degree t) on two tiny decks, about half a millisecond of solver time per task.
Prints the time to plan, the plain-loop time per task (``solvers.solve(task,
canonical=True)``, the call the workers make, on the planned tasks, in a forked process
whose solver caches die with it, so the pipeline's workers start as cold as the loop), the
pipeline's wall time, tasks per second, the driver's peak memory, and the overhead per
task: CPU seconds (driver and workers together, cluster start-up included) beyond the plain
loop's CPU time, per task.  CPU time rather than wall time, because the machine's two cores
may be shared with other work; wall-time numbers are printed too, and so is the fairest
baseline: the same plain loop split over two processes running at once.

``--instructions`` counts instead of timing (Linux ``perf stat``, every process of a run):
the same counts on a busy or a quiet machine, where the times above move by 30-50% between
minutes on a shared 2-core VM.  It runs each stage in its own process (start-up, planning,
the plain loop on two processes with and without its tasks, the pipeline) and prints the
instructions of a task's work, of planning and of the pipeline's machinery, per task.

``--scale`` measures the driver at size, each step in a fresh process (peak memory from the
kernel, the process's own, not its workers'): ``stage=plan`` of a ``--plan-tasks`` grid, a real
run of ``--tasks`` tasks into a kept store, the same study again (every task stored: the
store read as arrays, nothing run) and ``stage=plan`` on the full store.

``--breakdown`` splits one in-process run's CPU time into the solver's work and the rest,
each part measured in the process that spends it (so the shares hold however fast the shared
machine is that minute): ``solve()`` on the workers' task threads, the rest of their batches
(task build, ids, rows to Parquet), the worker processes outside batches (Dask's worker,
heartbeats, transfers), and the driver (the imports the plain loop does not need, planning,
cluster start and stop, scheduler, client, writing files); then the plain loop on the same
tasks, to show how much slower solve() itself ran on the workers.  It wraps ``solve`` and the
batch function before the cluster forks its workers (Linux's start method), and each
worker appends its thread-CPU counts to a file.

``--callgrind`` counts instructions where ``perf`` cannot (valgrind's callgrind, ~50x slower:
~45-60 minutes for 100,000 tasks on an idle machine, one stage after another), for the parts
that do not depend on time: the solver's work (``solve()`` over the grid in one process),
what batches add to it (the same tasks built, solved and encoded as a worker does, batch by
batch), a run's fixed cost (the imports and a TLS LocalCluster started and stopped, its
workers included), and the running cluster's timers per second (the same cluster held up
idle ``IDLE_S`` seconds longer), each the difference of two processes' counts; then what they
come to on the load benchmark's run (``--at-tasks``, ``--at-seconds``: its wall time from
``--pairs``, ``--at-work``: the grid's instructions a task when the counted sample is
smaller).  Each batch's dispatch is left out: a whole run under valgrind lasts ~50x longer, and
its timers swamp it (a real run of 60 batches came out within the timers' estimate);
``--breakdown`` gives it in CPU time.

``--pairs`` times whole runs instead: a fresh process that plans the study and runs the plain
loop on two processes, against a fresh process that runs the study through the pipeline
(both pay start-up and planning), in rounds of loop, pipeline, pipeline, loop, so that a
machine that speeds up or slows down during a round weighs on both alike.  The first mode's
wall-time ratio leaves the loop's planning, process start and warm-up out and counts the
pipeline's, so it overstates the pipeline's cost; this one compares like with like.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.heap import frozen_for_exit  # noqa: E402
from pipeline.run import run_study  # noqa: E402
from pipeline.running.plan import plan  # noqa: E402
from solvers import solve  # noqa: E402

DECKS = [[2, 1], [1, 1, 1]]
N_WORKERS = 2


def load_study(n_tasks: int) -> dict:
    """The info-strategy grid with about ``n_tasks`` tasks (2 decks x gamma x r x t)."""
    per_deck = max(1, n_tasks // len(DECKS))
    n_t = 25
    n_r = 40 if per_deck >= 25 * 40 else max(1, per_deck // n_t)
    n_gamma = max(1, per_deck // (n_r * n_t))
    return {
        "name": "load",
        "family": "card_guessing",
        "description": "Load benchmark: a dense gamma x (r, t) grid of the info strategy.",
        "grid": {"deck": DECKS, "feedback": ["partial"]},
        "strategies": {
            "info": {
                "gamma": [round((i + 1) / (n_gamma + 1), 6) for i in range(n_gamma)],
                "entropy_r": [round(0.25 * (i + 1), 6) for i in range(n_r)],
                "entropy_t": [round(0.1 * (i + 1), 6) for i in range(n_t)],
            }
        },
    }


def rss_mib() -> float:
    """This process's resident memory now, in MiB."""
    with open(f"/proc/{os.getpid()}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds of this process, and of its finished children (the cluster's workers)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def peak_rss_mib() -> float:
    """This process's peak resident memory so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _loop_in_child(raw_tasks: list, barrier, queue) -> None:
    solve(raw_tasks[0])  # warm-up: imports and compilation are not per-task work
    barrier.wait()
    start, cpu = time.perf_counter(), time.process_time()
    for task in raw_tasks:
        solve(task, canonical=True)
    queue.put((time.perf_counter() - start, time.process_time() - cpu))


def plain_loop(tasks, sample: int, processes: int) -> tuple[float, float]:
    """(wall, CPU) seconds per task of the plain loop split over ``processes`` at once.

    With N_WORKERS processes, the real two-core baseline: two busy processes slow each other
    down on this machine (the host's scheduling of its virtual CPUs, shared caches), which a
    perfect split of the one-core time ignores.  The loop always runs in child processes,
    forked as the pipeline's workers are, with this process's heap frozen for the cycle
    collector while they start (as the pipeline does): they import nothing and receive their
    tasks without pickling, and whatever the solvers cache during a loop dies with its
    processes, so no later loop or pipeline worker forked from here starts with it warm.
    """
    import gc
    import multiprocessing as mp

    step = max(1, len(tasks) // sample) if sample else 1
    picked = [t.task for t in (tasks[::step][:sample] if sample else tasks)]
    ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    barrier, queue = ctx.Barrier(processes), ctx.Queue()
    chunks = [picked[i::processes] for i in range(processes)]
    procs = [ctx.Process(target=_loop_in_child, args=(c, barrier, queue)) for c in chunks]
    gc.freeze()
    try:
        for proc in procs:
            proc.start()
    finally:
        gc.unfreeze()
    results = [queue.get() for _ in procs]
    for proc in procs:
        proc.join()
    return max(w for w, _ in results) / len(picked), sum(c for _, c in results) / len(picked)


def pipeline_config(study: dict, outputs: Path, stage: str, *extra: str) -> dict:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    conf = Path(__file__).resolve().parent.parent / "conf"
    with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
        overrides = [
            f"paths.outputs={outputs}",
            "cluster=local",
            f"cluster.n_workers={N_WORKERS}",
            "run.progress=false",
            f"stage={stage}",
            *extra,
        ]
        cfg = OmegaConf.to_container(compose("config", overrides=overrides), resolve=True)
    cfg["study"] = study
    return cfg


STAGES = ("start", "plan", "loop0", "loop", "pipeline", "study-plan", "study-run")
# --callgrind's stages (cg-idle: the cluster's timers, per second)
COUNTED = ("cg-start", "cg-cluster", "cg-idle", "cg-tasks", "cg-solve", "cg-batches")
BATCH = 1_500  # tasks a batch, about what the run's batch cutter picks on this grid
IDLE_S = 30.0  # seconds cg-idle holds its cluster up, idle


def run_stage(stage: str, n_tasks: int, overrides: list[str], store: str | None = None) -> None:
    """What one counted process does: start-up (imports, config) and then the stage."""
    study = load_study(n_tasks)
    if stage.startswith("study-"):  # --scale: run_study with a kept store, timed
        cfg = pipeline_config(study, Path(store), stage.removeprefix("study-"), *overrides)
        start = time.perf_counter()
        run_study(cfg, log=lambda line: print(f"    {line}"))
        print(
            f"    {time.perf_counter() - start:.1f} s wall in run_study, driver peak memory "
            f"{peak_rss_mib():.0f} MiB"
        )
        return
    if stage.startswith("cg-"):
        return counted_stage(stage, study)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = pipeline_config(study, Path(tmp), "run", *overrides)
        if stage == "pipeline":
            run_study(cfg, log=lambda *_: None)
            print(f"driver peak memory: {peak_rss_mib():.0f} MiB", file=sys.stderr)
        elif stage != "start":
            tasks = plan(study)
            if stage == "loop0":  # the loop's processes start and solve 2 tasks each
                plain_loop(tasks[: 2 * N_WORKERS], 0, N_WORKERS)
            elif stage == "loop":
                plain_loop(tasks, 0, N_WORKERS)


def counted_stage(stage: str, study: dict) -> None:
    """What one process counted by --callgrind does (see :func:`callgrind_counts`)."""
    import numpy as np

    from pipeline.running.plan import planned
    from pipeline.running.worker import TaskSlice, run_batch

    grid = planned(study).grids[0]
    if stage == "cg-start":  # imports, config and planning: what every stage below does first
        return
    if stage in ("cg-cluster", "cg-idle"):  # the driver's imports, a TLS LocalCluster up,
        from pipeline.backends import open_executor  # one task (then idle for cg-idle), down

        cluster = {"kind": "local", "n_workers": N_WORKERS, "threads_per_worker": 1}
        with open_executor(cluster) as runner:
            runner.client.submit(sum, [1, 2]).result()
            if stage == "cg-idle":
                time.sleep(IDLE_S)
        return
    import pandas  # noqa: F401 - a worker starts with it (its driver imported it to fork)

    tasks = [task for _, task in grid.tasks()]
    solve(tasks[0])  # warm-up: imports and compilation are not per-task work
    if stage == "cg-solve":
        for task in tasks:
            solve(task, canonical=True)
    elif stage == "cg-batches":  # what a worker runs: build, solve and encode batch by batch
        for start in range(0, len(grid), BATCH):
            positions = np.arange(start, min(start + BATCH, len(grid)))
            run_batch(TaskSlice(grid, positions), "load", None, b"{}", None)


def callgrind_count(stage: str, n_tasks: int) -> int:
    """Instructions a fresh process running ``stage`` executed, with its forked children
    (valgrind's callgrind: the same count on a busy or an idle machine)."""
    with tempfile.TemporaryDirectory() as tmp:
        # a forked child starts with its parent's counts: each process writes out and zeroes
        # its counts just before it forks (CPython's PyOS_BeforeFork), and the parts add up
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--dump-before=PyOS_BeforeFork",
            f"--callgrind-out-file={tmp}/cg.%p",
        ]
        try:
            subprocess.run(
                [*cmd, *stage_command(stage, n_tasks, [])],
                check=True,
                capture_output=True,
                text=True,
            )
        except OSError as exc:
            raise SystemExit(
                f"--callgrind needs valgrind (apt-get install valgrind): {exc}"
            ) from None
        except subprocess.CalledProcessError as exc:
            raise SystemExit(f"{stage} failed under valgrind:\n{exc.stderr[-3000:]}") from None
        return sum(
            int(line.split()[1])
            for out in Path(tmp).glob("cg.*")
            for line in out.read_text().splitlines()
            if line.startswith("summary:")
        )


def callgrind_counts(args: argparse.Namespace) -> None:
    """Print the instructions of the work (``args.tasks`` of the grid) and of the pipeline's
    parts: a batch's machinery beyond the solver, a run's fixed cost and the running
    cluster's timers per second; then what they come to on a run of ``args.at_tasks`` tasks
    over ``args.at_seconds`` seconds (the load benchmark's, as ``--pairs`` measures it)."""
    n_tasks = args.tasks
    from pipeline.running.plan import planned

    n = len(planned(load_study(n_tasks)).grids[0])
    counts = {stage: callgrind_count(stage, n_tasks) for stage in COUNTED}
    work = counts["cg-solve"] - counts["cg-tasks"]
    batches = counts["cg-batches"] - counts["cg-solve"]
    fixed = counts["cg-cluster"] - counts["cg-start"]
    per_second = (counts["cg-idle"] - counts["cg-cluster"]) / IDLE_S
    print(f"instructions (valgrind callgrind, every process), {n:,} tasks:")
    print(f"  the work, solve() in one process: {work / n / 1e6:.3f} M per task")
    print(
        f"  batches of {BATCH:,} beyond solve() (task build, ids, rows to Parquet): "
        f"{batches / n / 1e3:.1f} k per task, {batches / work:.2%} of the work"
    )
    print(
        f"  a run's fixed cost (imports, a TLS LocalCluster of {N_WORKERS} up and down): "
        f"{fixed / 1e9:.2f} G"
    )
    print(
        f"  the cluster's timers (an idle cluster held up {IDLE_S:.0f} s: heartbeats, "
        f"monitors, health checks): {per_second / 1e6:.1f} M per second"
    )
    work_at = args.at_tasks * (args.at_work * 1e6 if args.at_work else work / n)
    parts = {
        "batches beyond solve()": batches / n * args.at_tasks,
        "fixed cost": fixed,
        f"timers over {args.at_seconds:g} s": per_second * args.at_seconds,
    }
    where = f"{args.at_work:g} M a task, given" if args.at_work else "as counted above"
    print(f"  on {args.at_tasks:,} tasks (work {where}) over {args.at_seconds:g} s:")
    for label, count in parts.items():
        print(f"    {label}: {count / 1e9:.2f} G, {count / work_at:.2%} of the work")
    total = sum(parts.values())
    print(f"    in all: {total / 1e9:.2f} G, {total / work_at:.2%} of the work")
    print(
        "  not counted: each batch's dispatch (Dask's submit, scheduling, the result over TLS, "
        "the file written): a real run under valgrind lasts ~50x longer and its timers, "
        "counted at the idle rate above, swamp it; --breakdown gives it in CPU time"
    )


def stage_command(
    stage: str, n_tasks: int, overrides: list[str], store: str | None = None
) -> list[str]:
    """The command line of a fresh process that runs one stage (see :func:`run_stage`)."""
    kept = ["--store", store] if store else []
    return [sys.executable, __file__, "--tasks", str(n_tasks), "--stage", stage, *kept, *overrides]


def scale(n_tasks: int, plan_tasks: int, overrides: list[str]) -> None:
    """The driver at size: plan a big grid, run a big one, resume it, plan it when stored."""
    with tempfile.TemporaryDirectory() as store:
        steps = [
            (f"stage=plan, {plan_tasks:,} tasks, empty store", "study-plan", plan_tasks),
            (f"a real run of {n_tasks:,} tasks (stage=run)", "study-run", n_tasks),
            (f"the same study again ({n_tasks:,} stored)", "study-run", n_tasks),
            (f"stage=plan, {n_tasks:,} tasks, all stored", "study-plan", n_tasks),
        ]
        for label, stage, n in steps:
            print(f"{label}:", flush=True)
            start = time.perf_counter()
            cmd = stage_command(stage, n, ["run.progress=false", *overrides], store)
            subprocess.run(cmd, check=True)
            print(f"    {time.perf_counter() - start:.1f} s wall for the process", flush=True)


def instructions(stage: str, n_tasks: int, overrides: list[str]) -> int:
    """Instructions executed by a process running ``stage`` and all its children."""
    cmd = [
        "perf",
        "stat",
        "-x,",
        "-e",
        "instructions",
        "--",
        *stage_command(stage, n_tasks, overrides),
    ]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        err = getattr(exc, "stderr", None) or exc
        raise SystemExit(
            f"--instructions needs Linux perf (Debian: apt-get install linux-perf) allowed to "
            f"count this user's processes (/proc/sys/kernel/perf_event_paranoid <= 2): {err}"
        ) from None
    for line in out.stderr.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("instructions") and fields[0].isdigit():
            return int(fields[0])
    if "<not supported>" in out.stderr:  # a VM that hides the hardware counters
        raise SystemExit(
            "perf cannot count instructions on this machine (<not supported>: no hardware "
            "counters, as on many VMs); --breakdown splits one run's CPU time instead"
        )
    raise SystemExit(f"perf stat printed no instruction count:\n{out.stderr}")


def timed_stage(stage: str, n_tasks: int, overrides: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of a fresh process running ``stage``, its children included."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(stage_command(stage, n_tasks, overrides), check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu


def wall_pairs(rounds: int, n_tasks: int, overrides: list[str]) -> None:
    """Print end-to-end wall and CPU times of the plain loop and the pipeline, order-balanced."""
    n = len(plan(load_study(n_tasks)))
    print(f"end to end, {n:,} tasks, rounds of loop, pipeline, pipeline, loop (fresh processes):")
    totals = {"loop": [0.0, 0.0], "pipeline": [0.0, 0.0]}
    ratios = []
    for i in range(rounds):
        walls = {"loop": 0.0, "pipeline": 0.0}
        for stage in ("loop", "pipeline", "pipeline", "loop"):
            wall, cpu = timed_stage(stage, n_tasks, overrides)
            walls[stage] += wall
            totals[stage][0] += wall
            totals[stage][1] += cpu
            print(f"  round {i + 1}: {stage:8} {wall:6.1f} s wall, {cpu:6.1f} s CPU", flush=True)
        ratios.append(walls["pipeline"] / walls["loop"])
        print(f"  round {i + 1}: pipeline / loop wall time {ratios[-1]:.3f}")
    (loop_wall, loop_cpu), (pipe_wall, pipe_cpu) = totals["loop"], totals["pipeline"]
    runs = 2 * rounds
    print(
        f"pipeline / loop over {rounds} rounds: wall {pipe_wall / loop_wall:.3f} "
        f"(rounds {min(ratios):.3f}-{max(ratios):.3f}, median {statistics.median(ratios):.3f}: "
        f"a round whose minutes ran slow moves the mean, not the median), "
        f"CPU {pipe_cpu / loop_cpu:.3f}; "
        f"mean pipeline run {pipe_wall / runs:.1f} s ({n * runs / pipe_wall:,.0f} tasks/s with "
        f"start-up and planning), loop {loop_wall / runs:.1f} s"
    )


def _counted(folder: str, fn, solve_cpu: list[float]):
    """``fn`` (the batch function) wrapped to append its thread-CPU time, and the time spent
    in solve() during it, to ``folder``/<pid> (see :func:`breakdown`)."""

    def batch(*args, **kwargs):
        cpu, solved = time.thread_time(), solve_cpu[0]
        done = fn(*args, **kwargs)
        line = f"{time.thread_time() - cpu} {solve_cpu[0] - solved} {done.n_tasks}\n"
        with open(Path(folder) / str(os.getpid()), "a") as fh:
            fh.write(line)
        return done

    batch.__module__, batch.__qualname__ = fn.__module__, fn.__qualname__  # pickled by name
    return batch


def _timed_solve(fn, solve_cpu: list[float]):
    """``fn`` (solve) wrapped to add its thread-CPU time to ``solve_cpu[0]``."""

    def timed(*args, **kwargs):
        cpu = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            solve_cpu[0] += time.thread_time() - cpu

    return timed


def breakdown(n_tasks: int, overrides: list[str]) -> None:
    """Print where one pipeline run's CPU time goes, as shares of the solver's work."""
    import pipeline.running.worker
    from pipeline.running.plan import planned

    study = load_study(n_tasks)
    cpu = time.process_time()
    planned(study)
    plan_cpu = time.process_time() - cpu
    cpu = time.process_time()
    import distributed  # noqa: F401 - what run_study imports and the plain loop does not
    import pandas  # noqa: F401

    import_cpu = time.process_time() - cpu
    solve_cpu = [0.0]
    with tempfile.TemporaryDirectory() as counts, tempfile.TemporaryDirectory() as tmp:
        pipeline.running.worker.solve = _timed_solve(pipeline.running.worker.solve, solve_cpu)
        pipeline.running.worker.run_batch = _counted(
            counts, pipeline.running.worker.run_batch, solve_cpu
        )
        cfg = pipeline_config(study, Path(tmp), "run", *overrides)
        (driver0, workers0), start = cpu_seconds(), time.perf_counter()
        report = run_study(cfg, log=lambda *_: None)
        wall, (driver, workers) = time.perf_counter() - start, cpu_seconds()
        lines = [
            [float(x) for x in line.split()]
            for path in Path(counts).iterdir()
            for line in path.read_text().splitlines()
        ]
    batch_cpu = sum(line[0] for line in lines)
    work = sum(line[1] for line in lines)
    parts = [
        (
            "the workers' batches beyond solve() (task build, ids, rows to Parquet)",
            batch_cpu - work,
        ),
        (
            "the worker processes outside batches (Dask's worker, transfers)",
            workers - workers0 - batch_cpu,
        ),
        ("the driver's imports the plain loop does without (distributed, pandas)", import_cpu),
        ("the driver's planning (planned(), timed apart)", plan_cpu),
        (
            "the driver's run beyond planning (cluster, scheduler, client, files)",
            driver - driver0 - plan_cpu,
        ),
    ]
    print(
        f"{report.computed:,} tasks in {wall:.1f} s wall, {len(lines)} batches; solve() on the "
        f"workers: {work:.2f} CPU s ({work / report.computed * 1e6:.0f} us/task)"
    )
    for label, seconds in parts:
        print(f"  {label}: {seconds:.2f} CPU s, {seconds / work:.1%} of the work")
    rest = sum(seconds for _, seconds in parts)
    print(f"  in all: {rest:.2f} CPU s, {rest / work:.1%} of the work")
    _, loop_cpu = plain_loop(plan(study), 0, N_WORKERS)
    loop_cpu *= report.computed
    print(
        f"the same tasks in the plain loop on {N_WORKERS} processes, just after: {loop_cpu:.2f} "
        f"CPU s: solve() took {work / loop_cpu - 1:+.1%} on the workers"
    )


def count_instructions(n_tasks: int, overrides: list[str]) -> None:
    """Print the instructions per task of the work, of planning and of the pipeline."""
    counts = {stage: instructions(stage, n_tasks, overrides) for stage in STAGES}
    n = len(plan(load_study(n_tasks)))
    work = counts["loop"] - counts["loop0"]
    planning = counts["plan"] - counts["start"]
    machinery = counts["pipeline"] - counts["plan"] - work
    print(f"instructions (perf stat, every process), {n:,} tasks:")
    print(f"  the work, a plain loop on {N_WORKERS} processes: {work / n / 1e6:.2f} M per task")
    for label, count in [
        ("planning (validate, task ids)", planning),
        ("the pipeline beyond planning (cluster, Dask, Parquet, store)", machinery),
        ("overhead in all", planning + machinery),
    ]:
        print(f"  {label}: {count / n / 1e3:.0f} k per task ({count / work:.1%} of the work)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--sample", type=int, default=0, help="plain-loop sample (0: all)")
    parser.add_argument("--summary", action="store_true", help="also time the summary stage")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions (perf) instead of time"
    )
    parser.add_argument(
        "--callgrind", action="store_true", help="count instructions (valgrind), see above"
    )
    for flag, kind, default, text in [
        ("--at-tasks", int, 100_000, "--callgrind: the run to put the counts on, its tasks"),
        ("--at-seconds", float, 24.0, "... its wall time (--pairs' mean pipeline run)"),
        ("--at-work", float, 0.0, "... its work, M instructions a task (0: as counted)"),
    ]:
        parser.add_argument(flag, type=kind, default=default, help=text)
    parser.add_argument(
        "--breakdown", action="store_true", help="one run's CPU time, part by part (see above)"
    )
    parser.add_argument(
        "--pairs", type=int, metavar="ROUNDS", help="end-to-end wall time, order-balanced rounds"
    )
    parser.add_argument(
        "--scale", action="store_true", help="driver time and memory at size (see above)"
    )
    parser.add_argument("--plan-tasks", type=int, default=10_000_000, help="--scale's plan size")
    parser.add_argument(
        "--stage", choices=STAGES + COUNTED, help=argparse.SUPPRESS
    )  # one counted run
    parser.add_argument("--store", help=argparse.SUPPRESS)  # --scale's kept store
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. run.batch_seconds=1")
    args = parser.parse_args()
    if args.stage:
        run_stage(args.stage, args.tasks, args.overrides, args.store)
        # every stage's process ends as the guesslab command does, the plain loop's too: its
        # heap frozen, so neither pays the interpreter's last collection (pipeline.heap)
        return frozen_for_exit()
    if args.scale:
        return scale(args.tasks, args.plan_tasks, args.overrides)
    if args.instructions:
        return count_instructions(args.tasks, args.overrides)
    if args.breakdown:
        return breakdown(args.tasks, args.overrides)
    if args.callgrind:
        return callgrind_counts(args)
    if args.pairs is not None:
        if args.pairs < 1:
            parser.error(f"--pairs={args.pairs}: give at least 1 round")
        return wall_pairs(args.pairs, args.tasks, args.overrides)

    study = load_study(args.tasks)
    start = time.perf_counter()
    tasks = plan(study)
    plan_s = time.perf_counter() - start
    n = len(tasks)
    print(f"tasks: {n:,} ({', '.join(map(str, (tuple(d) for d in DECKS)))} decks, info grid)")
    print(f"plan (validate + task ids): {plan_s:.1f} s = {plan_s / n * 1e6:.0f} us/task")
    per_task, cpu_per_task = plain_loop(tasks, args.sample, 1)
    print(
        f"plain loop: {per_task * 1e3:.3f} ms/task wall, {cpu_per_task * 1e3:.3f} ms/task CPU "
        f"over {min(args.sample or n, n):,} tasks"
    )
    print(f"  -> the whole study in a plain loop: {cpu_per_task * n:.1f} CPU s on one core")
    par_wall, par_cpu = plain_loop(tasks, args.sample, N_WORKERS)
    print(
        f"plain loop on {N_WORKERS} processes at once: {par_wall * n:.1f} s wall for the whole "
        f"study ({n / (par_wall * n):,.0f} tasks/s), {par_cpu * 1e3:.3f} ms/task CPU"
    )
    del tasks

    with tempfile.TemporaryDirectory() as tmp:
        outputs = Path(tmp)
        rss_before = rss_mib()
        cfg = pipeline_config(study, outputs, "run", *args.overrides)
        start, (driver0, workers0) = time.perf_counter(), cpu_seconds()
        report = run_study(cfg, log=lambda *_: None)
        wall, (driver, workers) = time.perf_counter() - start, cpu_seconds()
        driver, workers = driver - driver0, workers - workers0
        cpu = driver + workers
        peak = peak_rss_mib()
        files = len(report.files)
        print(
            f"pipeline (LocalCluster, {N_WORKERS} workers, stage=run): {wall:.1f} s wall, "
            f"{report.computed / wall:,.0f} tasks/s, {report.errors} errors, {files:,} files"
        )
        overhead = (cpu - cpu_per_task * n) / n
        print(
            f"  CPU: driver {driver:.1f} s + workers {workers:.1f} s = {cpu:.1f} s "
            f"(plain loop: {cpu_per_task * n:.1f} s)"
        )
        print(
            f"  overhead: {overhead * 1e3:.3f} CPU ms/task "
            f"({overhead / cpu_per_task:.0%} of the plain loop's CPU time per task)"
        )
        ideal = cpu_per_task * n / N_WORKERS
        print(
            f"  wall: {wall:.1f} s against {ideal:.1f} s for the plain loop split perfectly "
            f"over {N_WORKERS} cores ({wall / ideal:.2f}x)"
        )
        print(
            f"  wall: {wall:.1f} s against {par_wall * n:.1f} s for the plain loop run on "
            f"{N_WORKERS} processes at once ({wall / (par_wall * n):.2f}x; the loop's time leaves "
            "out its planning, process start and warm-up: --pairs compares whole runs)"
        )
        print(f"  driver memory: {rss_before:.0f} MiB before, peak {peak:.0f} MiB")
        if args.summary:
            start = time.perf_counter()
            run_study(pipeline_config(study, outputs, "summary"), log=lambda *_: None)
            print(f"summary stage: {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
