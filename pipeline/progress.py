"""The driver's display: the tasks bar, one bar per running long task below it, and the
tasks' warnings as lines above them.

Reports come from a Dask worker as worker events (``Worker.log_event`` on the topic
:data:`~pipeline.task_context.TOPIC`, the driver subscribed with ``Client.subscribe_topic``:
:func:`progress_shown`), under ``cluster=sync`` straight to :meth:`ProgressBars.show`.
Warnings (``TaskContext.warn``: a checkpoint piece that failed its check, set aside and
recomputed) travel the same way on :data:`~pipeline.task_context.WARNINGS`, whether or not
progress is shown.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from pipeline.task_context import TOPIC, WARNINGS
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
    return tqdm(total=total, unit="task", desc="tasks", dynamic_ncols=True, disable=hidden)


class ProgressBars:
    """One tqdm bar per running long task, below the tasks bar, and the tasks' warnings as
    lines above them (to ``log``); thread-safe (Dask calls :meth:`show` and :meth:`say` from
    its event loop's thread)."""

    def __init__(self, enabled: bool, log: Callable[[str], None] = print):
        self.enabled = enabled
        self.log = log
        self.bars: dict[str | None, Any] = {}
        self.lock = threading.Lock()

    def say(self, text: str) -> None:
        """One warning line, printed above the bars (which are redrawn below it)."""
        with self.lock:
            if not self.bars:
                self.log(text)
                return
            from tqdm import tqdm

            with tqdm.external_write_mode(nolock=True):
                self.log(text)

    def on_warning(self, event: Any) -> None:
        """A Dask worker event ``(time, {"task_id", "text"})`` on :data:`WARNINGS`."""
        _, msg = event
        with contextlib.suppress(TypeError, KeyError):
            self.say(str(msg["text"]))

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

    def on_event(self, event: Any) -> None:
        """A Dask worker event ``(time, message)`` on :data:`TOPIC`."""
        _, msg = event  # the scheduler adds the sending worker's address to the message
        with contextlib.suppress(TypeError, KeyError):
            self.show(Progress(**{k: msg[k] for k in Progress.__dataclass_fields__}))

    def close(self) -> None:
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


@contextlib.contextmanager
def progress_shown(runner: Any, bars: ProgressBars) -> Iterator[None]:
    """The runner's workers' warnings (always) and progress events (when ``bars`` are
    enabled) shown on ``bars`` while the block runs."""
    client = runner.client
    if client is None:
        try:
            yield
        finally:
            bars.close()
        return
    topics = {WARNINGS: bars.on_warning}
    if bars.enabled:
        topics[TOPIC] = bars.on_event
    for topic, handler in topics.items():
        client.subscribe_topic(topic, handler)
    try:
        yield
    finally:
        for topic in topics:
            with contextlib.suppress(Exception):
                client.unsubscribe_topic(topic)
        bars.close()
