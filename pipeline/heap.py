"""The driver's heap and Python's cycle collector.

A full collection walks every container object the process holds.  The driver holds many
(~155,000 that the collector tracks once Hydra, Dask, pandas, pyarrow, Numba and the solvers
are imported, counted with ``gc.get_objects``), and most of them live as long as the
process, so the collector's walks over them find nothing:

- while large modules import, they make objects by the hundred thousand and set off
  collections that walk everything made so far: ``distributed`` and ``pandas`` imported in
  0.41 s with the collector paused against 0.50-0.52 s with it on (three runs each);
- when the interpreter exits it collects once more over the whole heap: 0.24-0.32 s for a
  process that imported ``distributed`` and ``pandas``, 0.03 s with the heap frozen first
  (``python -c``, measured from the last line printed to the shell seeing the exit).

Measured on the 2-core VM of benchmarks/bench_load.py (docs/faults-and-load.md).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cycle collector paused for the block (as it was before, after it).

    For blocks that make many long-lived objects and no cycles to speak of: imports,
    planning.  Objects made meanwhile are collected as usual afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def frozen_for_exit() -> None:
    """Freeze the heap so that the interpreter's last collection has nothing to walk.

    Call it only when the process is about to end (the console command does, after its
    run): frozen objects are never collected, and a process that goes on would keep
    whatever garbage it held.  What the exit still does: ``atexit`` handlers (logging
    flushes and closes its files there), and objects freed by reference counting as the
    modules are torn down.  What it skips: finalizers of objects left in reference
    cycles; guesslab writes and closes every file before its run returns (atomic writes in
    ``with`` blocks), so none is left to one.
    """
    gc.freeze()
