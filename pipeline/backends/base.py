"""What every cluster backend shares: the Workers it answers, TLS (the settings of its files and
their check), warnings, quiet logs (the class each backend is: :mod:`pipeline.backends.backend`;
the executor it opens: :mod:`pipeline.backends.executor`).

Nothing here imports Dask's ``distributed`` at module level (``cluster=sync`` must not).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pipeline.config import FilePath, Strict
from pipeline.errors import StudyError
from solvers.kit.budget import Budget
from solvers.kit.words import format_bytes

TLS_KEYS = ("ca_file", "cert", "key")
CERTS_HINT = "make them with python -m pipeline.certs DIR"


@dataclass(frozen=True)
class Workers:
    """What a backend knows of the workers a run's tasks get, before it opens them (its
    ``find_workers()``): how many processes a task may use, the memory one of them may
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
    """``opened`` (a backend's executor), whose cluster closes without a word once Ctrl-C (or
    SIGTERM) stopped the run: from the KeyboardInterrupt until the cluster has closed, Dask's,
    Tornado's and asyncio's loggers are silent.  A stopped cluster's scheduler logged
    "Couldn't gather keys: {'last_log_chunk-...': 'forgotten'}" (a split task's chunks, their
    workers stopped), and a connection cut mid-handshake a TLS error; the run's one line says
    what happened.  Their levels are put back once the cluster has closed (each one still
    silent: a level the closing cluster put back itself, as :mod:`.worker_deaths` does, is
    left as it was put)."""
    levels: dict[str, int] = {}
    try:
        with opened as executor:
            try:
                yield executor
            except KeyboardInterrupt:
                names = [
                    name
                    for name in logging.root.manager.loggerDict
                    if name.split(".")[0] in STOPPING_QUIET
                ]
                for name in {*STOPPING_QUIET, *names}:
                    logger = logging.getLogger(name)
                    levels[name] = logger.level
                    logger.setLevel(SILENT)
                raise
    finally:
        for name, level in levels.items():
            logger = logging.getLogger(name)
            if logger.level == SILENT:
                logger.setLevel(level)


SILENT = logging.CRITICAL + 1  # a logger's level that lets no record through


class TLSFiles(Strict):
    """``cluster.tls.*`` of the backends that reach a cluster over TLS (address, slurm): the
    CA, the certificate and its key, as files."""

    ca_file: FilePath
    cert: FilePath
    key: FilePath

    def given(self) -> dict[str, str]:
        """The TLS files that are set, by key."""
        return {k: v for k, v in self.model_dump().items() if v}


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
