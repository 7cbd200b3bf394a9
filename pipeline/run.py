"""A run of a study: prepared once, then its stages, each handed the one run.

1. :func:`prepared` makes the :class:`StudyRun`: the config as given (plain) and checked
   (typed, :mod:`pipeline.config`), the study's plan (:mod:`pipeline.running.plan`), the cluster
   backend, chosen and checked (:mod:`pipeline.backends`), the study folder's path
   (:mod:`pipeline.storage.study_folder`) and the :class:`StudyReport` the stages fill in.  A config
   that cannot run is refused here, before anything is written; a multirun checks every job
   with it (:mod:`pipeline.cli.sweep_check`).
2. ``stage=plan`` (:func:`plan_text`): the tasks left against the store, their needs against
   the budget (:mod:`pipeline.running.needs`); nothing written.
3. ``stage=run`` (:func:`run_tasks`): the needs checked; under the study's lock the store
   tidied (:mod:`pipeline.storage.store`), the tasks left to run found and claimed (refused if
   another live run computes one: :mod:`pipeline.running.claims`); the backend opened, the tasks cut
   into batches on its executor, each batch's files stored as it comes
   (:mod:`pipeline.running.driver`).
4. ``stage=summary`` (:func:`summarize`): the store compacted, ``summary.md`` written with the
   report and the index (:mod:`pipeline.outputs.summary`); its first table ends the run's lines
   (:mod:`pipeline.outputs.headline`; not with ``run.quiet``).

:func:`run_study` is a plain function of the config Hydra composed; notebooks call it too.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.backends import Backend, backend_of
from pipeline.backends.base import Workers, quiet_dask_logs
from pipeline.config import Config, checked_config, plain
from pipeline.ctrl_c import RunStopped, is_stop
from pipeline.errors import StudyError
from pipeline.long_task_setup import LongTaskSetup
from pipeline.running import claims, driver
from pipeline.running.needs import Needed, budgeted, check_needs, shared_keys
from pipeline.running.plan import StudyPlan, planned
from pipeline.running.progress import shown
from pipeline.running.run_estimate import RunTime, of_plan
from pipeline.storage.study_folder import StudyFolder
from solvers.kit.words import counted


def run_study(cfg: Mapping[str, Any], *, log=print, client: Any = None) -> StudyReport:
    """Run the configured study end to end and return its report; with ``client`` (a Dask
    client the caller started and keeps), its tasks run on that client's workers.

    Raises StudyError (naming the config key and value) before anything is written, and
    RunStopped, carrying the report, on a stop (:func:`pipeline.ctrl_c.is_stop`)."""
    run = None
    try:
        run = prepared(cfg, log, client)
        _run_stages(run)
    except BaseException as exc:
        if is_stop(exc):  # what the command's one line on a stop says was stored
            raise RunStopped(run.report if run else None) from exc
        raise
    return run.report


def _run_stages(run: StudyRun) -> None:
    stage = run.conf.stage
    run.folder.check_safe()  # no link out of the study folder, no FIFO in it
    if stage in ("all", "summary"):
        run.folder.check_summary_target(stored_only=stage == "summary")
    if stage == "plan":
        run.log(plan_text(run))
        return
    if warning := run.backend.exposure_warning():
        print(f"warning: {warning}", file=sys.stderr)
    if stage in ("all", "run"):
        run_tasks(run)
    if stage in ("all", "summary"):
        summarize(run)


# --------------------------------------------------------------------------- the run, prepared once


@dataclass
class StudyReport:
    """What a run did: counts of tasks and rows, the study's folder."""

    study: str
    folder: StudyFolder
    planned: int = 0
    skipped: int = 0
    computed: int = 0
    errors: int = 0
    rows_written: int = 0
    files: list[Path] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)  # the first error rows (failed_tasks)
    summary: Path | None = None
    run_record: Path | None = None  # this run's runs/<time>.yaml, once written
    stage: str | None = None  # the stage under way: "run", then "summary"

    def line(self) -> str:
        """One line for the terminal."""
        return (
            f"study {self.study}: {counted(self.planned, 'task')}, {self.skipped:,} already "
            f"stored, {self.computed:,} computed, {self.errors:,} failed; store "
            f"{self.folder.results}"
        )


@dataclass
class StudyRun:
    """One run of a study, built once by :func:`prepared` and handed to each stage."""

    given: dict[str, Any]  # the config as given, plain: the run's record, every file's metadata
    conf: Config  # the same, checked and typed
    plan: StudyPlan  # every task of the study (the store not read)
    backend: Backend  # where the tasks execute (the cluster's, or the caller's client's), checked
    folder: StudyFolder  # the study's folder: its layout, checks, locks and store
    report: StudyReport  # what the run has done so far
    log: Callable[[str], None] = print
    search: dict[str, Any] | None = None  # a search's batch: its name and the tasks' trials
    # solver seconds a task, measured by an earlier run of tasks of the same kinds (a
    # search's batch before) and by this one once it ran: its batches are sized from it
    per_task: float | None = None

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
    folder = StudyFolder.of(given)
    folder.check_path()
    quiet_dask_logs()
    plan = planned(conf.study)
    backend = backend_of(conf.cluster, client)
    backend.check()
    report = StudyReport(study=conf.study.name, folder=folder, planned=plan.n_tasks)
    return StudyRun(given, conf, plan, backend, folder, report, log)


# --------------------------------------------------------------------------------------- its stages


def plan_text(run: StudyRun) -> str:
    """What ``stage=plan`` prints: tasks, how many are stored, the solver time, and (a family
    with ``needs``) a table of the tasks left with their needs against where the run
    executes; StudyError, after the table is logged, when one does not fit here."""
    left, needed = _tasks_left(run, refuse=False)
    _, estimate = estimated_run(run, left, needed)
    run_line = estimate.line() if estimate is not None and len(left) else None
    lines = [*left.described(needed.shared_cpu, run_line), *needed.table(), *needed.lines()]
    lines.append("  nothing was run or written (stage=plan)")
    if needed.shortage is not None:
        run.log("\n".join(lines))
        raise StudyError(needed.shortage)
    return "\n".join(lines)


def estimated_run(
    run: StudyRun, left: StudyPlan | None = None, needed: Needed | None = None
) -> tuple[int, RunTime | None]:
    """(the tasks ``left`` to run (by default, those left against the store), the run-time
    estimate of running them (:mod:`pipeline.running.run_estimate`) on the workers the needs were
    checked against, or those the backend answers: None where the family has no model, or
    the backend cannot say what its workers are (a scheduler that does not answer))."""
    if left is None or needed is None:
        left, needed = _tasks_left(run, refuse=False)
    try:
        workers = needed.where if needed.where is not None else run.workers
    except StudyError:
        return len(left), None
    return len(left), of_plan(left, needed.shared_cpu, workers, run.conf.cluster)


def _tasks_left(run: StudyRun, recompute: bool = False, refuse: bool = True):
    """The tasks left to run against the store (read only) and the family's needs of them
    against the budget and the free disk: StudyError for one over either, or (``refuse``
    False) kept in the needs' rows; a family without needs is asked nothing."""
    left = run.plan.left_to_run(run.folder.stored_ids(), recompute=recompute)
    if run.plan.fam.scheduling.needs is None:
        return left, Needed()
    return left, check_needs(left, run.workers, run.folder, refuse)


def long_task_setup(run: StudyRun) -> LongTaskSetup:
    """The tasks' long-task context (budget, workers, checkpoints, progress) once the needs
    of the tasks left were checked; when the free disk holds the checkpoints of only a few
    of them at once, they run that many at a time (one line says so)."""
    workers = run.workers
    needed = Needed()
    if run.plan.fam.scheduling.needs is not None:  # the store is read for needs only
        _, needed = _tasks_left(run, recompute=run.conf.store.recompute)
    size = run.conf.run.batch_size
    if needed.at_once is not None and size != "auto" and size > needed.at_once:
        raise StudyError(
            f"run.batch_size={size}: a batch keeps its tasks' checkpoints until its rows "
            f"are stored, and the free disk under {run.folder} holds those of "
            f"{needed.at_once} of these tasks at once; set run.batch_size=auto (or at most "
            f"{needed.at_once})"
        )
    if (line := needed.at_once_line()) is not None:
        run.log(line.strip())
    progress = shown(run.conf.run.progress)
    return LongTaskSetup(
        workers.budget, workers.count, run.folder.path, progress, needed.at_once, needed.shared
    )


def run_tasks(run: StudyRun) -> None:
    """``stage=run``: the tasks left to run computed and stored; a run stopped or failed
    before it stored anything leaves nothing behind (no run record, no folder it made)."""
    run.report.stage = "run"
    setup = long_task_setup(run)  # refuses a need over the budget
    new_root = run.folder.check_results_target()  # refused: nothing made is left
    try:
        _run_in_store(run, setup)
    except BaseException:
        record = run.report.run_record
        if not run.report.files:  # nothing stored: nothing is left
            if record is not None:
                record.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    record.parent.rmdir()  # runs/, if this run made it
            if new_root is not None:
                run.folder.remove_if_untouched(new_root)
        raise


def _run_in_store(run: StudyRun, setup: LongTaskSetup) -> None:
    folder = run.folder
    # parallel multirun jobs may share the store: see pipeline.storage.study_folder and
    # pipeline.running.claims
    with folder.running(folder.remove_temporaries):
        with folder.locked():
            # listed before compacting: compact reads each of these files (and maybe more)
            before = set(folder.result_files())
            stored = folder.tidied(run.log)  # foreign files quarantined, the store compacted
            left = run.plan.left_to_run(stored, recompute=run.conf.store.recompute)
            claim = claims.claim(run, left, stored)  # refused: another live run computes one
        with claim:
            run.report.skipped = left.stored
            run.log(
                f"study {run.report.study}: {counted(left.n_tasks, 'task')}, "
                f"{left.stored:,} already stored"
            )
            if not len(left):
                return
            driver.compute(run, left, setup)
            needed: set[str] = set()
            if setup.shared:  # the shared pieces the tasks still to run need (store read)
                needed = shared_keys(run.plan.left_to_run(folder.stored_ids()))
            folder.checkpoints.tidy(setup.shared, needed, run.log)
        with folder.locked():  # a rerun task's rows supersede its stored ones
            if left.supersedes or folder.written_by_others(before, run.report.files):
                folder.compact()
        run.log(run.report.line())


def summarize(run: StudyRun) -> None:
    """``stage=summary``: the store compacted if a task is in two files, then the summary."""
    run.report.stage = "summary"  # from here on the store is whole, whatever stops the command
    from pipeline.outputs.summary import write_summary

    with run.folder.locked():  # parallel jobs: the last sees all rows
        counts = run.folder.counts()
        if counts.superseded:  # a run killed between storing a rerun task and compacting
            run.folder.compact()  # replaces files whole
            run.log(
                f"store: {counted(counts.superseded, 'superseded row')} dropped (tasks stored "
                "again later)"
            )
            counts = run.folder.counts()
        run.report.summary = write_summary(run.folder, run.conf.study.plain(), counts=counts)
    run.log(f"summary: {run.report.summary}")
    if not run.conf.run.quiet:  # the answer: the summary's first table, as it wrote it
        from pipeline.outputs.headline import headline_lines

        if lines := headline_lines(run.report.summary.read_text(encoding="utf-8")):
            run.log("\n".join(["", *lines]))
