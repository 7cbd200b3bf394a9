"""What a run records of itself: its config under ``<study>/runs/<time>.yaml``, and in every
results file's metadata the config, the versions of the packages that decide the results,
the code's commit, the family's solver version and the time."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from pipeline.safe_paths import ensure_dir, open_regular
from solvers.registry import get_family

PACKAGES = ("guesslab", "dask", "distributed", "pyarrow", "pandas", "numpy", "hydra-core")


def save_run_config(given: dict[str, Any], where: Path) -> Path:
    """Keep the run's config (plain, resolved) under ``<study>/runs/``; its path."""
    import yaml

    runs = ensure_dir(where / "runs", below=where)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H-%M-%S-%fZ")
    path = runs / f"{stamp}.yaml"
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        with open(fd, "w") as fh:
            fh.write(yaml.safe_dump(given, sort_keys=False))
    except BaseException:  # a full disk: no empty or partial record of the run is left
        path.unlink(missing_ok=True)
        raise
    return path


def run_metadata(given: dict[str, Any]) -> dict[str, Any]:
    """What goes into every results file's metadata: the run's config (plain), versions,
    code, time."""
    fam = get_family(given["study"]["family"])
    return {
        "config": given,
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
