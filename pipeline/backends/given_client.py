"""A Dask client the caller started and keeps (a notebook's own cluster): the run's calls are
tasks on its workers, through :func:`open_executor_on` (or a whole run through
:class:`ClientBackend`, which ``run_study(cfg, client=...)`` uses in place of the config's
cluster section); guesslab neither starts nor closes that cluster.

Its workers must run the guesslab this process runs: before any task is submitted each
worker answers :func:`guesslab_identity` (the package's version, every family's solver
version, a fingerprint of the code of ``solvers`` and ``pipeline``), and one that answers
otherwise, or cannot answer, is refused with one line naming it.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from typing import Any

from pipeline.backends.backend import Backend
from pipeline.backends.base import Workers, worker_budget
from pipeline.backends.dask_executor import DaskExecutor
from pipeline.errors import StudyError, short_repr
from solvers.kit.words import counted

CODE = ("solvers", "pipeline")  # the packages whose code a worker runs for a run


def guesslab_identity() -> dict[str, Any]:
    """What makes a process's results guesslab's of this version: the installed package's
    version, each family's solver version, and 16 hex digits of the code of each package of
    :data:`CODE` (its ``.py`` files' names and bytes)."""
    import solvers
    from solvers.own_code import files_fingerprint, source_files

    try:
        version = importlib.metadata.version("guesslab")
    except importlib.metadata.PackageNotFoundError:
        version = "not installed"
    families = {name: solvers.get_family(name).version for name in solvers.families()}
    code = {package: files_fingerprint(source_files(package)) for package in CODE}
    return {"version": version, "families": families, "code": code}


def described(identity: Mapping[str, Any]) -> str:
    """An identity in words: ``guesslab 0.1.0, code solvers 1234..., pipeline 5678...``."""
    code = ", ".join(f"{package} {fp}" for package, fp in identity["code"].items())
    return f"guesslab {identity['version']}, code {code}"


def worker_mismatch(mine: Mapping[str, Any], theirs: Mapping[str, Any]) -> str | None:
    """The one line refusing the first worker of ``theirs`` (address -> its identity, or the
    error it answered with) whose guesslab is not ``mine``, or None when every one matches."""
    for address, identity in sorted(theirs.items()):
        if isinstance(identity, BaseException):
            why = f"{type(identity).__name__}: {identity}"
            return (
                f"the Dask client's worker {address} cannot run guesslab ({why}); install "
                f"this guesslab ({described(mine)}) on every worker"
            )
        if identity != mine:
            families = sorted(
                name
                for name in {*identity["families"], *mine["families"]}
                if identity["families"].get(name) != mine["families"].get(name)
            )
            which = f" (families {', '.join(families)} differ)" if families else ""
            return (
                f"the Dask client's worker {address} runs {described(identity)}{which}, "
                f"this process {described(mine)}: its results would not be this code's; "
                "install the same guesslab on every worker"
            )
    return None


def check_client(client: Any) -> None:
    """StudyError, naming ``client=`` and its value, for a client that is not a running
    ``distributed.Client`` (a text, a number, a concurrent.futures executor, a client
    closed or not yet connected): nothing is asked of it."""
    import sys

    distributed = sys.modules.get("distributed")  # a Client's class was imported with it
    if distributed is None or not isinstance(client, distributed.Client):
        raise StudyError(
            f"client={short_repr(client)}: a distributed.Client is needed "
            f"(a {kind_of(client)} was given), e.g. "
            "Client(LocalCluster()); or no client, for the config's cluster"
        )
    if client.status != "running":
        raise StudyError(
            f"client={short_repr(client)}: the client is {client.status}, not running; "
            "give a client that is connected to its scheduler"
        )


def kind_of(value: Any) -> str:
    """The class of ``value`` as its module names it: ``str``, ``concurrent.futures.thread.
    ThreadPoolExecutor``."""
    kind = type(value)
    where = "" if kind.__module__ == "builtins" else f"{kind.__module__}."
    return f"{where}{kind.__qualname__}"


def checked_workers(client: Any) -> int:
    """How many workers ``client``'s scheduler has, each checked to run this process's
    guesslab (StudyError, one line, otherwise, or when it has none)."""
    theirs = client.run(guesslab_identity, on_error="return")
    if not theirs:
        raise StudyError(
            f"the Dask client's scheduler {client.scheduler.address} has no workers; start "
            "some before running a study on it"
        )
    problem = worker_mismatch(guesslab_identity(), theirs)
    if problem is not None:
        raise StudyError(problem)
    return len(theirs)


@contextlib.contextmanager
def open_executor_on(client: Any) -> Iterator[DaskExecutor]:
    """An executor whose calls are tasks on ``client``'s workers, once each worker was found
    to run this guesslab (StudyError otherwise, before any task); on exit the calls left
    are cancelled, and the client and its cluster are left as they were."""
    n_workers = checked_workers(client)
    address = client.scheduler.address
    description = f"the given Dask client (scheduler {address}, {counted(n_workers, 'worker')})"
    executor = DaskExecutor(client, n_workers, description)
    try:
        yield executor
    finally:
        executor.cancel()


class ClientBackend(Backend):
    """The backend of a run on ``client`` (``run_study(cfg, client=...)``), the config's
    cluster section unused: chosen by the caller, not by a kind, so not registered.  The
    client is checked as the backend is built (:func:`check_client`)."""

    def __init__(self, client: Any):
        check_client(client)
        super().__init__()
        self.client = client

    def check(self) -> None:
        """Refuse a client whose workers run another guesslab, or that has none."""
        checked_workers(self.client)

    def exposure_warning(self) -> str | None:
        """None: who may reach the caller's cluster is the caller's to say."""
        return None

    def find_workers(self) -> Workers:
        """The client's workers: how many, and the smallest ``memory_limit`` (None when a
        worker has none: each task then takes its machine's available memory)."""
        info = self.client.scheduler_info(n_workers=-1).get("workers", {})
        limits = [w.get("memory_limit") or None for w in info.values()]
        every = bool(limits) and all(limits)
        where = f"the given Dask client's scheduler {self.client.scheduler.address}"
        budget = worker_budget(min(limits), where) if every else None
        return Workers(max(1, len(limits)), budget)

    def executor(self, workers: Workers) -> AbstractContextManager[DaskExecutor]:
        """An executor on the client's workers (:func:`open_executor_on`)."""
        return open_executor_on(self.client)
