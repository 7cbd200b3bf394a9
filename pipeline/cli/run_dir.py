"""Hydra's run folder (``hydra.run.dir``): checked before the run, made only by a run that
writes.

Hydra makes ``hydra.run.dir`` before the run's function starts, whatever the run then does:
a refused config would leave the folder behind, ``stage=plan`` (which writes nothing) too,
and a folder that cannot be made would end in Hydra's traceback.  guesslab writes nothing
there itself (its files go to ``paths.outputs``; ``hydra.output_subdir`` is null), so
:class:`CheckRunDir`, a Hydra callback named in ``conf/config.yaml``, runs at
``on_run_start`` (after the config is composed, before Hydra makes the folder):

* a folder that cannot be made (a name or path too long for the file system, under a file,
  in a folder that cannot be written or holds no folders, such as ``/proc``) is refused
  with one line naming ``hydra.run.dir`` and its value, exit 2, nothing made;
* a folder not there yet is made by :func:`make_wanted` once the run has written (a run
  that ends, its tasks failed or not), never by a refused run nor by ``stage=plan``: Hydra
  is handed the current folder meanwhile.

With ``hydra.job.chdir=true`` the folder is the run's working folder: Hydra makes it (once
checked) and changes into it before the run starts, as it documents.
A multirun does not use ``hydra.run.dir`` (its folders are :mod:`pipeline.cli.sweep_check`'s).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, open_dict, read_write
from omegaconf.errors import OmegaConfBaseException

from pipeline.errors import short_repr
from pipeline.storage.safe_paths import NAME_MAX, PATH_MAX

KEY = "hydra.run.dir"
_wanted: Path | None = None  # the run folder this process's run makes once it has written


class RunDirRefused(BaseException):  # noqa: N818 - a refusal, not an error of the run
    """``hydra.run.dir`` cannot be made: the run stops before Hydra makes anything.

    A BaseException because Hydra's callbacks turn any Exception into a warning and go on.
    """


class CheckRunDir(Callback):
    """Hydra callback: ``hydra.run.dir`` checked, and made only once the run has written."""

    def on_run_start(self, config: DictConfig, **kwargs: Any) -> None:
        """Refuse a run folder that cannot be made; hand Hydra the current folder in place
        of one not there yet (unless the run changes into it), remembering it for
        :func:`make_wanted`."""
        global _wanted
        _wanted = None
        try:
            given = str(config.hydra.run.dir)
        except OmegaConfBaseException:
            return  # Hydra says what is wrong with it (one line: pipeline.__main__)
        folder = Path(given).expanduser()
        problem = unmakeable(folder)
        if problem is not None:
            raise RunDirRefused(f"{KEY}={short_repr(given)}: cannot make this folder ({problem})")
        if folder.is_dir() or config.hydra.job.chdir:
            return
        with read_write(config.hydra), open_dict(config.hydra):
            config.hydra.run.dir = "."
        _wanted = folder


def make_wanted() -> str | None:
    """Make the run folder :class:`CheckRunDir` held back, once the run has written; the
    one line saying why it could not be made (its parent changed meanwhile), or None."""
    global _wanted
    folder, _wanted = _wanted, None
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"{KEY}={short_repr(str(folder))}: cannot make this folder ({exc.strerror or exc})"
    return None


def unmakeable(folder: Path) -> str | None:
    """Why ``folder`` can be neither found nor made, or None: a name longer than NAME_MAX
    bytes, a path longer than PATH_MAX, a file where a folder is needed, or a nearest
    existing folder in which no folder can be made (probed: a folder made and removed)."""
    for part in folder.parts:
        size = len(os.fsencode(part))
        if size > NAME_MAX:
            return f"a folder name of {size:,} bytes; a name has at most {NAME_MAX}"
    size = len(os.fsencode(str(folder.absolute())))
    if size > PATH_MAX:
        return f"a path of {size:,} bytes; a path has at most {PATH_MAX:,}"
    there = folder.absolute()
    while not os.path.lexists(there):
        there = there.parent
    if there.is_dir() and there == folder.absolute():
        return None
    if not there.is_dir():
        return f"{there} is not a folder"
    probe = there / f".guesslab-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError as exc:
        return f"no folder can be made in {there}: {exc.strerror or exc}"
    probe.rmdir()
    return None
