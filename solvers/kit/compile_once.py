"""Numba kernels compiled once per machine, not once per process.

:func:`njit` is :func:`numba.njit`; each kernel it makes with ``cache=True`` (every kernel of
``solvers/``) is looked up in Numba's cache first, without a lock, and loaded from it when it
is there.  Only a kernel the cache lacks is compiled, holding a lock of its own: an ``flock``
on ``<kernel>.lock`` beside the kernel's entry in Numba's cache folder
(:mod:`solvers.kit.compile_lock`, which says how a compilation waits for the lock, what it
says while it waits and why another account cannot stall it).  The first process to need a
kernel compiles it and writes it to the cache; another that needs it meanwhile (a second
Dask worker, a second pytest-xdist process) waits on the lock, then finds it in the cache and
loads it, instead of compiling it a second time.  Every file of the cache is sealed when
written and checked before it is read (:mod:`solvers.kit.checked_cache`): a damaged one is
set aside, said in one line, and the kernel compiled again.

The cache folder is Numba's, chosen as Numba chooses it, the same way in every process of a
machine that shares the environment: ``NUMBA_CACHE_DIR`` when set, else the ``__pycache__``
folder beside the kernel's source when it is writable, else a folder of the user's cache
(``~/.cache/numba``).  Nodes of a cluster that share the installation (or ``NUMBA_CACHE_DIR``)
on a shared file system share the cache, and the lock where the file system has locks (NFS
maps ``flock`` to its byte-range locks, served by the NFS server's lock manager); where it
has none the kernels compile unlocked, as Numba alone does.  Nodes that share no folder each
compile once.  A process that dies while compiling frees its locks (the kernel drops an
``flock`` with its holder's open file), so nothing waits on a killed worker.

A kernel compiled inside another (a callee the caller's compilation types) takes its own lock
while holding its caller's; the kernels' calls form no cycle, so a process holding a caller's
lock may wait for a callee's, never the other way round, and the locks cannot deadlock.
Every lock is taken under Numba's own compiler lock, so threads of one process take them one
at a time, and a kernel's lock taken again in its own process (a recursive kernel) is held,
not awaited.

A kernel called from another with constants (``_child(..., True, ...)``) is compiled for the
constants' types (``bool``, ``int64``), not for each constant: Numba types a constant as a
literal (``Literal[bool](True)``) and would compile the callee again for each combination of
constants its callers pass; the call converts the constant, as it converts any argument.
A kernel that cannot be typed without its literals (a heterogeneous tuple indexed by an
argument, ``numba.literally``) is compiled for them.

Ctrl-C or SIGTERM while a kernel compiles inside :func:`solvers.kit.compiled.ctrl_c_held`
(which holds them while compiled code runs) takes effect as the compilation ends, before the
kernel runs: Numba's compilation cannot be interrupted half way, but the kernel's first run
(a whole layer of the ranked solver) is not waited for.

A compilation that runs over :data:`SAY_AFTER` seconds is said (once per module and process)
as a warning of the task that runs it, on the terminal: which kernels, that it happens once
per machine, and when it ends how long it took.  :func:`compiled_line` says for
``stage=plan`` whether a family's kernels are compiled on this machine.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba.core import errors, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.dispatcher import Dispatcher
from numba.core.sigutils import normalize_signature

from solvers.kit import checked_cache
from solvers.kit.checked_cache import NotCached, sealed
from solvers.kit.compile_lock import machine_lock
from solvers.kit.compiled import stop_noted

# a line of a module that defines a kernel: a compiled decorator (``kernel = njit(...)``
# names the decorators of a few modules: ``@kernel``, ``@parallel_kernel``, ``@step``)
KERNEL_LINE = re.compile(r"^@(njit|\w*kernel|step)\b", re.MULTILINE)
SAY_AFTER = 2.0  # seconds of compiling before the terminal is told
KERNELS: list[Dispatcher] = []  # every cached kernel made by njit, in the order made
_SAID: set[str] = set()  # modules whose compiling was said in this process
_compiling = [0]  # depth of kernels compiling in this process (under the compiler lock)


def njit(*args: Any, **options: Any) -> Any:
    """:func:`numba.njit` whose ``cache=True`` kernels compile once per machine (called the
    same ways: ``@njit``, ``@njit(cache=True, ...)``, ``njit(cache=True)(f)``)."""
    made = numba.njit(*args, **options)
    if not options.get("cache"):
        return made
    if isinstance(made, Dispatcher):
        return compiled_once(made)
    return lambda func: compiled_once(made(func))


def read_only(a: np.ndarray) -> np.ndarray:
    """A view of ``a`` that kernels may only read.  Numba compiles a kernel once for
    read-only arrays and again for writable ones: an array a kernel only reads is passed
    read-only on every path (in memory as when mapped read-only from a file), so the kernel
    compiles once."""
    view = a.view()
    view.flags.writeable = False
    return view


def compiled_once(kernel: Any) -> Any:
    """``kernel`` (a cached Numba dispatcher) with each compilation under its lock; anything
    else (a plain function under ``NUMBA_DISABLE_JIT``) as it is."""
    if not isinstance(kernel, Dispatcher):
        return kernel
    compile_here = kernel.compile
    cached = checked_cache.install(kernel, _name(kernel))

    def compile(sig: Any) -> Any:
        with global_compiler_lock:
            args, returns = normalize_signature(sig)
            general = tuple(types.unliteral(a) for a in args)
            if general != tuple(args):
                try:  # the kernel for the literals' types serves the call
                    return compile(general if returns is None else returns(*general))
                except (errors.TypingError, errors.ForceLiteralArg):
                    pass  # a kernel that needs its literals (a tuple's index, ``literally``)
            if tuple(args) in kernel.overloads:
                return compile_here(sig)
            try:  # in the cache: loaded without the lock
                cached.probing = True
                return compile_here(sig)
            except NotCached:
                pass
            finally:
                cached.probing = False
            say = _task_warning()
            with machine_lock(lock_path(kernel), _name(kernel), say), said_if_slow(kernel):
                made = compile_here(sig)
            if stop_noted():  # Ctrl-C or SIGTERM held while it compiled: the kernel never runs
                raise KeyboardInterrupt
            return made

    kernel.compile = compile
    KERNELS.append(kernel)
    return kernel


def cache_base(kernel: Dispatcher) -> Path:
    """The kernel's entries in Numba's cache without their suffix (``<base>.nbi`` is its
    index), named as Numba names them."""
    func = kernel.py_func
    module = Path(func.__code__.co_filename).stem
    qualname = func.__qualname__.replace("<", "").replace(">", "")
    line = func.__code__.co_firstlineno
    python = f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    return Path(kernel.stats.cache_path) / f"{module}.{qualname}-{line}.{python}"


def lock_path(kernel: Dispatcher) -> str:
    """The kernel's lock file, beside its index in Numba's cache folder."""
    return f"{cache_base(kernel)}.lock"


@contextlib.contextmanager
def said_if_slow(kernel: Dispatcher) -> Iterator[None]:
    """The block (a kernel's compilation); when it is the outermost one of this process and
    runs over SAY_AFTER seconds, a warning line says so (once per module), and another says
    how long it took."""
    _compiling[0] += 1
    if _compiling[0] > 1 or kernel.py_func.__module__ in _SAID:
        try:
            yield
        finally:
            _compiling[0] -= 1
        return
    module = kernel.py_func.__module__
    warn = _task_warning()
    start = time.monotonic()
    timer = threading.Timer(SAY_AFTER, _say_start, (module, warn))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        _compiling[0] -= 1
        timer.cancel()
        timer.join()
    if module in _SAID:
        warn(f"compiled the kernels of {_short(module)} in {time.monotonic() - start:.0f} s")


def _say_start(module: str, warn: Callable[[str], None]) -> None:
    _SAID.add(module)
    warn(
        f"compiling the Numba kernels of {_short(module)} (first use on this machine; once "
        "compiled, every process of this machine loads them from Numba's cache)..."
    )


def _short(module: str) -> str:
    return module.removeprefix("solvers.")


def _name(kernel: Dispatcher) -> str:
    """The kernel's name in a line: ``card_guessing.uniform_deck.values.layer_values``."""
    return f"{_short(kernel.py_func.__module__)}.{kernel.py_func.__qualname__}"


def _task_warning() -> Callable[[str], None]:
    """``warn`` of the task running in this thread (its line reaches the pipeline's
    terminal), taken now: the line is said from a timer's thread."""
    from solvers.kit.task_context import current

    return current().warn


def is_compiled(kernel: Dispatcher) -> bool:
    """Whether Numba's cache on this machine holds the kernel: its index exists, is not
    older than the kernel's source file and matches its seal."""
    index = Path(f"{cache_base(kernel)}.nbi")
    try:
        fresh = index.stat().st_mtime >= os.stat(kernel.py_func.__code__.co_filename).st_mtime
    except OSError:
        return False
    return fresh and sealed(index)


def compiled_line(package: str) -> str | None:
    """``stage=plan``'s line on the kernels of ``package`` (a family's, e.g.
    ``solvers.high_low``; its modules are imported to find them): how many are compiled on
    this machine, and where Numba's cache is; None for a package without kernels."""
    _import_all(package)
    kernels = [k for k in KERNELS if f"{k.py_func.__module__}.".startswith(f"{package}.")]
    if not kernels:
        return None
    done = sum(is_compiled(k) for k in kernels)
    where = _cache_folder(kernels)
    if done == len(kernels):
        return f"  compiled kernels: all {done} of {_short(package)} on this machine ({where})"
    return (
        f"  compiled kernels: {done} of {len(kernels)} of {_short(package)} on this machine "
        f"({where}); the first run compiles those it uses, once per machine"
    )


def _import_all(package: str) -> None:
    """The modules of ``package`` that define kernels imported (a package of ``solvers``
    only, whose kernel modules import cleanly; a family's own package is left as it is).
    A module is read for a compiled decorator (``@njit``, ``@kernel``...) before it is
    imported: the others (summaries, plots) would cost the plan a second of imports."""
    module = sys.modules.get(package)
    if not package.startswith("solvers.") or not hasattr(module, "__path__"):
        return
    root = Path(module.__path__[0])
    for path in sorted(root.rglob("*.py")):
        if KERNEL_LINE.search(_text(path)):
            parts = path.relative_to(root).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            importlib.import_module(".".join((package, *parts)))


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def _cache_folder(kernels: list[Dispatcher]) -> str:
    """Where Numba's cache of ``kernels`` is: beside their sources, or one folder."""
    folders = {Path(k.stats.cache_path) for k in kernels}
    sources = {Path(k.py_func.__code__.co_filename).parent / "__pycache__" for k in kernels}
    if folders <= sources:
        return "Numba's cache: __pycache__ beside the sources"
    return f"Numba's cache: {os.path.commonpath(sorted(folders))}"
