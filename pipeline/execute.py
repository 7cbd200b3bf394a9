"""What the workers run: a batch of tasks, each to rows (an error row when it fails), with an
optional time limit per task.  The cluster backends are in :mod:`pipeline.backends`.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from solvers.registry import Row, get_family, param_columns, solve


def batch_rows(
    batch: Iterable[tuple[str, dict]],
    study: str,
    timeout: float | None = None,
    cluster: Callable[[], Any] | None = None,
) -> Iterator[Row]:
    """Rows for a batch of (task_id, task): results, or one "error" row per failing task,
    task by task as they are solved (the tasks are taken from ``batch`` one at a time too: a
    worker holds one task and the rows not yet encoded).

    With ``timeout`` (seconds), each task runs in a forked child that is killed when the
    time is up; the task then gets an error row saying so.  ``cluster`` is handed to tasks
    that split their work over the cluster they run on (see ``Family.split``).
    """
    for tid, task in batch:
        try:
            if timeout is None:
                out = solve(task, canonical=True, cluster=cluster)
            else:
                out = solve_with_timeout(task, timeout, cluster)
        except Exception as exc:  # a failing task becomes a row; the study goes on
            out = [error_row(task, exc)]
        for row in out:
            row["task_id"], row["study"] = tid, study
        yield from out


class TaskTimeout(Exception):
    """A task ran past its time limit."""


def solve_with_timeout(task: dict, seconds: float, cluster: Any = None) -> list[Row]:
    """solve(task) in a forked child process, killed after ``seconds``."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child always ends in os._exit: it must never return into the driver
        try:
            os.close(read_fd)
            try:
                payload = pickle.dumps(("ok", solve(task, canonical=True, cluster=cluster)))
            except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
                payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
            with os.fdopen(write_fd, "wb") as fh:
                fh.write(payload)
        finally:
            os._exit(0)
    os.close(write_fd)
    deadline = time.monotonic() + seconds
    chunks = []
    try:
        while True:
            left = deadline - time.monotonic()
            ready = select.select([read_fd], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                os.kill(pid, signal.SIGKILL)
                raise TaskTimeout(f"task ran past its time limit run.task_timeout_s={seconds:g}")
            data = os.read(read_fd, 1 << 20)
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    if not chunks:
        raise RuntimeError("the task's process ended without a result")
    status, value = pickle.loads(b"".join(chunks))
    if status == "error":
        raise RuntimeError(value)
    return value


def batch_error_row(tid: str, task: dict, study: str, exc: BaseException) -> Row:
    """The error row of a task whose whole batch was lost (e.g. its worker died)."""
    row = error_row(task, exc)
    row["error"] = f"batch lost: {row['error']}"
    row["task_id"], row["study"] = tid, study
    return row


def error_row(task: dict, exc: BaseException) -> Row:
    """The row recorded for a task that raised: its parameters and the error message."""
    fam = get_family(task["family"])
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return {
        **param_columns(task),
        **dict.fromkeys(fam.columns),
        "status": "error",
        "error": f"{type(exc).__name__}: {exc}{where}",
        "seconds": None,
    }
