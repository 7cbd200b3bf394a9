"""``python -m pipeline`` as a user runs it (a process of its own) or in this process, and
the environment of a user's own studies and families."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.repository import ROOT


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


def module_command(
    module: str, *args: str, timeout: float = 300, memory: int | None = None
) -> subprocess.CompletedProcess:
    """``python -m MODULE ARGS`` (one of guesslab's tools: reproduce, describe) as a user runs
    it, from the repository, output captured; within ``memory`` bytes of address space when
    given (a hostile folder must not make the tool take the machine's memory)."""

    def limited() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=timeout,
        preexec_fn=limited if memory is not None else None,
    )
