"""The long-task facility through the pipeline: the budget of where a run executes, the
up-front refusal of a need over it (exit 2, one line), checkpoints that survive a killed
driver and are cleared once the row is stored, and progress shown in the terminal.

The toy family ``toy_layers`` (tests/helpers/toy_layers.py) sums ``layers`` squares, one
checkpoint piece a layer; every layer it computes leaves a marker, so a test counts
recomputations."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from pipeline.backends import backend_of
from pipeline.backends.dask_executor import progress_of
from pipeline.config import checked_config, plain
from pipeline.needs import budgeted
from pipeline.progress import ProgressBars, postfix, tasks_bar
from solvers.kit.task_progress import Progress
from tests.helpers.commands import cli_run_in_process
from tests.helpers.runs import compose_config
from tests.helpers.terminal import interruptible, screen_lines
from tests.helpers.toy_layers import guesslab, guesslab_cmd, markers, stored, toy_env, toy_folder

# ------------------------------------------------------------------------------ budget


def conf_of(*overrides: str):
    return checked_config(plain(compose_config(*overrides)))


def where_it_runs(conf):
    """The workers of the configured run and one process's budget, as a run takes them."""
    return budgeted(backend_of(conf.cluster).workers(), conf.run.memory_budget)


def test_the_budget_under_sync_is_the_available_memory():
    where = where_it_runs(conf_of("cluster=sync"))
    assert where.count == 1
    assert where.budget.source.startswith("available memory under cluster=sync (")
    free = psutil.virtual_memory().available
    assert abs(where.budget.bytes - free) < 0.2 * free


@pytest.mark.parametrize("cluster", ["sync", "local"])
def test_run_memory_budget_overrides_where_the_run_executes(cluster):
    where = where_it_runs(conf_of(f"cluster={cluster}", "run.memory_budget=2GB"))
    assert (where.budget.bytes, where.budget.source) == (2 * 10**9, "run.memory_budget=2GB")


@pytest.mark.parametrize(
    "value", ["10PB", "1e30B", "99999999999999999999999999GB", "1EB", "2.5ZB", "1YiB"]
)
@pytest.mark.parametrize("cluster", ["sync", "local"])
def test_a_memory_budget_over_what_a_process_has_is_refused_in_plain_sizes(value, cluster):
    """A budget over this machine's memory (cluster=sync) or a local worker's memory limit is
    a StudyError naming the key, the given value and the most a process has, as a size a
    person writes (no long run of digits); a size in the units the plan says sizes in (EB,
    ZB, YB, past Dask's PB) is read as one."""
    from pipeline.config import StudyError
    from pipeline.exit_lines import abbreviated

    conf = conf_of(f"cluster={cluster}", f"run.memory_budget={value}")
    with pytest.raises(StudyError) as info:
        where_it_runs(conf)
    line = abbreviated(str(info.value))
    most = psutil.virtual_memory().total if cluster == "sync" else None
    said = "this machine's memory (" if cluster == "sync" else "the Dask workers' memory_limit ("
    assert line.startswith("run.memory_budget=") and said in line, line
    assert "more memory than one process has where the run executes" in line
    if most is not None:
        assert f"give at most {most / 1e9:.1f} GB, or null" in line
    assert not re.search(r"\d{10}", line.replace("99999999...9999", "")), line


@pytest.mark.parametrize(
    ("seconds", "tasks", "said"),
    [(3.5, 1, "3.5 s"), (720, 1, "12 min"), (41.9 * 3600, 1, "41.9 h"),
     (3_476_563_697.2 * 3600, 1, "396,596 years"), (365.25 * 24 * 3600, 3, "3 years")],
)  # fmt: skip
def test_the_plan_s_cpu_time_is_said_in_a_unit_a_person_writes(seconds, tasks, said):
    """From a year on, CPU time is counted in years, not in billions of hours."""
    from pipeline.needs import _hours

    assert _hours(seconds, tasks) == said


def test_stage_plan_refuses_a_memory_budget_over_the_machine_s_memory(
    tmp_path, monkeypatch, capsys
):
    """``stage=plan`` of a long-task study under such a budget exits 2 with that one line,
    rather than planning tasks sized for memory the machine does not have."""
    done = cli_run_in_process(
        monkeypatch, capsys, "study=ranks_exact", "stage=plan", "cluster=sync",
        "run.memory_budget=10PB", f"paths.outputs={tmp_path / 'out'}",
    )  # fmt: skip
    (line,) = done.stderr.strip().splitlines()
    assert done.returncode == 2 and "fits" not in done.stdout, done.stdout
    assert line.startswith("error: run.memory_budget=10PB: more memory than one process has")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("limit", ["700MiB", "auto"])
def test_the_budget_of_a_local_cluster_is_its_workers_memory_limit(limit):
    """The figure the pipeline computes from the config is what each started worker holds."""
    conf = conf_of("cluster=local", "cluster.n_workers=2", f"cluster.memory_limit={limit}")
    where = where_it_runs(conf)
    assert where.count == 2
    assert where.budget.source.startswith("the Dask workers' memory_limit (")
    assert f"cluster.memory_limit={limit}" in where.budget.source
    with backend_of(conf.cluster).open() as executor:
        info = executor.client.scheduler_info(n_workers=-1)["workers"]
        limits = {w["memory_limit"] for w in info.values()}
    assert limits == {where.budget.bytes}
    if limit == "700MiB":
        assert where.budget.bytes == 700 * 2**20


def test_the_budget_under_address_is_what_the_scheduler_reports():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        memory_limit="5GiB",
        dashboard_address="127.0.0.1:0",
    ) as lc:
        conf = conf_of("cluster=address", f"cluster.address={lc.scheduler_address}")
        where = where_it_runs(conf)
    assert where.count == 2
    assert where.budget.bytes == 5 * 2**30
    assert "scheduler tcp://" in where.budget.source


def test_the_budget_of_slurm_jobs_is_their_memory():
    where = where_it_runs(conf_of("cluster=slurm", "cluster.memory=3GiB", "cluster.maximum_jobs=5"))
    assert (where.budget.bytes, where.count) == (3 * 2**30, 5)
    assert "cluster.memory=3GiB" in where.budget.source


@pytest.mark.parametrize("value", ["lots", "-1GB", "0", True, 1.5, "xEB", "-1EB", "1e400EB"])
def test_a_bad_memory_budget_is_refused_naming_the_key(value):
    from pipeline.config import StudyError

    with pytest.raises(StudyError, match="run.memory_budget") as info:
        conf_of("cluster=sync", f"run.memory_budget={str(value).lower()}")
    assert "give a size such as 8GB" in str(info.value)


# ---------------------------------------------------------------------------- refusal


@pytest.mark.parametrize("stage", ["plan", "run"])
def test_a_need_over_the_budget_is_refused_up_front_with_exit_2(tmp_path, stage):
    folder = toy_folder(tmp_path, layers=3, mem_mb=2000)
    res = guesslab(folder, "cluster=sync", f"stage={stage}", "run.memory_budget=1GB")
    assert res.returncode == 2, res.stderr
    line = res.stderr.strip()
    assert len(line.splitlines()) == 1, line
    assert "layers=3 mem_mb=2000" in line
    if stage == "run":  # stage=plan printed the table (the need's note) above the line
        assert "(task " in line and "needs 2.0 GB of memory per process (3 layers)" in line
    else:
        assert "layers=3 mem_mb=2000" in res.stdout and "needs 2.0 GB of memory per process" in line
    assert "over the budget of 1.0 GB from run.memory_budget=1GB" in line
    # the remedies that help a need per process; not "more workers", which do not lower it
    assert "set run.memory_budget or give the workers more memory" in line
    assert "run on more workers" not in line
    assert not (folder / "out").exists() and markers(folder) == []


def test_the_refusal_names_the_available_memory_under_sync(tmp_path):
    folder = toy_folder(tmp_path, mem_mb=10**9)  # a petabyte
    res = guesslab(folder, "cluster=sync")
    assert res.returncode == 2, res.stderr
    assert "needs 1.0 PB of memory per process" in res.stderr
    assert "from available memory under cluster=sync (" in res.stderr
    assert not (folder / "out").exists()


def test_a_disk_need_over_the_free_disk_is_refused(tmp_path):
    folder = toy_folder(tmp_path, disk_mb=10**12)  # an exabyte
    res = guesslab(folder, "cluster=sync")
    assert res.returncode == 2, res.stderr
    assert "needs 1.0 EB of disk for its checkpoints (4 layers), over the" in res.stderr
    assert "free under" in res.stderr
    assert not (folder / "out").exists()


def _two_thirds_of_the_free_disk_mb(folder: Path) -> int:
    import shutil

    return shutil.disk_usage(folder).free * 2 // 3 // 10**6


def test_tasks_whose_checkpoints_do_not_fit_together_run_one_at_a_time(tmp_path):
    """Two tasks each needing 2/3 of the free disk: each fits alone, both do not, so the
    run says so up front and runs them one after another on a two-worker cluster (where it
    would otherwise start both at once): every layer marker of one task comes before the
    other's first.  ``stage=plan`` prints the same line."""
    disk_mb = _two_thirds_of_the_free_disk_mb(tmp_path)
    folder = toy_folder(tmp_path, layers="3, 4", disk_mb=disk_mb, sleep=0.3)
    plan = guesslab(folder, "cluster=local", "cluster.n_workers=2", "stage=plan")
    assert plan.returncode == 0, plan.stderr
    line = "holds the checkpoints of 1 of the 2 tasks that keep them"
    assert line in plan.stdout and "they run one at a time" in plan.stdout
    plan = guesslab(folder, "cluster=sync", "stage=plan")
    assert line in plan.stdout and "cluster=sync runs them one at a time" in plan.stdout
    res = guesslab(
        folder, "cluster=local", "cluster.n_workers=2", "stage=run", "run.progress=false"
    )
    assert res.returncode == 0, res.stderr
    assert line in res.stdout, res.stdout
    assert sorted(stored(folder)["total"]) == [0 + 1 + 4, 0 + 1 + 4 + 9]
    made = sorted((folder / "markers").iterdir(), key=lambda p: p.stat().st_mtime_ns)
    layers = [p.name.split(".")[0] for p in made]
    assert layers in (
        ["layer-000", "layer-001", "layer-002", "layer-000", "layer-001", "layer-002", "layer-003"],
        ["layer-000", "layer-001", "layer-002", "layer-003", "layer-000", "layer-001", "layer-002"],
    ), layers


def test_a_fixed_batch_larger_than_the_disk_holds_is_refused(tmp_path):
    disk_mb = _two_thirds_of_the_free_disk_mb(tmp_path)
    folder = toy_folder(tmp_path, layers="3, 4", disk_mb=disk_mb)
    res = guesslab(folder, "cluster=sync", "stage=run", "run.batch_size=2")
    assert res.returncode == 2, res.stderr
    assert "run.batch_size=2: a batch keeps its tasks' checkpoints" in res.stderr
    assert "set run.batch_size=auto (or at most 1)" in res.stderr
    assert not (folder / "out" / "toy" / "results").exists() and markers(folder) == []


def test_plan_shows_a_table_of_the_tasks_needs_against_where_they_run(tmp_path):
    folder = toy_folder(tmp_path, layers="2, 5", mem_mb=300)
    res = guesslab(folder, "cluster=sync", "stage=plan", "run.memory_budget=1GB")
    assert res.returncode == 0, res.stderr
    table = [line.split() for line in res.stdout.splitlines() if "layers=" in line]
    assert table == [["layers=2", "300.0", "MB", "none", "fits"],
                     ["layers=5", "300.0", "MB", "none", "fits"]]  # fmt: skip
    assert "  here: 1 worker, a budget of 1.0 GB a process from run.memory_budget=1GB" in (
        res.stdout
    )
    assert not (folder / "out").exists()


def test_plan_prints_the_table_then_the_shortage_in_one_line(tmp_path):
    folder = toy_folder(tmp_path, layers="2, 5", mem_mb="300, 2000")
    res = guesslab(folder, "cluster=sync", "stage=plan", "run.memory_budget=1GB")
    assert res.returncode == 2
    rows = [line.split() for line in res.stdout.splitlines() if "mem_mb=" in line]
    assert rows == [
        ["layers=2", "mem_mb=300", "300.0", "MB", "none", "fits"],
        ["layers=2", "mem_mb=2000", "2.0", "GB", "none", "no:", "memory"],
        ["layers=5", "mem_mb=300", "300.0", "MB", "none", "fits"],
        ["layers=5", "mem_mb=2000", "2.0", "GB", "none", "no:", "memory"],
    ]
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("error: ") and "needs 2.0 GB of memory per process" in line
    assert "over the budget of 1.0 GB from run.memory_budget=1GB" in line
    assert not (folder / "out").exists()


@pytest.mark.slow
def test_a_stored_task_over_the_budget_is_not_refused(tmp_path):
    """Only tasks left to run are checked: a study computed with a larger budget still
    summarises (and reruns nothing) under a smaller one."""
    folder = toy_folder(tmp_path, mem_mb=2000)
    assert guesslab(folder, "cluster=sync", "run.memory_budget=4GB").returncode == 0
    res = guesslab(folder, "cluster=sync", "run.memory_budget=1GB")
    assert res.returncode == 0, res.stderr
    assert "1 already stored" in res.stdout
    res = guesslab(folder, "cluster=sync", "run.memory_budget=1GB", "store.recompute=true")
    assert res.returncode == 2 and "over the budget" in res.stderr


# ------------------------------------------------------------------- checkpoints, resume


def test_a_task_gets_the_run_s_budget_workers_and_checkpoints_which_are_cleared(tmp_path):
    folder = toy_folder(tmp_path, layers=3)
    res = guesslab(folder, "cluster=sync", "run.memory_budget=3GB", "run.progress=false")
    assert res.returncode == 0, res.stderr
    row = stored(folder).iloc[0]
    assert (row.total, row.budget, row.workers, bool(row.kept)) == (0 + 1 + 4, 3 * 10**9, 1, True)
    assert markers(folder) == ["layer-000", "layer-001", "layer-002"]
    assert not (folder / "out" / "toy" / "checkpoints").exists()  # cleared, folder too


@pytest.mark.slow
def test_a_failed_task_keeps_its_checkpoints_and_the_rerun_resumes(tmp_path):
    folder = toy_folder(tmp_path, layers=4)
    res = guesslab(folder, "cluster=sync", "run.progress=false", TOY_FAIL_AT="2")
    assert res.returncode == 1, res.stderr
    (tid,) = stored(folder)["task_id"]
    pieces = folder / "out" / "toy" / "checkpoints" / tid
    assert sorted(p.name for p in pieces.iterdir() if not p.name.startswith(".")) == [
        "layer-000",
        "layer-001",
    ]
    res = guesslab(folder, "cluster=sync", "run.progress=false")
    assert res.returncode == 0, res.stderr
    ok = stored(folder).query("status == 'ok'")
    assert list(ok["total"]) == [0 + 1 + 4 + 9]
    assert markers(folder) == ["layer-000", "layer-001", "layer-002", "layer-003"]  # once each
    assert not pieces.exists()


def test_a_link_in_place_of_the_checkpoints_folder_is_refused_up_front(tmp_path):
    folder = toy_folder(tmp_path, layers=2)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (folder / "out" / "toy").mkdir(parents=True)
    (folder / "out" / "toy" / "checkpoints").symlink_to(outside)
    res = guesslab(folder, "cluster=sync")
    assert res.returncode == 2, res.stderr
    assert "checkpoints is a symbolic link" in res.stderr
    assert list(outside.iterdir()) == [] and markers(folder) == []


def sealed_layers(checkpoints: Path) -> set[str]:
    """The layers committed under ``checkpoints`` (a piece counts once it is sealed: a kill
    between its rename and its seal leaves a piece that is recomputed, not trusted)."""
    return {p.name.removesuffix(".json") for p in checkpoints.glob("*/.seals/layer-*.json")}


def _run_and_kill(folder: Path, n_layers: int, *args: str, env: dict | None = None) -> set[str]:
    """Start the study, SIGKILL the driver (its whole process group) once at least two
    layers are committed; the layers committed at the kill."""
    proc = subprocess.Popen(
        guesslab_cmd(folder, *args),
        cwd=folder,
        env=env or toy_env(folder),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    checkpoints = folder / "out" / "toy" / "checkpoints"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if len(sealed_layers(checkpoints)) >= 2:
                break
            assert proc.poll() is None, "the run ended before it was killed"
            time.sleep(0.02)
        else:
            raise AssertionError("no two layers committed in time")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    committed = sealed_layers(checkpoints)
    assert len(committed) < n_layers
    return committed


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["sync", "local"])
def test_a_killed_driver_resumes_from_its_committed_pieces(tmp_path, cluster):
    n = 6
    folder = toy_folder(tmp_path, layers=n, sleep=0.4)
    args = (
        (f"cluster={cluster}", "cluster.n_workers=1") if cluster == "local" else ("cluster=sync",)
    )
    args = (*args, "run.progress=false")
    committed = _run_and_kill(folder, n, *args)
    assert not (folder / "out" / "toy" / "results").exists() or stored(folder).empty
    res = guesslab(folder, *args)
    assert res.returncode == 0, res.stderr
    assert list(stored(folder)["total"]) == [sum(i * i for i in range(n))]
    computed = markers(folder)
    for name in committed:  # a committed layer was never computed again
        assert computed.count(name) == 1, (name, computed)
    assert set(computed) == {f"layer-{i:03d}" for i in range(n)}
    assert not (folder / "out" / "toy" / "checkpoints").exists()


@pytest.mark.slow
def test_a_killed_worker_s_task_resumes_from_its_committed_pieces(tmp_path):
    """SIGKILL the worker process solving the task: Dask retries it on the restarted worker
    (or the run stores an error row and the next run retries it); either way the committed
    layers are loaded, not computed again."""
    n = 6
    folder = toy_folder(tmp_path, layers=n, sleep=0.4)
    args = ("cluster=local", "cluster.n_workers=1", "run.progress=false")
    proc = subprocess.Popen(
        guesslab_cmd(folder, *args),
        cwd=folder,
        env=toy_env(folder),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    checkpoints = folder / "out" / "toy" / "checkpoints"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if len(sealed_layers(checkpoints)) >= 2:
                break
            time.sleep(0.02)
        else:
            raise AssertionError("no two layers committed in time")
        (worker,) = {int(p.name.split(".")[1]) for p in (folder / "markers").iterdir()}
        os.kill(worker, signal.SIGKILL)
        committed = sealed_layers(checkpoints)  # by the killed worker: never computed again
        proc.wait(timeout=240)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if stored(folder).query("status == 'ok'").empty:  # the run stored an error row instead
        assert proc.returncode == 1
        res = guesslab(folder, *args)
        assert res.returncode == 0, res.stderr
    assert list(stored(folder).query("status == 'ok'")["total"]) == [sum(i * i for i in range(n))]
    computed = markers(folder)
    assert all(computed.count(name) == 1 for name in committed), (committed, computed)
    assert set(computed) == {f"layer-{i:03d}" for i in range(n)}
    assert not checkpoints.exists()


# ---------------------------------------------------------------------------- progress


def test_postfix_says_rate_time_left_and_note():
    report = Progress("t", 3, 10, "layers", "layer 2", 1.5e6, 200.0, 0.0)
    assert postfix(report) == "1.5M layers/s, 3.3 min left, layer 2"
    assert postfix(Progress("t", 0, 10, "", "", None, None, 0.0)) == ""


def test_progress_bars_follow_reports_and_close_when_done(capsys):
    bars = ProgressBars(enabled=True)
    bars.show(Progress("abcdef0123456789", 2, 4, "layers", "layer 1", 2.0, 1.0, 0.0))
    assert list(bars.bars) == ["abcdef0123456789"]
    last = Progress("abcdef0123456789", 4, 4, "layers", "", None, 0.0, 0.0).as_dict()
    bars.show(progress_of((0.0, {**last, "worker": "tcp://127.0.0.1:1234"})))  # as Dask sends
    assert bars.bars == {}
    err = capsys.readouterr().err
    assert "task abcdef0123" in err and "2/4 layers, 2 layers/s, 1 s left, layer 1" in err
    quiet = ProgressBars(enabled=False)
    quiet.show(Progress("x", 1, 2, "layers", "", None, None, 0.0))
    assert quiet.bars == {} and capsys.readouterr().err == ""


def test_a_task_s_warning_is_a_line_of_its_own_under_the_tasks_bar(monkeypatch):
    """A task's warning said while the tasks bar is drawn, with no long task's bar below
    it, takes a line of its own on the terminal: the bar's line is cleared first and the
    bar drawn again after it."""
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)  # the terminal: the bar and the lines on it
    said = "compiling the Numba kernels of card_guessing.exact (first use on this machine)..."
    with tasks_bar(127, True) as bar, ProgressBars(True, lambda t: print(t, file=screen)) as bars:
        bars.say(said)
        bar.update(1)
    lines = screen_lines(screen.getvalue())
    assert said in lines, lines
    assert lines[1].startswith("tasks:   1%") and "1/127" in lines[1], lines


@pytest.mark.slow
@pytest.mark.parametrize(
    ("cluster", "split", "timeout"),
    [("sync", False, None), ("sync", False, 60), ("local", False, None), ("local", True, None)],
)
def test_a_long_task_s_progress_reaches_the_terminal(tmp_path, cluster, split, timeout):
    folder = toy_folder(tmp_path, layers=5, sleep=0.3, split=str(split).lower())
    extra = [f"cluster={cluster}"]
    if cluster == "local":
        extra.append("cluster.n_workers=2")
    if timeout:
        extra.append(f"run.task_timeout_s={timeout}")
    res = guesslab(folder, *extra, "run.progress=true")
    assert res.returncode == 0, res.stderr
    assert list(stored(folder)["total"]) == [0 + 1 + 4 + 9 + 16]
    assert "layers/s" in res.stderr and "left, layer " in res.stderr, res.stderr
    assert "task " in res.stderr and "/5 layers" in res.stderr
    quiet = guesslab(folder, *extra, "run.progress=false", "store.recompute=true")
    assert quiet.returncode == 0, quiet.stderr
    assert "layers" not in quiet.stderr and "tasks" not in quiet.stderr


@pytest.mark.slow
def test_a_new_run_waits_for_the_task_a_killed_driver_s_worker_still_computes(tmp_path):
    """cluster=address: the driver is killed while a worker computes its long task, which
    Dask does not interrupt.  A new run of the study (the first run's claim went with it)
    starts the same task on the other worker: that computation waits, the run says so, and
    once the first ends it goes on from the layers the first committed; every layer is
    computed once.  The first computation is held at layer 3 until the second has said it
    waits (without the hold, the second would compute layer 3 beside it and never say so)."""
    from tests.helpers import dask_cluster

    n = 6
    folder = toy_folder(tmp_path, layers=n, sleep=0.1)
    gate = folder / "gate"
    gate.touch()
    env = toy_env(folder, TOY_GATE=str(gate), TOY_GATE_AT="3")
    address, procs = dask_cluster.start_cluster(2, env=env)
    args = ("cluster=address", f"cluster.address={address}", "run.progress=false")
    second = None
    try:
        committed = _run_and_kill(folder, n, *args, env=env)
        assert committed <= {f"layer-{i:03d}" for i in range(3)}  # the first waits at 3
        second = subprocess.Popen(
            guesslab_cmd(folder, *args), cwd=folder, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        said = _line_with(second, "held by another computation", timeout=120)
        assert "task " in said and "waits for it to end" in said, said
        gate.unlink()
        out = said + second.communicate(timeout=240)[0]
        assert second.returncode == 0, out
    finally:
        if second is not None and second.poll() is None:
            os.killpg(second.pid, signal.SIGKILL)
            second.wait()
        dask_cluster.stop(procs)
    assert list(stored(folder)["total"]) == [sum(i * i for i in range(n))]
    computed = markers(folder)
    assert sorted(computed) == [f"layer-{i:03d}" for i in range(n)], computed
    assert not (folder / "out" / "toy" / "checkpoints").exists()


def _line_with(proc: subprocess.Popen, text: str, timeout: float) -> str:
    """The output of ``proc`` up to and including its first line holding ``text`` (the
    output so far, in the message, if it ends or ``timeout`` passes first)."""
    import selectors

    seen: list[str] = []
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                break
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            if text in line:
                return "".join(seen)
    raise AssertionError(f"no line with {text!r}:\n{''.join(seen)}")


HOLD = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": "node3", "since": time.time()}).encode(), 0)
print("HELD", flush=True)
time.sleep(300)
"""


@pytest.mark.slow
def test_ctrl_c_while_a_task_waits_for_its_other_computation_stops_the_run_at_once(tmp_path):
    """A run whose task waits for another computation holding its checkpoints (here a
    process holding the lock, as a worker of a killed run would) says so while it waits,
    into a pipe too (the line is not left in a buffer), and stops on Ctrl-C at once, exit
    130, saying truly that no task was stored and the task's checkpoints are kept; the
    other computation's pieces stay."""
    n = 6
    folder = toy_folder(tmp_path, layers=n, sleep=0.2)
    committed = _run_and_kill(folder, n, "cluster=sync", "run.progress=false")
    checkpoints = folder / "out" / "toy" / "checkpoints"
    (task,) = checkpoints.iterdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(task / ".computing")], stdout=subprocess.PIPE, text=True
    )
    run = None
    try:
        assert holder.stdout.readline().strip() == "HELD"
        run = subprocess.Popen(
            guesslab_cmd(folder, "cluster=sync"), cwd=folder, env=toy_env(folder), text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=interruptible,
        )  # fmt: skip
        said = _line_with(run, "held by another computation", timeout=120)
        assert f"(pid {holder.pid} on node3, since " in said and " UTC: " in said, said
        os.killpg(run.pid, signal.SIGINT)
        out = said + run.communicate(timeout=30)[0]
    finally:
        if run is not None and run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
        holder.kill()
        holder.wait()
    assert run.returncode == 130, out
    kept = f"the checkpoints of 1 unfinished task are kept in {checkpoints} (the same command"
    assert f"stopped (Ctrl-C) before any task finished; no task was stored; {kept}" in out
    assert sealed_layers(checkpoints) == committed
