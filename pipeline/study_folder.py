"""The study folder, ``<paths.outputs>/<study.name>``, checked before a run writes in it.

Each check raises StudyError naming ``paths.outputs`` (given as ``outputs``, the value as
the user wrote it) or ``study.name``, and the path; none makes or writes anything but a
probe file it removes.  The file-system rule inside the folder (no link followed, no
special file opened) is :mod:`pipeline.safe_paths`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline import store_layout
from pipeline.config import short_repr
from pipeline.errors import StudyError, UnsafePath
from pipeline.own_files import INDEX_TITLE, REPORT_NAME, SUMMARY_NAME, not_ours
from pipeline.safe_paths import INDEX_NAME, check_study_folder, kind, path_length_problem


def study_dir(cfg: Mapping[str, Any]) -> Path:
    """The folder of the configured study: <paths.outputs>/<study.name>."""
    return Path(str(cfg["paths"]["outputs"])).expanduser().resolve() / str(cfg["study"]["name"])


def check_path(outputs: Any, folder: Path) -> None:
    """Refuse a study folder whose path the file system cannot hold."""
    problem = path_length_problem(folder)
    if problem is not None:
        raise StudyError(f"paths.outputs={short_repr(outputs)}: {problem}")


def check_safe(outputs: Any, folder: Path) -> None:
    """Refuse a link out of the study folder, or a FIFO that would hang a reader."""
    try:
        check_study_folder(folder)
    except UnsafePath as exc:
        raise StudyError(f"paths.outputs={outputs!r}: {exc}") from None


def check_summary_target(outputs: Any, folder: Path, stored_only: bool) -> None:
    """Refuse, before any work, a summary that could not be written: ``<paths.outputs>/
    index.html`` a folder (the index goes there); with ``stored_only`` (``stage=summary``)
    also a study with no stored results (a misspelled name would get an empty summary) and a
    study folder or paths.outputs that cannot be written.  At both stages, a summary.md,
    report.html or index.html that guesslab did not write (:func:`check_own_files`).
    Nothing is made or written."""
    index = folder.parent / INDEX_NAME
    if kind(index) == "folder":
        raise StudyError(
            f"paths.outputs={outputs!r}: {index} is a folder, where every summary writes the "
            "index of the studies in paths.outputs; move it away (a study's folder: rename it)"
        )
    stored = bool(store_layout.result_files(folder / "results"))
    if stored_only and not stored:
        from pipeline.index import study_dirs

        names = [p.name for p in study_dirs(folder.parent)]
        more = f" and {len(names) - 10} more" if len(names) > 10 else ""
        held = ", ".join(names[:10]) + more if names else "none"
        raise StudyError(
            f"study.name={folder.name!r}: no results are stored in {folder}, so stage=summary "
            f"has nothing to summarise and wrote nothing; studies with results in "
            f"paths.outputs={outputs!r}: {held}"
        )
    check_own_files(outputs, folder, stored)
    if stored_only:
        check_writable(outputs, folder, "the summary")
        check_writable(outputs, folder.parent, "the index of its studies")


def check_own_files(outputs: Any, folder: Path, stored: bool) -> None:
    """Refuse the summary of a study whose ``summary.md`` or ``report.html``, or an
    ``index.html`` in paths.outputs, is not a file guesslab wrote (a folder of the user's
    given as the study's folder, the user's own index.html): the summary would replace it.
    An unmarked summary.md is guesslab's only where results are stored (``stored``)."""
    name = folder.name
    old_summary = None
    if stored:  # the summary's own module (matplotlib): only where a summary is made
        from solvers.kit.summary_parts import markdown_code

        old_summary = f"# Study {markdown_code(name)}"
    summary, report = folder / SUMMARY_NAME, folder / REPORT_NAME
    for path, problem in [
        (summary, not_ours(summary, "", old_summary=old_summary)),
        (report, not_ours(report, f"Study {name}")),
    ]:
        if problem is not None:
            raise StudyError(
                f"study.name={short_repr(name)}: {path} is {problem}, and every summary of "
                "this study replaces it; move it away, or choose another study.name or "
                "paths.outputs (nothing was run or written)"
            )
    index = folder.parent / INDEX_NAME
    if (problem := not_ours(index, INDEX_TITLE)) is not None:
        raise StudyError(
            f"paths.outputs={outputs!r}: {index} is {problem}, and every summary replaces it "
            "with the index of the studies in paths.outputs; move it away, or choose another "
            "paths.outputs (nothing was run or written)"
        )


def check_results_target(outputs: Any, folder: Path) -> None:
    """Refuse, before any work, a study folder where results cannot be stored: one that
    cannot be written, or whose ``results`` is a file."""
    check_writable(outputs, folder)
    results = folder / "results"
    if results.exists() and not results.is_dir():
        raise StudyError(
            f"paths.outputs={outputs!r}: {results} is a file, not the results "
            "folder; move it away (or choose another paths.outputs)"
        )


def check_writable(outputs: Any, where: Path, what: str = "results") -> None:
    """Refuse, before any work, an output folder that cannot be written."""
    try:
        where.mkdir(parents=True, exist_ok=True)
        probe = where / f".write-probe-{os.getpid()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        os.close(os.open(probe, flags, 0o600))
        probe.unlink()
    except OSError as exc:
        raise StudyError(
            f"paths.outputs={outputs!r}: cannot write {what} under {where} ({exc.strerror or exc})"
        ) from None
