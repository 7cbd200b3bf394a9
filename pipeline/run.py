"""Run a study: one :class:`~pipeline.study_run.StudyRun` built from the config, then its
stages, each handed the run.

1. :func:`~pipeline.study_run.prepared`: the config checked and typed, the study's plan, the
   cluster backend chosen and checked, the study folder's path; nothing written.
2. ``stage=plan`` (:func:`plan_text`): the tasks left against the store, their needs against
   the budget (:mod:`pipeline.needs`); nothing written.
3. ``stage=run`` (:func:`run_tasks`): the needs checked; under the study's lock the store
   tidied (:mod:`pipeline.store`), the tasks left to run found and claimed (refused if another
   live run computes one: :mod:`pipeline.claims`); the backend opened, the tasks cut into
   batches on its workers (:mod:`pipeline.batches`), each batch's files stored as it comes.
4. ``stage=summary`` (:func:`summarise`): the store compacted, ``summary.md`` written with the
   report and the index (:mod:`pipeline.summary`).

:func:`run_study` is a plain function of the config Hydra composed; notebooks call it too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pipeline import claims, locking, store
from pipeline.batches import BatchCutter, DoneBatch, finished_batches
from pipeline.config import StudyError
from pipeline.needs import Needed, check_needs, shared_keys
from pipeline.progress import ProgressBars, progress_shown, shown, tasks_bar
from pipeline.provenance import run_metadata, save_run_config
from pipeline.staging import remove_stale
from pipeline.study import Plan
from pipeline.study_folder import check_results_target, check_safe, check_summary_target
from pipeline.study_run import StudyReport, StudyRun, prepared
from pipeline.task_context import LongTaskSetup, clear_checkpoints, tidy_checkpoints
from solvers.registry import get_family


def run_study(cfg: Mapping[str, Any], *, log=print) -> StudyReport:
    """Run the configured study end to end and return its report.

    Raises StudyError (naming the config key and value) before anything is written.
    """
    run = prepared(cfg, log)
    stage = run.conf.stage
    check_safe(run.outputs, run.folder)  # no link out of the study folder, no FIFO in it
    if stage in ("all", "summary"):
        check_summary_target(run.outputs, run.folder, stored_only=stage == "summary")
    if stage == "plan":
        log(plan_text(run))
        return run.report
    warning = run.backend.exposure_warning()
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    try:
        if stage in ("all", "run"):
            run_tasks(run)
        if stage in ("all", "summary"):
            summarise(run)
    except BaseException as exc:
        _attach(exc, run.report)  # what the command's one line on Ctrl-C says was stored
        raise
    return run.report


def plan_text(run: StudyRun) -> str:
    """What ``stage=plan`` prints: tasks, how many are stored, the solver time, and (a family
    with ``needs``) a table of the tasks left with their needs against where the run
    executes; StudyError, after the table is logged, when one does not fit here."""
    left, needed = _tasks_left(run, refuse=False)
    lines = [*left.described(needed.shared_cpu), *needed.table(), *needed.lines()]
    lines.append("  nothing was run or written (stage=plan)")
    if needed.shortage is not None:
        run.log("\n".join(lines))
        raise StudyError(needed.shortage)
    return "\n".join(lines)


def _tasks_left(run: StudyRun, recompute: bool = False, refuse: bool = True):
    """The tasks left to run against the store (read only) and the family's needs of them
    against the budget and the free disk: StudyError for one over either, or (``refuse``
    False) kept in the needs' rows; a family without needs is asked nothing."""
    left = run.plan.left_to_run(store.stored_ids(run.results), recompute=recompute)
    if get_family(run.plan.family).needs is None:
        return left, Needed()
    return left, check_needs(left, run.workers, run.folder, refuse)


def long_task_setup(run: StudyRun) -> LongTaskSetup:
    """The tasks' long-task context (budget, workers, checkpoints, progress) once the needs
    of the tasks left were checked; when the free disk holds the checkpoints of only a few
    of them at once, they run that many at a time (one line says so)."""
    workers = run.workers
    needed = Needed()
    if get_family(run.plan.family).needs is not None:  # the store is read for needs only
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
        workers.budget, workers.count, run.folder, progress, needed.at_once, needed.shared
    )


def run_tasks(run: StudyRun) -> None:
    """``stage=run``: the tasks left to run computed and stored; a run stopped or failed
    before it stored anything leaves nothing behind (no run record, no folder it made)."""
    run.report.stage = "run"
    setup = long_task_setup(run)  # refuses a need over the budget
    new_root = locking.first_missing(run.folder)
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
                locking.remove_if_untouched(new_root)
        raise


def _run_in_store(run: StudyRun, setup: LongTaskSetup) -> None:
    check_results_target(run.outputs, run.folder)
    # parallel multirun jobs may share the store: see pipeline.locking and pipeline.claims
    with locking.running(run.folder, lambda: store.remove_temporaries(run.results)):
        with locking.study_lock(run.folder):
            # listed before compacting: compact reads each of these files (and maybe more)
            before = set(store.result_files(run.results))
            stored = _tidy_store(run)
            left = run.plan.left_to_run(stored, recompute=run.conf.store.recompute)
            claim = claims.claim(run, left, stored)  # refused: another live run computes one
        with claim:
            run.report.skipped = left.stored
            run.log(f"study {run.report.study}: {left.n_tasks} tasks, {left.stored} already stored")
            if not len(left):
                return
            _compute(run, left, setup)
            after = run.plan.left_to_run(store.stored_ids(run.results))  # shared pieces needed
            tidy_checkpoints(run.folder, setup.shared, shared_keys(after), run.log)
        with locking.study_lock(run.folder):  # a rerun task's rows supersede its stored ones
            if left.supersedes or _written_by_others(run.results, before, run.report.files):
                store.compact(run.results)
        run.log(run.report.line())


def _tidy_store(run: StudyRun) -> store.StoredIds:
    """Foreign files quarantined, the store compacted, stale staging removed; the ids stored."""
    remove_stale(run.folder)
    for path, reason in store.quarantine_bad_files(run.results, run.folder / "quarantine"):
        run.log(f"warning: {path} is not a guesslab results file ({reason}); moved to quarantine/")
    return store.compact(run.results)


def _compute(run: StudyRun, left: Plan, setup: LongTaskSetup) -> None:
    """The tasks ``left`` to run, in batches on the backend's workers; each finished batch's
    files stored as it comes back."""
    metadata = store.metadata_bytes(run_metadata(run.given))
    settings = run.conf.run
    with run.backend.open() as runner:
        run.report.run_record = save_run_config(run.given, run.folder)  # the cluster answered
        runner.log_file = run.report.run_record.with_suffix(".log")  # detail spared the terminal
        run.log(f"running {len(left)} tasks on {runner.description}")
        cutter = BatchCutter(left, runner.n_workers, settings, setup.at_once)
        bars = ProgressBars(setup.progress, run.log)  # running long tasks, below the tasks bar
        setup.sink = bars.show  # tasks run here (cluster=sync); on workers: worker events
        setup.warnings = bars.say
        timeout = settings.task_timeout_s
        with tasks_bar(len(left), settings.progress) as bar, progress_shown(runner, bars):
            for done in finished_batches(
                runner, cutter, run.report.study, timeout, metadata, setup
            ):
                _stored(run, done, bars.say)
                cutter.observe(done.seconds, done.n_tasks)
                bar.update(done.n_tasks)


def _stored(run: StudyRun, done: DoneBatch, say: Callable[[str], None]) -> None:
    """A finished batch's files written to the store, its tasks' checkpoints cleared (what
    was set aside in them kept, a line to ``say`` each)."""
    report = run.report
    try:
        report.files += store.write_encoded(run.results, done.files)
    except store.StoreError as exc:
        raise store.StoreError(write_failed(run, exc)) from exc
    clear_checkpoints(run.folder, done.checkpointed, say)  # their rows are stored
    report.rows_written += done.n_rows
    report.computed += done.n_tasks
    report.errors += done.n_errors


def write_failed(run: StudyRun, exc: store.StoreError) -> str:
    """The one line for a batch the store could not write (a full disk, say): where, why,
    that the stored results are intact (files written whole), that the same command resumes."""
    code = getattr(exc.__cause__, "errno", None)
    why = os.strerror(code) if code else str(exc)
    free = "free some space, then " if code in DISK_FULL else ""
    report = run.report
    return (
        f"paths.outputs={run.outputs!r}: cannot write results to {exc.folder or run.results} "
        f"({why}); the stored results are intact (no partial file is left; "
        f"{report.computed} task(s) of this run stored, {report.skipped} stored before): "
        f"{free}run the same command again to resume (stored tasks are skipped)"
    )


DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # more space would let the write pass


def _written_by_others(results: Path, stored: set[Path], ours: list[Path]) -> bool:
    """Whether results files appeared during this run that it did not write (another job of
    a parallel multirun sharing the store): they may hold tasks this run wrote too."""
    return bool(set(store.result_files(results)) - stored - set(ours))


def summarise(run: StudyRun) -> None:
    """``stage=summary``: the store compacted if a task is in two files, then the summary."""
    run.report.stage = "summary"  # from here on the store is whole, whatever stops the command
    from pipeline.summary import write_summary

    with locking.study_lock(run.folder):  # parallel jobs: the last sees all rows
        counts = store.store_counts(run.results)
        if counts.superseded:  # a run killed between storing a rerun task and compacting
            store.compact(run.results)  # replaces files whole
            run.log(
                f"store: {counts.superseded} superseded row(s) dropped (tasks stored again later)"
            )
            counts = store.store_counts(run.results)
        run.report.summary = write_summary(run.folder, run.conf.study.plain(), counts=counts)
    run.log(f"summary: {run.report.summary}")


def _attach(exc: BaseException, report: StudyReport) -> None:
    """``report`` as ``exc.report``, for the one line on Ctrl-C (pipeline.__main__)."""
    with contextlib.suppress(AttributeError, TypeError):
        exc.report = report  # type: ignore[attr-defined]
