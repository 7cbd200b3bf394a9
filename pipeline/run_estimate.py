"""``stage=plan``'s estimate of a run's time: the run's fixed costs beside its tasks' solver
time, as CPU seconds and as wall seconds on the workers of where it runs.

A run of ``python -m pipeline`` costs, beside the solver time of its tasks (the family's
``estimate`` of each, one core, Numba's kernels loaded from its cache):

- **start and end** (:data:`FIXED_S`): Python's start, the imports, Hydra, planning, the
  store's reads and writes, the run record, the summary (its figures) and the report;
- **a cluster** (:data:`CLUSTER_S` a worker, :data:`CLUSTER_WALL_S`): starting a
  LocalCluster, forking its workers and their loading of the family's kernels, when the run
  starts one (:mod:`pipeline.backends.starting`: a
  LocalCluster starts once the tasks run in the driver took ``cluster.start_after_s`` and
  as much work again is left, or at once when a task is expected to take longer; any other
  backend's workers are running already and cost :data:`CLUSTER_S` each to reach and load);
- **each task** (:data:`PER_TASK_S`): the driver's and the worker's share of it beside its
  solve (batching, the rows encoded as Parquet and written, the progress).

The wall time is what an idle machine gives: the fixed costs, then the tasks' time spread
over the workers.  Not counted: compiling the Numba kernels the cache lacks (the first run of
a machine; ``stage=plan``'s line on the compiled kernels says how many), and a machine shared
with other work.  The constants were fitted to runs of the shipped studies
(``benchmarks/bench_plan_estimate.py``; ``docs/data/plan_estimates.yaml`` holds each study's
estimate beside its measured CPU time, and ``tests/test_plan_estimate.py`` holds the ratios).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solvers.kit.words import format_duration

FIXED_S = 2.4  # CPU seconds of a run beside its tasks and cluster: start, store, summary, report
# CPU seconds a worker of a cluster costs beside its tasks: starting it (the scheduler, the
# fork), and loading the family's modules and kernels from Numba's cache (2 workers: 0.6 s
# in all for a family of few kernels, ~2 s a worker for one of many)
CLUSTER_S = 0.75
CLUSTER_WALL_S = 0.5  # its wall seconds
# CPU seconds of a task beside its solve: batching, Parquet, progress (bench_load.py: the
# machinery is ~10% of 0.5 ms tasks)
PER_TASK_S = 1e-4


@dataclass(frozen=True)
class RunTime:
    """The estimate of one run: its tasks' solver time and its fixed costs, in CPU seconds,
    and the workers the tasks are spread over."""

    tasks: int
    solver_s: float  # the family's estimate of the tasks' solve, summed
    workers: int
    cluster: bool  # whether the run starts (or reaches) a cluster of workers
    start_after_s: float = 0.0  # solver seconds run in the driver before a LocalCluster starts

    @property
    def tasks_s(self) -> float:
        """CPU seconds of the tasks: their solve and their handling."""
        return self.solver_s + PER_TASK_S * self.tasks

    @property
    def fixed_s(self) -> float:
        """CPU seconds of the run beside its tasks."""
        return FIXED_S + (CLUSTER_S * self.workers if self.cluster else 0.0)

    @property
    def cpu_s(self) -> float:
        return self.fixed_s + self.tasks_s

    @property
    def wall_s(self) -> float:
        """Wall seconds on an idle machine: the fixed costs, then the tasks, the part run
        before the cluster starts in the driver alone and the rest over the workers."""
        if not self.cluster:
            return FIXED_S + self.tasks_s
        here = min(self.start_after_s, self.tasks_s)
        return FIXED_S + CLUSTER_WALL_S + here + (self.tasks_s - here) / max(1, self.workers)

    def line(self) -> str:
        """``stage=plan``'s line on the run's time."""
        where = f"the tasks on {self.workers} workers" if self.cluster else "in this process"
        return (
            f"  run time: about {format_duration(self.wall_s)} on an idle machine, {where} "
            f"({format_duration(self.cpu_s)} of CPU, {format_duration(self.fixed_s)} of it to "
            "start, summarise and report); compiling kernels Numba's cache lacks comes on top"
        )


def run_time(
    tasks: int, solver_s: float, workers: int, serial: bool, start_after_s: float | None
) -> RunTime:
    """The estimate of a run of ``tasks`` tasks of ``solver_s`` solver seconds in all on
    ``workers`` workers (``serial``: the driver runs them itself, cluster=sync);
    ``start_after_s``: a LocalCluster's ``cluster.start_after_s`` (None: the workers of
    another backend, reached at once)."""
    if serial or not tasks:
        return RunTime(tasks, solver_s, 1, cluster=False)
    if start_after_s is None or start_after_s <= 0:
        return RunTime(tasks, solver_s, workers, cluster=True)
    per_task = solver_s / tasks
    starts = per_task > start_after_s or solver_s + PER_TASK_S * tasks > 2 * start_after_s
    return RunTime(tasks, solver_s, workers, cluster=starts, start_after_s=start_after_s)


def of_plan(left: Any, shared_s: float, workers: Any, cluster_conf: Any) -> RunTime | None:
    """The estimate of running the tasks ``left`` (a :class:`~pipeline.study.Plan`) on the
    backend's ``workers`` (:class:`~pipeline.backends.base.Workers`), less ``shared_s``
    seconds of shared pieces computed once; None where the family has no model for them."""
    found = left.estimated_seconds() if len(left) else (0.0, 0)
    if found is None:
        return None
    start_after = getattr(cluster_conf, "start_after_s", None)  # a LocalCluster's setting
    return run_time(len(left), found[0] - shared_s, workers.count, workers.serial, start_after)
