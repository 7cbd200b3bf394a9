"""The one line the command prints when it ends otherwise than well: an error, or a stop.

Every error line is :func:`abbreviated` (visible characters, long values cut, their length
said); Hydra's and OmegaConf's errors are said with the override or key first
(:func:`hydra_error_line`); a ``study.*`` error names where its value came from
(:func:`with_study_file`).  A stop (Ctrl-C, SIGTERM) says what the run stored and how to
resume (:func:`stopped_message`); a run whose tasks failed names the first few
(:func:`failed_tasks_lines`).
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import signal
from pathlib import Path
from typing import Any

from pipeline.cli.preflight import is_multirun
from pipeline.cli.sweep_check import sweep_stopped_message
from pipeline.config_files import job_files
from pipeline.ctrl_c import RunStopped, SearchStopped, nothing_written, stop_name
from pipeline.errors import StoreError
from pipeline.running.failed_tasks import failed_lines
from solvers.kit.words import counted

LONG_RUN = 400  # characters without a space an error line shows whole (a long path too)


def abbreviated(message: str, digits: int = 24, longest: int = LONG_RUN) -> str:
    """``message`` as the one line of an error, the rule of every error line: a character a
    terminal would act on, or that cannot be seen (a line break, a tab, ESC, DEL, U+202E),
    shown as its escape (``\\n``, ``\\x1b``, ``\\u202e``); a run of more than ``digits``
    digits shortened (``99999999...9999 (4000 digits)``); a run of more than ``longest``
    characters without a space (a long value) cut in the middle, its length said."""
    message = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode() for c in message
    )

    def short(match: re.Match[str]) -> str:
        run = match.group(0)
        return f"{run[:8]}...{run[-4:]} ({len(run)} digits)"

    def cut(match: re.Match[str]) -> str:
        # KEY=VALUE (VALUE perhaps quoted, a colon or comma after it): the value is cut and
        # counted, the rest kept
        parts = re.fullmatch(r"((?:[^=\s]{1,100}=)?)(['\"]?)(.*?)\2([:;,)]*)", match.group(0))
        key, quote, value, end = parts.groups() if parts else ("", "", match.group(0), "")
        if len(value) <= longest:
            return match.group(0)
        short = f"{value[: longest // 2]}...{value[-longest // 4 :]}"
        return f"{key}{quote}{short}{quote} ({len(value):,} characters){end}"

    message = re.sub(rf"\d{{{digits + 1},}}", short, message)
    return re.sub(rf"\S{{{longest + 1},}}", cut, message)


def failed_tasks_lines(report: Any) -> list[str]:
    """What a run (its StudyReport ``report``) says of its failed tasks (none failed: no
    line): the first few, each its strategy, parameters and first error line, then how many
    more, then where every failed row is; each line :func:`abbreviated`."""
    if not report.errors:
        return []
    results = report.folder.results
    lines = failed_lines(report.errors, report.failures, results, report.summary)
    return [abbreviated(line) for line in lines]


def hydra_error_line(exc: BaseException) -> str:
    """Hydra's config error as guesslab's one line: the override or key first."""
    override = getattr(exc, "override", None)
    if override is not None:  # OverrideParseException
        return f"{override}: cannot read this override ({one_line(exc)})"
    unknown = re.match(r"Could not override '([^']+)'", str(exc))
    if unknown:
        # the key OmegaConf refused: the override's own, or one inside a mapping it gives
        # ('study.strategies={info: {}}' adds study.strategies.info)
        key = getattr(exc.__cause__, "full_key", None) or unknown.group(1)
        return f"{key}: unknown key (to add a key the config does not have: +{key}=...)"
    return one_line(exc)


def one_line(exc: BaseException) -> str:
    """A Hydra or OmegaConf error message in one line (its lines joined, the object dumps
    Hydra appends left out)."""
    skip = ("full_key:", "object_type=", "reference_type=", "See https://hydra.cc")
    lines = [line.strip() for line in str(exc).splitlines()]
    text = " ".join(line for line in lines if line and not line.startswith(skip))
    text = text or type(exc).__name__
    key = getattr(exc, "full_key", None)  # OmegaConf's errors know the key
    return f"{key}: {text}" if key and not text.startswith(str(key)) else text


def list_item_deleted(overrides: list[str]) -> str | None:
    """The line for ``~KEY.N``, the deletion of a list's item, which Hydra cannot do (it
    deletes a mapping's keys), or None when no override deletes one."""
    for arg in overrides:
        key = arg.partition("=")[0]
        if key.startswith("~") and "." in key and key.rpartition(".")[2].isdigit():
            whole = key[1:].rpartition(".")[0]
            return (
                f"{arg}: an item of a list ({whole}) cannot be deleted by an override, only a "
                f"key of a mapping; give the list whole ({whole}=[...]) or write a study file "
                "of your own (--config-dir)"
            )
    return None


NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)  # the disk refused a write


def no_room_line(cfg: Any, exc: OSError) -> str:
    """The one line for a write the disk refused (full, over quota, read-only) outside the
    store's own writes (which raise StoreError): the summary's files, runs/*.yaml."""
    where = exc.filename or Path(str(cfg.paths.outputs)) / str(cfg.study.name)
    return (
        f"paths.outputs={str(cfg.paths.outputs)!r}: cannot write {where} "
        f"({os.strerror(exc.errno)}); no partial file was left, the stored results are intact"
    )


def job_error(cfg: Any, exc: BaseException) -> str:
    """What the error line of a running job (of config ``cfg``) says of ``exc``: a study
    error, a store that cannot be written, a write the disk refused, OmegaConf's error; a
    ``study.*`` key with where its value came from (:func:`with_study_file`)."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf.errors import OmegaConfBaseException

    if isinstance(exc, OmegaConfBaseException):
        text = one_line(exc)
    elif isinstance(exc, OSError) and not isinstance(exc, StoreError):
        text = no_room_line(cfg, exc)
    else:
        text = str(exc)
    if not text.startswith("study."):
        return text
    hydra_config = HydraConfig.get()
    choice = hydra_config.runtime.choices.get("study")
    files = job_files(hydra_config.runtime.config_sources)
    study_file = files.file("study", str(choice)) if choice else None
    return with_study_file(text, list(hydra_config.overrides.task), study_file)


def with_study_file(message: str, overrides: list[str], study_file: Path | None) -> str:
    """A study.* error message with where its value came from: the command line override
    (of ``overrides``) that set it, or else ``study_file``, when there is one."""
    if not message.startswith("study."):
        return message
    override = command_line_override(message, overrides)
    if override is not None:
        if len(override) > 120:  # the value is in the message already, shortened
            override = f"{override[:60]}... ({len(override):,} characters)"
        return f"{message} (from the command line override {override})"
    return f"{message} (in {study_file})" if study_file else message


def command_line_override(message: str, overrides: list[str]) -> str | None:
    """The override of ``overrides`` that set the key a ``study.*`` message names (that key,
    a section holding it, or a key inside it), or None when the study file set it."""
    named = re.match(r"study(?:\.[^.=:\[\s]+|\[\d+\])*", message)
    if named is None:
        return None
    key = named.group(0)
    for override in overrides:
        given = override.lstrip("+~").partition("=")[0]
        given = re.sub(r"\.(\d+)(?=\.|\[|$)", r"[\1]", given)  # study.grids.0: study.grids[0]
        if given == "study" or not given.startswith("study."):
            continue  # the choice of study file, or another section
        if key == given or key.startswith((given + ".", given + "[")):
            return override
        if given.startswith((key + ".", key + "[")):
            return override
    return None


def stopped_message(report: Any, signum: int | None, rerun: str = "") -> str:
    """The one line printed on a stop by ``signum`` (Ctrl-C, SIGTERM): stopped, what is
    stored, what is kept, how to resume (``rerun``: the command that writes the summary, for
    a stop while the summary was written).  Before a stage began nothing was written."""
    how = stop_name(signum)
    if report is not None and report.stage == "summary":
        return summary_stopped_message(report, signum, rerun)
    if report is None or report.stage is None:
        return nothing_written(signum or signal.SIGINT)
    kept = report.folder.checkpoints.kept_line()
    if report.computed + report.skipped == 0:
        if not kept:
            return f"stopped ({how}) before any task finished; nothing was stored"
        return f"stopped ({how}) before any task finished; no task was stored; {kept}"
    kept = f"; {kept}" if kept else ""
    return (
        f"stopped ({how}): {report.computed:,} of {counted(report.planned, 'task')} computed in "
        f"this run and stored in {report.folder.results} with the {report.skipped:,} "
        "stored before"
        f"{kept}; run the same command again to compute the rest (stored tasks are skipped)"
    )


def summary_stopped_message(report: Any, signum: int | None, rerun: str) -> str:
    """A stop while the summary was written: the store is whole (the summary reads it, and
    its compaction replaces files whole), what it holds, and the command that writes the
    summary alone."""
    results = report.folder.results
    computed = report.computed
    this_run = f"{counted(computed, 'task')} computed and stored in this run; " if computed else ""
    stored = _stored_counts(report.folder)
    held = (
        f"the store holds {counted(stored[0], 'task')} ({stored[1]:,} ok) in {results}, intact"
        if stored is not None
        else f"the stored results in {results} are intact"
    )
    rerun = rerun or "the same command with stage=summary"
    return (
        f"stopped ({stop_name(signum)}) while writing the summary: {this_run}{held}; "
        f"to write the summary: {rerun}"
    )


def _stored_counts(folder: Any) -> tuple[int, int] | None:
    """(tasks, ok tasks) the store of ``folder`` (a StudyFolder) holds, or None when it cannot
    be read."""
    try:
        stored = folder.stored_ids()
    except Exception:  # noqa: BLE001 - a count for a message, never a new error
        return None
    return len(stored.every), len(stored.ok)


def stop_line(stop: KeyboardInterrupt, signum: int | None, argv: list[str]) -> str:
    """The one line of a command (of arguments ``argv``) stopped by ``signum``: in a
    multirun, what each study folder of the sweep stored (its jobs may run in other
    processes: the command reads their stores); else what the run stored (``stop``: a
    RunStopped with its report, or a KeyboardInterrupt before the run began)."""
    if isinstance(stop, SearchStopped):
        return f"{stop.line.replace('stopped', f'stopped ({stop_name(signum)})', 1)}"
    if is_multirun(argv) and (line := sweep_stopped_message(stop_name(signum))) is not None:
        return line
    report = stop.report if isinstance(stop, RunStopped) else None
    rerun = summary_command(argv) if report is not None and report.stage == "summary" else ""
    return stopped_message(report, signum, rerun)


def summary_command(argv: list[str]) -> str:
    """The command of arguments ``argv`` with ``stage=summary`` (the summary alone), as a
    shell line: its overrides Hydra lists as the task's (``hydra.overrides.task``: those not
    of ``hydra``), read as Hydra reads them."""
    from hydra._internal.utils import get_args_parser
    from hydra.core.override_parser.overrides_parser import OverridesParser

    given = get_args_parser().parse_args(argv).overrides
    parsed = OverridesParser.create().parse_overrides(given)
    task = [o.input_line for o in parsed if not o.is_hydra_override()]
    kept = [o for o in task if o.lstrip("+~").partition("=")[0] != "stage"]
    return shlex.join(["python", "-m", "pipeline", *kept, "stage=summary"])
