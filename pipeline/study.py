"""A study from Python: ``Study("paper").run()``, composed as the command composes it.

    from pipeline import Study
    paper = Study("paper", overrides=["study.grid.deck=[[4,4,4]]"], outputs="outputs")
    print(paper.plan())             # what stage=plan prints
    rows = paper.run(client=c)      # a DataFrame of the study's rows, one per result
    print(paper.summary)            # the summary.md the run wrote (report: report.html)

The config is the command's: the same defaults and study files (``config_dir`` adds a folder
of one's own, as ``--config-dir`` does), the same overrides and checks, and a config that
cannot run raises :class:`~pipeline.errors.StudyError` with the command's one line, never
``SystemExit``.  ``client=`` runs the tasks on an existing ``distributed.Client`` (its workers
must run this guesslab: :mod:`pipeline.backends.given_client`); guesslab neither starts nor
closes its cluster.  Interrupting the run (Ctrl-C, a notebook's interrupt) stops it as it
stops the command: a line says what is stored, the store stays whole, the client stays
usable, and ``run`` again resumes.
"""

from __future__ import annotations

import os
import signal
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pipeline.errors import StudyError, short_repr
from pipeline.running.progress import in_a_notebook


class TasksFailed(UserWarning):
    """Some tasks of a run failed: the warning names the first few (strategy, parameters,
    first error line) and counts the rest; their rows (status ``'error'``) are stored."""


class PlanText(str):
    """What ``stage=plan`` prints, as text (a notebook shows it as it is)."""

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


class Study:
    """One study, composed from guesslab's configs, the study files of ``config_dir`` and
    ``overrides`` (``KEY=VALUE`` strings, as on the command line); results under
    ``outputs``.  Checked now: a config that cannot run raises StudyError naming the key."""

    def __init__(
        self,
        name: str = "paper",
        overrides: Sequence[str] = (),
        outputs: str | Path = "outputs",
        config_dir: str | Path | None = None,
    ):
        check_arguments(name, overrides, outputs, config_dir)
        self.name = name
        self.overrides = [f"study={name}", f"paths.outputs={outputs}", *overrides]
        self.config_dir = None if config_dir is None else Path(config_dir).expanduser()
        self.config = composed(self.overrides, self.config_dir)
        checked(self.config)
        self.summary: Path | None = None
        self.report: Path | None = None
        self.last_run: Any = None  # the report of the last run (pipeline.run.StudyReport)

    @property
    def folder(self) -> Path:
        """The study folder: ``<outputs>/<study name>``."""
        outputs = Path(str(self.config.paths.outputs)).expanduser().absolute()
        return outputs / str(self.config.study.name)

    def plan(self) -> PlanText:
        """What ``stage=plan`` prints: the tasks, how many are stored, their solver time and
        needs; nothing is run or written."""
        lines: list[str] = []
        _run(self._with({"stage": "plan"}), log=lines.append)
        return PlanText("\n".join(lines))

    def run(self, client: Any = None, *, progress: bool | None = None) -> Any:
        """Run the study (the tasks not stored yet, then the summary) and return its rows, a
        pandas DataFrame, one row per result.  ``client``: a ``distributed.Client`` whose
        workers run the tasks (without it, the config's cluster); ``progress``: a bar of the
        tasks (default: in a notebook or a terminal).  When tasks failed, a :class:`TasksFailed`
        warning names the first few and counts the rest (their rows have status 'error')."""
        if progress not in (None, True, False):
            raise StudyError(f"progress={short_repr(progress)}: True, False or None (the default)")
        shown = in_a_notebook() or sys.stderr.isatty() if progress is None else progress
        config = self._with({"run.progress": bool(shown)})
        report = _run(config, client=client)
        self.last_run = report
        if report.errors:  # the rows are returned: the failures are said, not raised
            from pipeline.cli.exit_lines import failed_tasks_lines

            warnings.warn("\n".join(failed_tasks_lines(report)), TasksFailed, stacklevel=2)
        self.summary = report.summary
        report_page = self.folder / "report.html"
        self.report = report_page if report_page.is_file() else None
        return self.rows()

    def rows(self) -> Any:
        """The study's stored rows, a pandas DataFrame (the newest rows of each task)."""
        from pipeline.storage.store import load_results

        results = self.folder / "results"
        if not results.is_dir():
            import pandas as pd

            return pd.DataFrame()
        return load_results(results)

    def _with(self, settings: dict[str, Any]) -> Any:
        """The study's config with ``settings`` (dotted keys it has: ``stage``,
        ``run.progress``) set on a copy: it was composed and checked once."""
        from copy import deepcopy

        from omegaconf import OmegaConf

        config = deepcopy(self.config)
        for key, value in settings.items():
            OmegaConf.update(config, key, value, merge=False)
        return config

    def __repr__(self) -> str:
        where = f", config_dir={str(self.config_dir)!r}" if self.config_dir else ""
        return f"Study({self.name!r}, overrides={self.overrides[2:]!r}{where}) in {self.folder}"


def check_arguments(name: Any, overrides: Any, outputs: Any, config_dir: Any) -> None:
    """StudyError, naming the argument and its value, for an argument of :class:`Study` of
    the wrong kind: a name that is no text, overrides that are not a list of ``KEY=VALUE``
    strings, an outputs or config_dir folder that is no path (None is no folder: its text
    would be a folder named ``None``)."""
    if not isinstance(name, str):
        raise StudyError(f"name={short_repr(name)}: a study's name, a text such as 'paper'")
    if isinstance(overrides, str):
        raise StudyError(
            f"overrides={short_repr(overrides)}: a list of KEY=VALUE strings, "
            f"e.g. [{short_repr(overrides)}]"
        )
    if not isinstance(overrides, Sequence):
        raise StudyError(
            f"overrides={short_repr(overrides)}: a list of KEY=VALUE strings, "
            "e.g. ['cluster=sync'] (none: [])"
        )
    for i, override in enumerate(overrides):
        if not isinstance(override, str):
            raise StudyError(
                f"overrides[{i}]={short_repr(override)}: a KEY=VALUE string, e.g. 'cluster=sync'"
            )
    for key, folder in (("outputs", outputs), ("config_dir", config_dir)):
        if folder is None and key == "config_dir":
            continue
        if not isinstance(folder, (str, os.PathLike)):
            raise StudyError(
                f"{key}={short_repr(folder)}: a folder's path, a str or a pathlib.Path"
            )


def composed(overrides: list[str], config_dir: Path | None = None) -> Any:
    """The config the command composes from ``overrides`` (and ``--config-dir``), checked as
    the command checks its command line first; StudyError with the command's one line."""
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf.errors import OmegaConfBaseException

    from pipeline.cli.exit_lines import hydra_error_line
    from pipeline.cli.preflight import check_command_line

    argv = list(overrides)
    if config_dir is not None:
        argv.append(f"--config-dir={config_dir}")
    check_command_line(argv)
    searched = list(overrides)
    if config_dir is not None:
        searched.append(f"hydra.searchpath=[file://{config_dir.resolve()}]")
    if GlobalHydra.instance().is_initialized():  # a Hydra app of the caller's is running
        GlobalHydra.instance().clear()
    try:
        with initialize_config_module("pipeline.conf", version_base="1.3"):
            return compose(config_name="config", overrides=searched)
    except (HydraException, OmegaConfBaseException) as exc:
        raise StudyError(hydra_error_line(exc)) from None


def checked(config: Any) -> None:
    """StudyError, naming the key and the value, for a config the command would refuse
    before any work (its values, the study's grid); nothing is read or written."""
    from pipeline.config import checked_config, plain
    from pipeline.running.plan import planned

    planned(checked_config(plain(config)).study)


def _run(config: Any, *, log: Any = print, client: Any = None) -> Any:
    """``run_study`` on ``config``; a stop says what was stored, then raises
    KeyboardInterrupt (the store whole, the client untouched)."""
    from pipeline.cli.exit_lines import stopped_message
    from pipeline.ctrl_c import RunStopped
    from pipeline.run import run_study

    try:
        return run_study(config, log=log, client=client)
    except RunStopped as stop:
        if stop.report is not None:
            line = stopped_message(stop.report, signal.SIGINT, rerun="run()")
            print(line.replace("run the same command again", "call run() again"), file=sys.stderr)
        raise KeyboardInterrupt from None
