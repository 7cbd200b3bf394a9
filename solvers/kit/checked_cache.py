"""Numba's cache of a kernel, each file checked before Numba reads it.

Numba keeps a kernel in its cache folder as an index (``<kernel>.nbi``: which data file
holds the kernel compiled for which signature and CPU) and one data file per signature
(``<kernel>.<n>.nbc``: the pickled object code), and trusts what it reads there: a data file
with a few bytes overwritten is handed to LLVM, which aborts the process ("Unsupported CPU
type! UNREACHABLE executed", exit status 134), in every process that loads it.

:class:`CheckedCacheFile` takes the place of Numba's ``IndexDataCacheFile`` for each kernel
of :mod:`solvers.kit.compile_once`.  Every file it writes ends with a seal of
:data:`SEAL_BYTES` bytes: :data:`MARK`, the size of what precedes it and that content's
XXH3-128 checksum (the checksum of :mod:`solvers.kit.seals`).  Numba writes a file whole
into a temporary file and renames it into place, so a file and its seal are replaced
together.  Numba's own reading stops at the end of each pickle, before the seal.  A file
is checked against its seal before Numba reads it:

- a file whose content does not match its seal (bytes overwritten, or a size other than
  the one written) is not read: it is set aside into ``quarantine/`` of the cache folder, one line
  names it, and the kernel is compiled again (and written again, sealed);
- a file with no seal (written by Numba alone, or cut short) is not read either: the kernel
  is compiled again and the file written again, sealed, without a word;
- a kernel that cannot be written to the cache (an entry there this account cannot
  replace) is kept by the process that compiled it, said once (:func:`install`).

Why a subclass of a class of Numba's own (``numba.core.caching``, not a public API): Numba
has no hook that sees a cache file before it is unpickled and handed to LLVM, and no
library checks Numba's cache.  The methods overridden (``load``, ``_load_index``,
``_load_data``, ``_open_for_write``) are the few through which every read and write of the
cache goes; the tests of ``tests/test_compile_once.py`` fail if a Numba release changes
them.

While :attr:`CheckedCacheFile.probing` (a kernel looked up in the cache before its compile
lock is taken), a miss raises :class:`NotCached` instead of letting Numba compile, and a
damaged file is left where it is: the lookup is made again under the lock, which sets it
aside, so a file another process has just written in its place is never moved.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import xxhash
from numba.core.caching import IndexDataCacheFile

from solvers.kit.safe_folders import article, kind

MARK = b"\0glseal1"  # how a sealed cache file's last SEAL_BYTES begin
SEAL_BYTES = len(MARK) + 8 + 16  # the mark, the content's size, its XXH3-128 digest
QUARANTINE = "quarantine"  # <cache folder>/quarantine/: the damaged files set aside
# how a cache file is opened to be checked: never through a link, never waiting on a FIFO
# (flags Windows lacks are left out there)
_READ = os.O_RDONLY
for _flag in ("O_NOFOLLOW", "O_NONBLOCK", "O_CLOEXEC"):
    _READ |= getattr(os, _flag, 0)


def install(kernel: Any, name: str) -> CheckedCacheFile:
    """Put a :class:`CheckedCacheFile` in place of Numba's in the cache of ``kernel`` (a
    Numba dispatcher with ``cache=True``, called ``name`` in a line), and return it.  A
    kernel its cache cannot take (a folder or a file there that this account cannot write,
    another account's in a shared ``NUMBA_CACHE_DIR``) is kept by the process that compiled
    it, said once in one line; Numba would raise its OSError out of the kernel's call."""
    cache = kernel._cache
    checked = CheckedCacheFile(
        cache._cache_path, cache._impl.filename_base, cache._impl.locator.get_source_stamp()
    )
    cache._cache_file = checked
    save = cache.save_overload

    def save_overload(sig: Any, data: Any) -> None:
        try:
            save(sig, data)
        except OSError as exc:
            if not checked.unwritable_said:
                checked.unwritable_said = True
                where = exc.filename2 or exc.filename  # a rename's target, or the file
                why = f"{where}: {exc.strerror}" if where else str(exc)
                _said(
                    f"the Numba kernel {name} cannot be written to Numba's cache ({why}): "
                    "this process keeps what it compiled, and each process compiles it again"
                )

    cache.save_overload = save_overload
    return checked


class NotCached(LookupError):
    """The kernel is not in the cache (raised while probing, before Numba compiles it)."""


class CheckedCacheFile(IndexDataCacheFile):
    """Numba's index and data files of one kernel, sealed when written, checked when read."""

    probing = False  # True: a miss raises NotCached, a damaged file stays in place
    unwritable_said = False  # a failed write to the cache was said (once per process)

    def load(self, key: Any) -> Any:
        found = super().load(key)
        if found is None and self.probing:
            raise NotCached
        return found

    def _load_index(self) -> dict:
        if not self._checked(self._index_path):
            return {}
        return super()._load_index()

    def _load_data(self, name: str) -> Any:
        path = self._data_path(name)
        if not self._checked(path):
            raise FileNotFoundError(path)  # Numba's load: "no such entry"
        return super()._load_data(name)

    @contextlib.contextmanager
    def _open_for_write(self, filepath: str) -> Iterator[BinaryIO]:
        with super()._open_for_write(filepath) as fh:
            sealing = _Sealing(fh)
            yield sealing  # type: ignore[misc]
            fh.write(sealing.seal())

    def _checked(self, path: str) -> bool:
        """Whether the file at ``path`` matches its seal (False: missing, not sealed, or
        damaged, and then set aside unless probing)."""
        try:
            fd = os.open(path, _READ)
        except OSError:
            return False
        try:
            seen = os.fstat(fd)
            if not stat.S_ISREG(seen.st_mode):
                what = f"is {article(kind(Path(path)) or 'gone')}, where a cache file belongs"
            else:
                with open(fd, "rb", closefd=False) as fh:
                    why = damage(fh.read())
                if why is None:
                    return True
                what = f"is damaged ({why})" if why else ""
        finally:
            os.close(fd)
        if what and not self.probing:
            _said(f"Numba's cache file {path} {what}: {_set_aside(path, seen)}")
        return False


class _Sealing:
    """A file being written, whose content is counted and hashed for its seal."""

    def __init__(self, fh: BinaryIO):
        self._fh = fh
        self._hash = xxhash.xxh3_128()
        self._size = 0

    def write(self, data: bytes) -> int:
        self._hash.update(data)
        self._size += len(data)
        return self._fh.write(data)

    def seal(self) -> bytes:
        return MARK + struct.pack("<Q", self._size) + self._hash.digest()


def damage(data: bytes) -> str | None:
    """Why the content of a sealed cache file is not what was written, in a few words; ""
    for a file without a seal; None for a file that matches its seal."""
    if len(data) < SEAL_BYTES or not data[-SEAL_BYTES:].startswith(MARK):
        return ""
    body, seal = data[:-SEAL_BYTES], data[-SEAL_BYTES:]
    (size,) = struct.unpack("<Q", seal[len(MARK) : len(MARK) + 8])
    if size != len(body):
        return f"{len(body):,} bytes where {size:,} were written"
    if xxhash.xxh3_128_digest(body) != seal[len(MARK) + 8 :]:
        return "its XXH3-128 checksum is not the one written with it"
    return None


def sealed(path: str | Path) -> bool:
    """Whether the file at ``path`` is a cache file that matches its seal."""
    try:
        fd = os.open(path, _READ)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        with open(fd, "rb", closefd=False) as fh:
            return damage(fh.read()) is None
    finally:
        os.close(fd)


def _set_aside(path: str, seen: os.stat_result) -> str:
    """Move the damaged file ``path`` (the file ``seen`` when it was read; one written in
    its place since is left) into the cache folder's quarantine; says what was done."""
    again = "the kernel is compiled again"
    try:
        now = os.stat(path, follow_symlinks=False)
        if _identity(now) != _identity(seen):
            return f"not read; another process has written it again since; {again}"
        folder = Path(path).parent / QUARANTINE
        folder.mkdir(exist_ok=True)
        if kind(folder) != "folder":  # never moved through a link
            return f"not read (its quarantine {folder} is {kind(folder)}); {again}"
        name = Path(path).name
        target = folder / name
        n = 1
        while target.exists() or target.is_symlink():
            n += 1
            target = folder / f"{name}.{n}"
        os.rename(path, target)
    except OSError as exc:
        return f"not read (it could not be set aside: {exc.strerror}); {again}"
    return f"set aside as {target}; {again}"


def _identity(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_dev, info.st_ino, info.st_mtime_ns


def _said(text: str) -> None:
    """Say ``text`` as a warning of the task running in this thread."""
    from solvers.kit.task_context import current

    current().warn(text)
