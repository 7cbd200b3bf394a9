"""The seal of a committed checkpoint piece: its files, their sizes and their checksums.

A seal (``<folder>/.seals/<piece>.json``, see :class:`~solvers.kit.checkpoints.Checkpoints`)
names its piece and task and lists ``[path, bytes, checksum]`` of each of the piece's files;
a piece read back is checked against it, sizes first, then checksums.
"""

from __future__ import annotations

import json
import mmap
import os
import stat
from pathlib import Path

from solvers.kit.safe_folders import article, kind

SEAL_MAX = 1 << 26  # bytes: a larger seal is none this guesslab wrote (one lists ~10^5 files)
# The checksum of a committed piece: XXH3 with 128 bits (the xxhash package). It hashes
# 7-13 GB/s on one core of the 2-core EPYC VM the benchmarks name, against 1.2-2.5 GB/s for
# zlib.crc32 and 0.86 GB/s for hashlib.sha256 (64-256 MB buffers in memory), so checking a
# piece costs about the time to read it; 128 bits make a chance collision (a damaged piece
# taken for whole) negligible at any number of pieces.
ALGORITHM = "xxh3_128"
_BLOCK = 1 << 24  # bytes read at a time when a piece is hashed


class BadSeal(ValueError):
    """A seal whose content is not that of a seal (why, in a few words)."""


def read_seal(path: Path) -> tuple[str, str, str, str, dict[str, tuple[int, str]]]:
    """(piece, task, kind, algorithm, {file: (bytes, digest)}) of the seal at ``path`` (a
    regular file, opened without following a link or blocking on a FIFO); OSError, or
    BadSeal for content of any other shape (not JSON, nested too deeply, too large, other
    fields or types)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BadSeal("not a regular file")
        if info.st_size > SEAL_MAX:
            raise BadSeal(f"{info.st_size:,} bytes, more than any seal")
        data = b""
        while len(data) <= SEAL_MAX and (block := os.read(fd, 1 << 20)):
            data += block
    finally:
        os.close(fd)
    try:
        seal = json.loads(data)
    except RecursionError:
        raise BadSeal("JSON nested too deeply") from None
    except ValueError:
        raise BadSeal("not JSON") from None
    fields = ("piece", "task", "kind", "algorithm")
    if not isinstance(seal, dict) or not all(isinstance(seal.get(k), str) for k in fields):
        raise BadSeal(f"not the fields of a seal: {', '.join(fields)}, files")
    files: dict[str, tuple[int, str]] = {}
    for entry in seal.get("files") if isinstance(seal.get("files"), list) else [None]:
        if not (
            isinstance(entry, list)
            and len(entry) == 3
            and isinstance(entry[0], str)
            and type(entry[1]) is int
            and entry[1] >= 0
            and isinstance(entry[2], str)
            and entry[0] not in files
        ):
            raise BadSeal("its files are not a list of [path, bytes, checksum]")
        files[entry[0]] = (entry[1], entry[2])
    return seal["piece"], seal["task"], seal["kind"], seal["algorithm"], files


def piece_files(path: Path) -> dict[str, int]:
    """{path relative to the piece ("" for a file piece): bytes} of a piece's regular files,
    links not followed; OSError for anything in it that is not a regular file or folder."""
    if kind(path) == "file":
        return {"": os.lstat(path).st_size}
    out = {}
    for folder, dirs, files in os.walk(path, followlinks=False):
        for entry in (*dirs, *files):
            full = Path(folder, entry)
            what = kind(full)
            if what == "file":
                out[full.relative_to(path).as_posix()] = os.lstat(full).st_size
            elif what != "folder":
                raise OSError(f"{full} is {article(what)}, not a file of a checkpoint piece")
    return out


def file_digest(path: Path) -> tuple[int, str]:
    """(bytes, XXH3-128 hex digest) of the regular file ``path``.

    The file is mapped and hashed block by block, each block's pages dropped from the process
    once hashed (they stay in the page cache): a Dask nanny counts mapped pages as the
    worker's memory.  Mapped, not read: on a 229 MB file from the page cache, 3.7 GB/s
    against 0.2-0.8 GB/s through read() into a buffer (the copy), on the benchmarks' VM."""
    import xxhash

    hasher = xxhash.xxh3_128()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        size = os.fstat(fd).st_size
        if size:
            with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as mapped:
                _advise(mapped, "MADV_SEQUENTIAL")
                with memoryview(mapped) as view:
                    for lo in range(0, size, _BLOCK):
                        hi = min(size, lo + _BLOCK)
                        hasher.update(view[lo:hi])
                        _advise(mapped, "MADV_DONTNEED", lo, hi - lo)
    finally:
        os.close(fd)
    return size, hasher.hexdigest()


def _advise(mapped: mmap.mmap, name: str, *span: int) -> None:
    """``mapped.madvise(mmap.<name>, *span)`` where the platform has it."""
    flag = getattr(mmap, name, None)
    if flag is not None:
        mapped.madvise(flag, *span)


def fingerprint(path: Path) -> list[list]:
    """[relative path, bytes, digest] of each file of a piece, in path order: its seal."""
    out = []
    for rel in sorted(piece_files(path)):
        size, digest = file_digest(path / rel if rel else path)
        out.append([rel, size, digest])
    return out
