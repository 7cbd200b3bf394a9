"""Progress reports of a running task: how much is done, at what rate, how long is left.

A solver reports through :meth:`TaskContext.progress
<solvers.kit.task_context.TaskContext.progress>`; a :class:`ProgressReporter` drops the
reports closer than an interval and hands the others, as :class:`Progress`, to where the
pipeline shows them (the driver's terminal).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Progress:
    """One progress report of a running task, as the driver receives it."""

    task_id: str | None
    done: float
    total: float
    unit: str
    note: str
    rate: float | None  # units per second since the task's first report (None: not yet)
    seconds_left: float | None  # at that rate (None: unknown)
    at: float  # time.time() of the report

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


Sink = Callable[[Progress], None]


class ProgressReporter:
    """Rate-limits a task's progress calls and works out its rate and time left."""

    def __init__(self, task_id: str | None, sink: Sink | None, interval: float):
        self.task_id, self.sink, self.interval = task_id, sink, interval
        self.lock = threading.Lock()
        self.first: tuple[float, float] | None = None  # (monotonic time, done) of the first
        self.last_sent = -math.inf

    def __call__(self, done: float, total: float, unit: str, note: str) -> None:
        if self.sink is None:
            return
        now = time.monotonic()
        with self.lock:
            if self.first is None:
                self.first = (now, float(done))
            final = total > 0 and done >= total
            if now - self.last_sent < self.interval and not final:
                return
            self.last_sent = now
            t0, d0 = self.first
        # no rate before 0.1% of the work is done: high/low's first layers (a few states
        # each, after the files are made) gave "1.72 states/s, 141040.5 days left"
        enough = done - d0 >= total / 1000 if total > 0 else done > d0
        rate = (done - d0) / (now - t0) if now > t0 and done > d0 and enough else None
        left = (total - done) / rate if rate else (0.0 if final else None)
        self.sink(
            Progress(self.task_id, float(done), float(total), unit, note, rate, left, time.time())
        )
