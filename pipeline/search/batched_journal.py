"""A search's Optuna journal, written a batch at a time.

Optuna's :class:`~optuna.storages.journal.JournalFileBackend` takes its lock, opens, appends
to and fsyncs the journal file for every log, and its storage hands it one log at a time:
about four a trial (the trial made, its parameter's value, its value told, ...), each an
fsync of a few ms, more than the solve of a small trial.  :class:`BatchedJournal` keeps the
logs in memory until :meth:`~BatchedJournal.flush`, which the search calls once a batch is
asked (before its tasks run, so a stopped search finds the trials it asked) and once it is
told: two writes and two fsyncs a batch.  Optuna reads the logs not yet written from memory,
each as the file would give it back (a JSON round trip).

Only one process may write a journal so (Optuna's own backend lets several append, each
reading the others' logs back): the search holds ``search/<name>.lock`` (flock) while it
runs, and a second search of that name on the same study folder is refused in one line.
Optuna's backend is kept for the file itself (its format, its lock, its reading), not
rewritten here.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pipeline.config import StudyError
from pipeline.locking import OWNER_ONLY, not_ours, owner_only
from pipeline.safe_paths import open_regular

try:  # optional: pipeline.search.runner says how to install Optuna when it is missing
    from optuna.storages.journal import BaseJournalBackend, JournalFileBackend
except ImportError:  # pragma: no cover - the runner refuses the search first
    BaseJournalBackend = object  # type: ignore[assignment,misc]


class BatchedJournal(BaseJournalBackend):
    """Optuna's journal file ``path``, the logs appended held until :meth:`flush`."""

    def __init__(self, path: Path):
        self.file = JournalFileBackend(str(path))
        self.in_file = sum(1 for _ in self.file.read_logs(0))  # logs the file holds
        self.pending: list[dict[str, Any]] = []

    def read_logs(self, log_number_from: int) -> Iterator[dict[str, Any]]:
        if log_number_from < self.in_file:
            yield from self.file.read_logs(log_number_from)
        yield from self.pending[max(0, log_number_from - self.in_file) :]

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        self.pending += [json.loads(json.dumps(log)) for log in logs]  # as read back

    def flush(self) -> None:
        """Write the logs held, in one append (one fsync)."""
        if self.pending:  # taken first: a stop during the write never writes them twice
            logs, self.pending = self.pending, []
            self.in_file += len(logs)
            self.file.append_logs(logs)


def held_journal(folder: Path, name: str, journal: Path) -> Any:
    """The open ``search/<name>.lock``, held (flock) while the search writes its journal;
    StudyError when another search of that name holds it."""
    path = folder / f"{name}.lock"
    try:  # as the study's lock files: never through a link, readable by its owner only
        fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, OWNER_ONLY)
    except PermissionError as exc:
        raise StudyError(not_ours(path, exc)) from None
    owner_only(fd)
    fh = open(fd, "a")  # noqa: SIM115 - held open while the search runs
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise StudyError(
            f"hydra.sweeper.name={name!r}: another search of this name is running on "
            f"{folder.parent} (it writes {journal}); wait for it, or give this one another name"
        ) from None
    return fh
