"""Connections the embedded TLS LocalCluster refuses: counted, and kept off the run's output.

Every port of the LocalCluster (its scheduler, nannies and workers, on 127.0.0.1) asks for
this run's throw-away certificate, so a connection from another process fails the TLS
handshake, and Tornado and Dask each logged a line about it ("SSL Error on ...",
"Listener on ...: TLS handshake failed with remote ...") into the run's output: any
account on the machine could flood it, two lines a connection.

A filter on those two loggers, in the driver (which runs the scheduler and the nannies) and in
each worker (installed by :mod:`pipeline.backends.worker_setup`), takes these lines off the
output and keeps them (the first KEEP_LINES of each process), counting the refused
connections (Dask's line: one a connection).  As the cluster closes the driver gathers the
workers' lines, writes them all to the run's log (``runs/<time>.log`` beside the run's
record) and says in one line how many connections were refused and where the lines are.

Imported by every worker as it starts: nothing heavy here.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from solvers.kit.words import counted

LOGGERS = ("tornado.general", "distributed.comm.tcp")  # who logs a failed TLS handshake
KEEP_LINES = 10_000  # lines kept per process (a flood is counted whole, kept in part)
CUT_SHORT = "EOF occurred in violation of protocol"  # the peer closed during the handshake


def refusal_kind(record: logging.LogRecord) -> str | None:
    """ "connection" for Dask's line about a refused connection (one a connection),
    "detail" for Tornado's line about the same handshake, None for any other record."""
    text = str(record.msg)
    if text.startswith("Listener on ") and "TLS handshake failed" in text:
        return "connection"
    if text.startswith("SSL Error on "):
        return "detail"
    return None


class Refusals:
    """The refused connections one process saw: a count, and the first KEEP_LINES lines."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.count = 0
        self.lines: list[str] = []
        self.dropped = 0  # lines past KEEP_LINES
        self.cut_short: list[tuple[float, str, str]] = []  # the peer left: (time, line, kind)

    def add(self, record: logging.LogRecord, kind: str) -> None:
        if os.getpid() != self.pid:  # a forked worker's copy, until its own is installed
            return
        when = dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds")
        line = f"{when} {record.name}: {record.getMessage()}"
        with self.lock:
            if CUT_SHORT in line and len(self.cut_short) < KEEP_LINES:
                self.cut_short.append((record.created, line, kind))
            self.count += kind == "connection"
            if len(self.lines) < KEEP_LINES:
                self.lines.append(line)
            else:
                self.dropped += 1

    def forgive(self, deaths: list[float], within: float = 1.0) -> list[str]:
        """Uncount the handshakes cut short (the peer gone half way) within ``within``
        seconds of one of ``deaths`` (the times this cluster's worker processes died): a
        worker killed while it connected, not a process without this run's certificate;
        their lines, taken out of those kept (for the run's log beside the deaths)."""
        with self.lock:
            forgiven = [
                cut
                for cut in self.cut_short
                if any(abs(cut[0] - death) <= within for death in deaths)
            ]
            lines = [line for _, line, _ in forgiven]
            self.count -= sum(kind == "connection" for _, _, kind in forgiven)
            self.lines = [line for line in self.lines if line not in lines]
            self.cut_short = [cut for cut in self.cut_short if cut not in forgiven]
        return lines

    def take(self) -> dict[str, Any]:
        """What was seen since the last take (a plain dict: it travels from a worker)."""
        with self.lock:
            seen = {"count": self.count, "lines": self.lines, "dropped": self.dropped}
            self.count, self.lines, self.dropped = 0, [], 0
        return seen

    def merge(self, seen: dict[str, Any]) -> None:
        """Add what another process saw (:meth:`take` there)."""
        with self.lock:
            self.count += int(seen.get("count", 0))
            lines = list(seen.get("lines", []))
            room = max(0, KEEP_LINES - len(self.lines))
            self.lines += lines[:room]
            self.dropped += int(seen.get("dropped", 0)) + len(lines[room:])


class RefusalFilter(logging.Filter):
    """Keeps the lines of a refused TLS handshake (in ``refusals``) off the output."""

    def __init__(self, refusals: Refusals):
        super().__init__()
        self.refusals = refusals

    def filter(self, record: logging.LogRecord) -> bool:
        kind = refusal_kind(record)
        if kind is None:
            return True
        self.refusals.add(record, kind)
        return False


def install(refusals: Refusals) -> None:
    """``refusals`` takes the refused handshakes' lines from now on (any filter of this
    kind already there, e.g. inherited from the driver by a forked worker, is replaced)."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        for old in [f for f in logger.filters if isinstance(f, RefusalFilter)]:
            logger.removeFilter(old)
        logger.addFilter(RefusalFilter(refusals))


def uninstall(refusals: Refusals) -> None:
    for name in LOGGERS:
        logger = logging.getLogger(name)
        for old in [f for f in logger.filters if getattr(f, "refusals", None) is refusals]:
            logger.removeFilter(old)


@contextlib.contextmanager
def kept_off_the_output(refusals: Refusals | None) -> Iterator[None]:
    """While the block runs, this process's refused handshakes go to ``refusals`` (None:
    nothing changes)."""
    if refusals is None:
        yield
        return
    install(refusals)
    try:
        yield
    finally:
        uninstall(refusals)


_in_this_worker: list[Refusals] = []


def in_worker() -> None:
    """In a worker as it starts: its refused handshakes are kept for the driver."""
    _in_this_worker[:] = [Refusals()]
    install(_in_this_worker[0])


def worker_refusals() -> dict[str, Any]:
    """What this worker kept (run by the driver on every worker, ``Client.run``)."""
    if not _in_this_worker:
        return {"count": 0, "lines": [], "dropped": 0}
    return _in_this_worker[0].take()


def gather(client: Any, refusals: Refusals | None) -> None:
    """Add to ``refusals`` what the client's workers kept (nothing if they cannot say, or
    ``refusals`` is None)."""
    if refusals is None:
        return
    with contextlib.suppress(Exception):  # workers gone: their lines go with them
        for seen in client.run(worker_refusals).values():
            refusals.merge(seen)


def report(refusals: Refusals, log_file: Path | None) -> str | None:
    """Write the kept lines to ``log_file`` (the run's log) and return the one line to
    print, or None when no connection was refused."""
    seen = refusals.take()
    if not seen["count"] and not seen["lines"]:
        return None
    n = seen["count"]
    head = (
        f"the LocalCluster refused {counted(n, 'connection')} without this run's "
        "TLS certificate (another process on this machine connected to its ports)"
    )
    if log_file is None:
        return f"{head}; their log lines were not kept (the cluster was opened outside a run)"
    lines = sorted(seen["lines"])  # by time (each begins with it), the processes merged
    if seen["dropped"]:
        lines = [*lines, f"... and {seen['dropped']} more lines, not kept"]
    try:
        from pipeline.storage.safe_paths import open_regular

        fd = open_regular(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        with open(fd, "a") as fh:
            fh.write("".join(f"{line}\n" for line in lines))
    except OSError as exc:
        return f"{head}; their log lines could not be written to {log_file} ({exc})"
    return f"{head}; what Dask and Tornado logged of each is in {log_file}"
