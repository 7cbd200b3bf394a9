"""What one worker computes for an out-of-core solve (out_of_core.py): a chunk of a layer, from
files to files.

Each chunk task gets a descriptor (deck, layer, rank range, file paths), reads what it needs
from the files of the layers around it, writes its rows at their byte offsets (``pwrite``) and
returns only a small summary (feasible states, a histogram, edge-file windows).  Its kernels
are in_memory.py's (values.py, last_layer.py) on a range of ranks, so the two agree to the
last bit.

A state's successors are found by rank (walk.py) in the next layer's file, mapped
read-only (``np.memmap``) by the task, which computes :data:`SUB` ranks per kernel call and
drops the map's pages from the process after each.
"""

from __future__ import annotations

import functools
import mmap
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from solvers.card_guessing.uniform_deck import last_layer, values
from solvers.card_guessing.uniform_deck.ranks import POLICIES, Codes, codes, log_factorials
from solvers.kit.compiled import ctrl_c_held

# ranks a layer chunk computes per kernel call, after which the pages of the next layer it
# mapped are dropped from the process: in one call, a chunk of 16.8 million ranks of 11 types
# of 4 peaked at 2.7-3.8 GB (its successors lie on 1.0-2.0 GB of pages, and the kernel maps
# cached pages around each fault; a worker of the 4 GB budget peaked at 4.46 GB); in calls of
# SUB ranks, 0.55 GB, the same bits and the same CPU time
SUB = 1 << 20
ROW = 3  # float64 columns of a layer below the last: log A, E, E^2


@functools.lru_cache(maxsize=4)
def _codes(deck: tuple[int, ...]) -> Codes:
    return codes(deck)


# --------------------------------------------------------------------------- file helpers


def _pwrite(path: str, array: np.ndarray, offset: int) -> None:
    """Write ``array``'s bytes into the existing file ``path`` at byte ``offset``."""
    data = memoryview(np.ascontiguousarray(array)).cast("B")
    fd = os.open(path, os.O_WRONLY)
    try:
        done = 0
        while done < len(data):
            done += os.pwrite(fd, data[done : done + (1 << 30)], offset + done)
    finally:
        os.close(fd)


def _pread(path: str, dtype, lo: int, hi: int, width: int = 1) -> np.ndarray:
    """Rows [lo, hi) of a raw file of ``width`` columns of ``dtype``, read (not mapped)."""
    dtype = np.dtype(dtype)
    with open(path, "rb") as f:
        f.seek(lo * width * dtype.itemsize)
        out = np.fromfile(f, dtype, (hi - lo) * width)
    if out.size != (hi - lo) * width:
        raise OSError(f"{path}: short read of rows {lo}..{hi}")
    return out.reshape(-1, width) if width > 1 else out


def _mapped(
    path: str, rows: int, width: int, dtype=np.float64, mode: str = "r", first: int = 0
) -> np.ndarray:
    """Rows [first, first + rows) of a raw file of ``width`` columns (0: a vector), mapped."""
    offset = first * max(width, 1) * np.dtype(dtype).itemsize
    shape = (rows, width) if width else rows
    return np.memmap(path, dtype=dtype, mode=mode, offset=offset, shape=shape)


def _allocate(path: Path, nbytes: int) -> None:
    """A file of ``nbytes`` (sparse until written)."""
    with open(path, "wb") as f:
        f.truncate(nbytes)


# ---------------------------------------------------------------------------- chunk tasks
# each runs on a worker, reads and writes files, and returns only a small summary


def layer_chunk(deck, layer, lo, hi, policy, window, next_path, next_width, out_path, best_path):
    """Rows of ranks [lo, hi) of ``layer`` from the next layer's file: written in place,
    :data:`SUB` ranks at a time; returns (feasible states, CPU seconds, ranks)."""
    cpu = time.process_time()
    cd = _codes(tuple(deck))
    nxt = _mapped(next_path, int(cd.sizes[layer + 1]), next_width)
    feasible, code, args = 0, POLICIES[policy], cd.kernel_args()
    for a in range(lo, hi, SUB):
        b = min(hi, a + SUB)
        with ctrl_c_held():  # Ctrl-C stops the chunk once the kernel returns
            out, best = values.layer_values(layer, a, b, code, window, *args, nxt)
        _unmap_pages(nxt)
        _pwrite(out_path, out, a * ROW * 8)
        _pwrite(best_path, best, a)
        feasible += int(np.count_nonzero(out[:, 0] > -np.inf))
    del nxt  # unmapped
    return feasible, time.process_time() - cpu, hi - lo


def _unmap_pages(mapped: np.ndarray) -> None:
    """Drop the pages of a read-only file map from this process (they stay in the page
    cache; the next read maps them again): a map's pages count in the worker's resident
    memory, which Dask's nanny compares with its memory limit."""
    handle = getattr(mapped, "_mmap", None)
    if handle is not None and hasattr(mmap, "MADV_DONTNEED"):
        handle.madvise(mmap.MADV_DONTNEED)


def last_t_chunk(deck, lo, hi, t_path, log_path):
    """T of the last layer's ranks [lo, hi) into ``t_path`` (and -inf log A into
    ``log_path``); returns (the chunk's histogram of T + 1 (bin 0: infeasible), CPU
    seconds)."""
    cpu = time.process_time()
    cd = _codes(tuple(deck))
    with ctrl_c_held():
        t = last_layer.unconfirmed(cd.n_cards, lo, hi, *cd.kernel_args())
    _pwrite(t_path, t, lo)
    _pwrite(log_path, np.full(hi - lo, -np.inf), lo * 8)
    hist = np.bincount(t.astype(np.int64) + 1, minlength=cd.n_cards + 2)
    return hist, time.process_time() - cpu


def last_log_chunk(deck, t, lo, hi, t_path, log_path):
    """log A of the last layer's ranks in [lo, hi) with t unconfirmed cards, written in
    place; returns (of them, those with a finite log A; CPU seconds)."""
    cpu = time.process_time()
    cd = _codes(tuple(deck))
    n = cd.n_cards
    unconf = _pread(t_path, np.int8, lo, hi)
    logs = _mapped(log_path, int(cd.sizes[n]), 0)
    out = _mapped(log_path, hi - lo, 0, mode="r+", first=lo)
    with ctrl_c_held():
        last_layer.pass_logs(t, lo, unconf, logs, out, *cd.kernel_args(), log_factorials(n))
    out.flush()
    finite = int(np.count_nonzero(out[unconf == t] > -np.inf))
    del logs, out  # unmapped
    return finite, time.process_time() - cpu


def _paths_in(lo: int, hi: int, slices: Sequence[tuple[str, int, int]]) -> np.ndarray:
    """Path counts of ranks [lo, hi): the edges into them, read window by window."""
    paths = np.zeros(hi - lo)
    for path, start, stop in slices:
        edges = np.load(path, mmap_mode="r")
        part = np.array(edges[start:stop])  # a copy: the map is dropped with ``edges``
        del edges
        paths += np.bincount(part["rank"] - lo, weights=part["paths"], minlength=hi - lo)
    return paths


EDGE = np.dtype([("rank", "<i8"), ("paths", "<f8")])


def reach_chunk(deck, layer, lo, hi, slices, best_path, edges_path, next_bounds):
    """Edges out of ranks [lo, hi) of ``layer`` given the edges into them (``slices``; None:
    the start state), sorted by child rank into ``edges_path``; returns the windows of that
    file falling in each chunk of the next layer, {chunk: (start, stop)}."""
    cd = _codes(tuple(deck))
    paths = np.ones(hi - lo) if slices is None else _paths_in(lo, hi, slices)
    best = _pread(best_path, np.int8, lo, hi)
    with ctrl_c_held():
        ranks, weights = values.policy_edges(layer, lo, best, paths, *cd.rank_args(), cd.n_p,
                                             cd.refused)  # fmt: skip
    del paths, best
    order = np.argsort(ranks, kind="stable")
    edges = np.empty(ranks.size, EDGE)
    edges["rank"] = ranks[order]
    edges["paths"] = weights[order]
    del ranks, weights, order
    np.save(edges_path, edges)
    cuts = np.searchsorted(edges["rank"], next_bounds)
    pairs = zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True)
    return {h: (a, b) for h, (a, b) in enumerate(pairs) if b > a}


def score_chunk(deck, lo, hi, slices, t_path, log_path):
    """P(final score = k) summed over the last layer's ranks [lo, hi), from the edges in."""
    cd = _codes(tuple(deck))
    n = cd.n_cards
    paths = _paths_in(lo, hi, slices)
    logs = _pread(log_path, np.float64, lo, hi)
    t = _pread(t_path, np.int8, lo, hi)
    hit = (paths > 0) & (logs > -np.inf)
    logf = log_factorials(n)
    log_start = logf[n] - cd.r * logf[cd.m]
    prob = np.exp(np.log(paths[hit]) + logs[hit] - log_start)
    return np.bincount(n - t[hit].astype(np.int64), weights=prob, minlength=n + 1)
