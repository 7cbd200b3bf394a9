"""What one worker computes for an out-of-core solve (out_of_core.py): a chunk of a layer, from
files to files.

Each chunk task gets a descriptor (deck, layer, rank range, file paths), reads what it needs
from the files of the layers around it, writes its rows at their byte offsets (``pwrite``) and
returns only a small summary (feasible states, a histogram, edge-file windows).  Its kernels
compute a state's values by the same floating-point operations in the same order as
in_memory.py, so the two agree to the last bit.

A state's successors are found by rank (ranks._rank) in the next layer's file, mapped
read-only (``np.memmap``) by the task, which computes :data:`SUB` ranks per kernel call and
drops the map's pages from the process after each.
"""

from __future__ import annotations

import functools
import math
import mmap
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numba import prange

from solvers.card_guessing.uniform_deck.ranks import (
    CHUNK,
    POLICIES,
    TIE_TOLERANCE,
    Codes,
    _feasible,
    _last_log,
    _layer_work,
    _logsumexp,
    _moved,
    _rank,
    _unconfirmed,
    _unrank,
    _yes_code,
    codes,
    kernel,
    log_factorials,
    parallel_kernel,
)

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


def _args(cd: Codes) -> tuple:
    return (cd.m, cd.r, cd.exhausted, cd.weight, cd.eq, cd.le, cd.offsets, cd.n_p)


# ------------------------------------------------------------------------------ kernels


@parallel_kernel
def _values(layer, lo, hi, policy, window, m, r, big, weight, eq, le, offsets, n_p, nxt):
    """in_memory._layer for ranks [lo, hi) of ``layer``: rows (log A, E, E^2) and the
    chosen position, from the next layer's rows ``nxt`` ((size, 3), or (size, 1): log A of
    the last layer, whose E and E^2 are 0).  The same operations in the same order."""
    size = hi - lo
    out = np.zeros((size, 3))
    best = np.full(size, -1, np.int8)
    full = nxt.shape[1] == 3
    for chunk in prange((size + CHUNK - 1) // CHUNK):
        seq, child, ylog, yrank = _layer_work(r)
        for s in range(chunk * CHUNK, min(size, (chunk + 1) * CHUNK)):
            out[s, 0] = -np.inf
            e = _unrank(lo + s, layer, m, r, big, weight, eq, le, offsets, seq)
            if not _feasible(seq, e, r, n_p):
                continue
            for j in range(e, r):
                if j > e and seq[j] == seq[j - 1]:
                    ylog[j], yrank[j] = ylog[j - 1], yrank[j - 1]
                    continue
                _moved(seq, j, _yes_code(seq[j], n_p, big), r, child)
                yrank[j] = _rank(child, layer + 1, m, r, big, weight, eq, le, offsets)
                ylog[j] = nxt[yrank[j], 0]
            lg = _logsumexp(ylog, e, r)
            out[s, 0] = lg
            if lg == -np.inf:
                continue
            floor = -np.inf
            if policy >= 1:
                for j in range(e, r):
                    floor = max(floor, ylog[j])
                floor += math.log1p(-window) + math.log1p(-TIE_TOLERANCE)
            top = -1.0
            for j in range(r - 1, e - 1, -1):
                if ylog[j] == -np.inf or (j > e and seq[j] == seq[j - 1]):
                    continue
                q = math.exp(ylog[j] - lg)
                yv = nxt[yrank[j], 1] if full else 0.0
                ysq = nxt[yrank[j], 2] if full else 0.0
                v = q * (1.0 + yv)
                sq = q * (1.0 + 2.0 * yv + ysq)
                if seq[j] % n_p + 1 < n_p:
                    _moved(seq, j, seq[j] + 1, r, child)
                    k = _rank(child, layer + 1, m, r, big, weight, eq, le, offsets)
                    if nxt[k, 0] > -np.inf:
                        qn = math.exp(nxt[k, 0] - lg)
                        v += qn * (nxt[k, 1] if full else 0.0)
                        sq += qn * (nxt[k, 2] if full else 0.0)
                if policy >= 1 and ylog[j] < floor:
                    continue
                crit = v if policy == 0 else (seq[j] % n_p if policy == 2 else 0.0)
                if best[s] < 0 or crit > top * (1.0 + TIE_TOLERANCE):
                    top = crit
                    out[s, 1] = v
                    out[s, 2] = sq
                    best[s] = j
    return out, best


@parallel_kernel
def _last_logs(t, ranks, logs, m, r, big, weight, eq, le, offsets, n_p, logf):
    """log A of the last layer's states ``ranks`` (each with t unconfirmed cards), from
    ``logs`` (the layer's file: those with t - 1 are done)."""
    layer = m * r
    out = np.empty(ranks.size)
    for chunk in prange((ranks.size + CHUNK - 1) // CHUNK):
        seq = np.empty(r, np.int64)
        child = np.empty(r, np.int64)
        terms = np.empty(r, np.float64)
        for s in range(chunk * CHUNK, min(ranks.size, (chunk + 1) * CHUNK)):
            e = _unrank(ranks[s], layer, m, r, big, weight, eq, le, offsets, seq)
            out[s] = _last_log(seq, e, t, logs, m, r, big, weight, eq, le, offsets, n_p, logf,
                               child, terms)  # fmt: skip
    return out


@kernel
def _edges(layer, lo, best, paths, m, r, big, weight, eq, le, offsets, n_p):
    """The policy's edges out of ranks [lo, lo + paths.size): (child rank, path count), in
    the order in_memory._add_paths adds them."""
    n = 0
    for s in range(paths.size):
        if paths[s] != 0.0 and best[s] >= 0:
            n += 2
    ranks = np.empty(n, np.int64)
    weights = np.empty(n)
    seq = np.empty(r, np.int64)
    child = np.empty(r, np.int64)
    k = 0
    for s in range(paths.size):
        if paths[s] == 0.0 or best[s] < 0:
            continue
        _unrank(lo + s, layer, m, r, big, weight, eq, le, offsets, seq)
        j = best[s]
        _moved(seq, j, _yes_code(seq[j], n_p, big), r, child)
        ranks[k] = _rank(child, layer + 1, m, r, big, weight, eq, le, offsets)
        weights[k] = paths[s]
        k += 1
        if seq[j] % n_p + 1 < n_p:
            _moved(seq, j, seq[j] + 1, r, child)
            ranks[k] = _rank(child, layer + 1, m, r, big, weight, eq, le, offsets)
            weights[k] = paths[s]
            k += 1
    return ranks[:k], weights[:k]


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


def _mapped(path: str, rows: int, width: int, dtype=np.float64, mode: str = "r") -> np.ndarray:
    return np.memmap(path, dtype=dtype, mode=mode, shape=(rows, width) if width else rows)


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
    feasible, code, args = 0, POLICIES[policy], _args(cd)
    for a in range(lo, hi, SUB):
        b = min(hi, a + SUB)
        out, best = _values(layer, a, b, code, window, *args, nxt)
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
    ``log_path``); returns the chunk's histogram of T + 1 (bin 0: infeasible)."""
    cd = _codes(tuple(deck))
    t = _unconfirmed(cd.n_cards, lo, hi, *_args(cd))
    _pwrite(t_path, t, lo)
    _pwrite(log_path, np.full(hi - lo, -np.inf), lo * 8)
    return np.bincount(t.astype(np.int64) + 1, minlength=cd.n_cards + 2)


def last_log_chunk(deck, t, lo, hi, t_path, log_path):
    """log A of the last layer's ranks in [lo, hi) with t unconfirmed cards, written in
    place; returns (of them, those with a finite log A; CPU seconds)."""
    cpu = time.process_time()
    cd = _codes(tuple(deck))
    n = cd.n_cards
    ranks = lo + np.flatnonzero(_pread(t_path, np.int8, lo, hi) == t)
    logs = _mapped(log_path, int(cd.sizes[n]), 0)
    vals = _last_logs(t, ranks, logs, *_args(cd), log_factorials(n))
    del logs
    out = _mapped(log_path, int(cd.sizes[n]), 0, mode="r+")
    out[ranks] = vals
    out.flush()
    del out
    return int(np.count_nonzero(vals > -np.inf)), time.process_time() - cpu


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
    ranks, weights = _edges(layer, lo, best, paths, *_args(cd))
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
