"""``python -m pipeline [study=NAME] [cluster=local|sync|address] [key=value ...]``.

The command: the command line checked (:mod:`pipeline.cli.preflight`), then ``@hydra.main`` over
:func:`pipeline.run.run_study`.  Exit status: 0 when every task succeeded, 1 when some task
failed (their rows say why), 2 for a bad config (nothing is written) or a store that cannot
be written (finished files stay complete), 130 when stopped by Ctrl-C and 143 by SIGTERM
(one line says what is stored: :mod:`pipeline.cli.exit_lines`).

In a multirun (``-m``) a job that fails raises :class:`pipeline.multirun_jobs.JobFailed`
instead of exiting, because a job may run in another process (joblib), on a Dask worker or
on a Slurm node: every Hydra launcher hands the exception back, the driver runs every job
of the sweep and then exits with the status of the first failed job.
"""

from __future__ import annotations

if __name__ == "__main__":  # python pipeline/__main__.py: Ctrl-C is one line while modules import
    from pipeline.ctrl_c import starting

    starting()

import os
import sys
from typing import NoReturn

import hydra
import yaml
from hydra.core.hydra_config import HydraConfig
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException

from pipeline.cli import exit_lines
from pipeline.cli.preflight import check_command_line
from pipeline.cli.run_dir import RunDirRefused, make_wanted
from pipeline.cli.sweep_check import SweepRefused
from pipeline.config import store_cluster_kinds
from pipeline.ctrl_c import exit_status, stop_on_first_ctrl_c, stopped_by
from pipeline.errors import StoreError, StudyError
from pipeline.heap import frozen_for_exit
from pipeline.multirun_jobs import JobFailed, remember_command
from pipeline.run import run_study


@hydra.main(config_path="pkg://pipeline.conf", config_name="config", version_base="1.3")
def hydra_main(cfg: DictConfig) -> None:
    """Run one study (one job of a multirun) from the composed config."""
    lines_as_said()
    try:
        report = run_study(cfg)
    except (StudyError, StoreError, OmegaConfBaseException, OSError) as exc:
        refused = isinstance(exc, OSError) and not isinstance(exc, StoreError)
        if refused and exc.errno not in exit_lines.NO_ROOM:
            raise
        job_failed(2, f"error: {exit_lines.abbreviated(exit_lines.job_error(cfg, exc))}")
    if cfg.stage != "plan" and (unmade := make_wanted()) is not None:
        job_failed(2, f"error: {unmade}")
    if report.errors:  # each of the first few failed tasks, then how many more
        job_failed(1, "\n".join(exit_lines.failed_tasks_lines(report)))


def job_failed(status: int, message: str) -> NoReturn:
    """``message`` said; a job of a multirun raises JobFailed (its launcher hands it back to
    the command), one run exits with ``status``."""
    print(message, file=sys.stderr)
    if HydraConfig.get().mode == RunMode.MULTIRUN:
        raise JobFailed(status, message) from None
    sys.exit(status)


def main() -> None:
    """The command: its command line checked, then Hydra's run or multirun."""
    argv = sys.argv[1:]
    try:
        store_cluster_kinds()  # one's own backends' kinds, chosen as cluster=KIND
        check_command_line(argv)
        run_hydra(argv)
    except StudyError as exc:  # the command line refused: nothing read or written
        exit_with(2, exc)
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM: the one line, exit 130 (143)
        print(f"\n{exit_lines.stop_line(exc, stopped_by(), argv)}", file=sys.stderr)
        sys.exit(exit_status(stopped_by()))


def exit_with(status: int, error: BaseException | str) -> NoReturn:
    """The error line of ``error``; exit ``status``."""
    print(f"error: {exit_lines.abbreviated(str(error))}", file=sys.stderr)
    sys.exit(status)


def run_hydra(argv: list[str]) -> None:
    """Run Hydra (one run or a multirun); exit with the documented status.

    Hydra's own config errors (an unknown key without ``+``, an override it cannot parse, a
    study file that is not YAML) are config errors like any other: one line, exit 2.  With
    HYDRA_FULL_ERROR=1 (set here) Hydra raises its errors, and a multirun job's JobFailed
    reaches here, instead of Hydra's exit(1); a user's HYDRA_FULL_ERROR=1 asks for its traces.
    """
    given = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        hydra_main()
    except (HydraException, OmegaConfBaseException, yaml.YAMLError) as exc:
        if given == "1":
            raise
        exit_with(2, exit_lines.hydra_error_line(exc))
    except TypeError:  # Hydra deletes with a key's text: a list's item raises TypeError
        deleted = exit_lines.list_item_deleted(argv)
        if deleted is None or given == "1":
            raise
        exit_with(2, deleted)
    except (SweepRefused, RunDirRefused) as exc:  # refused before Hydra made any folder
        exit_with(2, exc)
    except JobFailed as exc:  # every job ran; each failed one printed its reason
        first = str(exc).splitlines()[0].rstrip(":") if str(exc) else ""
        print(f"multirun: a job failed ({first})", file=sys.stderr)
        sys.exit(exc.status)
    finally:
        if given is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = given


def lines_as_said() -> None:
    """The run's lines written out as each is said, into a pipe or a file too (``| tee``, a
    Slurm job's output file): there Python buffers standard output by blocks, and a run that
    says it waits (a task whose checkpoints another computation holds) would say nothing
    until it ends.  In every process that runs a study (a multirun job's too)."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)  # not on a test's capture
    if reconfigure is not None:
        reconfigure(line_buffering=True)


def cli() -> None:
    """The ``guesslab`` command (and ``python -m pipeline``): :func:`main` in a process that
    ends with it, so the interpreter's last collection is skipped (:mod:`pipeline.heap`:
    0.2-0.5 s of every command's exit)."""
    stop_on_first_ctrl_c()
    remember_command()  # the command a multirun job in another process names
    try:
        main()
    finally:
        frozen_for_exit()


if __name__ == "__main__":
    cli()
