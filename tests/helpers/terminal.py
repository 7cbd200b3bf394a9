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


def screen_lines(written: str) -> list[str]:
    """The lines a terminal shows for ``written`` (text with carriage returns): a carriage
    return moves back to the line's start, and what follows overwrites it character by
    character; trailing blanks are dropped."""
    lines = []
    for raw in written.split("\n"):
        line: list[str] = []
        at = 0
        for char in raw:
            if char == "\r":
                at = 0
                continue
            if at < len(line):
                line[at] = char
            else:
                line.append(char)
            at += 1
        lines.append("".join(line).rstrip())
    return lines
