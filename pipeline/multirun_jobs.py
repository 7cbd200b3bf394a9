"""What a multirun's jobs carry to the command that launched them, whichever process they
run in (the command's own, a joblib worker, a Dask worker, a Slurm node): a job's failure
(:class:`JobFailed`) and the command line the job belongs to (:func:`remember_command`,
:func:`user_command`).
"""

from __future__ import annotations

import os
import sys


class JobFailed(Exception):
    """A multirun job that failed: raised by the job, so every Hydra launcher reports it.

    Hydra's launchers catch a job's exception into its JobReturn and the sweeper re-raises
    the first one in the driver once every job of the batch has run; ``status`` is the exit
    status the driver passes on (1: failed tasks, 2: a bad config or an unwritable store).
    The class lives in an importable module so that it unpickles as itself in the driver.
    """

    def __init__(self, status: int, message: str):
        super().__init__(status, message)
        self.status = status
        self.message = message

    def __str__(self) -> str:
        return self.message


COMMAND_ENV = "GUESSLAB_COMMAND"  # "<pid> <command line>" of the command a job belongs to


def remember_command() -> None:
    """Note this command's line in the environment, for the processes its multirun's jobs
    run in (a joblib launcher's loky workers, a dask launcher's workers) to name it: a job's
    own command line is its worker's (``python -m joblib.externals.loky...``)."""
    os.environ[COMMAND_ENV] = f"{os.getpid()} {' '.join(sys.orig_argv)}"


def user_command() -> str | None:
    """The command line of the command this process runs a job of, when it runs in another
    process (None in the command's own process, or outside any)."""
    pid, _, command = os.environ.get(COMMAND_ENV, "").partition(" ")
    if not command.strip() or pid == str(os.getpid()):
        return None
    return command
