"""A uniform deck solved out of core: its layers on disk, each split over many workers.

Same states, same policies (optimal, greedy with pair ties, persistent), same arithmetic: a
state's values are computed by the same floating-point operations in the same order as
in_memory.py, so the two agree to the last bit on the values (the score distribution's
final sum runs in another order: ~1e-16).  What changes is where a layer lives:

- **Files.** Layer L is a raw little-endian float64 file of ``sizes[L]`` rows of (log A,
  E[future], E[future^2]) in rank order (the last layer: log A alone), and the policy's
  choices an int8 file per layer; the last layer also keeps its states' unconfirmed cards T
  (int8).  Raw, not ``.npy``: with no header, the byte range of ranks [lo, hi) is
  [lo, hi) times the row size, so chunk boundaries at multiples of :data:`ALIGN` ranks are
  page-aligned in every file and two workers never write the same page (safe on a shared
  file system); the shape comes from ``ranks.codes(deck)``.  Files are the task's
  checkpoint pieces (solvers/kit/checkpoints.py): ``layer-037`` is committed (fsync + rename) only
  when all its chunks are written, so a committed layer is whole.
- **Chunks.** A layer's rank range is cut into contiguous chunks of at most ``chunk`` ranks
  (a multiple of ALIGN, sized from the memory budget: :func:`chunk_states`); each chunk is one
  piece of the task's :class:`~solvers.kit.spread.Spreader` (chunks.py), run by whichever
  worker (or thread) is free, writing its rows at its offset.
- **Successors.** Ranks order states by their largest codes first, so a chunk's successors
  lie in a few windows of the next layer's file: a chunk reads 2-8 times its own bytes of it
  (measured on 8 types of 4, chunks of 2^16 to 2^20 states; 2.6-5.0 on 11 types, chunks of
  2^24); :data:`TOUCH` bounds that in the memory model.
- **The network** carries, per layer, only chunk descriptors (deck, layer, rank range, file
  paths) one way and small summaries (feasible states, T histograms, score histograms,
  edge-file windows) back; values never cross it.
- **The last layer** (no card to come) is solved in passes of T = 0..N, as in
  in_memory.py: a pass writes the states with T unconfirmed cards from those with T - 1
  (already in the file); a chunk is visited only in the passes its T histogram asks for.
- **The score distribution** runs forward: a chunk of layer L adds the path counts of the
  edges into it (from the sorted edge files of layer L - 1's chunks, read by window), and
  writes the edges out of it (child rank, path count) sorted by child rank; the last layer's
  chunks return score histograms.  Edges come from the int8 choices kept per layer.

Resuming: pieces committed by a killed run are kept, each sealed with its size and checksum
(solvers/kit/checkpoints.py).  The solve restarts at the lowest layer L whose values, and whose
choices and counts of layers L..N with the last layer's T and log A, all match their seals
(layers 0..L-1 still to do); a piece that fails is set aside with one line naming it, and
the solve falls back to the next layer up that qualifies, or the last layer (kept to the
end), or the start: whatever is recomputed is computed by the same operations, so the value
is that of an uninterrupted run to the last bit.  Values of layer L + 1 are removed once
layer L is committed (only the next layer is read), the last layer's log A is kept for the
score distribution.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from solvers.card_guessing.uniform_deck.chunks import (
    ROW,
    _allocate,
    _codes,
    _pread,
    last_log_chunk,
    last_t_chunk,
    layer_chunk,
    reach_chunk,
    score_chunk,
)
from solvers.card_guessing.uniform_deck.in_memory import Solution
from solvers.card_guessing.uniform_deck.ranks import POLICIES
from solvers.kit.spread import Spreader

FORMAT = 1  # the checkpoint files' layout; a folder of another format is not reused
ALIGN = 4096  # chunk boundaries are multiples of this many ranks: page-aligned in every file
TOUCH = 8  # a chunk maps at most ~TOUCH times its own value bytes of the next layer
# bytes a chunk state costs its worker at the peak: its values and choice (25), the next
# layer's mapped pages (TOUCH x 24), and the score pass's edges and sort (~100, fits below)
BYTES_PER_CHUNK_STATE = 25 + TOUCH * 24
BASE_BYTES = 350 * 10**6  # a worker process's own: Python, NumPy, Numba's kernels, Dask
MIN_CHUNK = 16 * ALIGN  # the smallest chunk a budget may ask for


# ------------------------------------------------------------------------------ sizing


def chunk_states(budget_bytes: int, threads: int = 1) -> int:
    """The largest chunk (ranks, a multiple of ALIGN) a process of ``budget_bytes`` running
    ``threads`` chunks at once can hold: (budget - BASE_BYTES) / threads / BYTES_PER_CHUNK_STATE."""
    room = (budget_bytes - BASE_BYTES) // max(threads, 1) // BYTES_PER_CHUNK_STATE
    return max(MIN_CHUNK, int(room) // ALIGN * ALIGN)


def bounds(size: int, chunk: int) -> np.ndarray:
    """Chunk boundaries of a layer of ``size`` ranks: 0, chunk, 2 chunk, ..., size."""
    return np.array([*range(0, size, chunk), size], np.int64)


def spans(size: int, chunk: int) -> list[tuple[int, int]]:
    """The chunks [lo, hi) of a layer of ``size`` ranks."""
    cuts = bounds(size, chunk).tolist()
    return list(zip(cuts[:-1], cuts[1:], strict=True))


@dataclass(frozen=True)
class Plan:
    """What an out-of-core solve of a deck needs (see :func:`plan`)."""

    sizes: list[int]  # ranks per layer
    memory: int  # bytes per worker process at the peak (the smallest chunk)
    disk: int  # bytes of files at the peak
    chunk: int  # ranks per chunk for the budget given (0: none given)
    chunks: int  # chunks of the largest layer


REACH = 0.05  # edges per rank of a layer in the score pass, at most (measured: <= 0.024 on
# the layers of 8 types of 4 over 10^5 ranks, 0.029 on 6 types; falling with the types)


def last_layer_bytes(sizes: Sequence[int]) -> int:
    """Bytes of the last layer's files (log A and T, 9 B a rank): the part of
    :func:`disk_bytes` that a deck's tasks share (solve's ``shared``)."""
    return 9 * int(sizes[-1])


def disk_bytes(sizes: Sequence[int], reach: float = REACH) -> int:
    """Peak bytes of files: every layer's choices (1 B a rank), the last layer's log A and T
    (9 B), and the largest of two adjacent value layers (24 B a rank each) or, in the score
    pass, two layers' edges (16 B an edge, ``reach`` edges per rank)."""
    n = len(sizes) - 1
    pairs = max([sizes[i] + sizes[i + 1] for i in range(n - 1)] or [0])
    values = max(24 * pairs, 24 * sizes[n - 1]) if n else 0
    edges = 16 * reach * max(sizes[i] + sizes[i + 1] for i in range(n)) if n else 0
    return int(sum(sizes) + last_layer_bytes(sizes) + max(values, edges))


def plan(deck: Sequence[int], budget_bytes: int | None = None, threads: int = 1) -> Plan:
    """Sizes, per-worker memory and disk of an out-of-core solve of ``deck``."""
    sizes = [int(s) for s in _codes(tuple(int(c) for c in deck)).sizes]
    chunk = chunk_states(budget_bytes, threads) if budget_bytes else 0
    big = max(sizes)
    return Plan(
        sizes,
        BASE_BYTES + MIN_CHUNK * BYTES_PER_CHUNK_STATE,
        disk_bytes(sizes),
        chunk,
        -(-big // chunk) if chunk else 0,
    )


# ------------------------------------------------------------------------------ running


class _Scratch:
    """Checkpoints of a solve that keeps none: pieces in a temporary folder, removed after."""

    def __init__(self, parent: str | None = None):
        from solvers.kit.checkpoints import Checkpoints

        self.tmp = tempfile.mkdtemp(prefix="ranked-layers-", dir=parent)
        self.store = Checkpoints(Path(self.tmp) / "task", root=self.tmp)

    def close(self) -> None:
        import shutil

        shutil.rmtree(self.tmp, ignore_errors=True)


def _layer_name(layer: int) -> str:
    return f"layer-{layer:03d}"


Report = Callable[[float, float, str], None]


def solve(
    deck: Sequence[int],
    policy: str = "optimal",
    window: float = 0.0,
    *,
    spread: Spreader | None = None,
    checkpoints: Any = None,
    chunk: int | None = None,
    budget_bytes: int | None = None,
    with_pmf: bool = True,
    progress: Report | None = None,
    log: Callable[[str], None] | None = None,
    warn: Callable[[str], None] | None = None,
    shared: Any = None,
) -> Solution:
    """in_memory.solve(deck, policy, window=window) with every layer on disk, split into
    chunks of ``chunk`` ranks (default: from ``budget_bytes`` per worker, see
    :func:`chunk_states`) run by ``spread`` (a solvers.kit.spread.Spreader; None: the current
    task's, ``TaskContext.spread``: one after another in this process outside the pipeline).

    ``checkpoints``: a solvers.kit.checkpoints.Checkpoints (on a cluster: on a shared file system);
    committed layers found there are reused.  None: a temporary folder, removed after.
    ``progress(done, total, note)`` is called as chunks finish (ranks solved of all layers);
    ``log`` takes a line per layer, ``warn`` a line per checkpoint piece that failed its check
    (default: the current task's warnings, solvers.kit.task_context.TaskContext.warn).
    ``shared``: a Checkpoints folder the deck's tasks share (TaskContext.shared): the last
    layer (T and log A, the same for every policy) is computed by the first task and adopted
    by the others.
    """
    deck = tuple(int(c) for c in deck)
    if policy not in POLICIES:
        raise ValueError(f"policy {policy!r}: one of {', '.join(POLICIES)}")
    cd = _codes(deck)
    sizes = [int(s) for s in cd.sizes]
    from solvers.kit.task_context import current

    with ExitStack() as stack:
        store = checkpoints
        if checkpoints is None:
            scratch = _Scratch()
            stack.callback(scratch.close)  # after the spreader closed: no piece writes there
            store = scratch.store
        if spread is None:
            spread = stack.enter_context(current().spread())
        if chunk is None:  # the places' threads share a place's budget
            chunk = chunk_states(budget_bytes or current().budget.bytes, spread.threads)
        chunk = max(ALIGN, int(chunk) // ALIGN * ALIGN)
        say = log or (lambda text: None)
        warn = warn or current().warn
        return _solve(deck, cd, sizes, policy, window, store, spread, chunk, with_pmf,
                      progress, say, warn, shared)  # fmt: skip


def _meta(store, deck, policy, window, warn) -> None:
    """Check (or write) the folder's description; a folder of another solve is refused."""
    meta = {"format": FORMAT, "deck": list(deck), "policy": policy, "window": window}
    if store.trusted("meta.json", warn):
        found = json.loads(store.load_path("meta.json").read_text())
        if found != meta:
            raise ValueError(
                f"checkpoint folder {store.folder} holds another solve ({found}), not {meta}"
            )
        return
    store.path("meta.json").write_text(json.dumps(meta))
    store.commit("meta.json")


def _count(layer: int) -> str:
    return f"count-{layer:03d}"


def _best(layer: int) -> str:
    return f"best-{layer:03d}"


def resume_point(store, n: int, warn: Callable[[str], None]) -> int:
    """The lowest layer L whose committed pieces, and those of every layer above it that the
    rest of the solve reads, match their seals: L's values, the choices of layers L..N-1,
    the counts of layers L..N, the last layer's T and log A.  N + 1 when none does (the
    solve starts at the last layer).  Each piece is checked at most once, lowest layer
    first; a piece that fails is set aside with one line to ``warn``, so a higher layer that
    needs it does not qualify either."""
    verdicts: dict[str, bool] = {}

    def whole(name: str) -> bool:
        if name not in verdicts:
            verdicts[name] = store.trusted(name, warn)
        return verdicts[name]

    last = ["last-t", _layer_name(n), _count(n)]
    committed = store.finished() | store.sealed()
    for layer in range(n + 1):
        if _layer_name(layer) not in committed:
            continue
        needs = [_layer_name(layer), _count(layer), *last]
        needs += [x for k in range(layer, n) for x in (_best(k), _count(k))]
        if all(whole(name) for name in dict.fromkeys(needs)):
            return layer
    return n + 1


def _solve(deck, cd, sizes, policy, window, store, spread, chunk, with_pmf, progress, say,
           warn, shared):  # fmt: skip
    n = cd.n_cards
    _meta(store, deck, policy, window, warn)
    total = float(sum(sizes)) * (2 if with_pmf else 1)
    state = {"done": 0.0}

    def report(amount: float, note: str) -> None:
        state["done"] += amount
        if progress:
            progress(state["done"], total, note)

    wall = time.perf_counter()
    start = resume_point(store, n, warn)
    counts = {
        layer: json.loads(store.load_path(_count(layer)).read_text())["feasible"]
        for layer in range(start, n + 1)
    }
    for layer in range(start + 1, n):  # a kill between committing L and dropping L + 1
        store.drop(_layer_name(layer))
    if start <= n:
        report(float(sum(sizes[start:])), f"resumed at layer {start}")
        say(
            f"resuming: layers {start}..{n} committed in {store.folder} and checked against "
            f"their seals in {time.perf_counter() - wall:.1f} s"
        )
    else:
        counts[n] = _shared_last_layer(deck, cd, sizes, store, shared, spread, chunk, report,
                                       say, warn)  # fmt: skip
        start = n
    for layer in range(start - 1, -1, -1):
        counts[layer] = _value_layer(deck, layer, sizes, policy, window, store, spread, chunk,
                                     report, say)  # fmt: skip
    top = _pread(str(store.load_path(_layer_name(0))), np.float64, 0, 1, ROW)[0]
    mean = float(top[1])
    pmf = _score_pmf(deck, cd, sizes, store, spread, chunk, report, say, warn) if with_pmf else None
    feasible = [counts[layer] for layer in range(n + 1)]
    return Solution(
        mean, float(top[2]) - mean * mean, sum(feasible), int(sum(sizes)), feasible, pmf
    )


def _value_layer(deck, layer, sizes, policy, window, store, spread, chunk, report, say) -> int:
    """Rows and choices of ``layer`` from the committed next layer, in chunks spread over the
    places, committed with its count; the next layer dropped (unless it is the last, which
    the score pass reads).  Returns its feasible states."""
    n = len(sizes) - 1
    wall = time.perf_counter()
    width = 1 if layer + 1 == n else ROW
    out = store.path(_layer_name(layer))
    best = store.path(_best(layer))
    _allocate(out, sizes[layer] * ROW * 8)
    _allocate(best, sizes[layer])
    nxt_path = str(store.load_path(_layer_name(layer + 1)))
    calls = [
        (deck, layer, a, b, policy, window, nxt_path, width, str(out), str(best))
        for a, b in spans(sizes[layer], chunk)
    ]
    note = f"layer {layer} of {n}"
    results = spread.map(layer_chunk, calls, lambda res: report(res[2], note))
    feasible = sum(r[0] for r in results)
    cpu = sum(r[1] for r in results)
    sealing_at = time.perf_counter()
    hashing = store.hash_seconds
    store.commit(_best(layer))
    store.commit(_layer_name(layer))
    sealing, hashing = time.perf_counter() - sealing_at, store.hash_seconds - hashing
    # the count last: a layer is resumed from only once its count is committed too
    timing = {"cpu_s": cpu, "wall_s": sealing_at - wall, "commit_s": sealing, "hash_s": hashing}
    _put_json(store, _count(layer), {"feasible": feasible, **timing})
    if layer + 1 < n:  # read by no later layer (the last: by the score pass)
        store.drop(_layer_name(layer + 1))
    say(
        f"layer {layer}: {sizes[layer]:,} ranks, {feasible:,} feasible, {len(calls)} chunks, "
        f"{time.perf_counter() - wall:.1f} s wall, {cpu:.1f} s CPU, committed in "
        f"{sealing:.2f} s (hashed for the seals in {hashing:.2f} s)"
    )
    return feasible


def _put_json(store, name: str, data: dict) -> None:
    store.path(name).write_text(json.dumps(data))
    store.commit(name)


def _last_pieces(n: int) -> tuple[str, str, str]:
    """The last layer's pieces: T, log A, the count."""
    return "last-t", _layer_name(n), _count(n)


def _shared_last_layer(deck, cd, sizes, store, shared, spread, chunk, report, say, warn) -> int:
    """The last layer's pieces in ``store``: adopted from the deck's ``shared`` folder when
    another policy's task put them there (and they match their seals), else computed and put
    there for the next (under the folder's lock, so two tasks of one deck never compute them
    both); ``shared`` None: computed.  Returns the layer's feasible states."""
    n = cd.n_cards
    names = _last_pieces(n)
    if shared is None:
        return _last_layer(deck, cd, sizes, store, spread, chunk, report, say)
    with shared.lock():
        if all(shared.trusted(name, warn) for name in names):
            for name in names:
                store.adopt(name, shared.load_path(name))
            report(float(sizes[n]), f"layer {n} (last), shared by the deck's tasks")
            say(f"layer {n} (last): adopted from {shared.folder}")
            return json.loads(store.load_path(_count(n)).read_text())["feasible"]
        feasible = _last_layer(deck, cd, sizes, store, spread, chunk, report, say)
        for name in names:
            shared.adopt(name, store.load_path(name))
        return feasible


def _last_layer(deck, cd, sizes, store, spread, chunk, report, say) -> int:
    """log A and T of the last layer, in passes of T (committed as ``layer-N``, ``last-t``)."""
    n = cd.n_cards
    size = sizes[n]
    wall = time.perf_counter()
    t_path, log_path = store.path("last-t"), store.path(_layer_name(n))
    _allocate(t_path, size)
    _allocate(log_path, size * 8)
    chunks = spans(size, chunk)
    found = spread.map(
        last_t_chunk,
        [(deck, a, b, str(t_path), str(log_path)) for a, b in chunks],
        lambda res: None,
    )
    hists = [hist for hist, _ in found]
    cpu = sum(c for _, c in found)
    feasible = 0
    passes = n + 1
    for t in range(passes):
        calls = [
            (deck, t, a, b, str(t_path), str(log_path))
            for (a, b), hist in zip(chunks, hists, strict=True)
            if hist[t + 1]
        ]
        results = spread.map(last_log_chunk, calls, lambda res: None)
        feasible += sum(r[0] for r in results)
        cpu += sum(r[1] for r in results)
        share = size * (t + 1) // passes - size * t // passes
        report(float(share), f"layer {n} (last), pass T={t} of {n}")
    store.commit("last-t")
    store.commit(_layer_name(n))
    _put_json(store, _count(n), {"feasible": feasible, "cpu_s": cpu})
    say(
        f"layer {n} (last): {size:,} ranks, {feasible:,} feasible, {len(chunks)} chunks, "
        f"{time.perf_counter() - wall:.1f} s wall, {cpu:.1f} s CPU"
    )
    return feasible


def _edges_name(layer: int) -> str:
    return f"edges-{layer:03d}"


def _score_start(store, n: int, warn) -> tuple[int, list | None]:
    """(the first layer of the score pass to compute, the edges into each chunk of it) from
    the newest committed edges piece that matches its seal; (0, [None]) when there is none
    (the start state, reached by one path)."""
    done = sorted(
        (int(name[6:]) for name in store.finished() | store.sealed() if name.startswith("edges-")),
        reverse=True,
    )
    for layer in done:
        if store.trusted(_edges_name(layer), warn):
            piece = store.load_path(_edges_name(layer))
            windows = json.loads((piece / "slices.json").read_text())
            slices = [[(str(piece / name), a, b) for name, a, b in chunk] for chunk in windows]
            return layer + 1, slices
    return 0, [None]


def _score_pmf(deck, cd, sizes, store, spread, chunk, report, say, warn) -> list[float]:
    """P(final score = k) of the policy whose choices are committed, forward over chunks:
    each layer's edges (sorted by child rank, a file per chunk) committed as a piece with the
    windows of them that fall in each chunk of the next layer; a resumed pass starts after the
    newest edges that verify, and only the newest are kept."""
    n = cd.n_cards
    start, slices = _score_start(store, n, warn)
    if start:
        report(float(sum(sizes[:start])), f"score distribution resumed at layer {start}")
    for layer in range(start, n):
        nxt = bounds(sizes[layer + 1], chunk)
        best = str(store.load_path(_best(layer)))
        piece = store.path(_edges_name(layer))
        piece.mkdir()
        calls, names = [], []
        for h, (a, b) in enumerate(spans(sizes[layer], chunk)):
            if slices[h] is not None and not slices[h]:
                continue  # nothing reaches this chunk
            names.append(f"{h:06d}.npy")
            calls.append((deck, layer, a, b, slices[h], best, str(piece / names[-1]), nxt))
        windows = spread.map(reach_chunk, calls, lambda res: None)
        into = [[] for _ in range(nxt.size - 1)]  # the next layer's chunks: the edges into it
        for name, win in zip(names, windows, strict=True):
            for h, (a, b) in win.items():
                into[h].append((name, a, b))
        (piece / "slices.json").write_text(json.dumps(into))
        store.commit(_edges_name(layer))
        if layer:
            store.drop(_edges_name(layer - 1))
        path = store.load_path(_edges_name(layer))
        slices = [[(str(path / name), a, b) for name, a, b in chunk] for chunk in into]
        edges = sum(b - a for win in windows for a, b in win.values())
        report(float(sizes[layer]), f"score distribution, layer {layer} of {n}")
        say(f"score pass, layer {layer}: {edges:,} edges into {sizes[layer + 1]:,} ranks")
    t_path, log_path = str(store.load_path("last-t")), str(store.load_path(_layer_name(n)))
    calls = [
        (deck, a, b, slices[h], t_path, log_path)
        for h, (a, b) in enumerate(spans(sizes[n], chunk))
        if slices[h]
    ]
    hists = spread.map(score_chunk, calls, lambda res: None)
    report(float(sizes[n]), "score distribution, last layer")
    return np.sum(hists, axis=0).tolist()
