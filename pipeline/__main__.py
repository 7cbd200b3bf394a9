"""``python -m pipeline [study=NAME] [cluster=local|sync|address] [key=value ...]``.

A thin Hydra entry point around :func:`pipeline.run.run_study`.  Exit status: 0 when every
task succeeded, 1 when some task failed (their rows say why), 2 for a bad config (nothing
is written) or a store that cannot be written (finished files stay complete).

In a multirun (``-m``) a job that fails raises :class:`pipeline.launchers.JobFailed`
instead of exiting, because a job may run in another process (joblib), on a Dask worker or
on a Slurm node: every Hydra launcher hands the exception back, the driver runs every job
of the sweep and then exits with the status of the first failed job.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.errors import CompactHydraException
from hydra.types import RunMode
from omegaconf import DictConfig

from pipeline.launchers import JobFailed, check_launcher, is_multirun
from pipeline.run import run_study
from pipeline.store import StoreError
from pipeline.study import StudyError

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
CHOICE_GROUPS = ("study", "cluster", "paths")
_failed_tasks: list[int] = []


def group_options(group: str) -> list[str]:
    """Config names available in a conf/ group."""
    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def check_choices(argv: list[str]) -> None:
    """Refuse an unknown study/cluster/paths name on the command line, listing valid ones."""
    for arg in argv:
        key, sep, value = arg.lstrip("+~").partition("=")
        if not sep or key not in CHOICE_GROUPS:
            continue
        for choice in _sweep_values(value):
            if choice not in group_options(key):
                raise StudyError(
                    f"{key}={choice!r}: unknown {key}; valid: {', '.join(group_options(key))}"
                )


def _sweep_values(value: str) -> list[str]:
    if value.startswith(("choice(", "range(", "glob(")):
        return []  # Hydra's sweep functions: let Hydra resolve them
    return [v.strip() for v in value.split(",") if v.strip()]


@hydra.main(config_path="../conf", config_name="config", version_base="1.3")
def hydra_main(cfg: DictConfig) -> None:
    """Run one study (one job of a multirun) from the composed config."""
    multirun = HydraConfig.get().mode == RunMode.MULTIRUN
    try:
        report = run_study(cfg)
    except (StudyError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        if multirun:
            raise JobFailed(2, f"error: {exc}") from None
        sys.exit(2)
    if report.errors:
        message = (
            f"{report.errors} task(s) failed: see the rows with status 'error' "
            f"in {report.study_dir / 'results'}"
        )
        print(message, file=sys.stderr)
        if multirun:
            raise JobFailed(1, message)
        _failed_tasks.append(report.errors)


def main() -> None:
    """Console entry point: check group choices, run Hydra, exit 1 if any task failed."""
    try:
        check_choices(sys.argv[1:])
        check_launcher(sys.argv[1:])
    except StudyError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    if not is_multirun(sys.argv[1:]):
        hydra_main()
        if _failed_tasks:
            sys.exit(1)
        return
    status = run_multirun()
    if status:
        sys.exit(status)


def run_multirun() -> int:
    """Run Hydra's multirun; the exit status of the first failed job, or 0."""
    user_wants_traces = bool(os.environ.get("HYDRA_FULL_ERROR"))
    os.environ["HYDRA_FULL_ERROR"] = "1"  # let a job's JobFailed reach us instead of exit(1)
    try:
        hydra_main()
    except JobFailed as exc:  # every job ran; each failed one printed its reason
        print(f"multirun: a job failed ({exc})", file=sys.stderr)
        return exc.status
    except CompactHydraException as exc:  # Hydra's own config errors, as Hydra prints them
        if user_wants_traces:
            raise
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    main()
