"""The optimal policy on any deck with every layer split into parts, spread over workers.

layers.py, counts.py and optimal.py hold the kernels (pure NumPy/Numba on arrays of layer
keys); this module only moves arrays, through a :class:`~solvers.kit.spread.Spreader` (the
task's context gives it: the Dask cluster the task runs on, or threads of this process).
Every layer (states after L cards) is split into ``parts`` partitions by a hash of the state
key (partition_of), each held where it was computed (a worker, as a piece of the spreader);
part h of every layer is submitted to place h (modulo the places; a hint, not a rule); the
driver never gathers a layer:

- forward: part g of layer L computes its children (sorted) and splits them by owner h (the
  *piece* (g, h)); part h of layer L+1 is the sorted distinct union of the pieces (g, h) over g
  (a hash set and a sort); the pieces are dropped once their unions exist;
- backward: part g of layer L is solved from the whole of layer L+1, every part's keys and
  values (32 bytes a state, worker to worker), in one task per part and layer: one scheduler
  hop per layer on the critical path (a round trip costs ~10 ms on a busy 2-core machine;
  an answer-the-askers exchange took three);
- score distribution: forward again, part g sends each policy edge (child key, path count)
  to the child's owner, which adds them up; the last layer's parts return score histograms.

The pieces of a layer are dropped as soon as no later step needs them (the policy's int8
best slots and the states' keys stay until the score pass).

A ``method: float`` task with ``workers > 1`` (an execution knob, not part of the task id)
runs here: tasks/float_tasks.py hands :func:`optimal` the spreader of its context.  In
threads of one process (``cluster=sync``) the kernels release the GIL, so the parts run in
parallel and hand each other the next layer in memory (bench_suits52.py on (9,9,9,9): 2
threads 1.34x faster than 1, 2 worker processes 1.20x).  Nothing here imports Dask.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from solvers.card_guessing.any_deck.counts import start_log_count
from solvers.card_guessing.any_deck.layers import children, distinct, hash_table, partition_of
from solvers.card_guessing.any_deck.optimal import (
    Solution,
    add_paths,
    layer_values,
    policy_edges,
    score_mass,
)
from solvers.card_guessing.first_moves import TREE_DEPTH
from solvers.card_guessing.state_codes import Encoding, layer_encoding, start_key
from solvers.kit.spread import Spreader

Parts = list  # one piece of the spreader per partition of a layer


def _start_part(enc: Encoding, h: int, parts: int) -> np.ndarray:
    key = np.array([start_key(enc)], np.int64)
    return key[partition_of(key, parts) == h]


def _by_owner(keys: np.ndarray, parts: int, *columns: np.ndarray) -> list:
    """``keys`` (and any parallel columns) split into the partitions that own them."""
    where = partition_of(keys, parts)
    masks = [where == h for h in range(parts)]
    if not columns:
        return [keys[m] for m in masks]
    return [(keys[m], *(c[m] for c in columns)) for m in masks]


def _pieces(keys: np.ndarray, enc: Encoding, parts: int) -> list[np.ndarray]:
    """The children of a part, sorted, split into the next layer's partitions.

    Sorted keys matter: a state's children are near each other in a sorted layer, so the
    backward pass reads their values from nearby memory; in hash order the same pass took
    2.6x as long ((9,9,9,9), one process).
    """
    return _by_owner(np.sort(children(keys, enc)), parts)


def _union(h: int, *splits: list) -> np.ndarray:
    """Partition h of the next layer: the sorted distinct keys of every part's piece for h."""
    if len(splits) == 1:
        return splits[0][h]  # already sorted and distinct
    return np.sort(distinct(np.concatenate([split[h] for split in splits])))


def _last_values(keys: np.ndarray, enc: Encoding) -> tuple:
    """(log A, E, E^2, best) of one part of the last layer (no card to come)."""
    (logs, vals, sqs), best = layer_values(keys, enc, None, None, 0)
    return logs, vals, sqs, best


def _part_values(keys: np.ndarray, enc: Encoding, n_left: int, *next_layer) -> tuple:
    """(log A, E, E^2, best) of one part of a layer, from the whole next layer.

    ``next_layer`` holds the next layer's parts' keys, then their values, part by part.
    """
    parts = len(next_layer) // 2
    nkeys = _joined(next_layer[:parts])
    nvals = tuple(_joined([v[i] for v in next_layer[parts:]]) for i in range(3))
    (logs, vals, sqs), best = layer_values(keys, enc, nkeys, nvals, n_left)
    return logs, vals, sqs, best


def _joined(arrays: Sequence[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _edges(keys: np.ndarray, best: np.ndarray, paths: np.ndarray, enc, parts: int) -> list:
    """The policy's edges (child key, path count) from a part, split by the child's owner."""
    ekeys, epaths = policy_edges(keys, best, paths, enc.r, enc.width, enc.bits_p)
    return _by_owner(ekeys, parts, epaths)


def _paths(keys: np.ndarray, h: int, *edges: list) -> np.ndarray:
    """Policy path counts of part h's states: the sum over the edges into them."""
    out = np.zeros(keys.size)
    table = hash_table(keys)
    for split in edges:
        ekeys, epaths = split[h]
        add_paths(keys, table, ekeys, epaths, out)
    return out


def _reach(keys: np.ndarray, best: np.ndarray, h: int, enc, parts: int, *edges: list) -> list:
    """Part h's policy edges out, split by owner, from its path counts (the edges in)."""
    paths = _paths(keys, h, *edges) if edges else np.ones(keys.size)  # layer 0: the start
    return _edges(keys, best, paths, enc, parts)


def _score_mass(keys: np.ndarray, logs: np.ndarray, h: int, enc, *edges: list) -> np.ndarray:
    """P(final score = k) summed over part h of the last layer, from the edges into it."""
    return score_mass(keys, _paths(keys, h, *edges), logs, start_log_count(enc), enc)


def forward(run: Spreader, enc: Encoding, parts: int) -> list[Parts]:
    """The keys of every layer, as parts (each sorted)."""
    layers = [[run.submit(_start_part, enc, h, parts, place=h) for h in range(parts)]]
    for _ in range(enc.n_cards):
        split = [
            run.submit(_pieces, part, enc, parts, place=g) for g, part in enumerate(layers[-1])
        ]
        layers.append([run.submit(_union, h, *split, place=h) for h in range(parts)])
    return layers


def backward(run: Spreader, enc: Encoding, layers: list, tree_depth: int):
    """(values of layer 0 as parts, best slots of every layer, last layer's log A, first moves)."""
    first: dict[int, dict[int, tuple[int, float, float]]] = {}
    bests: list = [None] * len(layers)
    values = [run.submit(_last_values, part, enc, place=g) for g, part in enumerate(layers[-1])]
    last_logs = [run.submit(operator.getitem, v, 0, place=g) for g, v in enumerate(values)]
    for depth in range(enc.n_cards, -1, -1):
        if depth < enc.n_cards:
            n_left = enc.n_cards - depth
            nxt = [*layers[depth + 1], *values]
            values = [
                run.submit(_part_values, part, enc, n_left, *nxt, place=g)
                for g, part in enumerate(layers[depth])
            ]
        bests[depth] = [run.submit(operator.getitem, v, 3, place=g) for g, v in enumerate(values)]
        if depth < tree_depth:
            first[depth] = _moves(run.gather(layers[depth]), run.gather(values))
    return values, bests, last_logs, first


def score_pmf(run: Spreader, enc: Encoding, layers: list, bests: list, last_logs) -> list:
    """P(final score = k) under the policy ``bests``; consumes ``layers`` and ``bests``."""
    parts = len(layers[0])
    edges: list = []
    for depth in range(enc.n_cards):
        edges = [
            run.submit(_reach, keys, best, h, enc, parts, *edges, place=h)
            for h, (keys, best) in enumerate(zip(layers[depth], bests[depth], strict=True))
        ]
        layers[depth] = bests[depth] = None
    masses = [
        run.submit(_score_mass, keys, logs, h, enc, *edges, place=h)
        for h, (keys, logs) in enumerate(zip(layers[-1], last_logs, strict=True))
    ]
    return np.sum(run.gather(masses), axis=0).tolist()


def optimal(
    run: Spreader, deck: Sequence[int], parts: int, tree_depth: int = TREE_DEPTH
) -> Solution:
    """optimal.py's ``optimal(deck)`` with every layer in ``parts`` partitions spread by ``run``."""
    enc = layer_encoding(deck)
    layers = forward(run, enc, parts)
    lengths = run.gather([[run.submit(len, p, place=h) for h, p in enumerate(ly)] for ly in layers])
    sizes = [sum(row) for row in lengths]
    values, bests, last_logs, first = backward(run, enc, layers, tree_depth)
    (result,) = [v for v in run.gather(values) if v[0].size]
    del values
    pmf = score_pmf(run, enc, layers, bests, last_logs)
    mean = float(result[1][0])
    return Solution(mean, float(result[2][0]) - mean * mean, sum(sizes), sizes, first, pmf)


def _moves(keys: list[np.ndarray], values: list[tuple]) -> dict[int, tuple[int, float, float]]:
    out: dict[int, tuple[int, float, float]] = {}
    for part, (logs, vals, _, best) in zip(keys, values, strict=True):
        for row in zip(part.tolist(), best.tolist(), logs.tolist(), vals.tolist(), strict=True):
            out[row[0]] = row[1:]
    return out
