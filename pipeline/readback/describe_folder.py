"""``python -m pipeline.describe FOLDER``: what a study folder stores, read only.

Per family: its tasks and rows (ok and failed; the newest file's rows of each task, as every
reader keeps them), its results files and the family versions that wrote them, its
strategies and the code that computed them (the family's version and the code's commit; a
strategy of one's own: its class and the fingerprint of its files, the rows'
``strategy_code``).  Then the runs (each ``runs/<time>.yaml`` record and the results files
whose metadata names it, when they were written, by which commit, in which Hydra job), what
``checkpoints/`` and ``quarantine/`` keep, the searches of ``search/``, and the disk used.

It reads the folder as :mod:`pipeline.readback.stored_study` does: no link is followed and nothing
but a regular file is opened (a FIFO or a device is never waited on or read); of a results
file only its footer and four columns are read.  Each entry not read is named with why.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import Unreadable
from pipeline.readback.stored_study import (
    FILE,
    entries,
    newest_rows,
    not_followed,
    one_line,
    opened,
    path_text,
)
from pipeline.storage.locking import visible
from pipeline.storage.store_layout import METADATA_KEY
from pipeline.storage.study_folder import StudyFolder
from solvers.kit.safe_folders import kind
from solvers.kit.words import counted, format_bytes

READ = ("task_id", "status", "strategy", "strategy_code")  # the columns read of a file
# Run records listed one a line; more are counted (a search writes one per trial).
SHOWN_RUNS = 20


def said(value: Any) -> str:
    """A stored value (a name, a version, a commit from a file) as one line of the text:
    unprintable characters as escapes, cut past 200 characters."""
    return visible(str(value), limit=200)


@dataclass
class ResultsFile:
    """One results file read: its family, size, metadata and the columns of READ it has."""

    path: Path
    family: str
    size: int
    meta: dict[str, Any]
    table: pa.Table


@dataclass
class Folder:
    """What describing a folder found: the results files read, the entries not read."""

    folder: StudyFolder
    files: list[ResultsFile] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def describe_folder(arg: str) -> str:
    """The text describing the study folder ``arg`` (or its ``results`` folder)."""
    folder = Path(arg).expanduser()
    if folder.name == "results" and kind(folder / "results") is None:
        folder = folder.parent
    found = Folder(StudyFolder(folder))
    read_files(found)
    lines = [f"study folder {path_text(folder)}"]
    lines += families_part(found)
    lines += runs_part(found)
    lines += kept_part(
        found.folder.checkpoints.root, "checkpoints (one folder per long task)", found
    )
    lines += kept_part(found.folder.quarantine, "quarantine (entries moved out of results/)", found)
    lines += searches_part(found)
    used, n = disk_used(folder)
    lines += ["", f"disk used: {format_bytes(used)} in {counted(n, 'file')} (links not followed)"]
    if found.skipped:
        lines += ["", f"not read ({counted(len(found.skipped), 'entry')}):"]
        lines += [f"  {path_text(p)}: {why}" for p, why in sorted(found.skipped)]
    return "\n".join(lines)


# ----------------------------------------------------------------- the results files


def read_files(found: Folder) -> None:
    """Each ``results/family=*/part-*.parquet`` regular file's footer and READ columns."""
    results = found.folder.results
    what = kind(results)
    if what not in (None, "folder"):
        found.skipped.append((results, not_followed(what, "the study's results folder")))
        return
    parsed: dict[bytes, dict[str, Any]] = {}
    for family_dir in entries(results, "family="):
        what = kind(family_dir)
        if what != "folder":
            found.skipped.append((family_dir, not_followed(what, "a family's folder")))
            continue
        for path in entries(family_dir, "part-", ".parquet"):
            try:
                found.files.append(results_file(path, parsed))
            except Unreadable as exc:
                found.skipped.append((path, str(exc)))
    found.files.sort(key=lambda f: f.path.name)  # oldest first, as the store's readers


def results_file(path: Path, parsed: dict[bytes, dict[str, Any]]) -> ResultsFile:
    """The results file ``path`` read (footer, READ columns); Unreadable saying why not."""
    with opened(path, "a results file") as fh:
        size = os.fstat(fh.fileno()).st_size
        try:
            pf = pq.ParquetFile(fh)
            text = (pf.metadata.metadata or {}).get(METADATA_KEY)
            if text is not None and text not in parsed:
                parsed[text] = json.loads(text)
            names = [c for c in READ if c in pf.schema_arrow.names]
            table = pf.read(columns=names)
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise Unreadable(f"cannot be read as a results file ({one_line(exc)})") from None
    if text is None or not isinstance(parsed[text], dict):
        raise Unreadable("not a guesslab results file (no guesslab metadata)")
    if "task_id" not in table.column_names or not pa.types.is_string(
        table.schema.field("task_id").type
    ):
        raise Unreadable("not a guesslab results file (it has no task_id column of text)")
    family = path.parent.name.partition("=")[2]
    return ResultsFile(path, family, size, parsed[text], table)


def families_part(found: Folder) -> list[str]:
    """Per family: tasks and rows, files and versions, strategies and their code."""
    by_family: dict[str, list[ResultsFile]] = defaultdict(list)
    for f in found.files:
        by_family[f.family].append(f)
    if not by_family:
        return ["", "results: none stored"]
    lines = ["", f"results ({counted(len(by_family), 'family')}):"]
    for family, files in sorted(by_family.items()):
        lines += family_lines(family, files)
    return lines


def family_lines(family: str, files: list[ResultsFile]) -> list[str]:
    """One family's part of the text."""
    tables = [f.table for f in files]
    rows, _ = newest_rows([f.path for f in files], tables, family)
    ids = rows.column("task_id").to_pylist()
    status = rows.column("status").to_pylist() if "status" in rows.column_names else []
    ok = sum(1 for s in status if s == "ok")
    stored = sum(len(t) for t in tables)
    older = f"; {counted(stored - len(rows), 'older row')} of tasks stored again" * (
        stored > len(rows)
    )
    lines = [
        f"  {said(family)}: {counted(len(set(ids)), 'task')}, {counted(len(rows), 'row')} "
        f"({ok} ok, {len(rows) - ok} failed){older}",
        f"    {counted(len(files), 'results file')}, {format_bytes(sum(f.size for f in files))}; "
        f"family {versions_text(family, files)}",
    ]
    lines += [f"    {line}" for line in strategy_lines(rows, files)]
    return lines


def versions_text(family: str, files: list[ResultsFile]) -> str:
    """The family versions that wrote ``files``, each with its files, and which is current."""
    from solvers.registry import TaskError, get_family

    try:
        current = get_family(family).version
    except TaskError:
        current = None
    counts = Counter(str(f.meta.get("solver_version") or "not recorded") for f in files)
    parts = []
    for version, n in sorted(counts.items()):
        note = " (current)" if version == current else ""
        parts.append(f"version {said(version)}{note}: {counted(n, 'file')}")
    where = "" if current is not None else " (not registered here)"
    return "; ".join(parts) + where


def strategy_lines(rows: pa.Table, files: list[ResultsFile]) -> list[str]:
    """Each strategy of the family's rows: its tasks and the code that computed them (the
    commits of its files; a strategy of one's own: its class and its files' fingerprints)."""
    if "strategy" not in rows.column_names:
        return [f"code: {commits_text(set(rows.column(FILE).to_pylist()), files)}"]
    names = rows.column("strategy").to_pylist()
    at = rows.column(FILE).to_pylist()
    tids = rows.column("task_id").to_pylist()
    codes = (
        rows.column("strategy_code").to_pylist()
        if "strategy_code" in rows.column_names
        else [None] * len(names)
    )
    per: dict[str, dict[str, Any]] = {}
    for name, n, tid, code in zip(names, at, tids, codes, strict=True):
        entry = per.setdefault(str(name), {"tasks": set(), "files": set(), "codes": set()})
        entry["tasks"].add(tid)
        entry["files"].add(n)
        if code is not None:
            entry["codes"].add(code)
    lines = [f"strategies ({len(per)}):"]
    for name, entry in sorted(per.items()):
        code = commits_text(entry["files"], files)
        own = own_text(name, entry["files"], files)
        fingerprints = ", ".join(said(c) for c in sorted(entry["codes"], key=str))
        if own or fingerprints:
            code += f"; own class {own or 'not recorded'}, files' fingerprint "
            code += fingerprints or "not recorded"
        lines.append(f"  {said(name)}: {counted(len(entry['tasks']), 'task')}; {code}")
    return lines


def commits_text(at: set[int], files: list[ResultsFile]) -> str:
    """The commits (``code_version``) of the files at the places ``at`` of ``files``."""
    codes = sorted({said(files[n].meta.get("code_version") or "not recorded") for n in at})
    return f"commit {', '.join(codes)}" if len(codes) == 1 else f"commits {', '.join(codes)}"


def own_text(name: str, at: set[int], files: list[ResultsFile]) -> str:
    """The class of the strategy of one's own ``name`` as the files' metadata records it."""
    targets = set()
    for n in at:
        own = files[n].meta.get("own_code")
        strategies = own.get("strategies") if isinstance(own, dict) else None
        entry = strategies.get(name) if isinstance(strategies, dict) else None
        if isinstance(entry, dict) and isinstance(entry.get("target"), str):
            targets.add(entry["target"])
    return ", ".join(said(t) for t in sorted(targets))


# ----------------------------------------------------------------- the runs


def runs_part(found: Folder) -> list[str]:
    """Each run record, with the results files whose metadata names it; then the files that
    name no record (written before files named their run)."""
    runs = found.folder.runs
    what = kind(runs)
    records: list[Path] = []
    if what not in (None, "folder"):
        found.skipped.append((runs, not_followed(what, "the folder of run records")))
    else:
        for path in entries(runs, suffix=".yaml"):
            what = kind(path)
            if what == "file":
                records.append(path)
            else:
                found.skipped.append((path, not_followed(what, "a run record")))
    by_run: dict[str | None, list[ResultsFile]] = defaultdict(list)
    for f in found.files:
        run = f.meta.get("run")
        by_run[run if isinstance(run, str) else None].append(f)
    lines = ["", f"runs ({counted(len(records), 'run record')} under runs/, by time started):"]
    names = [p.stem for p in records]
    for name in names[-SHOWN_RUNS:]:
        lines.append(f"  {path_text(Path(name))}: {written_text(by_run.get(name, []))}")
    if len(names) > SHOWN_RUNS:
        lines.insert(2, f"  ({len(names) - SHOWN_RUNS} older records not listed)")
    unnamed = [(run, fs) for run, fs in by_run.items() if run is None or run not in names]
    for run, fs in unnamed:
        who = "naming no run record" if run is None else f"naming run {said(run)} (no record of it)"
        lines.append(f"  results files {who}: {written_text(fs)}")
    return lines


def written_text(files: list[ResultsFile]) -> str:
    """What a run wrote: its files and rows, when, by which commit, in which Hydra job, for
    which search."""
    if not files:
        return "no results files (nothing left to compute, or every file since replaced)"
    times = sorted(str(f.meta.get("written_at")) for f in files if f.meta.get("written_at"))
    shown = [f"{said(t[:19])}Z" for t in times]  # to the second, UTC, as the records are named
    when = f", written {shown[0]}" if shown else ""
    if len(shown) > 1 and shown[-1] != shown[0]:
        when += f" to {shown[-1]}"
    codes = sorted({said(f.meta.get("code_version") or "not recorded") for f in files})
    jobs = sorted(
        {j["num"] for f in files if isinstance(j := f.meta.get("job"), dict) and "num" in j},
        key=str,
    )
    job = f"; Hydra job {', '.join(said(j) for j in jobs)}" if jobs else ""
    names = {s.get("name") for f in files if isinstance(s := f.meta.get("search"), dict)}
    searches = sorted(n for n in names if isinstance(n, str))
    search = f"; search {', '.join(said(s) for s in searches)}" if searches else ""
    rows = sum(len(f.table) for f in files)
    return (
        f"{counted(len(files), 'results file')} ({counted(rows, 'row')}){when}; "
        f"commit {', '.join(codes)}{job}{search}"
    )


# ----------------------------------------------------------------- what is kept besides


def kept_part(where: Path, title: str, found: Folder) -> list[str]:
    """What the folder ``where`` of the study keeps: its entries (first level), files and
    bytes."""
    name = where.name
    what = kind(where)
    if what is None:
        return []
    if what != "folder":
        found.skipped.append((where, not_followed(what, f"the {name} folder")))
        return []
    top = entries(where)
    used, n = disk_used(where)
    return [
        "",
        f"{title}: {counted(len(top), 'entry')}, {counted(n, 'file')}, {format_bytes(used)}",
    ]


def searches_part(found: Folder) -> list[str]:
    """The searches stored in ``search/``: each one's name, trials and best."""
    if kind(found.folder.path / "search") != "folder":
        return []
    from pipeline.outputs.searches import search_headlines

    lines = []
    for path, headline in search_headlines(found.folder):
        if isinstance(headline, str):
            found.skipped.append((path, headline))
            continue
        best = headline.get("best")
        best_said = f"; best: {said(best)}" if best else ""
        lines.append(
            f"  {said(headline['name'])}: {counted(headline['n_trials'], 'trial')}{best_said}"
        )
    return ["", f"searches ({len(lines)}):", *lines] if lines else []


def disk_used(folder: Path) -> tuple[int, int]:
    """(bytes of disk the entries under ``folder`` use, how many regular files): links not
    followed, each entry's allocated blocks (a sparse file counts what it holds)."""
    used, n = 0, 0
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in (*dirs, *files):
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            used += st.st_blocks * 512
            n += stat.S_ISREG(st.st_mode)
    return used, n
