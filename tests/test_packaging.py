"""guesslab installed from its wheel runs from any folder: the configs travel inside it."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.helpers.repository import ROOT


def run(cmd: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GUESSLAB_OUTPUTS")}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, str]:
    """A freshly built wheel, and what the build printed."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"  # a clean copy: setuptools' build/ folder may hold stale files
    anywhere = shutil.ignore_patterns(".*", "*.egg-info", "__pycache__")

    def ignore(folder: str, names: list[str]) -> set[str]:
        # the checkout's build and dist folders and outputs/ (not pipeline/outputs/)
        top = {"build", "dist", "outputs"} if Path(folder) == ROOT else set()
        return set(anywhere(folder, names)) | (top & set(names))

    shutil.copytree(ROOT, source, ignore=ignore)
    built = run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp), str(source)], tmp)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = tmp.glob("guesslab-*.whl")
    return wheel, built.stdout + built.stderr


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory) -> Path:
    """A fresh virtual environment with guesslab installed from a freshly built wheel (not
    editable); its dependencies come from this environment's site-packages through a .pth
    line (no download), which does not run this environment's editable-install hook."""
    wheel = built[0]
    tmp = tmp_path_factory.mktemp("venv")
    venv = tmp / "venv"
    made = run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    purelib = run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp
    )
    ours = {sysconfig.get_path("purelib"), *site.getsitepackages()}
    (Path(purelib.stdout.strip()) / "_guesslab_deps.pth").write_text("\n".join(sorted(ours)))
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps"]
    done = run([*pip, "--no-index", str(wheel)], tmp)
    assert done.returncode == 0, done.stderr
    return venv / "bin"


@pytest.mark.slow
def test_the_installed_package_is_the_wheel_s(installed, tmp_path):
    where = run(
        [str(installed / "python"), "-c", "import pipeline; print(pipeline.__file__)"], tmp_path
    )
    assert str(installed.parent) in where.stdout and str(ROOT) not in where.stdout


@pytest.mark.slow
@pytest.mark.parametrize("command", [["python", "-m", "pipeline"], ["guesslab"]])
def test_the_default_study_runs_from_any_folder(installed, tmp_path, command):
    exe = [str(installed / command[0]), *command[1:]]
    res = run([*exe, "paths.outputs=out", "run.progress=false"], tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    summary = (tmp_path / "out" / "paper" / "summary.md").read_text()
    assert "475/112" in summary and "2383/560" in summary
    report = (tmp_path / "out" / "paper" / "report.html").read_text()  # assets in the wheel
    assert "2383/560" in report and "function Table(" in report
    assert (tmp_path / "out" / "index.html").exists()


@pytest.mark.slow
def test_the_terminal_game_starts(installed, tmp_path):
    res = run([str(installed / "guesslab-play"), "--help"], tmp_path)
    assert res.returncode == 0 and "usage" in res.stdout.lower()


@pytest.mark.slow
def test_an_unknown_study_lists_the_shipped_ones(installed, tmp_path):
    res = run([str(installed / "guesslab"), "study=nonesuch", "paths.outputs=out"], tmp_path)
    assert res.returncode == 2 and "paper" in res.stderr and "high_low" in res.stderr


@pytest.mark.slow
def test_the_build_is_quiet_and_the_wheel_holds_every_module(built):
    """No setuptools "Package would be ignored" warning (every data folder is declared), and
    every Python file and data file of the source packages is in the wheel."""
    wheel, log = built
    assert "would be ignored" not in log, log[-3000:]
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    wanted = {
        p.relative_to(ROOT).as_posix()
        for top in ("pipeline", "solvers")
        for p in (ROOT / top).rglob("*")
        if p.suffix in (".py", ".js", ".css") and "__pycache__" not in p.parts
    }
    wanted |= {
        "pipeline/" + p.relative_to(ROOT).as_posix() for p in (ROOT / "conf").rglob("*.yaml")
    }
    assert not wanted - names, sorted(wanted - names)
