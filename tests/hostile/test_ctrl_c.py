"""Ctrl-C in a terminal, as a terminal sends it: SIGINT to the whole foreground process group
(the driver and its LocalCluster workers), once or twice.  The command prints the one
documented line and exits 130: no worker's traceback, no Dask warning, after one Ctrl-C
or a second; stopped before any batch is stored, it leaves nothing.
Every stop says what is stored: while the modules import, while the config files are
checked, while a kernel compiles, while the summary is written, in a multirun whose jobs run
in other processes."""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import logging
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import numba
import numba.core.event as ev
import pytest

import pipeline.__main__ as command
import pipeline.outputs.summary
import pipeline.run
import pipeline.running.worker
from pipeline.ctrl_c import NOTHING_WRITTEN, nothing_written
from pipeline.storage import store
from pipeline.storage.study_folder import StudyFolder
from solvers.kit import compile_lock, compile_once
from solvers.kit.compiled import ctrl_c_held
from tests.helpers import lock_holder
from tests.helpers.commands import cli_in_process, cli_run_in_process
from tests.helpers.nap_driver import nap_overrides, register_nap
from tests.helpers.repository import ROOT
from tests.helpers.terminal import as_a_terminal_job, interruptible

NAP_DRIVER = ROOT / "tests" / "helpers" / "nap_driver.py"


def ctrl_c(
    outputs: Path, nap: float, ready, times: int, stop: int = signal.SIGINT
) -> tuple[int, str, str]:
    """Run 40 naps on a 2-worker LocalCluster; once ``ready()``, send ``stop`` (SIGINT) to
    the process group ``times`` times, 0.2 s apart; (exit status, stdout, stderr)."""
    command = [
        sys.executable,
        str(NAP_DRIVER),
        "40",
        str(nap),
        "cluster=local",
        "cluster.n_workers=2",
        "run.batch_size=1",
        "run.progress=false",
        f"paths.outputs={outputs}",
    ]
    return interrupt(command, lambda pid: ready(), times, stop=stop)


def interrupt(
    command: list[str], ready, times: int, poll: float = 0.05, stop: int = signal.SIGINT
) -> tuple[int, str, str]:
    """Run ``command`` as a terminal's foreground job; once ``ready(its pid)`` (asked every
    ``poll`` s), send ``stop`` (SIGINT) to its process group ``times`` times, 0.2 s apart;
    (exit status, stdout, stderr)."""
    driver = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=as_a_terminal_job,
    )
    try:
        deadline = time.monotonic() + 120
        while not ready(driver.pid) and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(poll)
        assert driver.poll() is None, driver.communicate()
        for n in range(times):
            if n:
                time.sleep(0.2)
            os.killpg(driver.pid, stop)
        out, err = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.communicate()
    return driver.returncode, out, err


def assert_one_line(status: int, out: str, err: str, start: str) -> str:
    assert status == 130, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(start), err
    for noise in ("Traceback", "KeyboardInterrupt", "CancelledError", "still alive", "Restart"):
        assert noise not in out + err, (out, err)
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("times", [1, 2])
def test_ctrl_c_while_workers_compute_is_one_line(tmp_path, times):
    results = tmp_path / "naps" / "results"
    status, out, err = ctrl_c(tmp_path, 0.3, lambda: len(store.result_files(results)) >= 3, times)
    line = assert_one_line(status, out, err, "stopped (Ctrl-C): ")
    assert str(results) in line and "run the same command again" in line
    assert store.result_files(results)


@pytest.mark.slow
def test_sigterm_to_the_process_group_while_workers_compute_is_one_line(tmp_path):
    """SIGTERM to the driver's whole process group (``kill -- -PGID``, a batch system stopping
    a job): the workers ignore it and the driver stops them; its one line names SIGTERM, exit
    143, and nothing else is printed beside the run's own two lines (no Dask line about the
    workers)."""
    results = tmp_path / "naps" / "results"
    status, out, err = ctrl_c(
        tmp_path, 0.3, lambda: len(store.result_files(results)) >= 3, 1, signal.SIGTERM
    )
    assert status == 143, (out, err)
    assert [line for line in out.splitlines() if line.strip()] == [
        "study naps: 40 tasks, 0 already stored",
        "running 40 tasks on LocalCluster, 2 worker processes",
    ], (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("stopped (SIGTERM): "), err
    assert str(results) in lines[0] and "run the same command again" in lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("times", [1, 2])
def test_ctrl_c_before_any_batch_is_stored_leaves_nothing(tmp_path, times):
    outputs = tmp_path / "outputs"
    runs = outputs / "naps" / "runs"

    def started() -> bool:  # the cluster answered and the workers nap (30 s a task)
        if not list(runs.glob("*.yaml")):
            return False
        time.sleep(1.0)
        return True

    status, out, err = ctrl_c(outputs, 30, started, times)
    line = assert_one_line(status, out, err, "stopped (Ctrl-C) before any task finished")
    assert "nothing was stored" in line
    assert not outputs.exists(), sorted(outputs.rglob("*"))


def _loaded(pid: int, library: str) -> bool:
    """Whether the process ``pid`` has mapped a shared library whose path holds ``library``."""
    try:
        return library in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


GUESSLAB = Path(sys.executable).with_name("guesslab")  # the console script, installed beside


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
@pytest.mark.parametrize("program", [[sys.executable, "-m", "pipeline"], [str(GUESSLAB)]])
def test_ctrl_c_while_the_command_imports_its_modules_is_one_line(tmp_path, program):
    """Ctrl-C in the command's first second (Hydra, Dask, pandas, pyarrow importing) is the
    one line, exit 130, no KeyboardInterrupt traceback, nothing written."""
    if not GUESSLAB.exists() and program[0] == str(GUESSLAB):
        pytest.skip("the guesslab console script is not installed beside this Python")
    command = [*program, "cluster=sync", "run.progress=false", f"paths.outputs={tmp_path}"]

    def importing(pid: int) -> bool:  # PyYAML's extension: Hydra's imports are under way
        return _loaded(pid, "/_yaml.")

    status, out, err = interrupt(command, importing, 1, poll=0.001)
    line = assert_one_line(status, out, err, NOTHING_WRITTEN)
    assert line == NOTHING_WRITTEN
    assert not any(tmp_path.iterdir())


# Installed as the child's sitecustomize: SIGNAL to the process itself when it first opens a
# file whose path holds every word of AT (reading a module's code, a config file)
AT_A_MOMENT = """
import os, signal, sys

def _stop_once(event, args, sent=[]):
    path = args[0] if event == "open" and args and isinstance(args[0], str) else ""
    if not sent and all(word in path for word in os.environ["STOP_AT"].split()):
        sent.append(path)
        os.kill(os.getpid(), int(os.environ["STOP_SIGNAL"]))

sys.addaudithook(_stop_once)
"""


@pytest.mark.parametrize(
    ("stop", "at"),
    [
        (signal.SIGINT, "pipeline ctrl_c"),  # pipeline/__init__.py imports its handler
        (signal.SIGTERM, "pipeline ctrl_c"),
        (signal.SIGINT, "pipeline __main__"),  # Python reads the command's module
        (signal.SIGTERM, "pipeline __main__"),
        (signal.SIGINT, "hydra __init__"),  # the command imports its modules
        (signal.SIGINT, "conf config.yaml"),  # the config files are checked
    ],
)
def test_a_stop_at_any_moment_of_the_commands_start_is_one_line(tmp_path, stop, at):
    """From the moment Python looks for ``python -m pipeline``'s code, Ctrl-C is the one line
    and exit 130, SIGTERM the same line naming it and exit 143; nothing is written."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(AT_A_MOMENT)
    path = os.pathsep.join(p for p in (str(hook), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "STOP_AT": at, "STOP_SIGNAL": str(int(stop))}
    outputs = tmp_path / "outputs"
    command_line = [sys.executable, "-m", "pipeline", "cluster=sync", f"paths.outputs={outputs}"]
    done = subprocess.run(
        command_line, capture_output=True, text=True, cwd=ROOT, env=env, preexec_fn=interruptible
    )
    how = "Ctrl-C" if stop == signal.SIGINT else "SIGTERM"
    assert done.returncode == 128 + stop, done.stderr
    line = f"stopped ({how}) while starting; nothing was written"
    assert done.stderr.split() == line.split() == nothing_written(stop).split()
    assert not outputs.exists()


def test_ctrl_c_while_the_config_files_are_checked_is_one_line(monkeypatch, capsys):
    def interrupted(argv: list[str]) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "check_command_line", interrupted)
    monkeypatch.setattr(sys, "argv", ["pipeline", "cluster=sync"])
    try:
        command.main()
    except SystemExit as exc:
        status = exc.code
    except KeyboardInterrupt:
        pytest.fail("a KeyboardInterrupt (a traceback) instead of the one line")
    assert status == 130
    assert capsys.readouterr().err.split() == NOTHING_WRITTEN.split()


def _nap_study(outputs: Path) -> list[str]:
    return [*nap_overrides(5, 0), "cluster=sync", "run.progress=false", f"paths.outputs={outputs}"]


def test_ctrl_c_while_the_summary_is_written_says_what_is_stored(outputs, monkeypatch, capsys):
    """Ctrl-C while the summary is written says how many tasks the store holds and the
    command that writes the summary; the stored rows stay and no summary.md is left."""
    register_nap()
    results = outputs / "naps" / "results"

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(pipeline.outputs.summary, "write_summary", interrupted)
        status, err = cli_in_process(monkeypatch, capsys, *_nap_study(outputs))
        assert status == 130
        (line,) = err.strip().splitlines()
        stored = f"the store holds 5 tasks (5 ok) in {results}, intact; to write the summary: "
        assert line.startswith(
            f"stopped (Ctrl-C) while writing the summary: 5 tasks computed and stored in "
            f"this run; {stored}python -m pipeline "
        ), line
        status, err = cli_in_process(monkeypatch, capsys, *_nap_study(outputs), "stage=summary")
        assert status == 130
        (line,) = err.strip().splitlines()
        assert line.startswith(f"stopped (Ctrl-C) while writing the summary: {stored}"), line
    assert len(store.load_results(outputs / "naps")) == 5
    assert not (outputs / "naps" / "summary.md").exists()
    rerun = shlex.split(line.partition("to write the summary: ")[2])
    assert rerun[:3] == ["python", "-m", "pipeline"] and rerun[-1] == "stage=summary"
    assert cli_in_process(monkeypatch, capsys, *rerun[3:]) == (0, "")  # the command it names
    assert "5 result rows: 5 ok" in (outputs / "naps" / "summary.md").read_text()


def test_ctrl_c_before_the_summary_stage_begins_says_nothing_was_written(
    outputs, monkeypatch, capsys
):
    """Ctrl-C in the first moments of ``stage=summary`` on a study whose store holds tasks
    (its folder checked, nothing read or written yet): the one line says nothing was
    written, never that nothing is stored."""
    register_nap()
    assert cli_in_process(monkeypatch, capsys, *_nap_study(outputs), "stage=run")[0] == 0

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(StudyFolder, "check_summary_target", interrupted)
        status, err = cli_in_process(monkeypatch, capsys, *_nap_study(outputs), "stage=summary")
    assert status == 130
    assert err.strip() == NOTHING_WRITTEN == "stopped (Ctrl-C) while starting; nothing was written"
    assert len(store.load_results(outputs / "naps")) == 5


def _commands_ctrl_c(monkeypatch) -> None:
    """The command's own Ctrl-C handling in this process, as ``guesslab`` sets it up; the
    caller puts Python's back (see :func:`_pythons_ctrl_c`)."""
    monkeypatch.setattr("pipeline.ctrl_c._stopped_by", None)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    command.stop_on_first_ctrl_c()


def _pythons_ctrl_c(hook) -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.unraisablehook = hook


def test_ctrl_c_that_a_library_turns_into_its_own_error_is_still_the_one_line(
    outputs, monkeypatch, capsys
):
    """DuckDB answers Ctrl-C in a query with "RuntimeError: Query interrupted" (the summary's
    counts), an extension module whose import it interrupts with "ImportError:
    initialization failed": either is the one line of a Ctrl-C, exit 130, not a traceback."""
    register_nap()

    def counted_by_duckdb(*args, **kwargs):
        try:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C, inside the library's call
        except KeyboardInterrupt:
            raise RuntimeError("Query interrupted") from None  # as DuckDB raises it

    hook = sys.unraisablehook
    try:
        _commands_ctrl_c(monkeypatch)
        monkeypatch.setattr(pipeline.outputs.summary, "write_summary", counted_by_duckdb)
        status, err = cli_in_process(monkeypatch, capsys, *_nap_study(outputs))
    finally:
        _pythons_ctrl_c(hook)
    assert status == 130
    (line,) = err.strip().splitlines()
    assert line.startswith("stopped (Ctrl-C) while writing the summary: 5 tasks computed")


def test_ctrl_c_inside_a_compiled_kernel_stops_the_run_and_stores_no_failure(
    outputs, monkeypatch, capsys
):
    """Ctrl-C inside a Numba kernel's call on ``cluster=sync`` surfaces as ``SystemError:
    CPUDispatcher(...) returned a result with an exception set``, the KeyboardInterrupt its
    cause: the run stops with the one line, exit 130, the tasks before it stored and no row
    of the interrupted task."""
    register_nap()
    solved = pipeline.running.worker.solve
    calls: list[dict] = []

    def kernel_interrupted(task, **kwargs):
        calls.append(task)
        if len(calls) < 3:
            return solved(task, **kwargs)
        try:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C, inside the compiled call
        except KeyboardInterrupt as exc:
            raise SystemError(
                "CPUDispatcher(<function layer_values>) returned a result with an exception set"
            ) from exc

    hook = sys.unraisablehook
    try:
        _commands_ctrl_c(monkeypatch)
        monkeypatch.setattr(pipeline.running.worker, "solve", kernel_interrupted)
        one_a_batch = "run.batch_size=1"
        status, err = cli_in_process(monkeypatch, capsys, *_nap_study(outputs), one_a_batch)
    finally:
        _pythons_ctrl_c(hook)
    results = outputs / "naps" / "results"
    assert status == 130, err
    (line,) = err.strip().splitlines()
    assert line.startswith(
        f"stopped (Ctrl-C): 2 of 5 tasks computed in this run and stored in {results}"
    )
    stored = store.load_results(outputs / "naps")
    assert len(stored) == 2 and set(stored["status"]) == {"ok"}
    assert not (outputs / "naps" / "summary.md").exists()


COMPILED_ON_FIRST_USE = """
from solvers.kit.compile_once import njit


@njit(cache=True)
def woken(i):
    return i * 2 + 1
"""


class _CtrlCOnFirstCompile(ev.Listener):
    """Ctrl-C once, as a terminal sends it, when Numba begins its first compilation."""

    def __init__(self) -> None:
        self.sent = 0

    def on_start(self, event):
        if not self.sent:
            self.sent += 1
            signal.raise_signal(signal.SIGINT)

    def on_end(self, event):
        pass


def test_ctrl_c_while_a_kernel_compiles_says_what_is_stored_and_the_rerun_compiles_it(
    outputs, tmp_path, monkeypatch, capsys
):
    """Ctrl-C while a task's kernel compiles on its first use (an empty Numba cache) is the
    one line naming the tasks stored before it, exit 130; the kernel's lock on the cache is
    free and no cache entry is left for it; the same command again compiles the kernel and
    stores every task's row."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    package = tmp_path / "compiled_on_first_use"
    package.mkdir()
    (package / "__init__.py").write_text(COMPILED_ON_FIRST_USE)
    monkeypatch.syspath_prepend(str(tmp_path))
    kernels = importlib.import_module("compiled_on_first_use")

    def woken_by_a_kernel(task: dict) -> list[dict]:
        i = task["i"]
        return [{"woke": kernels.woken(i) if i >= 2 else 2 * i + 1}]

    register_nap("test_compiled_nap", woken_by_a_kernel)
    study = [*_nap_study(outputs), "study.family=test_compiled_nap", "run.batch_size=1"]
    listener = _CtrlCOnFirstCompile()
    hook = sys.unraisablehook
    try:
        _commands_ctrl_c(monkeypatch)
        with ev.install_listener("numba:compile", listener):
            status, err = cli_in_process(monkeypatch, capsys, *study)
    finally:
        _pythons_ctrl_c(hook)
    results = outputs / "naps" / "results"
    assert listener.sent == 1 and status == 130, err
    (line,) = err.strip().splitlines()
    assert line.startswith(
        f"stopped (Ctrl-C): 2 of 5 tasks computed in this run and stored in {results}"
    ), line
    lock = compile_once.lock_path(kernels.woken)
    fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises if the lock were still held
    finally:
        os.close(fd)
    assert not compile_once.is_compiled(kernels.woken)
    assert sorted(store.load_results(outputs / "naps")["woke"]) == [1, 3]

    status, err = cli_in_process(monkeypatch, capsys, *study)
    assert status == 0, err
    assert sorted(store.load_results(outputs / "naps")["woke"]) == [1, 3, 5, 7, 9]
    assert compile_once.is_compiled(kernels.woken) and len(kernels.woken.overloads) == 1


@pytest.mark.parametrize("held", [True, False], ids=["in_ctrl_c_held", "plain_call"])
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_stop_while_a_kernel_waits_for_its_compile_lock_ends_the_run_at_once(
    outputs, tmp_path, monkeypatch, capsys, stop, held
):
    """A task whose kernel the cache lacks, while another process holds the kernel's compile
    lock: the wait is said (who holds the lock), and Ctrl-C or SIGTERM during it (the
    kernel called inside ``ctrl_c_held``, as the ranked solver calls its kernels, or not)
    ends the run at once with the one line, exit 130 or 143, while the lock is still
    held."""
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    package = tmp_path / f"awaited_on_first_use_{stop.name}_{held}"
    package.mkdir()
    (package / "__init__.py").write_text(COMPILED_ON_FIRST_USE)
    monkeypatch.syspath_prepend(str(tmp_path))
    kernels = importlib.import_module(package.name)
    around = ctrl_c_held if held else contextlib.nullcontext

    def woken_by_a_kernel(task: dict) -> list[dict]:
        i = task["i"]
        with around():
            return [{"woke": kernels.woken(i) if i >= 2 else 2 * i + 1}]

    noted = compile_lock.stop_noted

    def stopped_while_waiting() -> bool:  # the signal, as the wait begins
        if not sent:
            sent.append(stop)
            signal.raise_signal(stop)
        return noted()

    sent: list[int] = []
    family = f"test_awaited_nap_{stop.name}_{held}"
    register_nap(family, woken_by_a_kernel)
    study = [*_nap_study(outputs), f"study.family={family}", "run.batch_size=1"]
    monkeypatch.setattr(compile_lock, "SAY_AFTER", 0.0)
    monkeypatch.setattr(compile_lock, "stop_noted", stopped_while_waiting)
    lock = compile_once.lock_path(kernels.woken)
    hook = sys.unraisablehook
    try:
        _commands_ctrl_c(monkeypatch)
        with lock_holder.held(lock) as holder:
            done = cli_run_in_process(monkeypatch, capsys, *study)
            assert lock_holder.still_held(lock)
    finally:
        _pythons_ctrl_c(hook)
    results = outputs / "naps" / "results"
    assert sent == [stop] and done.returncode == 128 + stop, done
    (line,) = done.stderr.strip().splitlines()
    (waiting,) = [s for s in done.stdout.splitlines() if s.startswith("waiting")]
    assert waiting.startswith(
        f"waiting for the Numba kernel {package.name}.woken: process {holder.pid} ("
    ), waiting
    name = "Ctrl-C" if stop == signal.SIGINT else "SIGTERM"
    assert line.startswith(
        f"stopped ({name}): 2 of 5 tasks computed in this run and stored in {results}"
    ), line
    assert sorted(store.load_results(outputs / "naps")["woke"]) == [1, 3]


def test_a_ctrl_c_that_lands_in_a_finalizer_still_stops_the_command(monkeypatch, capsys):
    """A KeyboardInterrupt raised inside a weakref callback or a ``__del__`` cannot propagate
    (Python prints "Exception ignored in ..." and goes on): under the command's handler the
    Ctrl-C still reaches the command as a KeyboardInterrupt, and nothing is said ignored."""

    class Finalized:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGINT)  # Ctrl-C while the collector runs this

    hook = sys.unraisablehook
    try:
        _commands_ctrl_c(monkeypatch)
        with pytest.raises(KeyboardInterrupt):
            Finalized()  # freed at once: Ctrl-C lands in its finalizer
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                time.sleep(0.01)
    finally:
        _pythons_ctrl_c(hook)
    assert "Exception ignored" not in capsys.readouterr().err


@pytest.mark.slow
def test_ctrl_c_does_not_log_the_finished_batches_the_stopped_workers_held():
    """A cluster closed by Ctrl-C while a worker holds a finished batch not yet fetched
    logs no "Removing worker ... caused the cluster to lose already computed task(s)"."""
    from pipeline.backends import open_executor

    said: list[str] = []

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    scheduler_log = logging.getLogger("distributed.scheduler")
    handler = Said()
    scheduler_log.addHandler(handler)
    try:
        with (
            pytest.raises(KeyboardInterrupt),
            open_executor({"kind": "local", "n_workers": 1, "start_method": "fork"}) as executor,
        ):
            batch = executor.client.submit(sum, [1, 2], pure=False)
            assert batch.result() == 3  # its result stays on the worker while it is held
            raise KeyboardInterrupt
    finally:
        scheduler_log.removeHandler(handler)
    lost = "caused the cluster to lose already computed task(s)"
    assert not [message for message in said if lost in message], said


@pytest.mark.slow
def test_a_cluster_stopped_by_ctrl_c_closes_without_a_word_from_dask_tornado_or_asyncio(
    monkeypatch,
):
    """From Ctrl-C until the LocalCluster has closed, what its scheduler, its connections and
    the event loop log while they go down (``Couldn't gather keys: {...: 'forgotten'}``, a
    TLS handshake cut short) stays off the output; their loggers speak again afterwards."""
    from pipeline.backends import local, open_executor

    said: list[str] = []

    class Said(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(f"{record.name}: {record.getMessage()}")

    names = ("distributed.scheduler", "distributed.comm.tcp", "tornado.general", "asyncio")
    stopping = local.stop_workers_now

    def closing_cluster_logs(*args, **kwargs):  # what a stopped cluster's pieces may log
        for name in names:
            logging.getLogger(name).error("Couldn't gather keys: {'last_log_chunk-1': 'forgotten'}")
        return stopping(*args, **kwargs)

    monkeypatch.setattr(local, "stop_workers_now", closing_cluster_logs)
    handler = Said()
    for name in names:
        logging.getLogger(name).addHandler(handler)
    try:
        with (
            pytest.raises(KeyboardInterrupt),
            open_executor({"kind": "local", "n_workers": 1, "start_method": "fork"}),
        ):
            raise KeyboardInterrupt
        assert said == []
        for name in names:
            logging.getLogger(name).error("after the stop")
        assert said == [f"{name}: after the stop" for name in names]
    finally:
        for name in names:
            logging.getLogger(name).removeHandler(handler)


@pytest.mark.slow
def test_ctrl_c_in_a_joblib_multirun_says_what_each_job_stored(tmp_path):
    """Ctrl-C in a joblib multirun (its jobs run in loky worker processes) is one line saying
    what each job's study holds and how to resume, and no "leaked semaphore" line."""
    command_line = [
        sys.executable,
        "-m",
        "pipeline",
        "-m",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "study=entropy_grid",
        "study.name=e1,e2",
        "cluster=sync",
        "run.batch_size=1",
        "run.progress=false",
        f"paths.outputs={tmp_path}",
    ]

    def both_stored(pid: int) -> bool:
        return all(len(store.result_files(tmp_path / s / "results")) >= 2 for s in ("e1", "e2"))

    status, out, err = interrupt(command_line, both_stored, 1)
    line = assert_one_line(status, out, err, "stopped (Ctrl-C) in a multirun of 2 jobs; ")
    for name in ("e1", "e2"):
        n = len(store.load_results(tmp_path / name))
        assert n >= 2
        results = tmp_path / name / "results"
        assert f"{name}: {n} tasks stored by this multirun, {n} in all, in {results}" in line
    assert line.endswith(
        "run the same command again to compute the rest (stored tasks are skipped)"
    )
    assert "leaked" not in err


@pytest.mark.slow
def test_sigterm_says_what_is_stored_and_kept_and_the_next_run_resumes(tmp_path):
    """SIGTERM to the driver (a scheduler's kill, ``timeout``) stops the run as Ctrl-C does:
    one line naming SIGTERM, what is stored and the unfinished task's checkpoints kept, exit
    143; the same command then resumes the task from them."""
    from tests.helpers.toy_layers import (
        guesslab,
        guesslab_cmd,
        markers,
        stored,
        toy_env,
        toy_folder,
    )

    folder = toy_folder(tmp_path, layers=4)
    gate = tmp_path / "gate"
    gate.touch()  # the task waits at layer 2 while this file exists
    env = toy_env(folder, TOY_GATE=str(gate), TOY_GATE_AT="2")
    checkpoints = folder / "out" / "toy" / "checkpoints"
    driver = subprocess.Popen(
        guesslab_cmd(folder, "cluster=sync", "run.progress=false"),
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_a_terminal_job,
    )
    try:
        deadline = time.monotonic() + 120
        while len(list(checkpoints.glob("*/.seals/layer-*.json"))) < 2:
            assert driver.poll() is None and time.monotonic() < deadline, driver.communicate()
            time.sleep(0.02)
        driver.send_signal(signal.SIGTERM)  # the driver alone, as `timeout` sends it
        out, err = driver.communicate(timeout=60)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.communicate()
    assert driver.returncode == 143, err
    (line,) = [line for line in err.splitlines() if line.strip()]
    assert line == (
        "stopped (SIGTERM) before any task finished; no task was stored; the checkpoints of 1 "
        f"unfinished task are kept in {checkpoints} (the same command resumes them)"
    )
    gate.unlink()
    assert guesslab(folder, "cluster=sync", "run.progress=false").returncode == 0
    assert list(stored(folder)["total"]) == [0 + 1 + 4 + 9]
    assert markers(folder) == ["layer-000", "layer-001", "layer-002", "layer-003"]  # once each
