"""Ctrl-C (or SIGTERM) while the command starts: one line, from the command's first moment.

The command imports Hydra, Dask, pandas, pyarrow and the solvers before it reads a config
(1-1.5 s, more on a busy machine).  Ctrl-C then interrupts whichever import is running, and
Python's default prints its traceback (27-61 lines); SIGTERM ends the process with no word.
:func:`starting` is installed before those imports (by :func:`pipeline.command.cli` for
``guesslab``, by ``pipeline/__init__.py`` when Python runs ``python -m pipeline``, before it
reads ``pipeline/__main__.py``): until the command's own handling takes over
(``pipeline.__main__.stop_on_first_ctrl_c``), Ctrl-C ends the process at once with the one
line and exit status 130 (SIGTERM: 143).  Nothing is written before that point, so nothing
is left half done.

This module imports nothing but the standard library's ``os``, ``signal`` and ``sys``.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

STOPS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}  # what stops the command


def stop_name(signum: int | None) -> str:
    """How the one line names what stopped the command: "Ctrl-C" or "SIGTERM"."""
    return STOPS.get(signum, "Ctrl-C")  # type: ignore[call-overload]


def exit_status(signum: int | None) -> int:
    """The exit status of a command stopped by ``signum``: 128 + its number (130, 143)."""
    return 128 + int(signum or signal.SIGINT)


def nothing_written(signum: int | None = signal.SIGINT) -> str:
    """The one line of a stop before the command wrote anything."""
    return f"stopped ({stop_name(signum)}) while starting; nothing was written"


NOTHING_WRITTEN = nothing_written()


def stopped_while_starting(signum: int, frame: Any) -> None:
    """Ctrl-C or SIGTERM while the command imports its modules: the one line, exit 130 or
    143, no traceback.

    Written with ``os.write`` (a signal handler may run in the middle of another write to
    ``sys.stderr``) and ended with ``os._exit`` (an import interrupted half way leaves
    nothing worth cleaning up, and no file has been written yet)."""
    os.write(2, f"\n{nothing_written(signum)}\n".encode())
    os._exit(exit_status(signum))


def starting() -> None:
    """Ctrl-C and SIGTERM end the command with the one line until the command's own handler
    is set; each left alone where it is not Python's default (a background job ignores
    Ctrl-C)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, stopped_while_starting)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, stopped_while_starting)


def run_as_command(orig_argv: list[str] | None = None) -> bool:
    """Whether this process is ``python -m pipeline`` (Python's own options before ``-m``)."""
    argv = sys.orig_argv if orig_argv is None else orig_argv
    i = 1
    while i < len(argv) and argv[i].startswith("-") and not argv[i].startswith("-c"):
        if argv[i] == "-m":
            return argv[i + 1 : i + 2] == ["pipeline"]
        if argv[i].startswith("-m"):
            return argv[i][2:] == "pipeline"
        i += 2 if argv[i] in ("-X", "-W") else 1  # an option and its value
    return False  # a script, -c's code, the interactive prompt
