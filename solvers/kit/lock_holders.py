"""Who holds a file lock, in words a one-line message can carry.

:func:`holders_text` names the processes holding an ``flock`` on a file (from
``/proc/locks``), each with its command line made visible and cut (:func:`visible`), and, for
a process of another account, that account.  The study's locks
(:mod:`pipeline.storage.study_folder`) and the kernels' compile locks
(:mod:`solvers.kit.compile_lock`) say so while they wait.  Nothing of a game or a solver: the
pipeline and the solvers' kit both import it.
"""

from __future__ import annotations

import os
from pathlib import Path


def holders_text(lock: Path | str) -> str:
    """Who holds a flock on ``lock`` for a message: ``process 12 (python -m ...)``, each
    command line shortened and made visible (:func:`visible`), a process of another account
    followed by ``of account nobody (uid 65534)``; or "another process"."""
    return ", ".join(holder_text(pid) for pid in lock_holders(lock)) or "another process"


def holder_text(pid: int) -> str:
    """``process 12 (python -m ...)``, and the account of a process not of this one."""
    uid = account_of(pid)
    text = f"process {pid} ({command_line(pid)})"
    return text if uid in (None, os.geteuid()) else f"{text} of {account_text(uid)}"


def account_of(pid: int) -> int | None:
    """The user id a process runs as (the owner of ``/proc/<pid>``), or None if unknown."""
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def account_text(uid: int) -> str:
    """``account nobody (uid 65534)``, or ``account uid 1234`` for a uid without a name."""
    try:
        import pwd  # Unix only; the kit is imported on Windows too (no locks there)

        return f"account {visible(pwd.getpwuid(uid).pw_name, 40)} (uid {uid})"
    except (ImportError, KeyError):
        return f"account uid {uid}"


def lock_holders(lock: Path | str) -> list[int]:
    """The ids of other processes holding a flock on ``lock`` (from /proc/locks; [] elsewhere)."""
    try:
        inode = os.stat(lock).st_ino
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return []
    pids = []
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue  # "->": a process waiting for the lock, not holding it
        pid, device_inode = fields[4], fields[5]
        if device_inode.rsplit(":", 1)[-1] == str(inode) and int(pid) != os.getpid():
            pids.append(int(pid))
    return sorted(set(pids))


def command_line(pid: int, limit: int = 80) -> str:
    """A process's command line for a one-line message: its arguments joined by spaces,
    control characters shown as escapes (:func:`visible`), shortened to about ``limit``
    characters ("?" if unknown)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read(4 * limit)
    except OSError:
        return "?"
    text = raw.replace(b"\0", b" ").decode(errors="replace").strip(" ") or "?"
    return visible(text, limit)


def visible(text: str, limit: int = 160) -> str:
    """``text`` as one line a terminal shows as written: each character that is not
    printable (newline, carriage return, ESC, BEL, DEL, a bidirectional override, ...) as
    its Python escape (``\\x1b``, ``\\n``, ``\\u202e``); past ``limit`` characters cut,
    saying how long it was."""
    out: list[str] = []
    size = 0
    for ch in text:
        piece = ch if ch.isprintable() else ascii(ch)[1:-1]
        if size + len(piece) > limit:
            return "".join(out) + f"... ({len(text):,} characters)"
        out.append(piece)
        size += len(piece)
    return "".join(out)
