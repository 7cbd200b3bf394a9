"""The suite's fixtures and its Hypothesis profile; helpers live in tests/helpers/."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import dask_cluster
from tests.helpers.browser import headless_chromium
from tests.helpers.repository import ROOT
from tests.helpers.runs import run

# property tests draw the same examples on every run (CI stays reproducible), with no
# per-example deadline (the machine may be busy)
settings.register_profile("guesslab", derandomize=True, deadline=None)
settings.load_profile("guesslab")

# Numba's parallel kernels run on GNU OpenMP, whose threads spin at each barrier before they
# sleep.  On a machine shared with other jobs the thread a barrier waits for is often not
# running, and the spinning one burns its time slice: many small parallel calls (a layer
# written in parts, small decks) took 10 to 30 times their idle time.  Passive waiting
# changes no value; set before any parallel kernel loads OpenMP, and inherited by the
# processes the tests start (workers, commands).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# The commands the tests start run as in a user's shell, without two settings some shells and
# CI machines make.  PYTHONUNBUFFERED: they write into pipes, as a user's do into `| tee` or a
# Slurm job's output file, where Python's standard output is buffered by blocks; a test that
# reads a command's lines as they come sees what that user sees.  PYTHONDONTWRITEBYTECODE:
# Python keeps the compiled modules it imports (__pycache__, beside Numba's cache), so each
# command after the first loads them instead of compiling the project's source again.
os.environ.pop("PYTHONUNBUFFERED", None)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


@pytest.fixture
def outputs(tmp_path: Path) -> Path:
    """A fresh results root."""
    return tmp_path / "outputs"


@pytest.fixture(scope="module")
def dask_address() -> Iterator[str]:
    """The address of a scheduler with two single-thread workers, all subprocesses, for the
    tests of one module.  Not kept for the session: idle, its five processes still take ~10%
    of a core, and they are children of this process, which tests/hostile/test_security.py
    counts."""
    if not dask_cluster.DASK_CLI.exists():
        pytest.skip(f"no dask command beside {sys.executable}")
    address, procs = dask_cluster.start_cluster(2)
    try:
        yield address
    finally:
        dask_cluster.stop(procs)


@pytest.fixture(scope="session")
def paper_outputs(tmp_path_factory) -> Path:
    """An outputs folder where the default study (paper) ran and summarised under
    cluster=sync, made once for the session.  Read only: a test that changes it works on a
    copy (:func:`tests.helpers.folders.copy_outputs`)."""
    outputs = tmp_path_factory.mktemp("paper") / "outputs"
    run(outputs, "cluster=sync")
    return outputs


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """The manual built once for the session with ``mkdocs build --strict`` (a failing build
    fails every user), for tests/test_docs.py and tests/test_docs_offline.py.  Read only."""
    site = tmp_path_factory.mktemp("mkdocs") / "site"
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return site


@pytest.fixture(scope="module")
def driver() -> Iterator:
    """A headless Chromium WebDriver (the browser installed first if missing), one for the
    tests of a module."""
    drv = headless_chromium("1300,1600", {"browser": "ALL"})
    yield drv
    drv.quit()
