"""Child processes started as a terminal starts them, so Ctrl-C reaches them as a user's."""

from __future__ import annotations

import os
import signal


def interruptible() -> None:
    """For ``preexec_fn``: Ctrl-C (SIGINT) reaches the child as at a terminal, however the
    tests were started: a shell runs background jobs with SIGINT ignored, an ignored signal
    stays ignored across exec, and Python then installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def as_a_terminal_job() -> None:
    """For ``preexec_fn``: :func:`interruptible`, in a process group of its own (as a
    terminal's foreground job, which Ctrl-C reaches whole)."""
    interruptible()
    os.setpgrp()
