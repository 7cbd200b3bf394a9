"""What a run believes of the claims in its study folder (pipeline/running/claims.py) and who may
open the study's lock and claim files (pipeline/storage/study_folder.py, locking.py): a held
claim that is unreadable, or names a process of this host that is gone, is removed in one line
and the run goes on; what a believed claim says reaches the refusal made visible; a claim naming
more tasks than a run lists is not listed; claim and lock files are mode 0600."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from pipeline.errors import StudyError
from pipeline.run import prepared
from pipeline.running import claims
from pipeline.storage import locking, study_folder
from pipeline.storage.study_folder import CLAIMS, StudyFolder
from tests.helpers.nap_driver import nap_overrides, register_nap
from tests.helpers.runs import compose_config, run


def naps(outputs: Path, n: int = 2) -> list[str]:
    return [*nap_overrides(n, 0), "cluster=sync", f"paths.outputs={outputs}"]


def claims_folder(outputs: Path) -> Path:
    folder = outputs / "naps" / CLAIMS
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def genuine(outputs: Path, **changed) -> dict:
    """What a run of ``naps(outputs)`` writes in its claim, with ``changed`` fields."""
    register_nap()
    study = prepared(compose_config(*naps(outputs)), log=lambda *_: None).conf.study.plain()
    who = {"host": socket.gethostname(), "pid": os.getpid(), "started": time.time(),
           "command": "python -m pipeline", "study": study, "recompute": False}  # fmt: skip
    return {**who, **changed}


@contextlib.contextmanager
def held(*paths: Path):
    """The files at ``paths`` locked (LOCK_EX) by this process through files of their own,
    as another live process would hold them."""
    fds = [os.open(p, os.O_RDONLY) for p in paths]
    try:
        for fd in fds:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        for fd in fds:
            os.close(fd)


def dead_pid() -> int:
    """The id of a process that has ended and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", ""])
    child.wait()
    return child.pid


@contextlib.contextmanager
def zombie():
    """A child process that has ended and is not reaped yet (a zombie): its id."""
    child = subprocess.Popen(["true"])
    try:
        while Path(f"/proc/{child.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
            time.sleep(0.005)
        yield child.pid
    finally:
        child.wait()


BAD = {
    "deep": b"[" * 200_000,
    "not-json": b"\x1b[31m{not json",
    "not-utf8": b"\xff\xfe\x00",
    "a-list": b"[1, 2]",
    "empty": b"",
    "too-large": b" " * (1 << 20) + b"{}",  # over claims.CLAIM_BYTES
}


def test_held_claims_of_bad_content_are_removed_in_one_line_each_and_the_run_goes_on(
    tmp_path,
):
    folder = claims_folder(tmp_path)
    paths = {name: folder / f"{name}.json" for name in BAD}
    for name, data in BAD.items():
        paths[name].write_bytes(data)
    fields = {"pid-text": {"pid": "1"}, "pid-bool": {"pid": True}, "no-host": {"host": None},
              "started-nan": {"started": float("nan")}, "study-list": {"study": [1]},
              "pid-huge": {"pid": 10**4000}}  # fmt: skip
    for name, change in fields.items():
        paths[name] = folder / f"{name}.json"
        paths[name].write_text(json.dumps(genuine(tmp_path, **change)))
    logged: list[str] = []
    with held(*paths.values()):
        report = run(tmp_path, *naps(tmp_path), logged=logged)
    assert report.computed == 2
    said = [line for line in logged if line.startswith("warning: the claim")]
    assert len(said) == len(paths), said
    for path in paths.values():
        (line,) = [line for line in said if f"{path} is unreadable (" in line]
        assert "it is not believed: removed, and this run goes on" in line
        assert line.isprintable() and len(line) < 600, line
    assert not folder.exists()


@pytest.mark.parametrize("gone", ["reaped", "zombie"])
def test_a_held_claim_of_a_process_that_is_gone_is_not_believed(tmp_path, gone):
    """Whoever holds its lock (here: this process), a claim naming a process of this host
    that has ended stops nobody; the line says so."""
    with contextlib.ExitStack() as stack:
        pid = dead_pid() if gone == "reaped" else stack.enter_context(zombie())
        path = claims_folder(tmp_path) / f"{socket.gethostname()}-{pid}-0.json"
        path.write_text(json.dumps(genuine(tmp_path, pid=pid)))
        logged: list[str] = []
        with held(path):
            assert run(tmp_path, *naps(tmp_path), logged=logged).computed == 2
    (line,) = [line for line in logged if line.startswith("warning: the claim")]
    why = "no such process" if gone == "reaped" else "it has ended (a zombie)"
    assert f"is from process {pid} of this host, which is gone ({why})" in line
    assert not path.exists()


def test_a_claim_nobody_holds_is_removed_in_one_line_naming_its_run(tmp_path):
    """A claim no process holds (its run's process ended without removing it: killed, or
    ended by code it ran) stops nobody: it is removed, one line names the run it was (or
    says it was a run's, when it cannot be read), and the run computes its tasks."""
    folder = claims_folder(tmp_path)
    pid = dead_pid()
    named = folder / f"{socket.gethostname()}-{pid}-0.json"
    named.write_text(json.dumps(genuine(tmp_path, pid=pid)))
    unreadable = folder / "x.json"
    unreadable.write_bytes(b"\x1b[31m{not json")
    logged: list[str] = []
    assert run(tmp_path, *naps(tmp_path), logged=logged).computed == 2
    notes = sorted(line for line in logged if line.startswith("note: the claim"))
    assert len(notes) == 2, logged
    assert notes[0].startswith(f"note: the claim {named} of process {pid} on host "), notes
    assert notes[1].startswith(f"note: the claim {unreadable} of a run is held by no process")
    for note in notes:
        assert "is held by no process: that run ended without finishing" in note, note
    assert not folder.exists()


def test_a_held_claim_of_a_live_process_of_another_host_is_believed(tmp_path):
    path = claims_folder(tmp_path) / "elsewhere-1-0.json"
    path.write_text(json.dumps(genuine(tmp_path, host="elsewhere", pid=dead_pid())))
    with held(path), pytest.raises(StudyError) as refused:
        run(tmp_path, *naps(tmp_path))
    assert "another run is computing 2 of the 2 tasks this run" in str(refused.value)


def test_a_held_claim_s_fields_reach_the_refusal_visible_and_in_one_line(tmp_path):
    path = claims_folder(tmp_path) / "forged.json"
    forged = genuine(tmp_path, host="h\x1b[31m\x07", command="x\r\ny\x1b]0;t\x07\u202e" + "z" * 500)
    path.write_text(json.dumps(forged))
    with held(path), pytest.raises(StudyError) as refused:
        run(tmp_path, *naps(tmp_path))
    message = str(refused.value)
    assert message.isprintable(), message
    assert "on host h\\x1b[31m\\x07, started" in message
    assert "x\\r\\ny\\x1b]0;t\\x07\\u202ezzz" in message and "... (511 characters)" in message


def test_a_held_claim_naming_a_billion_tasks_is_not_listed(tmp_path, monkeypatch):
    """Its tasks are counted from its axes, not planned or hashed: all of this run's count
    as its, said in the refusal."""
    forged = genuine(tmp_path)
    forged["study"]["grid"] = {"i": list(range(100_000)), "nap": list(range(10_000))}
    path = claims_folder(tmp_path) / "forged.json"
    path.write_text(json.dumps(forged))
    assert path.stat().st_size < claims.CLAIM_BYTES

    def not_planned(study):
        raise AssertionError("a claim's study planned")

    monkeypatch.setattr(claims, "planned", not_planned)
    with held(path), pytest.raises(StudyError) as refused:
        run(tmp_path, *naps(tmp_path))
    message = str(refused.value)
    assert "another run is computing 2 of the 2 tasks this run" in message
    assert "its tasks cannot be listed here (its study names up to 1,000,000,000 tasks" in message


@pytest.fixture
def open_umask():
    old = os.umask(0)
    yield
    os.umask(old)


def test_claim_and_lock_files_are_owner_only_whatever_the_umask(tmp_path, open_umask):
    register_nap()
    other = prepared(compose_config(*naps(tmp_path)), log=lambda *_: None)
    stored = other.folder.stored_ids()
    with claims.claim(other, other.plan.left_to_run(stored), stored) as mine:
        assert stat.S_IMODE(mine.path.stat().st_mode) == 0o600
    folder = tmp_path / "study"
    folder.mkdir()
    (folder / ".lock").touch(mode=0o666)  # left by an older guesslab
    with StudyFolder(folder).locked(), StudyFolder(folder).running(lambda: None):
        for name in (".lock", ".running"):
            assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("flock") is None,
    reason="needs root (to act as another account) and flock(1)",
)
def test_another_account_cannot_open_or_lock_a_claim_or_the_study_lock():
    """``flock -x`` as the account ``nobody``, on a study folder it may enter: every claim
    and lock file refuses it."""
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no account 'nobody'")
    top = Path(tempfile.mkdtemp(prefix="guesslab-claims-"))
    try:
        top.chmod(0o755)
        register_nap()
        other = prepared(compose_config(*naps(top)), log=lambda *_: None)
        stored = other.folder.stored_ids()
        with claims.claim(other, other.plan.left_to_run(stored), stored) as mine:
            with other.folder.locked(), other.folder.running(lambda: None):
                pass
            for path in (mine.path, other.folder.path / ".lock", other.folder.path / ".running"):
                tried = subprocess.run(
                    ["flock", "-n", "-x", str(path), "true"],
                    user="nobody", capture_output=True, text=True,
                )  # fmt: skip
                assert tried.returncode != 0 and "Permission denied" in tried.stderr, tried
    finally:
        shutil.rmtree(top)


def test_a_lock_file_this_account_may_not_open_is_one_line_naming_it(tmp_path, monkeypatch):
    def refused(path, flags, mode=0o666):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(study_folder, "open_regular", refused)
    with pytest.raises(StudyError) as stopped, StudyFolder(tmp_path).locked():
        pass
    (line,) = str(stopped.value).splitlines()
    assert line.startswith(f"{tmp_path / '.lock'}: this account cannot open it (Permission denied)")
    assert "readable by their owner only" in line


def test_a_lock_holder_s_command_line_is_shown_visible():
    wait = "import sys; print(flush=True); sys.stdin.read()"
    holder = subprocess.Popen(
        [sys.executable, "-c", wait, "\x1b[2J\x07\r\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        holder.stdout.readline()  # started
        shown = locking.command_line(holder.pid, limit=200)
    finally:
        holder.communicate()
    assert shown.endswith("sys.stdin.read() \\x1b[2J\\x07\\r\\n") and shown.isprintable(), shown


def test_a_lock_file_this_account_may_not_open_is_left_by_the_clean_up(tmp_path, monkeypatch):
    """A run that made nothing leaves another account's lock file where it is, silently."""
    (tmp_path / "study").mkdir()
    (tmp_path / "study" / ".lock").touch()

    def refused(path, flags, mode=0o666):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(study_folder, "open_regular", refused)
    StudyFolder(tmp_path / "study").remove_if_untouched(tmp_path / "study")
    assert (tmp_path / "study" / ".lock").exists()
