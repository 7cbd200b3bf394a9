"""Hydra multirun launchers guesslab knows, and a check that the chosen one is installed.

``python -m pipeline -m ... hydra/launcher=NAME``: Hydra itself only says it cannot find
the config group option; this check names the package to install (or Slurm to start).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Sequence

from pipeline.config import StudyError

# launcher name -> (plugin module, what to install)
LAUNCHERS: dict[str, tuple[str | None, str]] = {
    "basic": (None, "hydra-core"),
    "joblib": ("hydra_plugins.hydra_joblib_launcher", "pip install hydra-joblib-launcher"),
    "submitit_local": (
        "hydra_plugins.hydra_submitit_launcher",
        "pip install hydra-submitit-launcher",
    ),
    "submitit_slurm": (
        "hydra_plugins.hydra_submitit_launcher",
        "pip install hydra-submitit-launcher",
    ),
    "dask": (
        "hydra_plugins.guesslab_dask_launcher",
        "pip install -e . in the guesslab checkout (the plugin ships with guesslab)",
    ),
}
NEEDS_SLURM = ("submitit_slurm",)


def chosen_launchers(argv: Sequence[str]) -> list[str]:
    """The launcher names chosen with hydra/launcher=NAME on the command line."""
    out = []
    for arg in argv:
        key, sep, value = arg.lstrip("+~").partition("=")
        if sep and key == "hydra/launcher":
            out.append(value.strip())
    return out


def check_launcher(argv: Sequence[str]) -> None:
    """Refuse an unknown or uninstalled launcher (or Slurm's without Slurm) before any work."""
    for name in chosen_launchers(argv):
        if name not in LAUNCHERS:
            raise StudyError(
                f"hydra/launcher={name!r}: unknown launcher; valid: {', '.join(LAUNCHERS)}"
            )
        module, install = LAUNCHERS[name]
        if module is not None and not _importable(module):
            raise StudyError(
                f"hydra/launcher={name}: the launcher plugin is not installed; {install}"
            )
        if name in NEEDS_SLURM and shutil.which("sbatch") is None:
            raise StudyError(
                f"hydra/launcher={name}: Slurm is not available here (no sbatch on PATH); "
                "run on a Slurm login node or start Slurm (scripts/slurm_setup.sh sets up a "
                "single-node one), or use hydra/launcher=joblib"
            )


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


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


def is_multirun(argv: Sequence[str]) -> bool:
    """Whether the command line asks Hydra for a multirun (-m / --multirun)."""
    return any(arg in ("-m", "--multirun") for arg in argv)
