"""What a run records of itself in every results file's metadata: the config, the versions of
the packages that decide the results, the code's commit, the family's solver version, the
user's own code (its fingerprint), the config folders Hydra searched (``--config-dir``), the
time, the run record's name and the Hydra job of a multirun (which
:func:`pipeline.storage.store.load_results` gives each row).  The run's config itself goes
under ``<study>/runs/<time>.yaml``
(:meth:`pipeline.storage.study_folder.StudyFolder.save_run_config`).

:mod:`pipeline.reproduce` reads it back to recompute a stored study and says what changed.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import subprocess
import sys
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from solvers.own_code import files_fingerprint, module_fingerprint, own_strategies, source_files
from solvers.registry import Family

# every package a stored value passes through: numba and llvmlite compile the kernels that
# compute the float and Monte Carlo values; Dask runs them (a family's distributed mode too)
PACKAGES = (
    "guesslab",
    "numpy",
    "numba",
    "llvmlite",
    "dask",
    "distributed",
    "pyarrow",
    "pandas",
    "hydra-core",
)


def run_metadata(
    given: dict[str, Any],
    fam: Family,
    run: str | None = None,
    search: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What goes into every results file's metadata: the run's config (plain), versions,
    code, time (``fam``: the study's family, as its plan holds it); the run's record
    (``run``: the name of its ``runs/<time>.yaml``, without the suffix) and the Hydra job of
    a multirun that ran it (:func:`hydra_job`); for a run of a search's batch, ``search``:
    the search's name and the trial that asked for each task (``{"name": ...,
    "trials": {task_id: number}}``, :mod:`pipeline.search.runner`)."""
    search_part = {} if search is None else {"search": search}
    return {
        "config": given,
        "packages": dict(package_versions()),
        "code_version": code_version(),
        "solver_version": fam.version,
        "own_code": own_code(given["study"], fam),
        "config_sources": config_sources(),
        "python": sys.version.split()[0],
        "written_at": dt.datetime.now(dt.UTC).isoformat(),
        "run": run,
        "job": hydra_job(),
        **search_part,
    }


def hydra_job() -> dict[str, Any] | None:
    """The Hydra job of a multirun running this run (``hydra.job.num``, its place in the
    sweep, and ``hydra.job.id``), or None: a single run (Hydra sets neither) or a run composed
    outside the command, where Hydra holds no runtime config."""
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    if not HydraConfig.initialized():
        return None
    job = HydraConfig.get().job
    num, ident = OmegaConf.select(job, "num"), OmegaConf.select(job, "id")
    if not isinstance(num, int):
        return None
    return {"num": num, "id": None if ident is None else str(ident)}


@functools.cache
def package_versions() -> dict[str, str]:
    """Installed versions of the packages that decide the results (the process's: read once,
    as its modules were imported once)."""
    out = {}
    for pkg in PACKAGES:
        try:
            out[pkg] = importlib_metadata.version(pkg)
        except importlib_metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


@functools.cache
def code_version() -> str:
    """The git commit of the code (with +dirty for local changes), or the package version:
    asked once a process (a ``git describe`` costs ~40 ms, and a search's many small runs
    would pay it each batch)."""
    root = Path(__file__).resolve().parents[2]
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


def own_code(study: dict[str, Any], fam: Family) -> dict[str, Any]:
    """The user's own code a study's values depend on, each with the fingerprint of its files
    (:func:`solvers.own_code.files_fingerprint`): the module of its family ``fam`` when
    it comes from elsewhere (``GUESSLAB_FAMILIES`` or an entry point: its version carries the
    same fingerprint), and the module of each strategy of one's own the study names; with
    the ``GUESSLAB_FAMILIES`` setting."""
    family = None
    if "+code." in fam.version:
        module = fam.solver.run.__module__
        family = {"module": module, "fingerprint": files_fingerprint(source_files(module))}
    strategies = {}
    for name, target in own_strategies(study).items():
        module = target.rpartition(".")[0]
        strategies[name] = {"target": target, "fingerprint": module_fingerprint(module)}
    return {
        "family": family,
        "strategies": strategies,
        "GUESSLAB_FAMILIES": os.environ.get("GUESSLAB_FAMILIES"),
    }


def config_sources() -> list[dict[str, str]] | None:
    """The config folders Hydra searched for this run (Hydra's runtime ``config_sources``:
    guesslab's own, Hydra's, and a ``--config-dir`` as provider ``command-line``), or None for
    a run composed outside the command (:func:`pipeline.run.run_study` called from Python,
    where Hydra holds no runtime config)."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return None
    sources = HydraConfig.get().runtime.config_sources
    return [{"provider": s.provider, "schema": s.schema, "path": s.path} for s in sources]
