"""A multirun checks every job's config before Hydra writes anything.

Hydra's sweeper creates the sweep folder (``hydra.sweep.dir``, made from ``paths.outputs``
and ``study.name``) and writes ``multirun.yaml`` there before any job runs, so without this
check a refused config would leave files, even outside ``paths.outputs``
(``study.name=../../escape``).
:class:`CheckEveryJob`, a Hydra callback named in ``conf/config.yaml``, composes each job of
the sweep at ``on_multirun_start`` (before the sweeper); when every job would be refused,
the multirun exits 2 with nothing written.  A sweep with some good jobs runs them (the
folder is theirs) and each refused job exits 2 writing nothing of its own.

Hydra also makes a folder for each job (``hydra.sweep.dir``/``hydra.sweep.subdir``, composed
from the job's own overrides) before the job starts, so a refused job of a sweep with
``study.name=good,../../escape`` would get ``escape/multirun/<time>/<n>`` outside
``paths.outputs``.  Each job's folder is the sweep's folder instead: ``hydra.sweep.subdir``
is ``${guesslab_job_dir:}``, which :class:`CheckEveryJob` resolves once in the driver to
the sweep folder's absolute path (a path joined to an absolute one is that one), and every
job's config carries the value (Hydra copies the driver config's resolver cache into each
job's, as it does for ``${now:...}``).  The job's folder is then one that exists: Hydra
makes none, and a job writes nothing there (``hydra.output_subdir`` is null).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf, open_dict

from pipeline.errors import StudyError
from solvers.kit.words import counted

JOB_DIR_RESOLVER = "guesslab_job_dir"
SEARCH_SWEEPER = "hydra_plugins.guesslab_sweeper.sweeper.GuesslabSweeper"  # its trials are no jobs


@dataclass
class Sweep:
    """A multirun of this process (its driver): when it began (ns), its config, Hydra's
    config loader, and its folder once a job of it runs."""

    started: int
    config: DictConfig
    loader: Any
    folder: str | None = None


_sweep: Sweep | None = None  # this process's latest multirun


def job_dir() -> str:
    """``${guesslab_job_dir:}``: the sweep folder (absolute) once :class:`CheckEveryJob`
    pinned it, else ``.`` (the job's ``hydra.sweep.dir`` itself)."""
    return _sweep.folder if _sweep is not None and _sweep.folder else "."


if not OmegaConf.has_resolver(JOB_DIR_RESOLVER):
    OmegaConf.register_new_resolver(JOB_DIR_RESOLVER, job_dir, use_cache=True)


class SweepRefused(BaseException):  # noqa: N818 - a refusal, not an error of the sweep
    """A job's config was refused: the multirun stops before Hydra writes anything.

    A BaseException because Hydra's callbacks turn any Exception into a warning and go on.
    """


class CheckEveryJob(Callback):
    """Hydra callback: refuse a multirun in which any job's config would be refused."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Check every job of the sweep (what run_study checks first); SweepRefused if every
        job would be refused (a sweep with some good jobs runs them, the others exit 2)."""
        from hydra.core.global_hydra import GlobalHydra

        from pipeline.run import prepared

        if str(config.hydra.sweeper.get("_target_", "")) == SEARCH_SWEEPER:
            return  # a search checks its config, objective and space itself, before any work
        global _sweep
        _sweep = Sweep(time.time_ns(), config, GlobalHydra.instance().config_loader())
        verdicts: dict[str, str | None] = {}
        for overrides in job_overrides(config):
            job = job_config(config, overrides)
            key = json.dumps(job, sort_keys=True, default=str)
            if key not in verdicts:
                try:
                    prepared(job)
                except StudyError as exc:
                    verdicts[key] = str(exc)
                    continue
                make_sweep_dir(config, job)  # a job that runs: Hydra's sweep folder is wanted
                pin_job_dirs(config, _sweep)
                return
        if verdicts:
            raise SweepRefused(next(iter(verdicts.values())))


def pin_job_dirs(config: DictConfig, sweep: Sweep) -> None:
    """Make every job's folder the sweep folder (see the module docstring): resolve
    ``${guesslab_job_dir:}`` in the driver's config, where it is cached and then copied
    into each job's config."""
    sweep.folder = os.path.abspath(str(config.hydra.sweep.dir))
    str(config.hydra.sweep.subdir)  # resolved now: the value lands in the config's cache


def make_sweep_dir(config: DictConfig, job: dict[str, Any]) -> None:
    """Make Hydra's sweep folder (as its launcher would next); SweepRefused, naming
    ``paths.outputs``, where it cannot be made (a read-only working folder, say)."""
    from pathlib import Path

    folder = Path(str(config.hydra.sweep.dir))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SweepRefused(
            f"paths.outputs={job['paths']['outputs']!r}: cannot make the multirun folder "
            f"{folder.absolute()} ({exc.strerror or exc}); run from a folder you can write "
            "to, or set paths.outputs to one"
        ) from None


def job_overrides(config: DictConfig, loader: Any = None) -> list[list[str]]:
    """The override list of every job of the sweep, as Hydra's basic sweeper expands it
    (``loader``: Hydra's config loader, by default the running Hydra's)."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.override_parser.overrides_parser import OverridesParser

    loader = loader or GlobalHydra.instance().config_loader()
    parser = OverridesParser.create(config_loader=loader)
    arguments = list(OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
    overrides = parser.parse_overrides(arguments)
    return [job for batch in BasicSweeper.split_arguments(overrides, None) for job in batch]


def job_config(config: DictConfig, overrides: list[str], loader: Any = None) -> dict[str, Any]:
    """One job's composed config, without Hydra's own node, as plain containers."""
    from hydra.core.global_hydra import GlobalHydra

    loader = loader or GlobalHydra.instance().config_loader()
    job = loader.load_sweep_config(config, overrides)
    with open_dict(job):
        del job["hydra"]
    return OmegaConf.to_container(job, resolve=True)


def sweep_stopped_message(how: str = "Ctrl-C") -> str | None:
    """The one line on Ctrl-C (or what ``how`` names) in a multirun: for each study folder
    the sweep's jobs write, the tasks stored since the sweep began and in all, and how to
    resume; None when the sweep had not begun (then no job stored anything).

    The driver reads the stores itself: a job may run in another process (joblib, Slurm, a
    Dask worker) that Ctrl-C ends before it can say what it stored.  A file's name holds
    the time it was written (``part-<ns>-...``), which tells this sweep's files apart.
    """
    if _sweep is None:
        return None
    from pipeline.storage import store_layout, store_newest
    from pipeline.storage.study_folder import StudyFolder

    started, config, loader = _sweep.started, _sweep.config, _sweep.loader
    try:
        jobs = job_overrides(config, loader)
        studies = (StudyFolder.of(job_config(config, o, loader)) for o in jobs)
        folders = list({study.path: study for study in studies}.values())  # each folder once
    except Exception:  # noqa: BLE001 - the message falls back to the job's own line
        return None
    said = []
    for folder in folders:
        results = folder.results
        files = folder.result_files()
        new = [f for f in files if store_layout.written_ns(f) >= started]
        this_sweep, every = (
            len(store_newest.ids_in(new).every),
            len(store_newest.ids_in(files).every),
        )
        said.append(
            f"{folder.name}: {counted(this_sweep, 'task')} stored by this multirun, "
            f"{every} in all, in {results}"
        )
    return (
        f"stopped ({how}) in a multirun of {counted(len(jobs), 'job')}; {'; '.join(said)}; "
        "run the same command again to compute the rest (stored tasks are skipped)"
    )
