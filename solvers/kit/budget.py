"""The memory budget of a task and what a task needs: the figures the run is sized by.

A family states what one task needs at its peak (:class:`Need`, through ``Scheduling.needs``);
the pipeline's backends say how much memory one process may hold where the run executes
(:class:`Budget`), the plan (``pipeline/needs.py``) refuses a task whose need exceeds it
before any work starts, and a solver reads the budget of the task it solves from its
:class:`~solvers.kit.task_context.TaskContext`.  Plain figures, nothing of a game, a
solver or the pipeline: both sides import this module.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """The memory one process of a task may hold, and where that figure came from."""

    bytes: int
    # for messages, e.g. "the Dask workers' memory_limit (4.0 GB each)",
    # "available memory under cluster=sync (21.3 GB)", "run.memory_budget=8GB"
    source: str


@dataclass(frozen=True)
class Need:
    """What one task needs at its peak: memory per process and checkpoint/spill disk, and the
    checkpoint pieces it shares with the other tasks of the run under one key (e.g. one
    deck's last layer, the same for every policy): ``shared_disk`` of ``disk`` is held once
    for all the tasks of ``shared``, and the pipeline removes it when none of them is left."""

    memory: int  # bytes per process at the peak
    disk: int = 0  # bytes of checkpoint/spill files at the peak (0: none)
    note: str = ""  # e.g. "4,260,167,671 states; layers out of core"
    shared: str = ""  # the key of the pieces it shares (TaskContext.shared); "": none
    shared_disk: int = 0  # bytes of ``disk`` in those pieces
    # for the plan's table (stage=plan): the states it solves, those of its largest layer
    # (or other unit held at once), its estimated CPU seconds; 0 / None: not said
    states: int = 0
    largest: int = 0
    cpu_seconds: float | None = None
    shared_cpu_seconds: float = 0.0  # of ``cpu_seconds``, computing the shared pieces


def available_memory() -> int:
    """This machine's available memory in bytes (psutil, which Dask depends on)."""
    import psutil

    return int(psutil.virtual_memory().available)
