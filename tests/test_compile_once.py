"""Kernels compiled once per machine (solvers.kit.compile_once): processes sharing Numba's
cache compile a kernel once between them and load it after; a kernel loaded from the cache
computes what it computed when compiled; the locks of a caller and its callee never
deadlock; a slow compilation is said; ``stage=plan``'s line counts what the cache holds.

The kernels are tiny ones made for these tests in a temporary module (a compilation is
made slow on purpose, by a Numba compile-event listener, where two processes must meet)."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numba.core.event as ev
import pytest

from solvers.kit import compile_once
from solvers.kit.budget import Budget
from solvers.kit.current_task import using
from solvers.kit.task_context import TaskContext

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
    """What each process (one per order, all started at once on an empty NUMBA_CACHE_DIR
    shared by them) saw of the kernels it called."""
    folder = _module_folder(tmp_path)
    go = tmp_path / f"go-{len(list(tmp_path.glob('go-*')))}"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    outs = [tmp_path / f"{go.name}-{i}.json" for i in range(len(orders))]
    procs = [
        subprocess.Popen(
            [sys.executable, str(tmp_path / "touch.py"), str(folder), str(go), str(out)]
            + [str(slow), order],
            env=env,
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
    assert codes == [0] * len(procs), codes
    return [json.loads(out.read_text()) for out in outs]


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
