"""One run of a study as its stages see it, built and checked before any work.

:func:`prepared` makes the :class:`StudyRun` every stage of :mod:`pipeline.run` is handed:
the config as given (plain) and checked (typed, :mod:`pipeline.config`), the study's plan
(:mod:`pipeline.study`), the cluster backend, chosen and checked (:mod:`pipeline.backends`),
the study folder's path (:mod:`pipeline.study_folder`) and the :class:`StudyReport` the
stages fill in.  A config that cannot run is refused here, before anything is written; a
multirun checks every job with it (:mod:`pipeline.sweep_check`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.backends import Backend, backend_of
from pipeline.backends.base import Workers, quiet_dask_logs
from pipeline.config import Config, checked_config, plain
from pipeline.needs import budgeted
from pipeline.study import Plan, planned
from pipeline.study_folder import check_path, study_dir

if TYPE_CHECKING:
    from pipeline.backends.given_client import ClientBackend


@dataclass
class StudyReport:
    """What a run did: counts of tasks and rows, where the study lives."""

    study: str
    study_dir: Path
    planned: int = 0
    skipped: int = 0
    computed: int = 0
    errors: int = 0
    rows_written: int = 0
    files: list[Path] = field(default_factory=list)
    summary: Path | None = None
    run_record: Path | None = None  # this run's runs/<time>.yaml, once written
    stage: str | None = None  # the stage under way: "run", then "summary"

    def line(self) -> str:
        """One line for the terminal."""
        return (
            f"study {self.study}: {self.planned} tasks, {self.skipped} already stored, "
            f"{self.computed} computed, {self.errors} failed; store {self.study_dir / 'results'}"
        )


@dataclass
class StudyRun:
    """One run of a study, built once by :func:`prepared` and handed to each stage."""

    given: dict[str, Any]  # the config as given, plain: the run's record, every file's metadata
    conf: Config  # the same, checked and typed
    plan: Plan  # every task of the study (the store not read)
    backend: Backend | ClientBackend  # the cluster backend, checked
    report: StudyReport  # what the run has done so far; study_dir is the study folder
    log: Callable[[str], None] = print

    @property
    def folder(self) -> Path:
        return self.report.study_dir

    @property
    def results(self) -> Path:
        """The study's store."""
        return self.folder / "results"

    @property
    def outputs(self) -> Any:
        """``paths.outputs`` as given (messages quote it so)."""
        return self.given["paths"]["outputs"]

    @functools.cached_property
    def workers(self) -> Workers:
        """The backend's workers (asked once), ``run.memory_budget`` over their budget."""
        return budgeted(self.backend.workers(), self.conf.run.memory_budget)


def prepared(
    cfg: Mapping[str, Any], log: Callable[[str], None] = print, client: Any = None
) -> StudyRun:
    """The run of ``cfg``; StudyError (naming the key and the value) for a config that cannot
    run, before anything is written (a multirun checks every job with it).  With ``client``
    (a Dask client the caller keeps), the tasks run on its workers, the config's cluster
    section unused (:class:`~pipeline.backends.given_client.ClientBackend`)."""
    given = plain(cfg)
    conf = checked_config(given)
    folder = study_dir(given)
    check_path(given["paths"]["outputs"], folder)
    quiet_dask_logs()
    plan = planned(conf.study)
    backend = backend_of(conf.cluster, client)
    backend.check()
    report = StudyReport(study=conf.study.name, study_dir=folder, planned=plan.n_tasks)
    return StudyRun(given, conf, plan, backend, report, log)
