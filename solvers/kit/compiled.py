"""Calls of compiled (Numba) kernels that Ctrl-C cannot break.

A compiled kernel calls back into Python now and then (``numba.core.serialize.
_numba_unpickle``, for a constant it needs at run time).  Ctrl-C's Python handler runs at the
first Python line it reaches, so a KeyboardInterrupt raised there leaves the compiled code
with an error it does not expect: the call ends in ``SystemError: ... returned a result with
an exception set`` (half of the Ctrl-Cs that land in a 6 x 4 ranked solve), or the process
dies of a segmentation fault (about 1 in 6 on ``cluster=sync``), before any line is said.

Inside :func:`ctrl_c_held`, Ctrl-C and SIGTERM are only noted; the first one noted is handed
to its own handler as the block ends (the command's: the run stops with its one line).  The
compiled code itself cannot be interrupted anyway: Ctrl-C takes effect as the kernel returns,
at the end of the layer or chunk it computes.  Code inside the block that runs no compiled
code asks :func:`stop_noted`: a wait for another process's compilation of a kernel
(:mod:`solvers.kit.compile_lock`) ends at once, and a kernel compiled on its first call stops
as its compilation ends, before it runs (:mod:`solvers.kit.compile_once`).  The ranked
solver's kernels (``solvers/card_guessing/uniform_deck``) call back; high/low's layer kernel
does not (``solvers/high_low/float_layers/layer.py``: none seen over a solve, in memory or on
disk).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

HELD = (signal.SIGINT, signal.SIGTERM)
_NOTED: list[list[int]] = []  # the signals noted by each ctrl_c_held block open (main thread)


@contextlib.contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) and SIGTERM noted during the block and handed to their Python
    handlers when it ends; nothing changes outside the main thread (where Python runs no
    signal handler) or for a signal without a Python handler (ignored, or the default)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handlers: dict[int, Any] = {}
    noted: list[int] = []

    def note(signum: int, frame: Any) -> None:
        noted.append(signum)

    for signum in HELD:
        handler = signal.getsignal(signum)
        if callable(handler):
            handlers[signum] = handler
            signal.signal(signum, note)
    _NOTED.append(noted)
    try:
        yield
    finally:
        _NOTED.remove(noted)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        if noted:
            handlers[noted[0]](noted[0], None)


def stop_noted() -> bool:
    """Whether a Ctrl-C or SIGTERM was noted by a :func:`ctrl_c_held` block still open: code
    that only waits inside it (a kernel's compile lock, :mod:`solvers.kit.compile_lock`) and
    runs no compiled code asks, and ends its wait with KeyboardInterrupt, which the block
    hands to the command's handler as it ends."""
    return any(_NOTED)
