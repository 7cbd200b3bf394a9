"""Ctrl-C and SIGTERM: how the command stops, from its first moment to its last.

**While the command starts.** The command imports Hydra, Dask, pandas, pyarrow and the
solvers before it reads a config (1-1.5 s, more on a busy machine). Ctrl-C then interrupts
whichever import is running, and Python's default prints its traceback (27-61 lines);
SIGTERM ends the process with no word. :func:`starting` is installed before those imports
(by :func:`pipeline.command.cli` for ``guesslab``, by ``pipeline/__init__.py`` when Python
runs ``python -m pipeline``, before it reads ``pipeline/__main__.py``): until the command's
own handling takes over (:func:`stop_on_first_ctrl_c`), Ctrl-C ends the process at once with
the one line and exit status 130 (SIGTERM: 143). Nothing is written before that point, so
nothing is left half done.  For ``python -m pipeline`` the first lines of
``pipeline/__init__.py`` hold both stops (with the interpreter's built-in ``_signal``) while
Python reads this module and the modules it imports, a millisecond or so; a stop held then
ends the command as soon as :func:`starting` is set.

**While it runs.** :func:`stop_on_first_ctrl_c`: the first Ctrl-C or SIGTERM raises
KeyboardInterrupt and is remembered (:func:`stopped_by`); every later one is ignored.  A stop
leaves :func:`pipeline.run.run_study` as one :class:`RunStopped` carrying the run's report,
from which the command's one line says what is stored (:mod:`pipeline.cli.exit_lines`).

This module imports nothing but the standard library's ``os``, ``signal``, ``sys``,
``threading``, ``typing`` and ``collections.abc``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
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


def starting(held: Any = None, caught: Sequence[int] = ()) -> None:
    """Ctrl-C and SIGTERM end the command with the one line until the command's own handler
    is set; each left alone where it is not Python's default (a background job ignores
    Ctrl-C).  ``held``: the handler ``pipeline/__init__.py`` set while it read this module,
    taken as the default; ``caught``: the stops it held meanwhile, the first of which ends
    the command now."""
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    for stop, default in defaults.items():
        handler = signal.getsignal(stop)
        if handler == default or (held is not None and handler is held):
            signal.signal(stop, stopped_while_starting)
    if caught:
        stopped_while_starting(caught[0], None)


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


class RunStopped(KeyboardInterrupt):
    """A run stopped by Ctrl-C or SIGTERM, with its report (None: stopped before the run was
    prepared): what it stored, in which stage, in which study folder."""

    def __init__(self, report: Any):
        super().__init__(report)
        self.report = report


class SearchStopped(KeyboardInterrupt):
    """A search (pipeline.search) stopped by Ctrl-C or SIGTERM: its one line says what is
    stored and how to go on."""

    def __init__(self, line: str):
        super().__init__(line)
        self.line = line


_stopped_by: int | None = None  # the signal that stopped this command, once one did


def stopped_by() -> int | None:
    """The signal (SIGINT, SIGTERM) that stopped the command, or None: no stop yet, or a
    KeyboardInterrupt of Python's own (the command's handler is not set)."""
    return _stopped_by


def stopping() -> bool:
    """Whether the command's stop is under way in this process: its first Ctrl-C or SIGTERM
    came and every later one is set aside (:func:`stop_on_first_ctrl_c`); not once Python's
    own handler is back (a command run inside a test that goes on)."""
    return _stopped_by is not None and signal.getsignal(_stopped_by) == signal.SIG_IGN


def is_stop(exc: BaseException) -> bool:
    """Whether ``exc`` stands for a stop: a KeyboardInterrupt, or an error raised after the
    command's Ctrl-C, which a library may raise in its place (DuckDB's "RuntimeError: Query
    interrupted" in the summary's counts, "ImportError: initialization failed" from an
    extension module whose import it interrupted)."""
    return isinstance(exc, KeyboardInterrupt) or (
        isinstance(exc, Exception) and _stopped_by is not None
    )


def stop_on_first_ctrl_c() -> None:
    """The command's Ctrl-C: the first raises KeyboardInterrupt (the run closes its cluster
    and says in one line what is stored); every later one is ignored, so a second Ctrl-C
    while the cluster closes neither interrupts the closing with tracebacks (273 lines) nor
    kills the process at exit.  The workers of a LocalCluster ignore Ctrl-C themselves
    (pipeline.backends.worker_setup).  Left alone where Ctrl-C is not Python's default (a
    background job ignores it).  SIGTERM (a scheduler's kill, ``timeout``) is handled the
    same way, where it is the default (the line then names SIGTERM, exit status 143).

    A Ctrl-C whose KeyboardInterrupt is raised inside a finalizer (a weakref callback or a
    ``__del__`` the collector runs; the summary stage makes many) cannot stop the code the
    finalizer interrupted: Python would print "Exception ignored in ..." and its traceback,
    and the run would go on to exit 0 with every later Ctrl-C ignored.  Such a
    KeyboardInterrupt is not printed; the Ctrl-C is delivered again 5 ms later
    (``sys.unraisablehook``)."""
    global _stopped_by
    _stopped_by = None
    handled = False
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, stopped_while_starting):
        signal.signal(signal.SIGTERM, _first_stop)  # a scheduler's kill, timeout: as Ctrl-C
        handled = True
    if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, stopped_while_starting):
        signal.signal(signal.SIGINT, _first_stop)
        handled = True
    if handled:
        sys.unraisablehook = _raised_again(sys.unraisablehook)


def _raised_again(others: Any) -> Any:
    """The unraisable hook that delivers again a Ctrl-C a finalizer swallowed (``others``:
    the hook for everything else)."""

    def raised_again(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            others(unraisable)
            return
        stop = _stopped_by or signal.SIGINT
        signal.signal(stop, _first_stop)
        # Ctrl-C again, a moment after this hook has returned: first() then runs in the main
        # thread's own code (run here, it would be raised in this hook, and lost again); the
        # thread sends it only once told the hook is done with it (on a loaded machine a
        # thread may take longer to start than the moment it waits)
        started = threading.Event()

        def again() -> None:
            started.wait(1.0)
            time.sleep(0.005)
            os.kill(os.getpid(), stop)

        threading.Thread(target=again, daemon=True).start()
        started.set()

    return raised_again


def _first_stop(signum: int, frame: Any) -> None:
    """The first Ctrl-C or SIGTERM: KeyboardInterrupt; every later one of either is ignored.

    Raised by Python's own handler, called here, rather than by a ``raise`` statement: a
    KeyboardInterrupt whose innermost frame stops at a ``raise`` is one that code raised
    itself (a strategy of one's own), an error of that code, not a stop
    (:func:`solvers.kit.interrupts.raised_by_code`)."""
    global _stopped_by
    for stop in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(stop) is _first_stop:
            signal.signal(stop, signal.SIG_IGN)
    _stopped_by = signum
    signal.default_int_handler(signum, frame)  # raises KeyboardInterrupt
