"""The backends (pipeline/backends/) on real clusters: an existing Dask scheduler
(cluster=address), bad cluster input named by its key, and how local and Slurm workers start
(start method, profiler, preloads, the heartbeat filter)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd
import pytest
from omegaconf import OmegaConf

from pipeline.config import cluster_config
from pipeline.errors import StudyError
from pipeline.run import run_study
from pipeline.storage import store
from tests.helpers.commands import cli, cli_run_in_process, python_output
from tests.helpers.dask_cluster import free_port
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config, run


def nothing_written(root: Path) -> bool:
    """No file under root but the study folder's empty lock files (.lock, .running)."""
    files = [p for p in root.rglob("*") if p.is_file()] if root.exists() else []
    return all(p.name in (".lock", ".running") and p.stat().st_size == 0 for p in files)


# ------------------------------------------------------------ an existing scheduler


@pytest.mark.slow
def test_a_study_runs_on_a_scheduler_with_two_worker_processes(dask_address, outputs):
    report = run(outputs, "cluster=address", f"cluster.address={dask_address}")
    assert (report.computed, report.errors) == (2, 0)
    rows = store.load_results(outputs / "paper")
    assert sorted(rows["expected_score_exact"]) == ["2383/560", "475/112"]
    assert rows["task_id"].is_unique


@pytest.mark.slow
def test_the_cli_runs_on_the_scheduler(dask_address, tmp_path):
    res = cli("cluster=address", f"cluster.address={dask_address}", f"paths.outputs={tmp_path}")
    assert res.returncode == 0, res.stderr
    assert "scheduler tcp://127.0.0.1" in res.stdout
    assert (tmp_path / "paper" / "summary.md").exists()


@pytest.mark.slow
def test_version_differences_name_the_package_and_both_versions(dask_address, monkeypatch):
    from distributed import Client

    real = Client.get_versions

    def older_numpy_on_workers(self, *args, **kwargs):
        versions = real(self, *args, **kwargs)
        for info in versions["workers"].values():
            info["packages"]["numpy"] = "1.0.0"
        return versions

    monkeypatch.setattr(Client, "get_versions", older_numpy_on_workers)
    from pipeline.backends import open_executor

    with (
        pytest.warns(UserWarning, match="package versions differ") as caught,
        open_executor({"kind": "address", "address": dask_address, "timeout": "10s"}),
    ):
        pass
    message = str(caught[0].message)
    import numpy

    assert f"numpy: client {numpy.__version__}, worker tcp://127.0.0.1:" in message
    assert message.count("1.0.0") == 2  # both workers are named


# ------------------------------------------------------------------ bad cluster input


@pytest.mark.slow
def test_an_unreachable_scheduler_exits_2_naming_the_key_and_writes_nothing(tmp_path):
    """A child process: a traceback Dask logs through its handlers (made at import, on the
    process's stderr) must show in what is checked."""
    address = f"tcp://127.0.0.1:{free_port()}"  # nothing listens there
    res = cli(
        "cluster=address",
        f"cluster.address={address}",
        "cluster.timeout=2s",
        f"paths.outputs={tmp_path}",
    )
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"cluster.address='{address}'" in res.stderr
    assert "dask scheduler" in res.stderr  # what to start
    assert "Traceback" not in res.stderr
    assert nothing_written(tmp_path)


@pytest.mark.parametrize("address", ["127.0.0.1:8786", "http://127.0.0.1:8786", "8786"])
def test_a_malformed_scheduler_address_names_the_key_and_writes_nothing(outputs, address):
    with pytest.raises(StudyError, match=r"cluster.address=.*tcp://"):
        run(outputs, "cluster=address", f"cluster.address={address}")
    assert nothing_written(outputs)


@pytest.mark.slow
def test_slurm_without_sbatch_exits_2_saying_what_to_install(tmp_path, monkeypatch, capsys):
    """The command in this process, with a PATH of the venv's tools only (no sbatch)."""
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    res = cli_run_in_process(monkeypatch, capsys, "cluster=slurm", f"paths.outputs={tmp_path}")
    assert res.returncode == 2, res.stdout + res.stderr
    assert "cluster.kind='slurm'" in res.stderr and "no sbatch" in res.stderr
    assert "slurm_setup.sh" in res.stderr
    assert nothing_written(tmp_path)


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("cluster.lifetime=2h", "cluster.lifetime='2h'"),
        ("cluster.walltime=soon", "cluster.walltime='soon'"),
        ("cluster.maximum_jobs=0", "cluster.maximum_jobs=0"),
        ("cluster.minimum_jobs=3", "cluster.minimum_jobs=3"),
        ("cluster.lifetime_stagger=-1", "cluster.lifetime_stagger=-1"),
    ],
)
def test_bad_slurm_settings_name_the_key(override, key, monkeypatch):
    import pipeline.backends.slurm

    monkeypatch.setattr(pipeline.backends.slurm.shutil, "which", lambda name: f"/usr/bin/{name}")
    cfg = compose_config("cluster=slurm", override)
    with pytest.raises(StudyError, match=key.replace("(", r"\(")):
        run_study(cfg, log=lambda *_: None)


def test_slurm_tls_uses_one_certificate_for_every_role(tmp_path, monkeypatch):
    import pipeline.backends.slurm
    from pipeline.certs import write_cluster_certs

    monkeypatch.setattr(pipeline.backends.slurm.shutil, "which", lambda name: f"/usr/bin/{name}")
    certs = write_cluster_certs(tmp_path / "certs", ["127.0.0.1"])
    cluster = OmegaConf.to_container(
        compose_config(
            "cluster=slurm",
            f"cluster.tls.ca_file={certs['ca']}",
            f"cluster.tls.cert={certs['worker']}",
            f"cluster.tls.key={certs['worker_key']}",
        ).cluster
    )
    kwargs = pipeline.backends.slurm.slurm_cluster_kwargs(cluster_config(cluster))
    assert kwargs["protocol"] == "tls://"
    sec = kwargs["security"]
    assert sec.require_encryption and sec.tls_ca_file == str(certs["ca"])
    assert sec.tls_worker_cert == sec.tls_scheduler_cert == sec.tls_client_cert
    assert "security" not in pipeline.backends.slurm.slurm_cluster_kwargs(
        cluster_config(compose_config("cluster=slurm").cluster)
    )
    cluster["tls"]["key"] = str(tmp_path / "missing.pem")
    with pytest.raises(StudyError, match="cluster.tls.key=.*missing.pem.*no such file"):
        pipeline.backends.slurm.SlurmBackend(cluster_config(cluster)).check()


def _bookkeeping() -> tuple[bool, str]:
    import dask

    return (
        bool(dask.config.get("distributed.worker.profile.enabled")),
        dask.config.get("distributed.admin.tick.interval"),
    )


@pytest.mark.parametrize("dashboard", [False, True])
def test_local_workers_profile_only_for_the_dashboard(dashboard):
    """The workers' sampling profiler costs ~20% of small tasks' time (bench_load); the
    periodic bookkeeping runs at the slower settings in the workers too."""
    from pipeline.backends import open_executor
    from pipeline.backends.local import local_cluster_settings

    cluster = {"kind": "local", "n_workers": 1, "dashboard": dashboard}
    with open_executor(cluster) as executor:
        ((profile, tick),) = executor.client.run(_bookkeeping).values()
        assert profile == dashboard
        assert tick == local_cluster_settings(dashboard)["distributed.admin.tick.interval"]


def _has_probe() -> bool:
    return "guesslab_start_probe" in sys.modules


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_local_workers_start_by_the_configured_method(method, monkeypatch):
    """cluster.start_method reaches the nannies: a forked worker starts with the driver's
    modules (Linux default, ~0.1 s), a spawned one imports what it needs again (~2 s)."""
    import types

    from pipeline.backends import open_executor

    monkeypatch.setitem(sys.modules, "guesslab_start_probe", types.ModuleType("probe"))
    cluster = {"kind": "local", "n_workers": 1, "start_method": method}
    with open_executor(cluster) as executor:
        assert list(executor.client.run(_has_probe).values()) == [method == "fork"]
        assert executor.client.submit(sum, [1, 2], pure=False).result() == 3


def test_forked_workers_leave_the_inherited_heap_to_refcounting():
    """The driver's objects are frozen (out of the cycle collector's reach) while workers
    fork from it, so a worker's full collection does not walk, and copy, the inherited heap;
    they thaw when the cluster closes."""
    import gc

    from pipeline.backends import open_executor

    assert gc.get_freeze_count() == 0
    with open_executor({"kind": "local", "n_workers": 1, "start_method": "fork"}) as executor:
        (frozen,) = executor.client.run(gc.get_freeze_count).values()
        assert frozen > 10_000  # the modules, the test session: everything made before the fork
    assert gc.get_freeze_count() == 0


def test_auto_start_method_is_fork_on_linux_and_a_bad_one_names_the_key():
    from pipeline.backends import backend_of
    from pipeline.backends.local import start_method
    from pipeline.config import cluster_config

    assert start_method("auto") == ("fork" if sys.platform.startswith("linux") else "spawn")
    with pytest.raises(StudyError, match=r"cluster.start_method='teleport': unknown; valid: auto"):
        backend_of(cluster_config({"kind": "local", "start_method": "teleport"})).check()


def test_slurm_workers_run_without_the_profiler():
    from pipeline.backends.slurm import slurm_cluster_kwargs

    kwargs = slurm_cluster_kwargs(cluster_config(compose_config("cluster=slurm").cluster))
    prologue = kwargs["job_script_prologue"]
    assert "export DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False" in prologue


FORKED_WORKERS_HAVE_PANDAS = """
import sys
from pipeline.backends import open_executor
assert "pandas" not in sys.modules  # importing the pipeline leaves it out
with open_executor({"kind": "local", "n_workers": 1, "start_method": "fork"}) as executor:
    print(list(executor.client.run(lambda: "pandas" in sys.modules).values()))
"""


@pytest.mark.slow
def test_forked_workers_start_with_pandas_imported():
    """pyarrow imports pandas the first time it builds an array, so each worker's first
    Parquet encoding paid ~0.4 s of CPU for it; the driver imports it once before forking."""
    assert python_output(FORKED_WORKERS_HAVE_PANDAS) == "[True]"


def _heartbeat_filters() -> int:
    import logging

    from pipeline.backends.worker_setup import HeartbeatAtCloseFilter

    logger = logging.getLogger("distributed.worker")
    return sum(type(f) is HeartbeatAtCloseFilter for f in logger.filters)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_local_workers_start_with_the_heartbeat_filter_once(method):
    """Every worker runs pipeline.backends.worker_setup as it starts, forked or spawned."""
    from pipeline.backends import open_executor

    cluster = {"kind": "local", "n_workers": 1, "start_method": method}
    with open_executor(cluster) as executor:
        assert list(executor.client.run(_heartbeat_filters).values()) == [1]


def test_a_heartbeat_error_is_kept_while_the_worker_runs_and_dropped_as_it_leaves():
    """A heartbeat in flight as the cluster retires its workers (dask/distributed#7105) logs
    no traceback after a finished run; a failing heartbeat mid-run still shows."""
    import logging

    from distributed.core import Status

    from pipeline.backends.worker_setup import HEARTBEAT_FAILED, HeartbeatAtCloseFilter

    class Worker:  # what the filter reads of a worker: its status
        status = Status.running

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1, msg, (), None)

    worker = Worker()
    keep = HeartbeatAtCloseFilter(worker).filter
    assert keep(record(HEARTBEAT_FAILED))
    for leaving in (Status.closing_gracefully, Status.closing, Status.closed):
        worker.status = leaving
        assert not keep(record(HEARTBEAT_FAILED)), leaving
        assert keep(record("Compute Failed")), leaving  # other errors always show
    gone = HeartbeatAtCloseFilter(Worker())  # the worker object is gone at once (refcount)
    assert not gone.filter(record(HEARTBEAT_FAILED))


def test_a_closing_worker_drops_the_pool_closed_error_on_the_logger_dask_logs_it_on():
    """Dask's ``log_errors`` logs "ConnectionPool is closed" from ``Worker.close`` on the
    logger of the module it wraps: a closing worker's filters on that logger drop it, and a
    running worker's keep it (with any other error)."""
    import inspect
    import logging

    from distributed import Worker
    from distributed.core import Status
    from distributed.utils import _getmodulename_with_path

    from pipeline.backends.worker_setup import POOL_CLOSED, at_close_filters

    dask_logs_on = _getmodulename_with_path(inspect.getsourcefile(Worker.close))

    class FakeWorker:  # what the filters read of a worker: its status
        status = Status.running

    def kept(worker: FakeWorker, msg: object) -> bool:
        record = logging.LogRecord(dask_logs_on, logging.ERROR, __file__, 1, msg, (), None)
        filters = [f for name, f in at_close_filters(worker) if name == dask_logs_on]
        return all(f.filter(record) for f in filters)

    worker = FakeWorker()
    assert kept(worker, RuntimeError(POOL_CLOSED))
    worker.status = Status.closing
    assert not kept(worker, RuntimeError(POOL_CLOSED))
    assert kept(worker, RuntimeError("another error"))


@pytest.mark.parametrize("theirs", [None, [], "my_setup", ["a_setup", "b_setup"]])
def test_our_worker_preload_comes_after_the_users_own(theirs):
    import dask

    from pipeline.backends.local import worker_preloads

    with dask.config.set({"distributed.worker.preload": theirs}):
        mine = worker_preloads()
    given = [theirs] if isinstance(theirs, str) else list(theirs or [])
    assert mine == [*given, "pipeline.backends.worker_setup", "pipeline.backends.access_log"]


@pytest.mark.parametrize(
    "setting", ["auto", "4GiB", "100MB", "0.25", 0.5, 1, 1.0, 0, None, 2**50, "1e15"]
)
@pytest.mark.parametrize("nthreads", [1, 2, 3])
def test_a_worker_s_memory_limit_is_found_as_dask_finds_it(setting, nthreads):
    """The limit worked out without importing Dask equals Dask's own parse of the setting
    (a fraction, a size, auto's share of the cores, no limit, capped at the system's)."""
    import logging

    from distributed.worker_memory import parse_memory_limit

    from pipeline.backends import worker_memory

    quiet = logging.getLogger("test.memory_limit")
    quiet.addHandler(logging.NullHandler())
    quiet.propagate = False
    expected = parse_memory_limit(setting, nthreads, logger=quiet)
    assert worker_memory.memory_limit(setting, nthreads) == expected


# ------------------------------------------------------------ a backend of one's own


@pytest.fixture
def toy_backend():
    """A backend as one module declares it, registered for the test only: a settings model
    (``cluster.kind=toy`` with one key, ``slots``) and a Backend subclass naming it, whose
    executor runs each call in this process and counts it."""
    from typing import Literal

    from pipeline.backends import Backend
    from pipeline.backends.base import Workers
    from pipeline.backends.sync import SyncExecutor
    from pipeline.config import ClusterSettings, PositiveInt, unregister_backend

    class ToySettings(ClusterSettings):
        kind: Literal["toy"]
        slots: PositiveInt

    class CountingExecutor(SyncExecutor):
        def submit(self, fn, /, *args):
            ToyBackend.submitted += 1
            return super().submit(fn, *args)

    class ToyBackend(Backend):
        settings_model = ToySettings
        submitted = 0

        def check(self) -> None:
            if self.cluster.slots > 4:
                raise StudyError(f"cluster.slots={self.cluster.slots}: at most 4 here")

        def find_workers(self) -> Workers:
            return Workers(self.cluster.slots, None)

        def executor(self, workers: Workers):
            import contextlib

            return contextlib.nullcontext(CountingExecutor())

    try:
        yield ToyBackend
    finally:
        unregister_backend("toy")


def test_a_backend_declared_in_one_module_runs_a_study_and_its_settings_are_checked(
    toy_backend, outputs
):
    """Defining a settings model and a Backend subclass registers the kind: the config takes
    ``cluster.kind=toy`` with its own keys, checked as every kind's (a bad value or an unknown
    key named, the kind among the valid ones), its ``check`` refuses before any work, and a
    study runs on its executor."""
    from pipeline.backends import backend_of

    report = run(outputs, "cluster=sync", "cluster.kind=toy", "+cluster.slots=2")
    assert report.computed == report.planned > 0
    assert toy_backend.submitted > 0
    assert backend_of(cluster_config({"kind": "toy", "slots": 3})).workers().count == 3

    bad = [
        (["+cluster.slots=0"], "cluster.slots=0: must be a positive integer"),
        (
            ["+cluster.slots=1", "+cluster.slot=2"],
            "cluster.slot=2: unknown key; valid: kind, slots",
        ),
        ([], "cluster.slots: required, and not given"),
        (["+cluster.slots=5"], "cluster.slots=5: at most 4 here"),
    ]
    for overrides, message in bad:
        with pytest.raises(StudyError, match=f"^{message}"):
            run(outputs / "bad", "cluster=sync", "cluster.kind=toy", *overrides)
    assert nothing_written(outputs / "bad")
    with pytest.raises(StudyError, match="valid: sync, local, address, slurm, toy$"):
        cluster_config({"kind": "teleport"})


def test_a_kind_is_registered_by_one_backend_only():
    """A second backend declaring a kind another holds is refused, naming both classes."""
    from typing import Literal

    from pipeline.backends import Backend
    from pipeline.config import ClusterSettings

    class Local(ClusterSettings):
        kind: Literal["local"]

    with pytest.raises(ValueError, match=r"cluster.kind='local': registered by .*LocalBackend"):

        class Again(Backend):
            settings_model = Local


OWN_BACKEND = '''
"""A backend of one's own, in one module: the calls run in this process, ``slots`` said."""
import contextlib
from typing import Literal

from pipeline.backends import Backend
from pipeline.backends.base import Workers
from pipeline.backends.sync import SyncExecutor
from pipeline.config import ClusterSettings, PositiveInt


class InlineSettings(ClusterSettings):
    kind: Literal["inline"]
    slots: PositiveInt
    label: str = "inline slots"


class InlineBackend(Backend):
    settings_model = InlineSettings

    def check(self):
        pass

    def find_workers(self):
        return Workers(self.cluster.slots, None)

    def executor(self, workers):
        executor = SyncExecutor()
        executor.description = f"{self.cluster.slots} {self.cluster.label}"
        return contextlib.nullcontext(executor)
'''


def test_a_backend_module_of_one_s_own_is_chosen_on_the_command_line_by_its_kind(tmp_path):
    """A module named in GUESSLAB_BACKENDS that defines a backend gives the command line
    ``cluster=<kind>`` with no config file: its settings' defaults, a required one given as
    ``cluster.KEY=VALUE`` (left out: named, exit 2); a module that cannot be imported is
    one line naming the setting, exit 2, before any work."""
    (tmp_path / "inline_backend.py").write_text(OWN_BACKEND)
    env = {"GUESSLAB_BACKENDS": "inline_backend", "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    out = tmp_path / "out"
    ran = cli("cluster=inline", "cluster.slots=3", f"paths.outputs={out}", env=env)
    assert ran.returncode == 0, ran.stderr
    assert "on 3 inline slots" in ran.stdout
    assert len(pd.read_parquet(out / "paper" / "results")) > 0
    missing = cli("cluster=inline", f"paths.outputs={tmp_path / 'no'}", env=env)
    assert missing.returncode == 2
    assert missing.stderr.strip() == "error: cluster.slots: required, and not given"
    env["GUESSLAB_BACKENDS"] = "no_such_backend_module"
    broken = cli("cluster=sync", f"paths.outputs={tmp_path / 'no'}", env=env)
    assert broken.returncode == 2 and len(broken.stderr.strip().splitlines()) == 1
    assert broken.stderr.startswith(
        "error: GUESSLAB_BACKENDS='no_such_backend_module': module 'no_such_backend_module' "
        "cannot be imported (ModuleNotFoundError"
    )
    assert not (tmp_path / "no").exists()
