"""Run a study: check the config, plan tasks, skip stored ones, fan out, store, summarise.

:func:`run_study` is a plain function of a config mapping (what ``python -m pipeline``
passes after Hydra composed it); tests and notebooks call it directly.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from pipeline import locking, store
from pipeline.backends import Backend
from pipeline.backends.base import quiet_dask_logs
from pipeline.batches import BatchCutter, finished_batches
from pipeline.config import Config, _short, checked_config
from pipeline.needs import at_once_text, budgeted, check_needs, needs_text
from pipeline.progress import ProgressBars, progress_shown, shown, tasks_bar
from pipeline.safe_paths import (
    INDEX_NAME,
    UnsafePath,
    check_study_folder,
    ensure_dir,
    kind,
    open_regular,
    path_length_problem,
)
from pipeline.staging import remove_stale
from pipeline.study import Plan, StudyError, planned
from pipeline.task_context import LongTaskSetup, clear_checkpoints, remove_empty_checkpoints
from solvers.registry import get_family

PACKAGES = ("guesslab", "dask", "distributed", "pyarrow", "pandas", "numpy", "hydra-core")


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


def study_dir(cfg: Mapping[str, Any]) -> Path:
    """The folder of the configured study: <paths.outputs>/<study.name>."""
    return Path(str(cfg["paths"]["outputs"])).expanduser().resolve() / str(cfg["study"]["name"])


def run_study(cfg: Mapping[str, Any], *, log=print) -> StudyReport:
    """Run the configured study end to end and return its report.

    Raises StudyError (naming the config key and value) before anything is written.
    """
    cfg = _plain(cfg)
    conf, tasks, backend = preflight(cfg)
    study = conf.study.plain()
    report = StudyReport(study=study["name"], study_dir=study_dir(cfg), planned=tasks.n_tasks)
    results = report.study_dir / "results"
    try:  # never a link out of the study folder, nor a FIFO that would hang a reader
        check_study_folder(report.study_dir)
    except UnsafePath as exc:
        raise StudyError(f"paths.outputs={cfg['paths']['outputs']!r}: {exc}") from None
    if conf.stage in ("all", "summary"):
        check_summary_target(cfg, report.study_dir, stored_only=conf.stage == "summary")
    if conf.stage == "plan":
        log(plan_text(tasks, results, conf, backend))
        return report
    warning = backend.exposure_warning()
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    try:
        _run_stages(cfg, conf, tasks, report, study, log, backend)
    except BaseException as exc:
        _attach(exc, report)  # what the command's one line on Ctrl-C says was stored
        raise
    return report


def _run_stages(cfg, conf: Config, tasks: Plan, report: StudyReport, study, log, backend) -> None:
    """The run (``stage=all|run``), then the summary (``stage=all|summary``)."""
    results = report.study_dir / "results"
    if conf.stage in ("all", "run"):
        report.stage = "run"
        setup = long_task_setup(conf, tasks, report.study_dir, backend, log)  # needs checked
        _run_tasks(cfg, conf, tasks, results, report, log, setup, backend)
    if conf.stage in ("all", "summary"):
        report.stage = "summary"  # from here on the store is whole, whatever stops the command
        from pipeline.summary import write_summary

        with locking.study_lock(report.study_dir):  # parallel jobs: the last sees all rows
            counts = _compacted(results, log)  # compaction replaces files whole
            report.summary = write_summary(report.study_dir, study, counts=counts)
        log(f"summary: {report.summary}")


def _attach(exc: BaseException, report: StudyReport) -> None:
    """``report`` as ``exc.report``: what the command's one line on Ctrl-C says was stored
    (a library may raise an error of its own for a Ctrl-C: pipeline.__main__)."""
    with contextlib.suppress(AttributeError, TypeError):
        exc.report = report  # type: ignore[attr-defined]


def _compacted(results: Path, log) -> store.StoreCounts:
    """The store's counts for the summary, after compacting it if a task is in two files (a
    run killed between storing a rerun task and compacting); the caller holds the lock."""
    counts = store.store_counts(results)
    if counts.superseded:
        store.compact(results)
        log(f"store: {counts.superseded} superseded row(s) dropped (tasks stored again later)")
        counts = store.store_counts(results)
    return counts


def stored_counts(results: Path) -> tuple[int, int] | None:
    """(tasks, ok tasks) the store holds (what ``stage=plan`` counts), or None when it
    cannot be read."""
    try:
        stored = store.stored_ids(results)
    except Exception:  # noqa: BLE001 - a count for a message, never a new error
        return None
    return len(stored.every), len(stored.ok)


def preflight(cfg: Mapping[str, Any]) -> tuple[Config, Plan, Backend]:
    """The checked config, the study's plan and the checked backend; StudyError (naming the
    key) for a config that cannot run, before anything is written (a multirun checks every
    job with it)."""
    cfg = _plain(cfg)
    conf = checked_config(cfg)
    problem = path_length_problem(study_dir(cfg))
    if problem is not None:
        raise StudyError(f"paths.outputs={_short(cfg['paths']['outputs'])}: {problem}")
    quiet_dask_logs()
    tasks = planned(conf.study)
    backend = Backend(conf.cluster)
    backend.check()
    return conf, tasks, backend


def check_summary_target(cfg: Mapping[str, Any], where: Path, stored_only: bool) -> None:
    """Refuse, before any work, a summary that could not be written: ``<paths.outputs>/
    index.html`` a folder (the index goes there); with ``stored_only`` (``stage=summary``)
    also a study with no stored results (a misspelled name would get an empty summary, or
    overwrite a folder of the user's) and a study folder or paths.outputs that cannot be
    written.  Nothing is made or written."""
    outputs = cfg["paths"]["outputs"]
    index = where.parent / INDEX_NAME
    if kind(index) == "folder":
        raise StudyError(
            f"paths.outputs={outputs!r}: {index} is a folder, where every summary writes the "
            "index of the studies in paths.outputs; move it away (a study's folder: rename it)"
        )
    if not stored_only:
        return
    if not store.result_files(where / "results"):
        from pipeline.index import study_dirs

        names = [p.name for p in study_dirs(where.parent)]
        more = f" and {len(names) - 10} more" if len(names) > 10 else ""
        held = ", ".join(names[:10]) + more if names else "none"
        raise StudyError(
            f"study.name={where.name!r}: no results are stored in {where}, so stage=summary "
            f"has nothing to summarise and wrote nothing; studies with results in "
            f"paths.outputs={outputs!r}: {held}"
        )
    _check_writable(cfg, where, "the summary")
    _check_writable(cfg, where.parent, "the index of its studies")


def long_task_setup(
    conf: Config, tasks: Plan, where: Path, backend: Backend, log=print
) -> LongTaskSetup:
    """The tasks' long-task context (budget, workers, checkpoints, progress), after the
    family's needs of the tasks left to run were checked against the budget (StudyError
    when one is over: before any work); when the free disk holds the checkpoints of only a
    few of them at once, they run that many at a time (one line says so)."""
    place = budgeted(backend.workers(), conf.run.memory_budget)
    at_once = None
    if get_family(tasks.family).needs is not None:
        stored = store.stored_ids(where / "results")
        tasks.against_store(stored.ok, stored.every, recompute=conf.store.recompute)
        needed = check_needs(tasks, place, where)
        at_once = needed.at_once
        size = conf.run.batch_size
        if at_once is not None and size != "auto" and size > at_once:
            raise StudyError(
                f"run.batch_size={size}: a batch keeps its tasks' checkpoints until its rows "
                f"are stored, and the free disk under {where} holds those of {at_once} of "
                f"these tasks at once; set run.batch_size=auto (or at most {at_once})"
            )
        line = at_once_text(needed, where, place.serial)
        if line is not None:
            log(line.strip())
    progress = shown(conf.run.progress)
    return LongTaskSetup(place.budget, place.count, where, progress, at_once=at_once)


def plan_text(
    tasks: Plan, results: Path, conf: Config | None = None, backend: Backend | None = None
) -> str:
    """What ``stage=plan`` prints: tasks, how many are stored, the solver time to expect,
    and (given ``conf``, for a family with ``needs``) the largest task's memory and disk
    against the budget; StudyError for a task over it."""
    stored = store.stored_ids(results)
    tasks.against_store(stored.ok, stored.every)
    needs: list[str] = []
    if conf is not None and backend is not None and get_family(tasks.family).needs is not None:
        place = budgeted(backend.workers(), conf.run.memory_budget)
        needed = check_needs(tasks, place, results.parent)
        needs = needs_text(needed, place)
        line = at_once_text(needed, results.parent, place.serial)
        if line is not None:
            needs.append(line)
    lines = [
        f"study {tasks.name}: {tasks.n_tasks:,} tasks ({_counted(tasks.parts, 'grid')}"
        + (f", {_counted(len(tasks.strategies), 'strategy')}" if tasks.strategies else "")
        + f"), {tasks.stored:,} already stored, {len(tasks):,} to run",
    ]
    if tasks.repeated:
        lines.append(f"  ({tasks.repeated:,} grid points repeat an earlier task and run once)")
    if not len(tasks):
        lines.append("  solver time: none, every task is stored")
    elif (estimate := tasks.estimated_seconds()) is None:
        family = tasks.family
        lines.append(f"  solver time: no estimate (family {family} has no model for these tasks)")
    else:
        seconds, sampled = estimate
        lines.append(
            f"  solver time: about {_duration(seconds)} for the tasks to run (the family's "
            f"estimate, from {sampled:,} sampled tasks)"
        )
    lines += needs
    lines.append("  nothing was run or written (stage=plan)")
    return "\n".join(lines)


def _counted(n: int, noun: str) -> str:
    """``1 grid``, ``3 grids``, ``2 strategies``."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") else f"{n} {noun}s"


def _duration(seconds: float) -> str:
    """A time span for people: 42 s, 3.5 min, 2.1 h, 4.0 days."""
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"


def _run_tasks(
    cfg, conf: Config, tasks, results: Path, report: StudyReport, log, setup, backend
) -> None:
    new_root = locking.first_missing(report.study_dir)
    try:
        _run_tasks_in(cfg, conf, tasks, results, report, log, setup, backend)
    except BaseException:
        if not report.files:  # stopped or failed before storing anything: nothing is left
            if report.run_record is not None:  # no record of a run that stored nothing
                report.run_record.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    report.run_record.parent.rmdir()  # runs/, if this run made it
            if new_root is not None:
                locking.remove_if_untouched(new_root)
        raise


def _run_tasks_in(
    cfg, conf: Config, tasks, results: Path, report: StudyReport, log, setup, backend
):
    _check_writable(cfg, report.study_dir)
    if results.exists() and not results.is_dir():
        raise StudyError(
            f"paths.outputs={cfg['paths']['outputs']!r}: {results} is a file, not the results "
            "folder; move it away (or choose another paths.outputs)"
        )
    # other jobs of a parallel multirun may share this store: temporaries are deleted only
    # when no other job is computing, and upkeep and summaries take turns
    with locking.running(report.study_dir, lambda: store.remove_temporaries(results)):
        with locking.study_lock(report.study_dir):
            # listed before compacting: compact reads each of these files (and maybe more)
            stored = set(store.result_files(results))
            done = _tidy_store(results, report.study_dir, log)
        _run_todo(cfg, conf, tasks, results, report, log, done, stored, setup, backend)


def _tidy_store(results: Path, where: Path, log) -> store.StoredIds:
    """Quarantine foreign files, upgrade old-layout ones, compact, remove the staging folders
    of summaries killed mid-write; the ids stored."""
    remove_stale(where)
    for path, reason in store.quarantine_bad_files(results, where / "quarantine"):
        log(f"warning: {path} is not a guesslab results file ({reason}); moved to quarantine/")
    store.upgrade_files(results)
    return store.compact(results)


def _run_todo(
    cfg, conf: Config, tasks: Plan, results, report: StudyReport, log, done, stored, setup, backend
) -> None:
    # rows this run writes supersede stored ones only if it reruns a stored task
    supersedes = tasks.against_store(done.ok, done.every, recompute=conf.store.recompute)
    report.skipped = tasks.stored
    log(f"study {report.study}: {tasks.n_tasks} tasks, {report.skipped} already stored")
    if not len(tasks):
        return
    metadata = store.metadata_bytes(run_metadata(cfg))
    run_cfg = conf.run
    with backend.open() as runner:
        report.run_record = _save_run_config(cfg, report.study_dir)  # the cluster answered
        runner.log_file = report.run_record.with_suffix(".log")  # detail spared the terminal
        log(f"running {len(tasks)} tasks on {runner.description}")
        cutter = BatchCutter(tasks, runner.n_workers, run_cfg, setup.at_once)
        bars = ProgressBars(setup.progress, log)  # running long tasks, below the tasks bar
        setup.sink = bars.show  # tasks run here (cluster=sync); on workers: worker events
        setup.warnings = bars.say
        with tasks_bar(len(tasks), run_cfg.progress) as bar, progress_shown(runner, bars):
            batches = finished_batches(
                runner, cutter, report.study, run_cfg.task_timeout_s, metadata, setup
            )
            for finished in batches:
                try:
                    report.files += store.write_encoded(results, finished.files)
                except store.StoreError as exc:
                    raise store.StoreError(write_failed(cfg, exc, report)) from exc
                clear_checkpoints(report.study_dir, finished.checkpointed)  # rows are stored
                report.rows_written += finished.n_rows
                report.computed += finished.n_tasks
                report.errors += finished.n_errors
                cutter.observe(finished.seconds, finished.n_tasks)
                bar.update(finished.n_tasks)
    remove_empty_checkpoints(report.study_dir)
    with locking.study_lock(report.study_dir):
        if supersedes or _written_by_others(results, stored, report.files):
            store.compact(results)
    log(report.line())


def write_failed(cfg: Mapping[str, Any], exc: store.StoreError, report: StudyReport) -> str:
    """The one line for a batch the store could not write (a full disk, say): where, why,
    that what is stored is intact (each results file is written whole or not at all) and
    that the same command resumes."""
    code = getattr(exc.__cause__, "errno", None)
    why = os.strerror(code) if code else str(exc)
    free = "free some space, then " if code in DISK_FULL else ""
    return (
        f"paths.outputs={cfg['paths']['outputs']!r}: cannot write results to "
        f"{exc.folder or report.study_dir / 'results'} ({why}); the stored results are "
        f"intact (no partial file is left; {report.computed} task(s) of this run stored, "
        f"{report.skipped} stored before): {free}run the same command again to resume "
        "(stored tasks are skipped)"
    )


DISK_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # more space would let the write pass


def _written_by_others(results: Path, stored: set[Path], ours: list[Path]) -> bool:
    """Whether results files appeared during this run that it did not write (another job of
    a parallel multirun sharing the store): they may hold tasks this run wrote too."""
    return bool(set(store.result_files(results)) - stored - set(ours))


def _check_writable(cfg: Mapping[str, Any], where: Path, what: str = "results") -> None:
    """Refuse, before any work, an output folder that cannot be written."""
    try:
        where.mkdir(parents=True, exist_ok=True)
        probe = where / f".write-probe-{os.getpid()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        os.close(os.open(probe, flags, 0o600))
        probe.unlink()
    except OSError as exc:
        raise StudyError(
            f"paths.outputs={cfg['paths']['outputs']!r}: cannot write {what} under {where} "
            f"({exc.strerror or exc})"
        ) from None


def _save_run_config(cfg: Mapping[str, Any], where: Path) -> Path:
    """Keep the resolved config of this run under <study>/runs/ (provenance); its path."""
    import yaml

    runs = ensure_dir(where / "runs", below=where)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H-%M-%S-%fZ")
    path = runs / f"{stamp}.yaml"
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        with open(fd, "w") as fh:
            fh.write(yaml.safe_dump(_plain(cfg), sort_keys=False))
    except BaseException:  # a full disk: no empty or partial record of the run is left
        path.unlink(missing_ok=True)
        raise
    return path


def run_metadata(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """What goes into every results file's metadata: config, versions, code, time."""
    fam = get_family(cfg["study"]["family"])
    return {
        "config": _plain(cfg),
        "packages": package_versions(),
        "code_version": code_version(),
        "solver_version": fam.version,
        "python": sys.version.split()[0],
        "written_at": dt.datetime.now(dt.UTC).isoformat(),
    }


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that decide the results."""
    out = {}
    for pkg in PACKAGES:
        try:
            out[pkg] = importlib_metadata.version(pkg)
        except importlib_metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def code_version() -> str:
    """The git commit of the code (with +dirty for local changes), or the package version."""
    root = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(
            ["git", "-C", str(root), "describe", "--always", "--dirty=+dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        return rev or "unknown"
    except (OSError, subprocess.SubprocessError):
        return package_versions()["guesslab"]


def _plain(cfg: Any) -> Any:
    """A config (OmegaConf or mapping) as plain dicts and lists."""
    try:
        from omegaconf import DictConfig, ListConfig, OmegaConf

        if isinstance(cfg, DictConfig | ListConfig):
            return OmegaConf.to_container(cfg, resolve=True)
    except ImportError:  # pragma: no cover
        pass
    if isinstance(cfg, Mapping):
        return {k: _plain(v) for k, v in cfg.items()}
    if isinstance(cfg, list | tuple):
        return [_plain(v) for v in cfg]
    return cfg
