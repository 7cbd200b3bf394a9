"""The LocalCluster's worker processes that die under a run: what Dask logs of each death kept
off the terminal, and what ended each process, to name it in the lost batch's rows.

A task whose code ends its process (``os._exit``, a crash in compiled code) or holds more
memory than ``cluster.memory_limit`` (its nanny ends the worker) kills its worker; Dask starts
another and runs the task again, up to ``distributed.scheduler.allowed-failures`` more times
(3), then gives the task up (``KilledWorker``).  Left alone, each death puts 4-9 lines of
Dask's logging on the terminal ("Restarting worker", "exceeded 95% memory budget", "is slow
to accept SIGTERM", "marked as failed because 4 workers died"), and the rows would say only
``KilledWorker ... on 4 different workers``, naming neither the task nor what ended it.

:class:`WorkerDeaths` is a logging filter on the loggers those lines go through (the nannies
and the scheduler run in the driver; the workers' own memory warnings, in the workers, are
dropped there).  It takes the lines off the output and keeps them for the run's log
(``runs/<time>.log``), and reads from them what ended each worker process: its exit status
or signal (the nanny's INFO line, let through to the filter and no further) and whether its
nanny ended it over the memory limit.  :meth:`WorkerDeaths.explained` turns a lost call's
``KilledWorker`` into a :class:`WorkerDied` saying so.

Imported by every worker as it starts (the preload), so it imports only the standard library
and the executors' module.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import logging
import re
import signal
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from pipeline.backends.executor import CallLost
from solvers.kit.words import counted

# Dask's lines about a worker that dies, by logger (distributed 2024-2025); each one matched
# is taken off the output.  The groups name what is read from it.
DEATH_LINES = {
    "distributed.nanny": (
        re.compile(r"Worker process (?P<pid>\d+) exited with status (?P<status>-?\d+)"),
        re.compile(r"Worker process (?P<pid>\d+) was killed by signal (?P<signal>\d+)"),
        re.compile(r"Restarting worker \(status="),
        re.compile(r"Worker process died unexpectedly"),
        re.compile(r"(?P<failed>Failed to restart worker after its process exited)"),
        re.compile(r"(?P<failed>Failed to start process)"),
        re.compile(r"(?P<failed>Timed out connecting Nanny)"),
    ),
    "distributed.nanny.memory": (
        re.compile(r"Worker \S+ \(pid=(?P<memory>\d+)\) exceeded \d+% memory budget"),
        re.compile(r"Worker \S+ \(pid=\d+\) is slow to "),
    ),
    "distributed.scheduler": (
        re.compile(r"Task \S+ marked as failed because \d+ workers died"),
        re.compile(r"Removing worker .* caused the cluster to lose already computed task"),
        re.compile(r"Received heartbeat from unregistered worker"),
        re.compile(r"Couldn't gather keys: "),  # a finished call its dead worker held
    ),
    "distributed.client": (re.compile(r"Couldn't gather \d+ keys, rescheduling"),),
    # a dead worker's scratch folder, removed by its nanny and by the next worker at once
    "distributed.diskutils": (re.compile(r"Failed to remove "),),
}
# a worker's own warnings as its memory grows: the nanny's line above says what follows
WORKER_MEMORY_LINES = (
    re.compile(r"Unmanaged memory use is high"),
    re.compile(r"Worker is at \d+% memory usage\. (Pausing|Resuming) worker"),
)
LOGGERS = (*DEATH_LINES, "distributed.worker.memory")
RESTART_CUT_SHORT = "a worker process being started again was cancelled (the cluster closed)"
SAYS_WITHIN_S = 5.0  # how long a nanny may take to say how its worker process ended (a loaded
# machine: at a load average of 10 on 2 cores, 2 s was seen not to be enough)
KEEP_LINES = 1000  # lines kept for the run's log (a flood is counted, kept in part)


def restart_cut_short(record: logging.LogRecord) -> bool:
    """Whether ``record`` is a nanny's CancelledError, logged with its traceback and no
    message by Dask's ``log_errors`` when the cluster closes while the nanny starts a worker
    process again after a death: nothing is lost, the cluster was closing anyway."""
    if record.name != "distributed.nanny" or not record.exc_info:
        return False
    return isinstance(record.exc_info[1], asyncio.CancelledError)


class WorkerDied(CallLost):
    """A call lost because the worker processes that ran it died (what ended them said)."""


class WorkerDeaths(logging.Filter):
    """The deaths of one LocalCluster's worker processes, read from Dask's log lines, which
    it takes off the output (installed by :func:`watching`).  ``memory_limit``: how the
    worker's limit is said ("300.0 MB, cluster.memory_limit=300MB")."""

    def __init__(self, memory_limit: str | None = None, nanny_level: int = logging.WARNING):
        super().__init__()
        self.memory_limit = memory_limit
        self.nanny_level = nanny_level  # the nanny's records below it go no further
        self.lock = threading.Condition()
        self.lines: list[str] = []
        self.dropped = 0  # lines past KEEP_LINES
        self.ended: dict[int, str] = {}  # worker pid -> how its process ended
        self.over_memory: set[int] = set()  # worker pids their nanny ended over the limit
        self.restart_failed = 0  # nannies that could not start a worker again
        self.last: int | None = None  # the pid of the worker process that ended last
        self.times: list[float] = []  # when each worker process was seen to end

    def filter(self, record: logging.LogRecord) -> bool:
        if restart_cut_short(record):
            self._keep(record, RESTART_CUT_SHORT)
            return False
        found = self._death_line(record)
        if found is None:  # not ours: as the nanny's level would have had it
            return record.name != "distributed.nanny" or record.levelno >= self.nanny_level
        self._keep(record)
        groups = found.groupdict()
        with self.lock:
            if groups.get("memory"):
                self.over_memory.add(int(groups["memory"]))
            if groups.get("pid"):
                self.times.append(record.created)
            if groups.get("status"):
                self.last = int(groups["pid"])
                self.ended[self.last] = exit_words(int(groups["status"]))
            if groups.get("signal"):
                self.last = int(groups["pid"])
                self.ended[self.last] = signal_words(int(groups["signal"]))
            if groups.get("failed"):
                self.restart_failed += 1
            self.lock.notify_all()
        return False

    @staticmethod
    def _death_line(record: logging.LogRecord) -> re.Match | None:
        text = record.getMessage()
        patterns = DEATH_LINES.get(record.name, ())
        if record.name == "distributed.worker.memory":
            patterns = WORKER_MEMORY_LINES
        return next((m for p in patterns if (m := p.search(text)) is not None), None)

    def _keep(self, record: logging.LogRecord, text: str | None = None) -> None:
        when = dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds")
        with self.lock:
            if len(self.lines) < KEEP_LINES:
                self.lines.append(f"{when} {record.name}: {text or record.getMessage()}")
            else:
                self.dropped += 1

    def how_it_ended(self, pid: int | None, wait: float = 0.0) -> str:
        """How the worker process ``pid`` ended, as far as its nanny said (waiting up to
        ``wait`` seconds for it to say: the scheduler may give up a call before the nanny
        has seen its process end)."""
        with self.lock:
            self.lock.wait_for(lambda: pid is None or pid in self.ended, timeout=wait)
            memory = pid in self.over_memory
            ended = self.ended.get(pid) if pid is not None else None
        if memory:
            limit = f" ({self.memory_limit})" if self.memory_limit else ""
            return f"Dask ended it for holding more than the worker's memory limit{limit}"
        return ended or "how it ended is not known (Dask did not say)"

    def explained(self, exc: BaseException) -> BaseException:
        """A lost call's error, said in words: a ``KilledWorker`` as a :class:`WorkerDied`
        naming how the last worker process that ran the call ended; any other unchanged."""
        if type(exc).__name__ != "KilledWorker":
            return exc
        times = getattr(exc, "allowed_failures", 3) + 1
        pid = getattr(getattr(exc, "last_worker", None), "pid", None)
        return WorkerDied(
            f"the worker process running it died each of the {times} times it was run "
            f"(distributed.scheduler.allowed-failures={times - 1} retries); the last time "
            f"{self.how_it_ended(pid, wait=SAYS_WITHIN_S)}"
        )

    def write_log(self, log_file: Path | None, more: Iterable[str] = ()) -> None:
        """The lines taken off the output, and ``more`` lines about the deaths, appended to
        the run's log (none: nothing)."""
        with self.lock:
            lines, dropped = sorted([*self.lines, *more]), self.dropped
        if not lines or log_file is None:
            return
        more = [f"... and {counted(dropped, 'more line')} about worker deaths"] if dropped else []
        with contextlib.suppress(OSError), log_file.open("a", encoding="utf-8") as fh:
            fh.write("\n".join(["# worker processes that died (Dask's lines)", *lines, *more]))
            fh.write("\n")


def exit_words(status: int) -> str:
    """How a process that exited with ``status`` ended, for a row."""
    if status < 0:
        return signal_words(-status)
    return (
        f"its process exited with status {status} (code in the task ended it: os._exit, "
        "or a library's exit)"
    )


def signal_words(signum: int) -> str:
    """How a process killed by ``signum`` ended, for a row."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    why = {
        "SIGSEGV": "a crash in compiled code",
        "SIGBUS": "a crash in compiled code",
        "SIGABRT": "compiled code aborted",
        "SIGKILL": "killed from outside: the system out of memory, or a person",
    }.get(name)
    return f"its process was killed by {name}" + (f" ({why})" if why else "")


@contextlib.contextmanager
def watching(deaths: WorkerDeaths) -> Iterator[WorkerDeaths]:
    """``deaths`` on the loggers that say a worker died, until the block ends: the nannies'
    INFO lines (each process's exit) reach it, and no further (its filter drops whatever
    it does not take that the logger's level would have dropped)."""
    loggers = [logging.getLogger(name) for name in LOGGERS]
    nanny = logging.getLogger("distributed.nanny")
    level = nanny.level
    deaths.nanny_level = nanny.getEffectiveLevel()
    for logger in loggers:
        logger.addFilter(deaths)
    nanny.setLevel(min(deaths.nanny_level, logging.INFO))
    try:
        yield deaths
    finally:
        nanny.setLevel(level)
        for logger in loggers:
            logger.removeFilter(deaths)


def in_worker() -> None:
    """In a worker as it starts (the preload): its own memory warnings dropped (a forked
    worker has the driver's filter already)."""
    memory = logging.getLogger("distributed.worker.memory")
    if not any(isinstance(f, WorkerDeaths) for f in memory.filters):
        memory.addFilter(WorkerDeaths())
