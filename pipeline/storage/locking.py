"""Files only their owner may open: the study's lock files, the claims of
:mod:`pipeline.running.claims` and the search's journal are mode 0600 whatever the umask.
An flock needs an open file, so another account that cannot open them cannot hold them and
stall the study's runs; a file of another account's is refused in one line
(:func:`not_ours`).

The study's locks themselves are :meth:`~pipeline.storage.study_folder.StudyFolder.locked` and
:meth:`~pipeline.storage.study_folder.StudyFolder.running`; who holds a lock
(:mod:`solvers.kit.lock_holders`) is handed on from here to the claims.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from solvers.kit.lock_holders import (  # noqa: F401 (pipeline.running.claims imports them from here)
    command_line,
    holders_text,
    lock_holders,
    visible,
)

OWNER_ONLY = 0o600  # the mode of lock and claim files: read and written by their owner only


def owner_only(fd: int) -> None:
    """Make the open file ``fd`` mode 0600 if this account owns it (a file made under any
    umask, or left more open by an older guesslab); another account's file is left as it is."""
    st = os.fstat(fd)
    if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) != OWNER_ONLY:
        os.fchmod(fd, OWNER_ONLY)


def not_ours(path: Path, exc: OSError) -> str:
    """The one line for a lock or claim file this account may not open."""
    try:
        owner = f"account uid {path.stat(follow_symlinks=False).st_uid}"
    except OSError:
        owner = "another account"
    return (
        f"{path}: this account cannot open it ({exc.strerror}): it belongs to {owner}, and "
        "the study's lock and claim files are readable by their owner only; run the study as "
        "that account, or choose another paths.outputs"
    )
