"""Kernels compiled once per machine (solvers.kit.compile_once): processes sharing Numba's
cache compile a kernel once between them and load it after; a kernel loaded from the cache
computes what it computed when compiled; the locks of a caller and its callee never
deadlock; a slow compilation is said; ``stage=plan``'s line counts what the cache holds.
The compile locks stall no run (solvers.kit.compile_lock): their files are the owner's
only, a cached kernel is loaded without its lock, a wait is said with who holds the lock,
another account's lock is not waited for.  A damaged file of the cache is set aside, said,
and the kernel compiled again (solvers.kit.checked_cache).

The kernels are tiny ones made for these tests in a temporary module (a compilation is
made slow on purpose, by a Numba compile-event listener, where two processes must meet)."""

from __future__ import annotations

import ast
import importlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numba.core.event as ev
import numpy as np
import pytest

from solvers.kit import checked_cache, compile_lock, compile_once
from solvers.kit.budget import Budget
from solvers.kit.compiled import ctrl_c_held
from solvers.kit.current_task import using
from solvers.kit.task_context import TaskContext
from tests.helpers.lock_holder import held, still_held

ROOT = Path(__file__).resolve().parents[1]

KERNELS = """
from solvers.kit.compile_once import njit


@njit(cache=True)
def callee(x):
    return x * 2 + 1


@njit(cache=True)
def caller(n):
    total = 0
    for i in range(n):
        total += callee(i)
    return total
"""

# one process: waits for the file GO, calls the kernels in the order given (a compilation
# takes SLOW seconds more), and writes each kernel's value, compilations and cache loads
TOUCH = """
import json, sys, time
from pathlib import Path
import numba.core.event as ev

sys.path.insert(0, sys.argv[1])
import tiny_kernels

class Slow(ev.Listener):
    def on_start(self, event):
        time.sleep(float(sys.argv[4]))
    def on_end(self, event):
        pass

ev.register("numba:compile", Slow())
go, out = Path(sys.argv[2]), Path(sys.argv[3])
out.with_suffix(".ready").touch()
while not go.exists():
    time.sleep(0.01)
seen = {}
for name in sys.argv[5].split(","):
    kernel = getattr(tiny_kernels, name)
    seen[name] = {
        "value": kernel(10) if name == "caller" else kernel(7),
        "compiled": sum(kernel.stats.cache_misses.values()),
        "loaded": sum(kernel.stats.cache_hits.values()),
    }
out.write_text(json.dumps(seen))
"""


def _module_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "module"
    folder.mkdir(exist_ok=True)
    (folder / "tiny_kernels.py").write_text(KERNELS)
    (tmp_path / "touch.py").write_text(TOUCH)
    return folder


def _processes(tmp_path: Path, orders: list[str], slow: float) -> list[dict]:
    """What each process (one per order, all started at once on the NUMBA_CACHE_DIR
    ``tmp_path/cache``, shared by them) saw of the kernels it called; what each said on
    stderr is ``["said"]``."""
    folder = _module_folder(tmp_path)
    go = tmp_path / f"go-{len(list(tmp_path.glob('go-*')))}"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    outs = [tmp_path / f"{go.name}-{i}.json" for i in range(len(orders))]
    procs = [
        subprocess.Popen(
            [sys.executable, str(tmp_path / "touch.py"), str(folder), str(go), str(out)]
            + [str(slow), order],
            env=env,
            stderr=out.with_suffix(".err").open("w"),
        )
        for out, order in zip(outs, orders, strict=True)
    ]
    try:
        deadline = time.monotonic() + 120
        while not all(out.with_suffix(".ready").exists() for out in outs):
            assert all(p.poll() is None for p in procs), "a process ended before it was ready"
            assert time.monotonic() < deadline, "the processes did not start in 120 s"
            time.sleep(0.05)
        go.touch()
        codes = [p.wait(timeout=120) for p in procs]  # a deadlock fails here
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    said = [out.with_suffix(".err").read_text() for out in outs]
    assert codes == [0] * len(procs), (codes, said)
    return [
        {**json.loads(out.read_text()), "said": err} for out, err in zip(outs, said, strict=True)
    ]


def test_two_processes_compile_a_kernel_once_and_the_other_loads_it(tmp_path):
    seen = _processes(tmp_path, ["callee", "callee"], slow=1.0)
    assert sum(s["callee"]["compiled"] for s in seen) == 1, seen
    assert sum(s["callee"]["loaded"] for s in seen) == 1, seen
    assert {s["callee"]["value"] for s in seen} == {15}


def test_a_kernel_loaded_from_the_cache_computes_what_it_computed_when_compiled(tmp_path):
    (first,) = _processes(tmp_path, ["caller,callee"], slow=0.0)
    (again,) = _processes(tmp_path, ["caller,callee"], slow=0.0)
    assert first["caller"]["compiled"] == first["callee"]["compiled"] == 1, first
    assert again["caller"]["compiled"] == again["callee"]["compiled"] == 0, again
    assert again["caller"]["loaded"] == again["callee"]["loaded"] == 1, again
    assert [first[k]["value"] for k in ("caller", "callee")] == [100, 15]
    assert [again[k]["value"] for k in ("caller", "callee")] == [100, 15]


def test_a_caller_and_its_callee_first_touched_in_opposite_orders_do_not_deadlock(tmp_path):
    """One process compiles the caller (holding its lock, it takes the callee's), the other
    the callee first and the caller after: both end, and each kernel is compiled once."""
    seen = _processes(tmp_path, ["caller,callee", "callee,caller"], slow=1.0)
    for name in ("caller", "callee"):
        assert sum(s[name]["compiled"] for s in seen) == 1, seen
    assert [s["caller"]["value"] for s in seen] == [100, 100]


def _fresh_package(tmp_path: Path, monkeypatch, name: str):
    """A package ``name`` in tmp_path holding the tiny kernels, imported."""
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)


class _Slow(ev.Listener):
    def on_start(self, event):
        time.sleep(0.3)

    def on_end(self, event):
        pass


def test_a_slow_compilation_is_said_once_with_its_module_and_how_long_it_took(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(compile_once, "SAY_AFTER", 0.1)
    kernels = _fresh_package(tmp_path, monkeypatch, "said_kernels")
    said: list[str] = []
    with (
        ev.install_listener("numba:compile", _Slow()),
        using(TaskContext(Budget(1 << 30, "test"), warnings=said.append)),
    ):
        assert kernels.callee(7) == 15
        assert kernels.caller(10) == 100  # the same module: not said again
    assert len(said) == 2, said
    assert said[0].startswith("compiling the Numba kernels of said_kernels (first use"), said
    assert said[1].startswith("compiled the kernels of said_kernels in "), said


def test_a_quick_compilation_is_not_said(tmp_path, monkeypatch):
    kernels = _fresh_package(tmp_path, monkeypatch, "quiet_kernels")
    said: list[str] = []
    with using(TaskContext(Budget(1 << 30, "test"), warnings=said.append)):
        assert kernels.callee(7) == 15
    assert said == []


def test_the_plan_line_counts_the_kernels_numbas_cache_holds(tmp_path, monkeypatch):
    kernels = _fresh_package(tmp_path, monkeypatch, "planned_kernels")
    line = compile_once.compiled_line("planned_kernels")
    assert line.startswith("  compiled kernels: 0 of 2 of planned_kernels on this machine"), line
    assert line.endswith("the first run compiles those it uses, once per machine"), line
    kernels.callee(7)
    assert compile_once.is_compiled(kernels.callee) and not compile_once.is_compiled(kernels.caller)
    assert "1 of 2" in compile_once.compiled_line("planned_kernels")
    kernels.caller(10)
    line = compile_once.compiled_line("planned_kernels")
    assert line.startswith("  compiled kernels: all 2 of planned_kernels on this machine"), line
    assert compile_once.compiled_line("no_kernels_here") is None


def test_the_lock_and_index_are_named_beside_numbas_own_entries(tmp_path, monkeypatch):
    kernels = _fresh_package(tmp_path, monkeypatch, "named_kernels")
    kernels.callee(7)
    cache = Path(kernels.callee.stats.cache_path)
    index = Path(f"{compile_once.cache_base(kernels.callee)}.nbi")
    assert index.parent == cache and index.exists(), sorted(cache.iterdir())
    assert Path(compile_once.lock_path(kernels.callee)).exists()


CONSTANTS = """
from solvers.kit.compile_once import njit


@njit(cache=True)
def step(x, up, by):
    return x + by if up else x - by


@njit(cache=True)
def steps(n):
    total = 0
    for i in range(n):
        total += step(i, True, 1) + step(i, False, 2) + step(i, i % 2 == 0, 3)
    return total


@njit(cache=True)
def pick(pair, k):
    return pair[k]


@njit(cache=True)
def picks():
    pair = (1, 2.5)
    return pick(pair, 0) + pick(pair, 1)
"""


def test_a_kernel_called_with_constants_compiles_once_for_their_types(tmp_path, monkeypatch):
    """Three calls with different constants (True, False, 1, 2, 3) and a bool variable share
    one compilation of the callee, for (int64, bool, int64); a callee that cannot be typed
    without its literal (a tuple of two types indexed by a constant) is compiled for each."""
    package = tmp_path / "constant_kernels"
    package.mkdir()
    (package / "__init__.py").write_text(CONSTANTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    kernels = importlib.import_module("constant_kernels")
    assert kernels.steps(4) == sum((i + 1) + (i - 2) + (i + 3 if i % 2 == 0 else i - 3)
                                   for i in range(4))  # fmt: skip
    assert [str(sig) for sig in kernels.step.signatures] == ["(int64, bool, int64)"]
    assert kernels.picks() == 3.5
    assert len(kernels.pick.signatures) == 2


def test_every_solver_kernel_is_made_by_compile_once():
    """No module of solvers/ but compile_once takes njit or jit from Numba itself."""
    direct = []
    jits = ("njit", "jit")
    for path in sorted((ROOT / "solvers").rglob("*.py")):
        if path.name == "compile_once.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "numba":
                direct += [f"{path.name}: {a.name}" for a in node.names if a.name in jits]
            elif (
                isinstance(node, ast.Attribute)
                and node.attr in jits
                and getattr(node.value, "id", None) == "numba"
            ):
                direct.append(f"{path.name}:{node.lineno} numba.{node.attr}")
    assert not direct, direct


@pytest.mark.parametrize("family", ["high_low", "mastermind"])
def test_the_plan_names_the_family_s_kernels(family):
    line = compile_once.compiled_line(f"solvers.{family}")
    assert line is not None and f" of {family} on this machine (Numba's cache: " in line, line


def test_stage_plan_says_how_many_of_the_family_s_kernels_are_compiled(
    tmp_path, monkeypatch, capsys
):
    from tests.helpers.commands import cli_run_in_process

    out = cli_run_in_process(
        monkeypatch, capsys, "study=high_low", "stage=plan", f"paths.outputs={tmp_path}"
    )
    assert out.returncode == 0, out.stderr
    (line,) = [s for s in out.stdout.splitlines() if s.startswith("  compiled kernels: ")]
    assert " of high_low on this machine (Numba's cache: " in line, line


NOBODY = 65534  # the account of another user in these tests (root runs them as nobody)
as_root_only = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="a process of another account: only root can start one",
)


def _calls(kernel, *args):
    """``kernel(*args)`` in a task whose warnings are kept: (value, [warnings])."""
    said: list[str] = []
    with using(TaskContext(Budget(1 << 30, "test"), warnings=said.append)):
        return kernel(*args), said


def test_a_lock_file_is_readable_and_writable_by_its_owner_only_whatever_the_umask(
    tmp_path, monkeypatch
):
    """Made under umask 0, a kernel's lock file is mode 0600; one left more open (0644, as
    an older guesslab made it) is made 0600 when a compilation opens it."""
    kernels = _fresh_package(tmp_path, monkeypatch, "owned_kernels")
    older = Path(compile_once.lock_path(kernels.caller))
    older.parent.mkdir(parents=True, exist_ok=True)
    older.touch()
    older.chmod(0o644)
    umask = os.umask(0)
    try:
        assert kernels.caller(10) == 100
    finally:
        os.umask(umask)
    for kernel in (kernels.callee, kernels.caller):
        lock = Path(compile_once.lock_path(kernel))
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600, (lock, oct(lock.stat().st_mode))


def test_a_cached_kernel_is_loaded_while_another_process_holds_its_lock(tmp_path):
    """A process that finds the kernel in Numba's cache loads it without its lock: it ends
    while another process still holds the lock, having compiled nothing."""
    (first,) = _processes(tmp_path, ["caller,callee"], slow=0.0)
    assert first["caller"]["compiled"] == 1, first
    locks = sorted((tmp_path / "cache").rglob("*.lock"))
    assert len(locks) == 2, locks
    with held(locks[0]), held(locks[1]):
        (again,) = _processes(tmp_path, ["caller,callee"], slow=0.0)
        assert still_held(locks[0]) and still_held(locks[1])
    assert [again[k]["compiled"] for k in ("caller", "callee")] == [0, 0], again
    assert [again[k]["value"] for k in ("caller", "callee")] == [100, 15], again
    assert again["said"] == "", again["said"]


def test_a_wait_for_a_held_lock_is_said_with_its_holder_then_the_kernel_compiles_without_it(
    tmp_path, monkeypatch
):
    """A kernel the cache lacks, whose lock a process of this account holds: after
    SAY_AFTER seconds one line says what the wait is for and who holds the lock (its
    process id and command line); at WAIT_AT_MOST the kernel is compiled without the lock,
    said in a second line, while the other process still holds it."""
    monkeypatch.setattr(compile_lock, "SAY_AFTER", 0.2)
    monkeypatch.setattr(compile_lock, "WAIT_AT_MOST", 1.0)
    kernels = _fresh_package(tmp_path, monkeypatch, "awaited_kernels")
    lock = compile_once.lock_path(kernels.callee)
    with held(lock) as holder:
        value, said = _calls(kernels.callee, 7)
        assert still_held(lock)
    assert value == 15 and len(said) == 2, said
    assert said[0].startswith(
        f"waiting for the Numba kernel awaited_kernels.callee: process {holder.pid} ("
    ), said
    assert f"holds its compile lock {lock} (compiling it, once for this machine)" in said[0]
    assert said[1].startswith(
        "the Numba kernel awaited_kernels.callee is compiled without waiting for a lock: its "
        f"compile lock {lock} is still held after 1 s by process {holder.pid} ("
    ), said
    assert sum(kernels.callee.stats.cache_misses.values()) == 1


@as_root_only
def test_a_lock_held_by_another_account_is_not_waited_for(tmp_path, monkeypatch):
    """A process of another account holding a kernel's lock (opened while the file was
    0644) stalls nothing: one line names the holder and its account, and the kernel is
    compiled at once without the lock."""
    monkeypatch.setattr(compile_lock, "WAIT_AT_MOST", 600.0)
    kernels = _fresh_package(tmp_path, monkeypatch, "foreign_kernels")
    lock = compile_once.lock_path(kernels.callee)
    with held(lock, account=NOBODY) as holder:
        value, said = _calls(kernels.callee, 7)
        assert still_held(lock)
    assert value == 15 and len(said) == 1, said
    assert said[0].startswith(
        "the Numba kernel foreign_kernels.callee is compiled without waiting for a lock: its "
        f"compile lock {lock} is held by process {holder.pid} ("
    ), said
    assert said[0].endswith(f") of account nobody (uid {NOBODY})"), said


@as_root_only
def test_a_lock_file_of_another_account_is_not_used(tmp_path, monkeypatch):
    """A kernel's lock file that another account made (in a shared cache folder) is not
    used, whether that account can hold it or not: one line names the account and the
    kernel compiles without the lock."""
    kernels = _fresh_package(tmp_path, monkeypatch, "theirs_kernels")
    lock = Path(compile_once.lock_path(kernels.callee))
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.touch()
    os.chown(lock, NOBODY, NOBODY)
    value, said = _calls(kernels.callee, 7)
    assert value == 15 and said == [
        "the Numba kernel theirs_kernels.callee is compiled without waiting for a lock: its "
        f"compile lock {lock} is of account nobody (uid {NOBODY})"
    ]
    assert lock.stat().st_uid == NOBODY


def _damage(path: Path, how: str) -> None:
    """Damage the cache file ``path``: 14 bytes overwritten in its middle, or its seal cut
    off (as a file Numba alone, or an older guesslab, wrote)."""
    data = bytearray(path.read_bytes())
    if how == "overwritten":
        middle = len(data) // 2
        data[middle : middle + 14] = bytes(b ^ 0xFF for b in data[middle : middle + 14])
    else:
        del data[-checked_cache.SEAL_BYTES :]
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("suffix", [".1.nbc", ".nbi"])
def test_a_damaged_cache_file_is_set_aside_said_and_the_kernel_compiled_again(tmp_path, suffix):
    """14 bytes overwritten in a kernel's data file (or its index), in the cache of both
    kernels: the next process sets each one aside into the cache's quarantine/ with one
    line naming it, compiles the kernels again, computes what they computed, and writes
    them again, so the process after loads them without a word."""
    (first,) = _processes(tmp_path, ["caller,callee"], slow=0.0)
    cache = tmp_path / "cache"
    damaged = sorted(cache.rglob(f"*{suffix}"))
    assert len(damaged) == 2, sorted(cache.rglob("*"))
    for path in damaged:
        _damage(path, "overwritten")
    (again,) = _processes(tmp_path, ["caller,callee"], slow=0.0)
    assert [again[k]["compiled"] for k in ("caller", "callee")] == [1, 1], again
    assert [again[k]["value"] for k in ("caller", "callee")] == [100, 15], again
    lines = again["said"].splitlines()
    assert len(lines) == 2, lines
    for path in damaged:
        (line,) = [line for line in lines if f"Numba's cache file {path} is damaged" in line]
        aside = path.parent / "quarantine" / path.name
        assert line.endswith(f": set aside as {aside}; the kernel is compiled again"), line
        assert aside.read_bytes() != path.read_bytes()
        assert checked_cache.sealed(path)
    (third,) = _processes(tmp_path, ["caller,callee"], slow=0.0)
    assert [third[k]["loaded"] for k in ("caller", "callee")] == [1, 1], third
    assert third["said"] == ""


def test_a_cache_file_without_its_seal_is_compiled_again_without_a_word(tmp_path):
    """A data file with no seal (cut short, or written by Numba alone) is not loaded: the
    kernel is compiled again, computes what it computed, and is written again, sealed."""
    _processes(tmp_path, ["callee"], slow=0.0)
    (data,) = sorted((tmp_path / "cache").rglob("*.nbc"))
    _damage(data, "unsealed")
    assert not checked_cache.sealed(data)
    (again,) = _processes(tmp_path, ["callee"], slow=0.0)
    assert again["callee"]["compiled"] == 1 and again["callee"]["value"] == 15, again
    assert again["said"] == "" and checked_cache.sealed(data)


def test_a_damaged_cache_file_is_never_moved_through_a_linked_quarantine(tmp_path):
    """The cache's quarantine a symbolic link (to a folder elsewhere): a damaged file is not
    moved through it, nor read; the line says so, and the kernel is compiled again."""
    _processes(tmp_path, ["callee"], slow=0.0)
    (data,) = sorted((tmp_path / "cache").rglob("*.nbc"))
    _damage(data, "overwritten")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (data.parent / "quarantine").symlink_to(elsewhere)
    (again,) = _processes(tmp_path, ["callee"], slow=0.0)
    assert again["callee"]["compiled"] == 1 and again["callee"]["value"] == 15, again
    assert again["said"].strip() == (
        f"Numba's cache file {data} is damaged (its XXH3-128 checksum is not the one written "
        f"with it): not read (its quarantine {data.parent / 'quarantine'} is a symbolic link "
        f"(to {elsewhere})); the kernel is compiled again"
    )
    assert not list(elsewhere.iterdir()) and checked_cache.sealed(data)


MARKS = """
from solvers.kit.compile_once import njit


@njit(cache=True)
def mark(out):
    out[0] = 1.0
"""


class _CtrlCOnCompile(ev.Listener):
    """Ctrl-C, as a terminal sends it, as Numba begins a compilation."""

    def on_start(self, event):
        signal.raise_signal(signal.SIGINT)

    def on_end(self, event):
        pass


def test_ctrl_c_held_while_a_kernel_compiles_stops_it_before_its_first_run(tmp_path, monkeypatch):
    """Ctrl-C while a kernel compiles inside ctrl_c_held is raised as the compilation ends:
    the kernel, compiled and written to the cache, never runs."""
    package = tmp_path / "marking_kernels"
    package.mkdir()
    (package / "__init__.py").write_text(MARKS)
    monkeypatch.syspath_prepend(str(tmp_path))
    kernels = importlib.import_module("marking_kernels")
    out = np.zeros(1)
    with (
        ev.install_listener("numba:compile", _CtrlCOnCompile()),
        pytest.raises(KeyboardInterrupt),
        ctrl_c_held(),
    ):
        kernels.mark(out)
    assert out[0] == 0.0
    assert compile_once.is_compiled(kernels.mark)


def test_a_kernel_the_cache_cannot_take_is_kept_by_its_process_and_said_once(tmp_path, monkeypatch):
    """Numba's cache folder of a kernel that cannot be written (a file in its place, as an
    entry another account made in a shared cache folder would be): the kernel computes,
    kept by the process that compiled it, and one line says so, once."""
    kernels = _fresh_package(tmp_path, monkeypatch, "unwritten_kernels")
    folder = Path(kernels.callee.stats.cache_path)
    shutil.rmtree(folder)  # the package's __pycache__ (its .pyc too, where Python writes them)
    folder.write_text("not a folder")
    value, said = _calls(kernels.callee, 7)
    again, said_again = _calls(kernels.callee, 8)
    assert (value, again) == (15, 17) and said_again == [], said_again
    (line,) = said
    assert line == (
        "the Numba kernel unwritten_kernels.callee cannot be written to Numba's cache "
        f"({folder}: File exists): this process keeps what it compiled, and each process "
        "compiles it again"
    )


def test_a_folder_where_a_cache_file_belongs_is_set_aside(tmp_path, monkeypatch):
    """A folder in place of a kernel's index (Numba would raise IsADirectoryError out of
    the kernel's call): set aside, said in one line; the kernel compiles and is written."""
    kernels = _fresh_package(tmp_path, monkeypatch, "foldered_kernels")
    index = Path(f"{compile_once.cache_base(kernels.callee)}.nbi")
    index.mkdir(parents=True)
    value, said = _calls(kernels.callee, 7)
    aside = index.parent / "quarantine" / index.name
    assert value == 15 and said == [
        f"Numba's cache file {index} is a folder, where a cache file belongs: set aside as "
        f"{aside}; the kernel is compiled again"
    ]
    assert aside.is_dir() and checked_cache.sealed(index)


def test_a_fifo_where_a_cache_file_belongs_is_set_aside_unopened(tmp_path):
    """A FIFO in place of a kernel's data file (Numba would wait on it for ever): never
    opened for reading; set aside, said in one line, and the kernel compiled again."""
    _processes(tmp_path, ["callee"], slow=0.0)
    (data,) = sorted((tmp_path / "cache").rglob("*.nbc"))
    data.unlink()
    os.mkfifo(data)
    (again,) = _processes(tmp_path, ["callee"], slow=0.0)
    assert again["callee"]["compiled"] == 1 and again["callee"]["value"] == 15, again
    aside = data.parent / "quarantine" / data.name
    assert again["said"].strip() == (
        f"Numba's cache file {data} is a FIFO, where a cache file belongs: set aside as "
        f"{aside}; the kernel is compiled again"
    )
    assert stat.S_ISFIFO(aside.lstat().st_mode) and checked_cache.sealed(data)
