"""Helpers shared by several test modules."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from conftest import ROOT
from hydra import compose, initialize_config_dir


def compose_config(*overrides: str):
    """The composed config, as `python -m pipeline OVERRIDES` would see it."""
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=list(overrides))


def run(outputs: Path, *overrides: str, logged: list[str] | None = None):
    """``run_study`` in this process on the composed config, results under ``outputs``, no
    progress bar; its report.  The run's log lines go to ``logged`` when given."""
    from pipeline.run import run_study

    cfg = compose_config(f"paths.outputs={outputs}", "run.progress=false", *overrides)
    if logged is None:
        return run_study(cfg, log=lambda *_: None)
    return run_study(cfg, log=lambda *a: logged.append(" ".join(map(str, a))))


def copy_outputs(outputs: Path, to: Path) -> Path:
    """A copy of the outputs folder ``outputs`` at ``to`` (links copied as links), to change."""
    return Path(shutil.copytree(outputs, to, symlinks=True))


def pipeline_command(*args: str) -> list[str]:
    """The command line `python -m pipeline ARGS` (this interpreter)."""
    return [sys.executable, "-m", "pipeline", *args]


def own_study_command(folder: Path, study: str, *args: str) -> list[str]:
    """`python -m pipeline` running study ``study`` of ``folder``/studies/study/ (a study a
    test wrote, beside the shipped ones), with ``args``."""
    return pipeline_command("--config-dir", str(folder / "studies"), f"study={study}", *args)


def own_family_env(folder: Path, module: str) -> dict[str, str]:
    """This process's environment with the family module ``module`` (a file in ``folder``)
    importable and named in GUESSLAB_FAMILIES, as a user adds a game of their own."""
    env = {**os.environ, "GUESSLAB_FAMILIES": module}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
    return env


def cli(
    *args: str, cwd: Path = ROOT, env: dict | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`python -m pipeline ARGS` run as a user would, from ``cwd``, output captured."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        pipeline_command(*args),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=timeout,
    )


def cli_run_in_process(monkeypatch, capsys, *args: str) -> subprocess.CompletedProcess:
    """`python -m pipeline ARGS` run in this process, as :func:`cli` reports it (exit status,
    stdout, stderr): for the tests where the process boundary is not what is checked."""
    from pipeline.__main__ import main

    monkeypatch.setattr(sys, "argv", ["pipeline", *args])
    try:
        main()
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["pipeline", *args], status, out.out, out.err)


def cli_in_process(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """(exit status, stderr) of ``python -m pipeline ARGS``, run in this process."""
    done = cli_run_in_process(monkeypatch, capsys, *args)
    return done.returncode, done.stderr


def python_output(code: str) -> str:
    """What `python -c CODE` prints in a fresh interpreter in the repository (it must exit 0)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def reference_task_id(task) -> str:
    """Task ids as defined: SHA-256 of the sorted, compact JSON of version and parameters."""
    from solvers.registry import get_family
    from solvers.task_ids import identity_params

    payload = json.dumps(
        {"version": get_family(task["family"]).version, "params": identity_params(task)},
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


def page_data(path: Path) -> dict:
    """The JSON a report page's script renders (its tables and figures)."""
    text = path.read_text()
    found = re.search(r"<script type='application/json' id='gl-data'>(.*?)</script>", text, re.S)
    assert found, "no data block"
    return json.loads(found.group(1).replace("<\\/", "</"))


def ranks_table() -> dict[int, dict[str, float | int]]:
    """The ranks page's table of n types of 4 (docs/games/card_guessing_ranks52.md): n ->
    feasible states and the optimal, greedy and persistent values (12 decimals)."""
    page = (ROOT / "docs" / "games" / "card_guessing_ranks52.md").read_text()
    head = "| n | states | optimal | greedy | persistent |"
    lines = page[page.index(head) :].splitlines()[2:]
    table = {}
    for line in lines:
        if not line.startswith("| "):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[int(cells[0])] = {
            "states": int(cells[1].replace(",", "")),
            "optimal": float(cells[2]),
            "greedy": float(cells[3]),
            "persistent": float(cells[4]),
        }
    return table


BROWSER_SETUP = ROOT / "scripts" / "browser_setup.sh"


def interruptible() -> None:
    """For ``preexec_fn``: Ctrl-C (SIGINT) reaches the child as at a terminal, however the
    tests were started: a shell runs background jobs with SIGINT ignored, an ignored signal
    stays ignored across exec, and Python then installs no KeyboardInterrupt handler."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def as_a_terminal_job() -> None:
    """For ``preexec_fn``: :func:`interruptible`, in a process group of its own (as a
    terminal's foreground job, which Ctrl-C reaches whole)."""
    interruptible()
    os.setpgrp()


@contextlib.contextmanager
def one_process_at_a_time(name: str):
    """Hold a lock file named for ``name`` in the temporary folder while the block runs: the
    test processes (pytest-xdist) may each find the browser or Slurm missing, and two apt-get
    runs at once fail on dpkg's lock.  The later one waits, then finds the setup done.  The
    lock is this process's own (Python does not pass it on to the setup's daemons)."""
    with open(Path(tempfile.gettempdir()) / f"guesslab-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


BROWSER_CANNOT_RUN = 3  # browser_setup.sh's exit status when this machine cannot install it


def browser_paths() -> tuple[str | None, str | None]:
    """(chromium, chromedriver) found on PATH, or None each."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    return browser, shutil.which("chromedriver")


def headless_chromium(window_size: str, logging_prefs: dict):
    """A headless Chromium WebDriver of ``window_size`` ("W,H") keeping the logs named in
    ``logging_prefs``; the browser is installed first (scripts/browser_setup.sh) if missing,
    and the test is skipped where that cannot be done."""
    import pytest

    if None in browser_paths():
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            pytest.skip("chromium is not installed and installing it needs root and apt-get")
        with one_process_at_a_time("browser-setup"):
            res = subprocess.run(
                ["bash", str(BROWSER_SETUP)], capture_output=True, text=True, timeout=900
            )
        if res.returncode == BROWSER_CANNOT_RUN:
            pytest.skip(f"scripts/browser_setup.sh cannot run here: {res.stderr.strip()}")
        assert res.returncode == 0, f"scripts/browser_setup.sh failed:\n{res.stderr}"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, chromedriver = browser_paths()
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.add_argument(f"--window-size={window_size}")
    options.binary_location = browser
    options.set_capability("goog:loggingPrefs", logging_prefs)
    return webdriver.Chrome(service=Service(chromedriver), options=options)


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under ``root`` (links not followed): a file's bytes, a link's target."""
    out: dict[str, object] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in (*dirs, *files):
            path = Path(folder, name)
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_file():
                out[rel] = path.read_bytes()
            else:
                out[rel] = "folder"
    return out
