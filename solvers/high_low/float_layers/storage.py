"""The layers of one solve: two layers of ``W`` in memory or in files, each finished layer
kept as a checkpoint.

Out of core, each layer is a file, written in order from a buffer of ``BUFFER`` values
(:mod:`.sizes`) while the previous layer, memory-mapped, is read through the page cache.  A
layer reads its children at random (a mirror image's values sit anywhere in the previous
layer, and the non-mirrored ones lie in ``2 L`` increasing streams), so the previous layer is
the smallest unit that can leave memory without random reads from disk: the out-of-core need
is one layer, not a bounded buffer.  Splitting by length group does not help: one group holds
up to 80% of a layer.  Each finished layer is committed as a checkpoint (``layer-037``: its
``W`` and the counts so far; only the last is kept) and a solve resumes after it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from solvers.high_low.float_layers import sizes as solve_sizes
from solvers.high_low.float_layers.counting import layer_bases
from solvers.high_low.float_layers.departures import TOP
from solvers.high_low.float_layers.layer import CHUNKS
from solvers.high_low.float_layers.sizes import Sizing
from solvers.kit import words
from solvers.kit.checkpoints import Checkpoints
from solvers.registry import TaskError

_PIECE = re.compile(r"layer-(\d+)")
_VALUES = "w.f64"  # a layer's W, float64 in the machine's byte order, in layer order
_META = "meta.npz"  # the counts so far: states, departures found, the likeliest kept


def _write_at(fd: int, values: np.ndarray, offset: int) -> None:
    """Write an array's bytes to a file at a byte offset (pwrite, until all are written)."""
    data = memoryview(values).cast("B")
    while data:
        done = os.pwrite(fd, data, offset)
        data, offset = data[done:], offset + done


@contextlib.contextmanager
def _layer_store(
    where: str,
    checkpoints: Checkpoints | None,
    identity: dict,
    sizes: np.ndarray,
    size: Sizing,
    ranks: int,
    warn: Callable[[str], None],
) -> Iterator[_Layers]:
    """The layers of one solve, in memory or in files; with ``checkpoints``, each finished
    layer is kept there (out of core without checkpoints: in a temporary folder); a kept
    layer that fails its seal is set aside with one line to ``warn``."""
    if where == "memory":
        store: _Layers = _Layers(checkpoints, identity, sizes, in_memory=True, warn=warn)
        try:
            yield store
        finally:
            store.close()
        return
    if checkpoints is not None:
        _check_disk(checkpoints.folder, size, ranks)
        store = _Layers(checkpoints, identity, sizes, in_memory=False, warn=warn)
        try:
            yield store
        finally:
            store.close()
        return
    with tempfile.TemporaryDirectory(prefix="high_low_layers-") as folder:
        _check_disk(Path(folder), size, ranks)
        spill = Checkpoints(Path(folder) / "layers", root=folder)
        store = _Layers(spill, identity, sizes, in_memory=False, warn=warn)
        try:
            yield store
        finally:
            store.close()


def _check_disk(folder: Path, size: Sizing, ranks: int) -> None:
    """Refuse layers on disk when the folder's file system has less room than they need."""
    here = folder
    while not here.exists():
        here = here.parent
    free = shutil.disk_usage(here).free
    if free < size.disk:
        raise TaskError(
            "ranks",
            ranks,
            f"the layers on disk need {words.format_bytes(size.disk)}, {here} has "
            f"{words.format_bytes(free)} free",
        )


class _Layers:
    """Two layers of W: the previous one (read) and the one being computed.

    In memory: two buffers the size of the largest layer; a finished layer is written to its
    checkpoint by a thread while the next one is computed.  On disk: each layer is computed
    part by part into a buffer written to its checkpoint piece's file (``layer-037/w.f64``),
    then memory-mapped to be read as the previous layer, and committed by a thread.  Either
    way only the last committed layer is kept: a solve resumes from it if it matches its
    seal (solvers/kit/seals.py), else from the start, the layer set aside with one line.
    """

    def __init__(
        self,
        checkpoints: Checkpoints | None,
        identity: dict,
        sizes: np.ndarray,
        in_memory: bool,
        warn: Callable[[str], None] | None = None,
    ):
        self.checkpoints, self.identity, self.sizes = checkpoints, identity, sizes
        self.warn = warn
        self.in_memory = in_memory
        self.ranks = int(identity["ranks"])
        largest = max(int(layer_bases(sizes, m)[-1]) for m in range(sizes.shape[0]))
        self.buffers = [np.empty(largest), np.empty(largest)] if in_memory else []
        self.maps: dict[int, np.memmap] = {}
        self.pending: dict[int, tuple[Path, int]] = {}  # on disk: layer m's folder and file
        self.writer: threading.Thread | None = None
        self.failure: BaseException | None = None

    def resume(self) -> tuple[int, np.ndarray, int, np.ndarray, np.ndarray]:
        """(layer, its W, states so far, top, found) of the last committed layer that
        belongs to this solve, or the empty deck's layer 0."""
        top = np.zeros((CHUNKS, 2 * TOP, 8))
        found = np.zeros((CHUNKS, 3), np.int64)
        empty = np.empty(1)
        for m in sorted(self._committed(sealed=True), reverse=True):
            if not self.checkpoints.trusted(f"layer-{m:03d}", self.warn):
                continue
            meta = self._meta(m)
            if meta is None:
                continue
            values = self.checkpoints.load_path(f"layer-{m:03d}") / _VALUES
            count = int(layer_bases(self.sizes, m)[-1])
            if values.stat().st_size != 8 * count:
                continue
            top[...], found[...] = meta["top"], meta["found"]
            if self.in_memory:
                w = self.buffers[m % 2][:count]
                with open(values, "rb") as fh:
                    fh.readinto(memoryview(w).cast("B"))
            else:
                w = np.memmap(values, np.float64, "r", shape=(count,))
                self.maps[m] = w
            return m, np.asarray(w), int(meta["states"]), top, found
        return 0, empty, 1, top, found  # the empty deck: one state, no W

    def compute(self, m: int, cbase: np.ndarray, part) -> tuple[np.ndarray, int]:
        """(layer m's W, states solved): ``part(cur, cbase, lengths, chunks)`` runs the
        kernel.  In memory, over the whole layer into a buffer (its last writer was joined by
        finish(m - 1)); on disk, one part of one length at a time into a buffer of at most
        BUFFER values, each written to the layer's file, which is then mapped to be read."""
        if self.in_memory:
            cur = self.buffers[m % 2]
            return cur, part(cur, cbase, 1, self.ranks + 1, 0, CHUNKS)
        for old in [k for k in self.maps if k < m - 1]:
            del self.maps[old]  # unmapped: only layer m - 1 is read (the kernel's prev)
        folder = self.checkpoints.path(f"layer-{m:03d}")
        folder.mkdir()
        count = int(cbase[-1])
        fd = os.open(folder / _VALUES, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        self.pending[m] = (folder, fd)
        os.ftruncate(fd, 8 * count)
        states = 0
        for length in range(1, self.ranks + 1):
            size = int(self.sizes[m, length])
            if not size:
                continue
            step = max(1, CHUNKS * solve_sizes.BUFFER // (size * length))  # chunks a buffer holds
            for lo in range(0, CHUNKS, step):
                hi = min(CHUNKS, lo + step)
                first, stop = lo * size // CHUNKS, hi * size // CHUNKS
                if first == stop:
                    continue
                offset = int(cbase[length]) + first * length
                buffer = np.empty((stop - first) * length)
                base = cbase.copy()
                base[length] -= offset
                states += part(buffer, base, length, length + 1, lo, hi)
                _write_at(fd, buffer, 8 * offset)
        w = np.memmap(folder / _VALUES, np.float64, "r", shape=(count,))
        self.maps[m] = w
        return np.asarray(w), states

    def finish(self, m: int, w: np.ndarray, states: int, top: np.ndarray, found: np.ndarray):
        """Keep finished layer m (m < ranks x suits) as a checkpoint, drop older ones: a
        thread writes (in memory) or flushes (on disk) it and commits it while the next
        layer is computed (which only reads it)."""
        if self.checkpoints is None:
            return
        counts = (states, top.copy(), found.copy())
        self._join()  # layer m - 1's writer: its buffer is the next layer's
        if self.in_memory:
            count = int(layer_bases(self.sizes, m)[-1])
            args = (m, w[:count], None, None, *counts)
        else:
            args = (m, None, *self.pending.pop(m), *counts)
        self.writer = threading.Thread(
            target=self._write, args=args, name=f"layer-{m:03d}", daemon=True
        )
        self.writer.start()

    def close(self) -> None:
        """Wait for the last checkpoint being written (its failure raised); close the files
        of layers never committed (the last one)."""
        try:
            self._join()
        finally:
            for _, fd in self.pending.values():
                os.close(fd)
            self.pending.clear()
            self.maps.clear()

    # -- helpers

    def _write(self, m, w, folder, fd, states, top, found) -> None:
        """Write layer m's values (in memory) or close its written file (on disk), commit
        (which syncs it to disk)."""
        try:
            if w is not None:
                folder = self.checkpoints.path(f"layer-{m:03d}")
                folder.mkdir()
                with open(folder / _VALUES, "wb") as fh:
                    fh.write(memoryview(w).cast("B"))
            else:
                os.close(fd)
            self._commit(m, folder, states, top, found)
        except BaseException as err:  # raised in the solving thread by _join
            self.failure = err

    def _commit(self, m, folder, states, top, found) -> None:
        name = f"layer-{m:03d}"
        np.savez(
            folder / _META,
            identity=np.array(json.dumps(self.identity, sort_keys=True)),
            states=np.int64(states),
            top=top,
            found=found,
        )
        self.checkpoints.commit(name)
        for old in self._committed(sealed=True):
            if old < m:
                self.checkpoints.drop(f"layer-{old:03d}")

    def _join(self) -> None:
        if self.writer is not None:
            self.writer.join()
            self.writer = None
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure

    def _committed(self, sealed: bool = False) -> list[int]:
        """The layers committed (``sealed``: or whose seal is left, the layer deleted)."""
        if self.checkpoints is None:
            return []
        names = self.checkpoints.finished()
        if sealed:
            names |= self.checkpoints.sealed()
        return [int(x.group(1)) for x in map(_PIECE.fullmatch, names) if x]

    def _meta(self, m: int) -> dict | None:
        """The counts kept with layer m, or None when they belong to another solve."""
        try:
            path = self.checkpoints.load_path(f"layer-{m:03d}") / _META
            with np.load(path, allow_pickle=False) as meta:
                if json.loads(str(meta["identity"])) != self.identity:
                    return None
                if meta["top"].shape != (CHUNKS, 2 * TOP, 8) or meta["found"].shape != (CHUNKS, 3):
                    return None
                return {k: meta[k] for k in ("states", "top", "found")}
        except (OSError, ValueError, KeyError):
            return None
