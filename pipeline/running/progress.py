"""The driver's display: the tasks bar, one bar per running long task below it, and the
tasks' warnings as lines above them.

The executor hands the tasks' progress reports to :meth:`ProgressBars.show` and their
warnings (``TaskContext.warn``: a checkpoint piece that failed its check, set aside and
recomputed) to :meth:`ProgressBars.say`, wherever the tasks run
(``Executor.worker_events``, :mod:`pipeline.backends.executor`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any

from solvers.kit.task_progress import Progress
from solvers.kit.words import format_count, format_duration


def shown(setting: bool | str) -> bool:
    """Whether progress is shown: ``run.progress`` true, or "auto" and stderr is a tty."""
    return sys.stderr.isatty() if setting == "auto" else bool(setting)


def tasks_bar(total: int, setting: bool | str) -> Any:
    """tqdm's bar of the run's tasks on stderr, shown as :func:`shown` says.

    The bars (this one and the long tasks' below it) take turns with a thread lock, not
    tqdm's default multiprocessing lock: that is a named semaphore, which outlives a process
    killed before it exits (a multirun job ended on Ctrl-C), and Python's resource tracker
    then prints "leaked semaphore objects" after the command's line.
    """
    from tqdm import tqdm

    if not hasattr(tqdm, "_lock"):  # tqdm's class-wide lock, made at the first bar
        tqdm.set_lock(threading.RLock())
    hidden = not shown(setting)
    file = NotebookLine() if not hidden and in_a_notebook() else None
    return tqdm(
        total=total, unit="task", desc="tasks", dynamic_ncols=True, disable=hidden, file=file
    )


def in_a_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython's ZMQ shell)."""
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    ip = get() if get else None
    return type(ip).__name__ == "ZMQInteractiveShell"


class NotebookLine:
    """Where a bar draws in a Jupyter kernel: one output of the cell, its text replaced at
    each redraw (an IPython display handle).  On stderr each redraw would be an output of
    its own (a notebook run headless stores them all); tqdm's own notebook bar is a widget,
    which needs ipywidgets, a dependency guesslab does without."""

    encoding = "utf-8"  # tqdm draws its bar in block characters, not #

    def __init__(self) -> None:
        self.handle: Any = None

    def write(self, text: str) -> None:
        """A redraw (``\\r`` and the bar's text) shown in place; a blank one (the bar
        cleared, its line ended) leaves the last text shown."""
        line = text.rsplit("\r", 1)[-1].rstrip()
        if not line:
            return
        from IPython.display import display

        shown = {"text/plain": line}
        if self.handle is None:
            self.handle = display(shown, raw=True, display_id=True)
        else:
            self.handle.update(shown, raw=True)

    def flush(self) -> None:
        """Nothing held back: each write is shown at once."""


class ProgressBars:
    """One tqdm bar per running long task, below the tasks bar, and the tasks' warnings as
    lines above them (to ``log``); a context manager closing them on exit; thread-safe (a
    Dask executor calls :meth:`show` and :meth:`say` from its event loop's thread)."""

    def __init__(self, enabled: bool, log: Callable[[str], None] = print):
        self.enabled = enabled
        self.log = log
        self.bars: dict[str | None, Any] = {}
        self.lock = threading.Lock()

    def say(self, text: str) -> None:
        """One warning line on a line of its own, printed above the bars (the tasks bar and
        the long tasks' bars are cleared first, then redrawn below it)."""
        with self.lock:
            from tqdm import tqdm

            with tqdm.external_write_mode(nolock=True):
                self.log(text)

    def show(self, report: Progress) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        with self.lock:
            bar = self.bars.get(report.task_id)
            if bar is None:
                name = (report.task_id or "task")[:10]
                bar = self.bars[report.task_id] = tqdm(
                    total=_whole(report.total),
                    desc=f"task {name}",
                    unit=report.unit or "it",
                    unit_scale=report.total >= 10_000,  # 1.2M/70.7G states; 3/27 layers
                    dynamic_ncols=True,
                    position=len(self.bars) + 1,
                    leave=False,
                    bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} {unit}"
                    "{postfix}",
                )
            bar.total = _whole(report.total)
            bar.n = _whole(report.done)
            bar.set_postfix_str(postfix(report), refresh=False)
            bar.refresh()
            if report.total > 0 and report.done >= report.total:
                bar.close()
                del self.bars[report.task_id]

    def __enter__(self) -> ProgressBars:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Every long task's bar closed (the block ends, or the run stops)."""
        with self.lock:
            for bar in self.bars.values():
                bar.close()
            self.bars.clear()


def _whole(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x


def postfix(report: Progress) -> str:
    """``1.2M states/s, 3.4 min left, layer 12``: the rate, the time left, the note."""
    parts = []
    if report.rate:
        parts.append(f"{format_count(report.rate)} {report.unit or 'it'}/s")
    if report.seconds_left is not None:
        parts.append(f"{format_duration(report.seconds_left)} left")
    if report.note:
        parts.append(report.note)
    return ", ".join(parts)
