"""The files a summary writes outside the store, and how guesslab tells them from a user's.

A summary replaces three files: ``summary.md`` and ``report.html`` in the study folder, and
``index.html`` in ``paths.outputs`` (also written by ``python -m pipeline.index``).  Each is
replaced only when guesslab wrote it: a file of the user's of that name (a folder of notes
given as a study's folder, an outputs folder holding the user's own ``index.html``) is
refused before any work, naming it (:func:`not_ours`).

guesslab marks what it writes: the HTML pages carry ``<meta name='generator'
content='guesslab'>`` right after their charset, ``summary.md`` a first line ``<!-- written
by guesslab ... -->`` (an HTML comment: Markdown shows nothing of it).  A page written before
the mark is recognised by its exact first bytes, the same since the page first existed: the
head guesslab writes (single-quoted attributes, in its order) up to the title, ``guesslab
studies`` for the index, ``Study NAME`` for the report.  An unmarked ``summary.md`` is
recognised by its first line, ``# Study `NAME```, in a folder holding stored results.

Nothing here follows a link or opens anything but a regular file (a FIFO would hang the
reader): a link, a folder or any other entry of one of these names is never guesslab's.
"""

from __future__ import annotations

import contextlib
import html
import os
import stat
from pathlib import Path

SUMMARY_NAME = "summary.md"
REPORT_NAME = "report.html"
INDEX_TITLE = "guesslab studies"  # index.html's title (its name: safe_paths.INDEX_NAME)
GENERATOR = "<meta name='generator' content='guesslab'>"
SUMMARY_MARK = (
    "<!-- written by guesslab: every summary of this study replaces this file "
    "(python -m pipeline study=NAME stage=summary) -->"
)
HEAD = "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
VIEWPORT = "<meta name='viewport' content='width=device-width'>"
READ = 4096  # the bytes read of a file to tell whose it is (a page's head, a first line)


def html_head(title: str) -> str:
    """The start of every page guesslab writes, up to its title (``title`` as text)."""
    return f"{HEAD}{GENERATOR}{VIEWPORT}<title>{html.escape(title, quote=True)}</title>"


def _first_bytes(path: Path) -> tuple[str | None, str]:
    """(None, the first READ bytes of ``path`` as text), or (what the entry is, "") when it
    is not a regular file; ("", "") when there is none."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "", ""
    if stat.S_ISLNK(mode):
        return "a symbolic link", ""
    if stat.S_ISDIR(mode):
        return "a folder", ""
    if not stat.S_ISREG(mode):
        return "not a regular file", ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})", ""
    with contextlib.closing(os.fdopen(fd, "rb")) as fh:
        return None, fh.read(READ).decode("utf-8", "replace")


def _old_page(title: str) -> str:
    """The first bytes of a page written before the mark."""
    return f"{HEAD}{VIEWPORT}<title>{html.escape(title, quote=True)}</title>"


def not_ours(path: Path, title: str, *, old_summary: str | None = None) -> str | None:
    """None when ``path`` does not exist or is a file guesslab wrote; else what it is, as a
    refusal says it.  ``title``: the title of the page (``report.html``, ``index.html``) an
    unmarked one has;
    ``old_summary``: for ``summary.md``, the first line an unmarked one of this study has
    (None: an unmarked summary.md is not recognised, as where no results are stored)."""
    what, text = _first_bytes(path)
    if what is not None:
        return what or None
    if path.suffix == ".md":
        first = text.partition("\n")[0]
        if first == SUMMARY_MARK or (old_summary is not None and first == old_summary):
            return None
    elif text.startswith((HEAD + GENERATOR, _old_page(title))):
        return None
    return "not a file guesslab wrote"
