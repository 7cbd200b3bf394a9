"""What every cluster backend shares: the Workers it answers, the Runner it opens, TLS,
warnings, quiet logs.

Nothing here imports Dask's ``distributed`` at module level (``cluster=sync`` must not).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pipeline.config import StudyError
from solvers.kit.budget import Budget
from solvers.kit.words import format_bytes

TLS_KEYS = ("ca_file", "cert", "key")
CERTS_HINT = "make them with python -m pipeline.certs DIR"


@dataclass(frozen=True)
class Workers:
    """What a backend knows of the workers a run's tasks get, before it opens them (its
    ``workers(cluster)``): how many processes a task may use, the memory one of them may
    hold and where that figure comes from (None: known only where a task runs, as on a
    worker without a memory limit), and whether the driver runs the tasks itself, one
    after another.  ``memory``: the most one process can hold there, where it is more than
    the budget (this machine's memory under ``cluster=sync``, whose budget is the memory
    available now); :attr:`most` is that or the budget."""

    count: int
    budget: Budget | None
    serial: bool = False
    memory: Budget | None = None

    @property
    def most(self) -> Budget | None:
        """The most memory one process of a task can hold where the run executes (None:
        not known before a task runs): a larger ``run.memory_budget`` is refused."""
        return self.memory or self.budget


def worker_budget(limit: int | None, setting: str) -> Budget | None:
    """A Dask worker's ``memory_limit`` (bytes) as a task's budget (None: no limit)."""
    if not limit:
        return None
    return Budget(limit, f"the Dask workers' memory_limit ({format_bytes(limit)} each, {setting})")


@dataclass
class Runner:
    """A Dask client (None: in this process) and what its tasks may borrow.

    ``task_cluster`` is what the pipeline hands a task that splits its work over the cluster
    it runs on (see ``Family.split``): a zero-argument callable giving a context manager that
    yields a Dask client, or None where tasks do not run on Dask workers.
    """

    client: Any
    n_workers: int
    description: str
    task_cluster: Any = None
    # called about once a second while the driver waits for its batches (see
    # :func:`finished`); it may say something, or raise StudyError to stop the run
    watch: Callable[[], None] | None = None
    # the run's log (runs/<time>.log), set by the run once its record is written: where a
    # backend keeps detail it spares the terminal
    log_file: Path | None = None


WATCH_EVERY_S = 1.0


def finished(pending: Any, watch: Callable[[], None] | None) -> Iterator[Any]:
    """The futures of ``pending`` (a Dask ``as_completed``, which may grow meanwhile) as
    they finish, as iterating it gives them; while it waits, ``watch()`` is called every
    WATCH_EVERY_S seconds (its exceptions end the iteration)."""
    if watch is None:
        yield from pending
        return
    last = time.monotonic()
    while True:
        if pending.has_ready():
            yield next(pending)
            continue
        if pending.is_empty():
            return
        with pending.thread_condition:  # notified as a future finishes (as_completed's own)
            pending.thread_condition.wait(timeout=0.1)
        if time.monotonic() - last >= WATCH_EVERY_S:
            watch()
            last = time.monotonic()


@contextlib.contextmanager
def borrowed_client() -> Iterator[Any]:
    """Inside a Dask worker: a client of the cluster this task runs on (worker_client)."""
    from distributed import worker_client

    with worker_client() as client:
        yield client


def quiet_dask_logs() -> None:
    """Keep Dask's routine INFO messages (workers starting, closing) off the terminal.

    Called again once a backend has imported ``distributed``: its import configures levels
    on its own child loggers (``distributed.scheduler``...), which the parent's does not
    override.
    """
    quiet = ("distributed", "bokeh", "tornado")
    names = [n for n in logging.root.manager.loggerDict if n.split(".")[0] in quiet]
    for name in (*quiet, *names):
        logging.getLogger(name).setLevel(logging.WARNING)


STOPPING_QUIET = ("distributed", "tornado", "asyncio")  # what a closing cluster logs through


@contextlib.contextmanager
def quiet_while_stopping(opened: contextlib.AbstractContextManager[Any]) -> Iterator[Any]:
    """``opened`` (a backend's Runner), whose cluster closes without a word once Ctrl-C (or
    SIGTERM) stopped the run: from the KeyboardInterrupt until the cluster has closed, Dask's,
    Tornado's and asyncio's loggers are silent.  A stopped cluster's scheduler logged
    "Couldn't gather keys: {'last_log_chunk-...': 'forgotten'}" (a split task's chunks, their
    workers stopped), and a connection cut mid-handshake a TLS error; the run's one line says
    what happened.  Their levels are put back once the cluster has closed."""
    levels: dict[str, int] = {}
    try:
        with opened as runner:
            try:
                yield runner
            except KeyboardInterrupt:
                names = [
                    name
                    for name in logging.root.manager.loggerDict
                    if name.split(".")[0] in STOPPING_QUIET
                ]
                for name in {*STOPPING_QUIET, *names}:
                    logger = logging.getLogger(name)
                    levels[name] = logger.level
                    logger.setLevel(logging.CRITICAL + 1)
                raise
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def tls_files(tls: Any, *, key_prefix: str = "cluster.tls") -> dict[str, str] | None:
    """The three TLS files (expanded paths) when any is set, else None; checks they exist."""
    given = tls.given()
    if not given:
        return None
    for key in TLS_KEYS:
        path = given.get(key)
        if not path:
            raise StudyError(
                f"{key_prefix}.{key}=None: TLS needs cluster.tls.ca_file, cluster.tls.cert "
                f"and cluster.tls.key ({CERTS_HINT})"
            )
        if not Path(path).expanduser().is_file():
            raise StudyError(f"{key_prefix}.{key}={path!r}: no such file")
    return {k: str(Path(given[k]).expanduser()) for k in TLS_KEYS}


def tls_security(files: dict[str, str], roles: Literal["client", "all"] = "client") -> Any:
    """Dask Security from the three TLS files: the client's alone, or one certificate for
    every role (scheduler, workers and client, as the Slurm backend starts them all)."""
    from distributed.security import Security

    cert, key = files["cert"], files["key"]
    kinds = ("client",) if roles == "client" else ("scheduler", "worker", "client")
    certs = {
        f"tls_{kind}_{part}": path
        for kind in kinds
        for part, path in (("cert", cert), ("key", key))
    }
    return Security(tls_ca_file=files["ca_file"], **certs, require_encryption=True)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is an IP address of this machine's loopback range."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
