"""``python -m pipeline.reproduce STUDY_FOLDER`` (or ``guesslab reproduce``): recompute a
stored study's tasks and compare every result column with what is stored.

What is recomputed comes from what is stored, read from the folder alone
(:mod:`pipeline.readback.stored_study`: no link followed, nothing but a regular file opened): the
run configs under ``<study>/runs/``, then, for the tasks they do not plan (or a folder that holds
only its results, a study someone published), the config in each results file's metadata
(:mod:`pipeline.running.provenance`).  Each config is planned as a run plans it, the plan kept to
the stored tasks chosen (all, or ``--sample N`` of them, seeded), and run through the pipeline's
own run path (:func:`pipeline.run.run_tasks`) into a fresh folder on the backend chosen
(``--cluster``); the new rows are then compared with the stored ones
(:mod:`pipeline.readback.compare_rows`).  The folder checked is only read, never written, and no
temporary file goes inside it.

A stored task is *not reproducible here* when its family is not registered here, when the
family's version differs from the one that stored it (a new version changes the results
and the task ids on purpose), when its strategy of one's own was edited since or cannot be
imported here (the study's other strategies are recomputed all the same), when no stored
config plans it, or when it needs more memory or disk than this machine has.

Exit status: 0 when every task chosen was recomputed and reproduces, and every file of the
folder was used; 1 when a compared row differs; 4 when every compared row reproduces but
not all was checked (a task not reproducible here, or a file of the folder not read or not
used: each named); 3 when nothing could be compared; 2 on bad input (a folder that is not a
study, a bad option, a temporary folder inside the folder checked: one line), 130 when
stopped by Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import yaml

from pipeline.config import REQUIRED, cluster_config, cluster_defaults, conf_dir
from pipeline.errors import BadInput, StudyError
from pipeline.readback.compare_rows import differences, tolerances
from pipeline.readback.reproduce_outcome import EXIT_BAD, EXIT_STOPPED, Outcome, table_text
from pipeline.readback.stored_study import (
    FILE,
    StoredStudy,
    path_text,
    planned_too_many,
    stored_study,
)
from pipeline.running.needs import free_disk
from pipeline.running.plan import TARGET
from pipeline.storage.ids import IdSet, id_array
from pipeline.storage.locking import visible
from pipeline.storage.study_folder import StudyFolder
from solvers.kit.words import counted, format_bytes
from solvers.registry import TaskError, get_family

# ----------------------------------------------------------------- what is recomputed


def chosen_tasks(study: StoredStudy, sample: int | None, seed: int) -> dict[str, str]:
    """The stored tasks to recompute, task id -> family: all, or ``sample`` of them drawn
    with ``seed`` (all when the study holds no more)."""
    tasks = {tid: fam for fam, t in study.rows.items() for tid in t.column("task_id").to_pylist()}
    if sample is None or sample >= len(tasks):
        return tasks
    ids = sorted(tasks)
    picked = np.random.default_rng(seed).choice(len(ids), size=sample, replace=False)
    return {ids[i]: tasks[ids[i]] for i in sorted(picked.tolist())}


def not_comparable(study: StoredStudy, chosen: dict[str, str]) -> dict[str, str]:
    """The chosen tasks that cannot be recomputed as stored, task id -> why: a family not
    registered here, or one whose version differs from the version that stored the task."""
    out = {}
    for family, table in study.rows.items():
        try:
            here = get_family(family).version
        except TaskError:
            why = f"family {family!r} is not registered here (its module: GUESSLAB_FAMILIES)"
            here = None
        files = table.column(FILE).to_pylist()
        for tid, n in zip(table.column("task_id").to_pylist(), files, strict=True):
            if tid not in chosen or tid in out:
                continue
            if here is None:
                out[tid] = why
                continue
            then = visible(str(study.metadata[n].get("solver_version")), 80)
            if then != here:
                out[tid] = (
                    f"family {family}'s version changed: stored by version {then}, "
                    f"version {here} here (its results and task ids differ on purpose)"
                )
    return out


def fresh_config(config: dict[str, Any], into: Path, cluster: dict[str, Any]) -> dict[str, Any]:
    """A stored run config made to recompute into ``into`` on ``cluster``: its study, its
    ``store`` and ``run`` settings over guesslab's defaults (a key a stored config lacks, or
    holds that this guesslab does not, is the default's), stage run, nothing reused, no
    progress bar, this machine's memory as the budget."""
    defaults = yaml.safe_load((conf_dir() / "config.yaml").read_text())
    given: dict[str, Any] = {"paths": {"outputs": str(into)}, "cluster": dict(cluster)}
    given["study"] = copy.deepcopy(config["study"])
    given["stage"] = "run"
    for section in ("store", "run"):
        stored = config.get(section) if isinstance(config.get(section), dict) else {}
        given[section] = {k: stored.get(k, v) for k, v in defaults[section].items()}
    given["store"]["recompute"] = False
    given["run"].update(progress=False, memory_budget=None)
    return given


def recompute(
    study: StoredStudy,
    wanted: set[str],
    into: Path,
    cluster: dict[str, Any],
    log: Callable[[str], None],
) -> tuple[list[StudyFolder], dict[str, str], str]:
    """Recompute the ``wanted`` tasks from the study's configs into ``into``: (the study
    folders of the new stores, the tasks not recomputed with why, the backend's description).  A
    run record whose config cannot be planned here is added to the study's entries not
    used."""
    from pipeline.run import prepared, run_tasks

    left, stores, problems, backend = set(wanted), [], [], ""
    not_here: dict[str, str] = {}
    missing: dict[str, str | None] = {}  # a strategy of one's own -> why it is not importable
    for config, source in zip(study.configs, study.sources, strict=True):
        if not left:
            break
        config = importable(config, missing)
        if config is None:  # its strategies are all of one's own, none importable here
            continue
        try:
            too_many = planned_too_many(config["study"], study.stored_tasks)
            if too_many:
                raise StudyError(f"{too_many}: not planned")
            run = prepared(fresh_config(config, into, cluster), log)
        except StudyError as exc:
            problems.append(f"study {config['study'].get('name')!r}: {exc}")
            if source is not None:
                study.skipped.append((source, f"cannot be planned here ({exc}): not used"))
            continue
        plan = run.plan.only(IdSet(id_array(sorted(left))))
        planned = {t.task_id: t.task for t in plan}
        left -= set(planned)
        too_large = needs_beyond(run, planned)
        not_here.update(too_large)
        fits = set(planned) - set(too_large)
        if not fits:
            continue
        run.plan = plan.only(IdSet(id_array(sorted(fits))))
        run.report.planned = len(fits)
        backend = run.backend.cluster.kind
        log(
            f"recomputing {counted(len(fits), 'task')} of study {run.conf.study.name} "
            f"into {run.folder}"
        )
        run_tasks(run)
        stores.append(run.folder)
    why = "no stored config plans this task"
    if problems:
        why += f" here ({'; '.join(dict.fromkeys(problems))})"
    changed = own_code_changed(study, left)
    not_here.update({tid: changed.get(tid, why) for tid in left})
    return stores, not_here, backend


def importable(config: dict[str, Any], missing: dict[str, str | None]) -> dict[str, Any] | None:
    """``config`` without its strategies of one's own that cannot be imported here (a grid
    part left without strategies left out too), so that its other strategies are planned;
    None when nothing is left.  ``missing`` caches each target's import: why it failed, or
    None."""
    from solvers.own_strategy import target_class

    study = copy.deepcopy(config["study"])
    grids = study.get("grids")
    parts = grids if isinstance(grids, list) else [study]
    kept, dropped = [], False
    for part in parts:
        strategies = part.get("strategies") if isinstance(part, dict) else None
        if isinstance(strategies, dict) and strategies:
            for name, axes in list(strategies.items()):
                target = axes.get(TARGET) if isinstance(axes, dict) else None
                if not isinstance(target, str):
                    continue
                if target not in missing:
                    try:
                        target_class(target)
                        missing[target] = None
                    except ValueError as exc:
                        missing[target] = str(exc)
                if missing[target] is not None:
                    del strategies[name]
                    dropped = True
            if not strategies:
                continue
        kept.append(part)
    if not dropped:
        return config
    if not kept:
        return None
    if isinstance(grids, list):
        study["grids"] = kept
    return {**config, "study": study}


def own_code_changed(study: StoredStudy, ids: set[str]) -> dict[str, str]:
    """The tasks of ``ids`` whose strategy of one's own cannot be had here as it was stored
    (its code's fingerprint is part of the task id): task id -> why."""
    from solvers.own_code import code_fingerprint
    from solvers.own_strategy import target_class

    out: dict[str, str] = {}
    for table in study.rows.values():
        if "strategy_code" not in table.column_names:
            continue
        columns = (
            table.column(c).to_pylist() for c in ("task_id", "strategy_target", "strategy_code")
        )
        for tid, target, code in zip(*columns, strict=True):
            if tid not in ids or not target or not code or tid in out:
                continue
            try:
                here = code_fingerprint(target_class(target))
            except ValueError as exc:
                out[tid] = f"its strategy of one's own {target} is not importable here: {exc}"
                continue
            if here != code:
                out[tid] = (
                    f"the code of its strategy of one's own {target} changed: fingerprint "
                    f"{code} stored, {here} here"
                )
    return out


def needs_beyond(run: Any, tasks: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The tasks whose need (``Scheduling.needs``) is over what this run has: the memory budget
    of one process, or the free disk for their checkpoints; task id -> why."""
    needs = run.plan.fam.scheduling.needs
    if needs is None:
        return {}
    workers = run.workers
    free = free_disk(run.folder.path)
    out = {}
    for tid, task in tasks.items():
        need = needs(task, workers.count)
        if need is None:
            continue
        budget = workers.budget
        if budget is not None and need.memory > budget.bytes:
            out[tid] = (
                f"too large for this machine: needs {format_bytes(need.memory)} of memory per "
                f"process, over the budget of {format_bytes(budget.bytes)} from {budget.source}"
            )
        elif need.disk and need.disk > free:
            out[tid] = (
                f"too large for this machine: needs {format_bytes(need.disk)} of disk for its "
                f"checkpoints, over the {format_bytes(free)} free under {run.folder}"
            )
    return out


def new_rows(stores: list[StudyFolder]) -> dict[str, pa.Table]:
    """The recomputed rows of every new store (runs of one study share one), per family."""
    out: dict[str, list[pa.Table]] = {}
    for folder in {folder.path: folder for folder in stores}.values():
        for path in folder.result_files():
            family = path.parent.name.partition("=")[2]
            with pq.ParquetFile(path) as pf:
                out.setdefault(family, []).append(pf.read())
    return {family: pa.concat_tables(tables) for family, tables in out.items()}


def compared(study: StoredStudy, outcome: Outcome, new: dict[str, pa.Table], ids: set[str]):
    """Fill ``outcome`` with the comparison of the recomputed tasks ``ids``: the rows of the
    files holding the same columns compared together, on those columns."""
    for family, table in study.rows.items():
        stored = table.filter(pa.array([t in ids for t in table.column("task_id").to_pylist()]))
        if not len(stored):
            continue
        fresh = new.get(family, stored.drop_columns([FILE]).schema.empty_table())
        by_columns: dict[tuple[str, ...], list[int]] = {}
        for n in set(stored.column(FILE).to_pylist()):
            by_columns.setdefault(study.columns[n], []).append(n)
        found = []
        for names, files in by_columns.items():
            held = pc.is_in(stored.column(FILE), value_set=pa.array(files, pa.int64()))
            part = stored.filter(held)
            asked = part.column("task_id").combine_chunks()
            theirs = fresh.filter(pc.is_in(fresh.column("task_id"), value_set=asked))
            found += differences(part.select(list(names)), theirs, tolerances(get_family(family)))
        outcome.differs += found
        differing = {d.task_id for d in found}
        outcome.reproduced += sorted(set(stored.column("task_id").to_pylist()) - differing)


def reproduce(
    folder: Path,
    into: Path | None = None,
    cluster: dict[str, Any] | None = None,
    sample: int | None = None,
    seed: int = 0,
    log: Callable[[str], None] = lambda line: None,
) -> Outcome:
    """Recompute the stored tasks of ``folder`` (all, or ``sample`` of them drawn with
    ``seed``) into ``into`` (a new folder; None: a temporary one, removed after) on
    ``cluster`` (a cluster section; None: ``cluster=sync``) and compare them; BadInput or
    StudyError (one line) for what cannot be checked, before any work."""
    cluster = checked_cluster(cluster or {"kind": "sync"})
    study = stored_study(folder)
    with fresh_folder(into, study.folder.path) as where:
        set_aside_unusable(study, where, cluster)
        chosen = chosen_tasks(study, sample, seed)
        outcome = Outcome(study, chosen=len(chosen), into=into)
        outcome.not_here = not_comparable(study, chosen)
        wanted = set(chosen) - set(outcome.not_here)
        stores, not_here, backend = recompute(study, wanted, where, cluster, log)
        outcome.not_here.update(not_here)
        outcome.backend = backend or cluster["kind"]
        compared(study, outcome, new_rows(stores), wanted - set(not_here))
    return outcome


def set_aside_unusable(study: StoredStudy, into: Path, cluster: dict[str, Any]) -> None:
    """Move each run record whose config a run here refuses (checked as a run checks it,
    nothing planned) from the study's configs to its entries not used, with why."""
    from pipeline.config import checked_config

    kept = []
    for config, source in zip(study.configs, study.sources, strict=True):
        try:
            if source is not None:
                checked_config(fresh_config(config, into, cluster))
        except StudyError as exc:
            study.skipped.append((source, f"a run here refuses its config ({exc}): not used"))
            continue
        kept.append((config, source))
    study.configs = [config for config, _ in kept]
    study.sources = [source for _, source in kept]


def checked_cluster(cluster: dict[str, Any]) -> dict[str, Any]:
    """A cluster section over ``conf/cluster/<kind>.yaml``, checked; StudyError naming the
    value otherwise."""
    cluster_config(cluster)  # refuses an unknown kind or value (StudyError)
    defaults = cluster_defaults(cluster["kind"])
    return {**{k: v for k, v in defaults.items() if v != REQUIRED}, **cluster}


@contextlib.contextmanager
def fresh_folder(into: Path | None, checked: Path) -> Iterator[Path]:
    """The folder to recompute into: ``into`` (made; refused when it holds anything or lies
    inside the folder checked), or a temporary folder removed on exit; refused when the
    temporary folders of this process or of Dask's workers would be inside the folder
    checked (``TMPDIR``, Dask's ``temporary-directory``), whether ``into`` is given or not."""
    inside = checked.resolve()
    for name, where in temporary_folders().items():
        if Path(where).expanduser().resolve().is_relative_to(inside):
            raise BadInput(
                f"{name}={path_text(Path(where))!r}: inside the folder checked, which is never "
                "written (temporary files would go there); point it elsewhere"
            )
    if into is None:
        where = Path(tempfile.mkdtemp(prefix="guesslab-reproduce-"))
        try:
            yield where
        finally:
            shutil.rmtree(where, ignore_errors=True)
        return
    into = into.expanduser().resolve()
    if into.is_relative_to(inside):
        raise BadInput(f"--into={str(into)!r}: inside the folder checked, which is never written")
    if into.exists() and (not into.is_dir() or any(into.iterdir())):
        raise BadInput(f"--into={str(into)!r}: not an empty folder; name a new one")
    into.mkdir(parents=True, exist_ok=True)
    yield into


def temporary_folders() -> dict[str, str]:
    """Where this process and Dask's workers put temporary files, by the setting that says
    so: ``TMPDIR`` (Python's choice, from ``TMPDIR``, ``TEMP``, ``TMP`` or a default), and
    Dask's ``temporary-directory`` when it is set."""
    import dask

    out = {"TMPDIR": tempfile.gettempdir()}
    if dask.config.get("temporary-directory", None):
        out["Dask's temporary-directory"] = str(dask.config.get("temporary-directory"))
    return out


# ----------------------------------------------------------------- the command


class Parser(argparse.ArgumentParser):
    """argparse with bad arguments said in one line (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {message} (see --help)", file=sys.stderr)
        raise SystemExit(EXIT_BAD)


def parser() -> Parser:
    p = Parser(
        prog="guesslab reproduce",
        description="Recompute a stored study's tasks and compare every result column.",
    )
    p.add_argument("folder", type=Path, help="the study folder (<paths.outputs>/<study.name>)")
    p.add_argument("--sample", type=int, help="recompute N stored tasks drawn at random")
    p.add_argument("--seed", type=int, default=0, help="the seed of --sample (default 0)")
    p.add_argument("--into", type=Path, help="a new folder for the recomputed store")
    p.add_argument("--cluster", choices=("sync", "local", "address"), default="sync")
    p.add_argument("--workers", type=int, help="worker processes of --cluster local")
    p.add_argument("--address", help="the scheduler of --cluster address, e.g. tcp://HOST:8786")
    return p


def main(argv: list[str] | None = None) -> int:
    """The command; its exit status."""
    args = parser().parse_args(argv)
    if args.sample is not None and args.sample < 1:
        print(f"error: --sample={args.sample}: must be a positive integer", file=sys.stderr)
        return EXIT_BAD
    cluster: dict[str, Any] = {"kind": args.cluster}
    if args.workers is not None:
        cluster["n_workers"] = args.workers
    if args.address is not None:
        cluster["address"] = args.address
    try:
        outcome = reproduce(args.folder, args.into, cluster, args.sample, args.seed, _stderr)
    except (BadInput, StudyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD
    except OSError as exc:  # the fresh folder cannot be written (full, read-only)
        print(f"error: cannot recompute here: {exc}; the folder checked is unchanged",
              file=sys.stderr)  # fmt: skip
        return EXIT_BAD
    except KeyboardInterrupt:
        print("\nstopped (Ctrl-C): nothing compared; the folder checked is unchanged",
              file=sys.stderr)  # fmt: skip
        return EXIT_STOPPED
    print(table_text(outcome))
    return outcome.status


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
