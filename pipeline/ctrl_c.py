"""Ctrl-C while the command starts: one line, from the command's first moment.

The command imports Hydra, Dask, pandas, pyarrow and the solvers before it reads a config
(1-1.5 s, more on a busy machine).  Ctrl-C then interrupts whichever import is running, and
Python's default prints its traceback (27-61 lines).  :func:`starting` is installed before those
imports (by :func:`pipeline.command.cli` for ``guesslab``, at the top of
``pipeline/__main__.py`` for ``python -m pipeline``): until the command's own Ctrl-C handling
takes over (``pipeline.__main__.stop_on_first_ctrl_c``), Ctrl-C ends the process at once
with the one line and exit status 130.  Nothing is written before that point, so nothing is
left half done.

This module imports nothing but the standard library's ``os`` and ``signal``.
"""

from __future__ import annotations

import os
import signal
from typing import Any

NOTHING_STORED = "stopped (Ctrl-C) before any task finished; nothing was stored"


def stopped_while_starting(signum: int, frame: Any) -> None:
    """Ctrl-C while the command imports its modules: the one line, exit 130, no traceback.

    Written with ``os.write`` (a signal handler may run in the middle of another write to
    ``sys.stderr``) and ended with ``os._exit`` (an import interrupted half way leaves
    nothing worth cleaning up, and no file has been written yet)."""
    os.write(2, f"\n{NOTHING_STORED}\n".encode())
    os._exit(130)


def starting() -> None:
    """Ctrl-C ends the command with the one line until the command's own handler is set;
    left alone where Ctrl-C is not Python's default (a background job ignores it)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, stopped_while_starting)
