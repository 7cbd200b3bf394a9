"""``cluster=local``: an embedded Dask LocalCluster of worker processes on 127.0.0.1."""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import math
import os
import signal
import sys
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import AfterValidator

from pipeline.backends import refusals, worker_deaths, worker_memory, worker_setup
from pipeline.backends.access_log import access_log_dropped
from pipeline.backends.backend import Backend
from pipeline.backends.base import Workers, quiet_dask_logs, worker_budget
from pipeline.backends.dask_executor import DaskExecutor
from pipeline.backends.last_worker import LastWorkerWatch
from pipeline.backends.starting import StartingExecutor, starting
from pipeline.config import Bool, ClusterSettings, Memory, PositiveInt, choice
from pipeline.errors import StudyError
from pipeline.heap import no_cyclic_gc
from solvers.kit.budget import Budget
from solvers.kit.words import counted, format_bytes

WORKER_MEMORY = 256 * 2**20  # what one idle worker process needs, give or take (bytes)
WORKERS_PER_CORE = 4
START_METHODS = ("auto", "fork", "spawn", "forkserver")


def _n_workers(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("must be a positive integer or null")
    return value


def _seconds_or_zero(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("must be a number of seconds (0: start the cluster first)")
    if not math.isfinite(value) or value < 0:
        raise ValueError("must be a finite number of seconds, 0 or more")
    return float(value)


class LocalSettings(ClusterSettings):
    """``cluster=local``: conf/cluster/local.yaml says what each key does."""

    kind: Literal["local"]
    n_workers: Annotated[Any, AfterValidator(_n_workers)]
    oversubscribe: Bool
    threads_per_worker: PositiveInt
    memory_limit: Memory
    dashboard: Bool
    start_method: Annotated[Any, AfterValidator(choice(*START_METHODS))]
    start_after_s: Annotated[Any, AfterValidator(_seconds_or_zero)]
    tls: Bool


class LocalBackend(Backend):
    """An embedded Dask LocalCluster of worker processes on 127.0.0.1, started once the
    first calls, run in this process, took ``cluster.start_after_s``."""

    settings_model = LocalSettings
    order = 1
    cluster: LocalSettings

    def check(self) -> None:
        """Refuse more worker processes than the machine holds, unless
        cluster.oversubscribe."""
        cluster = self.cluster
        if cluster.n_workers is None or cluster.oversubscribe:
            return
        cores, memory = os.cpu_count() or 1, machine_memory()
        limit = max_workers(cores, memory)
        if cluster.n_workers > limit:
            raise StudyError(
                f"cluster.n_workers={cluster.n_workers}: more worker processes than this "
                f"machine holds ({cores} cores, {memory / 2**30:.0f} GiB: at most {limit}, "
                f"{WORKERS_PER_CORE} per core and {WORKER_MEMORY // 2**20} MiB each); "
                "set cluster.oversubscribe=true to start them anyway"
            )

    def exposure_warning(self) -> str | None:
        """A warning when other local users could reach this cluster: no TLS, or a
        dashboard."""
        cluster = self.cluster
        if not cluster.tls:
            return (
                "cluster.tls=false: the LocalCluster listens on plain tcp:// on 127.0.0.1, where "
                "any account on this machine can connect and run code as you; drop the "
                "override on a shared machine"
            )
        if cluster.dashboard:
            return (
                "cluster.dashboard=true: the dashboard (plain HTTP on 127.0.0.1, no password) is "
                "readable by every account on this machine: task names and progress, the "
                "scheduler's and the workers' logs (anything a task logs), the call stacks of "
                "running tasks (file paths and source lines), each task's history, and the "
                "workers' memory and CPU use; drop the override on a shared machine"
            )
        return None

    def find_workers(self) -> Workers:
        """cluster.n_workers processes (null: one a core), each with cluster.memory_limit (a
        process holds at most this machine's memory, whatever the limit)."""
        cluster = self.cluster
        limit = worker_memory.memory_limit(cluster.memory_limit, cluster.threads_per_worker)
        budget = worker_budget(limit, f"cluster.memory_limit={cluster.memory_limit}")
        memory = machine_memory()
        total = (
            None if budget else Budget(memory, f"this machine's memory ({format_bytes(memory)})")
        )
        return Workers(cluster.n_workers or os.cpu_count() or 1, budget, memory=total)

    def executor(self, workers: Workers) -> contextlib.AbstractContextManager[StartingExecutor]:
        """The first calls in this process, then a LocalCluster's (:func:`opened`)."""
        return opened(self.cluster, workers)


def memory_words(cluster: Any) -> str | None:
    """A worker's memory limit as the rows of a batch lost to it say it ("300.0 MB,
    cluster.memory_limit=300MB"), None without one."""
    limit = worker_memory.memory_limit(cluster.memory_limit, cluster.threads_per_worker)
    if not limit:
        return None
    return f"{format_bytes(limit)}, cluster.memory_limit={cluster.memory_limit}"


def machine_memory() -> int:
    """This machine's memory in bytes (psutil, which Dask depends on)."""
    import psutil

    return int(psutil.virtual_memory().total)


def max_workers(cores: int, memory: int) -> int:
    """How many worker processes a machine of ``cores`` and ``memory`` bytes holds (>= 1)."""
    return max(1, min(WORKERS_PER_CORE * cores, memory // WORKER_MEMORY))


def start_method(setting: str = "auto") -> str:
    """How LocalCluster workers start: ``auto`` is fork on Linux, spawn elsewhere.

    A forked worker starts with the driver's modules loaded: a 2-worker LocalCluster is up in
    ~0.1 s instead of ~2 s (each spawned worker imports Dask, NumPy, Numba and the solvers
    again); macOS system libraries are not safe to fork, hence spawn there.
    """
    if setting == "auto":
        return "fork" if sys.platform.startswith("linux") else "spawn"
    return setting


def local_cluster_settings(dashboard: bool, method: str = "auto") -> dict[str, Any]:
    """Dask settings for an embedded LocalCluster: less bookkeeping on the machine's cores.

    The workers' statistical profiler feeds the dashboard and costs ~20% of the solver's
    time on small tasks: on only with the dashboard.  The nannies' memory checks (every
    100 ms), the system monitors (every 500 ms) and the event-loop health ticks (every 20 ms)
    run in the driver and in every worker; at their defaults they took ~2 of the driver's
    6 CPU seconds while the load study ran (benchmarks/bench_load.py, 100,000 tasks).  Memory
    is still checked twice a second.  Workers start by ``method`` (:func:`start_method`).

    Workers never pause: Dask pauses a worker over 80% of its memory limit until spilling
    its stored results brings it back under, but the memory of this pipeline's tasks is their
    own (a batch's result leaves for the driver at once), which no spill frees, so a task that
    keeps 85% (a strategy's cache held between calls) would pause its worker for ever, and
    the run with it.  Unpaused, the worker takes the next batch, and its nanny ends it if it
    goes over 95% (:mod:`pipeline.backends.worker_deaths`); another takes its place.

    Without the dashboard the scheduler and the workers serve no HTTP routes (Dask's
    defaults show workers, task names, call stacks and logs to any local account), and
    their HTTP servers are closed as they start (:mod:`pipeline.backends.http_off`).
    """
    settings: dict[str, Any] = {
        "distributed.worker.multiprocessing-method": start_method(method),
        "distributed.worker.profile.enabled": dashboard,
        "distributed.worker.memory.monitor-interval": "500ms",
        "distributed.admin.system-monitor.interval": "2s",
        "distributed.admin.tick.interval": "1s",
        "distributed.worker.memory.pause": False,
    }
    if not dashboard:
        settings["distributed.scheduler.http.routes"] = []
        settings["distributed.worker.http.routes"] = []
    return settings


def worker_preloads(dashboard: bool = True) -> list[str]:
    """The modules every worker runs as it starts: the user's Dask setting (a name or a
    list, as Dask takes it), and ours (without the dashboard: no HTTP server; with it, no
    access log on the run's output)."""
    ours = ["pipeline.backends.worker_setup", ACCESS_LOG if dashboard else HTTP_OFF]
    return [*_their_preloads("worker"), *ours]


def scheduler_preloads(dashboard: bool) -> list[str]:
    """The modules the scheduler runs as it starts: the user's, and ours (without the
    dashboard: no HTTP server)."""
    return [*_their_preloads("scheduler"), *([] if dashboard else [HTTP_OFF])]


HTTP_OFF = "pipeline.backends.http_off"
ACCESS_LOG = "pipeline.backends.access_log"


def dashboard_problem() -> str | None:
    """Why Dask's dashboard cannot draw here (its bokeh missing or too old), or None; read
    from the installed packages' metadata (bokeh is not imported)."""
    from importlib.metadata import PackageNotFoundError, version

    from distributed.versions import BOKEH_REQUIREMENT

    try:
        found = version("bokeh")
    except PackageNotFoundError:
        return f"Dask's dashboard needs {BOKEH_REQUIREMENT}, which is not installed here"
    if not BOKEH_REQUIREMENT.specifier.contains(found, prereleases=True):
        return f"Dask's dashboard needs {BOKEH_REQUIREMENT}, and bokeh {found} is installed here"
    return None


def dashboard_warning(cluster: Any) -> str | None:
    """One line when ``cluster.dashboard`` is on but the dashboard cannot draw: what it
    needs and how to install it (its pages would say only that), else None."""
    if not cluster.dashboard or (problem := dashboard_problem()) is None:
        return None
    from distributed.versions import BOKEH_REQUIREMENT

    return (
        f"cluster.dashboard=true: {problem} (its pages say only that): "
        f"pip install '{BOKEH_REQUIREMENT}', or drop the override"
    )


def _their_preloads(role: str) -> list[str]:
    import dask

    theirs = dask.config.get(f"distributed.{role}.preload", None) or []
    return [theirs] if isinstance(theirs, str) else list(theirs)


@contextlib.contextmanager
def _ready_to_fork(enabled: bool) -> Iterator[None]:
    """The driver prepared for forking its workers (nothing when ``enabled`` is false).

    pandas is imported first: pyarrow imports it the first time it builds an array (to check
    for pandas inputs), so every worker's first Parquet encoding cost ~0.4 s of CPU; imported
    once here (where the summary needs it anyway), the forked workers start with it.

    Then the driver's objects leave the cycle collector's reach (``gc.freeze``, as the gc
    module's documentation advises before a fork) until the cluster closes: a forked worker
    inherits the driver's heap (with a planned study of 100,000 tasks, ~400,000 objects the
    collector tracks), and each of its full collections walked all of it (0.25-0.3 s each
    on the load benchmark, touching, hence copying, inherited pages).
    """
    if not enabled:
        yield
        return
    with no_cyclic_gc():
        import pandas  # noqa: F401

    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


_forking_workers = [0]  # LocalClusters open in this process (their nannies fork workers)


def _worker_ignores_stops() -> None:
    """In a process forked while a LocalCluster is open (a worker): ignore Ctrl-C and SIGTERM
    from the start (see pipeline.backends.worker_setup.ignore_stops; the preload covers
    spawned workers, this the moments before a forked worker reaches it).  Without it a
    forked worker would inherit the driver's handler, and a SIGTERM (its nanny's, over the
    memory limit) would raise KeyboardInterrupt inside the worker's event loop, which ends
    the worker without its nanny starting another: the run would wait for ever."""
    if _forking_workers[0]:
        for stop in worker_setup.STOPS:
            signal.signal(stop, signal.SIG_IGN)


@functools.cache
def _at_fork() -> None:
    """:func:`_worker_ignores_stops` in every process forked from now on (once a process:
    registered when the first LocalCluster opens, not as this module is imported)."""
    os.register_at_fork(after_in_child=_worker_ignores_stops)


@contextlib.contextmanager
def _workers_ignore_stops() -> Iterator[None]:
    _at_fork()
    _forking_workers[0] += 1
    try:
        yield
    finally:
        _forking_workers[0] -= 1


STILL_ALIVE = "Worker process still alive after"


class _StoppingFilter(logging.Filter):
    """Drops the nannies' "Worker process still alive after 0.4 seconds, killing": on
    Ctrl-C, stopping workers in the middle of a task is what was asked for."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(STILL_ALIVE)


LOST_TASKS = "caused the cluster to lose already computed task(s)"


class _StoppedFilter(logging.Filter):
    """Once Ctrl-C stopped the run (``stopped``), drops the scheduler's "Removing worker ...
    caused the cluster to lose already computed task(s), which will be recomputed
    elsewhere": a worker stopped while it held a finished batch the driver had not fetched
    yet (1 Ctrl-C in 4 mid-run, in a terminal).  Nothing is recomputed (the run is over)
    and that batch's rows were never stored: the next run computes its tasks."""

    def __init__(self) -> None:
        super().__init__()
        self.stopped = False

    def filter(self, record: logging.LogRecord) -> bool:
        return not (self.stopped and LOST_TASKS in record.getMessage())


@contextlib.contextmanager
def _quiet_once_stopped() -> Iterator[_StoppedFilter]:
    """A :class:`_StoppedFilter` on the scheduler's log until the block ends (entered before
    the cluster, left after it closed)."""
    quiet = _StoppedFilter()
    scheduler_log = logging.getLogger("distributed.scheduler")
    scheduler_log.addFilter(quiet)
    try:
        yield quiet
    finally:
        scheduler_log.removeFilter(quiet)


def stop_workers_now(lc: Any, timeout: float = 0.5) -> None:
    """Stop the workers of the LocalCluster ``lc`` at once (Ctrl-C): each nanny closes,
    asking its worker to close and killing it after ``0.8 * timeout`` s, where the
    cluster's own close waits 4 s for the running tasks (a worker ignores Ctrl-C:
    worker_setup.ignore_stops); a closing nanny does not start another worker."""
    import asyncio

    async def kill_all() -> None:
        kills = [n.close(timeout=timeout, reason="ctrl-c") for n in lc.workers.values()]
        await asyncio.gather(*kills, return_exceptions=True)

    nanny_log = logging.getLogger("distributed.nanny")
    quiet = _StoppingFilter()
    nanny_log.addFilter(quiet)
    try:
        lc.sync(kill_all)  # each nanny's error is gathered, not raised
    except RuntimeError as exc:  # the cluster closed already, its workers with it
        if "IOLoop is closed" not in str(exc):
            raise
    finally:
        nanny_log.removeFilter(quiet)


def throwaway_security() -> Any:
    """Dask Security with a new self-signed CA and certificate, held in memory only.

    Scheduler, workers and this client prove they hold it (mutual TLS): a process of
    another user on this machine, which can reach every loopback port, is refused, where
    plain tcp:// would let it submit any pickled function to run as this user.

    A CA and one certificate for every party, both with P-256 keys
    (:mod:`pipeline.certs`, as ``python -m pipeline.certs`` writes for a real cluster),
    valid for a day: Dask's own ``Security.temporary`` generates an RSA-2048 key, which
    took ~0.2 s of every run's start (a tenth of the load benchmark's fixed cost); these
    take ~2 ms, and their handshakes are cheaper too (benchmarks/bench_load.py).
    """
    from distributed.security import Security

    from pipeline.certs import cert_pem, key_pem, make_ca, make_leaf

    ca_key, ca = make_ca(days=1)
    key, cert = make_leaf(ca_key, ca, "local", ["127.0.0.1", "localhost"], days=1)
    key_text, cert_text = key_pem(key).decode(), cert_pem(cert).decode()
    roles = ("client", "scheduler", "worker")
    return Security(
        require_encryption=True,
        tls_ca_file=cert_pem(ca).decode(),
        **{f"tls_{role}_key": key_text for role in roles},
        **{f"tls_{role}_cert": cert_text for role in roles},
    )


@contextlib.contextmanager
def opened(cluster: LocalSettings, workers: Workers) -> Iterator[StartingExecutor]:
    """An executor that runs the first calls in this process and starts a LocalCluster bound
    to 127.0.0.1 once they took ``cluster.start_after_s`` seconds (:mod:`.starting`); the
    cluster, if it started, closed on exit.

    With TLS, connections refused for want of this run's certificate are counted and their
    log lines kept off the output (:mod:`pipeline.backends.refusals`); once the cluster has
    closed, one line says how many there were and where their lines are (the run's log).
    With the dashboard on, Tornado's access log is kept off the output
    (:mod:`pipeline.backends.access_log`), and one line says so when the dashboard cannot
    draw for want of bokeh."""
    refused = refusals.Refusals() if cluster.tls else None
    if (warning := dashboard_warning(cluster)) is not None:
        print(f"warning: {warning}", file=sys.stderr, flush=True)
    executor: StartingExecutor | None = None
    deaths = worker_deaths.WorkerDeaths(memory_words(cluster))

    def start() -> contextlib.AbstractContextManager[DaskExecutor]:
        return _gathering_refusals(_open(cluster, workers.count, deaths), refused)

    description = f"LocalCluster, {counted(workers.count, 'worker process')}"
    try:
        with (
            refusals.kept_off_the_output(refused),
            starting(workers.count, description, start, cluster.start_after_s) as executor,
        ):
            yield executor
    finally:
        log_file = executor.log_file if executor is not None else None
        cut_short = refused.forgive(deaths.times) if refused is not None else []
        deaths.write_log(log_file, cut_short)  # a worker killed while it connected
        line = refusals.report(refused, log_file) if refused is not None else None
        if line:
            print(f"warning: {line}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _gathering_refusals(
    opened: contextlib.AbstractContextManager[DaskExecutor], refused: refusals.Refusals | None
) -> Iterator[DaskExecutor]:
    """``opened``'s executor; the workers' refusals gathered before they close (not after
    Ctrl-C: the workers are stopped)."""
    with opened as executor:
        try:
            yield executor
        except BaseException as exc:
            if not isinstance(exc, KeyboardInterrupt):
                refusals.gather(executor.client, refused)
            raise
        refusals.gather(executor.client, refused)


@contextlib.contextmanager
def _open(
    cluster: Any, n_workers: int, deaths: worker_deaths.WorkerDeaths
) -> Iterator[DaskExecutor]:
    """An executor on a new LocalCluster of ``n_workers`` bound to 127.0.0.1; closed on exit.
    What Dask logs of the worker processes that die is taken off the output into ``deaths``
    (:mod:`.worker_deaths`), which names how they ended in the lost calls' errors; the run
    stops when no worker is left (:mod:`.last_worker`)."""
    with no_cyclic_gc():  # ~0.1 s of collections while Dask imports (pipeline.heap)
        import dask
        from distributed import Client, LocalCluster

    quiet_dask_logs()

    method = start_method(cluster.start_method)
    security = throwaway_security() if cluster.tls else None
    with (
        worker_deaths.watching(deaths),
        _quiet_once_stopped() as quiet,
        _ready_to_fork(method == "fork"),
        _workers_ignore_stops(),
        access_log_dropped() if cluster.dashboard else contextlib.nullcontext(),
        dask.config.set(local_cluster_settings(cluster.dashboard, method)),
        LocalCluster(
            n_workers=n_workers,
            threads_per_worker=cluster.threads_per_worker,
            processes=True,
            host="127.0.0.1",
            # the scheduler's HTTP server on loopback, at a free port (closed as it starts
            # when the dashboard is off: pipeline/backends/http_off.py)
            scheduler_kwargs={
                "dashboard": cluster.dashboard,
                "dashboard_address": "127.0.0.1:0",
                "preload": scheduler_preloads(cluster.dashboard),
            },
            memory_limit=cluster.memory_limit,
            preload=worker_preloads(cluster.dashboard),
            **({"security": security, "protocol": "tls://"} if security else {}),
        ) as lc,
        Client(lc, security=security) as client,
    ):
        link = f", dashboard {client.dashboard_link}" if cluster.dashboard else ""
        description = f"LocalCluster, {counted(n_workers, 'worker process')}{link}"
        executor = DaskExecutor(client, n_workers, description, explain=deaths.explained)
        executor.watch = LastWorkerWatch(lc, deaths, executor.pending)
        try:
            yield executor
        except KeyboardInterrupt:
            quiet.stopped = True
            stop_workers_now(lc)
            raise
