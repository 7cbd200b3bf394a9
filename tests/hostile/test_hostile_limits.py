"""Input at the edges of what Python and YAML can read is a config error like any other:
exit 2, one line naming the key (or the file) and the value, quickly, nothing written."""

from __future__ import annotations

import errno
import os
import pathlib
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.commands import cli, cli_in_process
from tests.helpers.repository import ROOT
from tests.helpers.runs import run


def refused(monkeypatch, capsys, tmp_path, *args: str, within: float = 20.0) -> str:
    """The one line of a run refused with exit 2, within ``within`` seconds, that wrote
    nothing."""
    outputs = tmp_path / "out"
    start = time.monotonic()
    status, err = cli_in_process(
        monkeypatch, capsys, *args, "cluster=sync", f"paths.outputs={outputs}"
    )
    took = time.monotonic() - start
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert took < within, f"{took:.1f} s"
    assert not outputs.exists()
    return lines[0]


def study_folder(tmp_path: Path, body: str | bytes) -> Path:
    """A user's study folder holding <tmp>/studies/study/bad.yaml (``body`` after its name
    and family)."""
    (tmp_path / "studies" / "study").mkdir(parents=True)
    head = b"name: bad\nfamily: card_guessing\n"
    data = head + (body.encode() if isinstance(body, str) else body)
    (tmp_path / "studies" / "study" / "bad.yaml").write_bytes(data)
    return tmp_path / "studies"


def test_a_5000_digit_number_on_the_command_line(tmp_path, monkeypatch, capsys):
    """A number longer than Python reads (4300 digits) is refused in one line, its length
    said, before Hydra parses the override."""
    line = refused(monkeypatch, capsys, tmp_path, f"run.max_batch={'9' * 5000}")
    assert line.startswith(
        "error: run.max_batch=99999999...9999 (5000 digits): a number of "
        "5000 digits; numbers have at most 4300 digits"
    ), line


def test_a_5000_digit_number_in_a_study_file(tmp_path, monkeypatch, capsys):
    folder = study_folder(tmp_path, f"grid:\n  deck: [[{'9' * 5000}, 3]]\n")
    line = refused(monkeypatch, capsys, tmp_path, "--config-dir", str(folder), "study=bad")
    assert "bad.yaml: grid.deck[0][0]=99999999...9999 (5000 digits): a number of 5000" in line


@pytest.mark.parametrize("weight", ["1e5000", "1e100000000", "1e-5000", "9" * 200])
def test_a_jar_weight_out_of_range_is_refused_at_once(tmp_path, monkeypatch, capsys, weight):
    """A weight too large, too small or too long for a float is refused in one line within
    seconds, saying it is out of range."""
    override = f"study.grid.jar=[['{weight}','1','1']]"
    line = refused(monkeypatch, capsys, tmp_path, "study=mastermind", override, within=10)
    assert line.startswith("error: study.grid.jar=") and "is out of range" in line, line


@pytest.mark.parametrize(
    ("cluster", "override", "key"),
    [
        ("address", "cluster.timeout=1e400s", "cluster.timeout"),
        ("slurm", "cluster.lifetime=1e400s", "cluster.lifetime"),
        ("slurm", "cluster.worker_timeout=1e400s", "cluster.worker_timeout"),
        ("local", "cluster.memory_limit=1e400GB", "cluster.memory_limit"),
    ],
)
def test_an_overflowing_duration_or_size(tmp_path, monkeypatch, capsys, cluster, override, key):
    """A duration or a size that overflows a float is refused in one line naming its key."""
    args = [f"cluster={cluster}", override]
    if cluster == "address":
        args.append("cluster.address=tcp://127.0.0.1:1")
    outputs = tmp_path / "out"
    status, err = cli_in_process(monkeypatch, capsys, *args, f"paths.outputs={outputs}")
    assert status == 2 and err.startswith(f"error: {key}='1e400"), err
    assert len(err.strip().splitlines()) == 1 and not outputs.exists()


def test_a_study_file_that_is_not_utf8(tmp_path, monkeypatch, capsys):
    folder = study_folder(tmp_path, b"description: caf\xe9\ngrid:\n  deck: [[3, 3]]\n")
    line = refused(monkeypatch, capsys, tmp_path, "--config-dir", str(folder), "study=bad")
    assert (
        line == f"error: {folder}/study/bad.yaml: line 3: not UTF-8 text (byte 0xe9); save "
        "the file as UTF-8"
    ), line


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("a: &a [*a]\n", "a[0]: an alias inside the value it names (a loop)"),
        ("grid:\n  deck: &d [[3, 3], *d]\n", "grid.deck[1]: an alias inside the value it"),
        (
            "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
            + "".join(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)),
            "more than 1,000,000 values once its aliases are expanded",
        ),
        ("grid:\n  deck: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply to read"),
    ],
    ids=["self-alias", "self-alias-in-grid", "alias-bomb", "deep"],
)
def test_a_study_file_hydra_cannot_read_in_bounded_time(tmp_path, monkeypatch, capsys, body, said):
    """A study file with an alias inside the value it names, an alias bomb (9^10 values) or
    nesting too deep to read is refused within seconds, one line naming the file and what
    is wrong where."""
    folder = study_folder(tmp_path, body)
    line = refused(monkeypatch, capsys, tmp_path, "--config-dir", str(folder), "study=bad")
    assert line.startswith(f"error: {folder}/study/bad.yaml: ") and said in line, line


def test_the_default_study_file_is_read_safely_too(tmp_path, monkeypatch, capsys):
    """A study file reached without study= on the command line (the primary config's
    default, here of the user's own primary config) gets the same check."""
    folder = tmp_path / "studies"
    (folder / "study").mkdir(parents=True)
    (folder / "mine.yaml").write_text("defaults:\n  - study: mine\n")
    (folder / "study" / "mine.yaml").write_text("name: mine\nfamily: card_guessing\na: &a [*a]\n")
    line = refused(monkeypatch, capsys, tmp_path, "--config-dir", str(folder), "-cn", "mine")
    assert "mine.yaml: a[0]: an alias inside the value it names" in line, line


BROKEN_FAMILY = "raise RuntimeError('the module of a family that cannot load')\n"


def test_a_families_module_that_fails_to_import(tmp_path):
    """A module named in GUESSLAB_FAMILIES that fails to import is one line naming it and
    its error, exit 2, nothing written."""
    (tmp_path / "broken_game.py").write_text(BROKEN_FAMILY)
    env = {
        "GUESSLAB_FAMILIES": "broken_game",
        "PYTHONPATH": os.pathsep.join(map(str, [tmp_path, ROOT])),
    }
    out = cli(
        "cluster=sync",
        "stage=plan",
        f"paths.outputs={tmp_path / 'out'}",
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == (
        "error: GUESSLAB_FAMILIES='broken_game': module 'broken_game': cannot be imported "
        "(RuntimeError: the module of a family that cannot load)"
    )
    assert not (tmp_path / "out").exists()


def test_a_multirun_from_a_read_only_folder(tmp_path, monkeypatch, capsys):
    """A multirun whose sweep folder cannot be made is one line naming paths.outputs and the
    folder, exit 2, nothing made."""
    read_only = tmp_path / "ro"
    read_only.mkdir()
    real_mkdir = pathlib.Path.mkdir

    def mkdir(self, *args, **kwargs):  # as on a read-only file system (root writes anywhere)
        if str(self.absolute()).startswith(str(read_only)):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    monkeypatch.chdir(read_only)
    status, err = cli_in_process(monkeypatch, capsys, "-m", "cluster=sync", "study.name=a,b")
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith(
        f"error: paths.outputs='outputs': cannot make the multirun folder {read_only}/outputs/"
    ), err
    assert "(Read-only file system)" in err and list(read_only.iterdir()) == []


# ------------------------------------------------------- a disk that refuses to write more


def small_files_only(limit: int = 64):
    """A child process that cannot write more than ``limit`` bytes to a file, as on a full
    disk (RLIMIT_FSIZE: a longer write fails with EFBIG, SIGXFSZ ignored)."""
    import resource
    import signal

    def limit_writes():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_writes


def cli_on_a_full_disk(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        preexec_fn=small_files_only(),
    )


def test_a_full_disk_during_the_summary_stage(tmp_path):
    """A full disk while the summary is written is one line naming paths.outputs, exit 2; no
    partial summary, figure or staging folder is left, and the stored results are intact."""
    stored = run(tmp_path, "cluster=sync", "stage=run")  # in this process: only the store
    assert stored.errors == 0  # the command's exit 0
    before = sorted((tmp_path / "paper" / "results").rglob("*"))
    out = cli_on_a_full_disk("cluster=sync", "stage=summary", f"paths.outputs={tmp_path}")
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == (
        f"error: paths.outputs='{tmp_path}': cannot write {tmp_path / 'paper'} (File too "
        "large); no partial file was left, the stored results are intact"
    )
    left = [p for p in tmp_path.rglob("*") if p.is_file() and "results" not in p.parts]
    assert sorted(p.name for p in left if p.parent.name != "runs") == [".lock", ".running"], left
    assert not list((tmp_path / "paper").glob(".*staging*"))
    assert sorted((tmp_path / "paper" / "results").rglob("*")) == before


def test_a_full_disk_at_the_start_of_a_run(tmp_path):
    """A full disk at the start of a run is one line naming paths.outputs, exit 2, and the
    run removes the study folder it made."""
    out = cli_on_a_full_disk("cluster=sync", "run.progress=false", f"paths.outputs={tmp_path}")
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: paths.outputs='{tmp_path}': "), lines
    assert "(File too large)" in lines[0]
    assert list(tmp_path.iterdir()) == []  # the run made the study folder, and removed it
