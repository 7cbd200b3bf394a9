"""The layered float solver of yes/no card guessing, spread over Dask workers.

solvers/card_guessing/fast.py holds the kernels (pure NumPy/Numba on arrays of state keys);
this module only moves arrays.  Every layer (states after L cards) is split into ``parts``
partitions by a hash of the state key (fast.partition_of), each held on a worker as a future:

- forward: each part's children are computed where the part lives and split by hash; part h
  of the next layer is the union of the h-pieces of every part;
- backward: part h of layer L gets its values from the whole next layer, i.e. only the
  next layer's keys and values travel (each worker fetches the parts it does not hold).

Selection: the family parameter ``workers`` (execution knob, not part of the task id).  With
``workers > 1`` and ``method: float``, :func:`solve_for_task` runs the task here: inside a
Dask worker it borrows the running cluster (``worker_client``), elsewhere it starts a
LocalCluster of ``workers`` single-threaded processes on 127.0.0.1.  Importing this module
installs that hook into solvers.card_guessing.fast (solvers never import Dask).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np
from distributed import Client, LocalCluster, get_worker, worker_client

from solvers.card_guessing import fast


def _start_part(lay: fast.Layout, h: int, parts: int) -> np.ndarray:
    key = np.array([fast.start_key(lay)], np.int64)
    return key[fast.partition_of(key, parts) == h]


def _children_split(keys: np.ndarray, lay: fast.Layout, parts: int) -> list[np.ndarray]:
    """The children of a part, split into the next layer's partitions."""
    children = fast.next_layer(keys, lay)
    where = fast.partition_of(children, parts)
    return [children[where == h] for h in range(parts)]


def _merge(*pieces: np.ndarray) -> np.ndarray:
    """One partition of the next layer: sorted distinct keys from every part's piece."""
    return np.unique(np.concatenate(pieces))


def _part_values(
    keys: np.ndarray,
    lay: fast.Layout,
    n_left: int,
    next_keys: Sequence[np.ndarray],
    next_values: Sequence[tuple],
) -> tuple:
    """(log A, E, E^2, best) of one part, from the whole next layer (all its parts)."""
    if n_left == 0:
        (logs, vals, sqs), best = fast.layer_values(keys, lay, None, None, 0)
        return logs, vals, sqs, best
    nkeys = np.concatenate(next_keys)
    nvals = tuple(np.concatenate([v[i] for v in next_values]) for i in range(3))
    (logs, vals, sqs), best = fast.layer_values(keys, lay, nkeys, nvals, n_left)
    return logs, vals, sqs, best


def optimal(client: Client, deck: Sequence[int], parts: int, tree_depth: int = 4) -> fast.Solution:
    """fast.optimal(deck) with every layer split into ``parts`` partitions over ``client``."""
    lay = fast.layout(deck)
    layers = [[client.submit(_start_part, lay, h, parts) for h in range(parts)]]
    for _ in range(lay.n_cards):
        splits = [client.submit(_children_split, part, lay, parts) for part in layers[-1]]
        layers.append(
            [
                client.submit(_merge, *[client.submit(operator.getitem, s, h) for s in splits])
                for h in range(parts)
            ]
        )
    sizes = [sum(client.gather([client.submit(len, p) for p in layer])) for layer in layers]
    values: list = []
    first: dict[int, dict[int, tuple[int, float, float]]] = {}
    for depth in range(lay.n_cards, -1, -1):
        n_left = lay.n_cards - depth
        nxt = layers[depth + 1] if n_left else []
        values = [
            client.submit(_part_values, part, lay, n_left, nxt, values) for part in layers[depth]
        ]
        if depth < tree_depth:
            first[depth] = _moves(client.gather(layers[depth]), client.gather(values))
        del layers[depth + 1 :]
    (result,) = [v for v in client.gather(values) if v[0].size]
    mean = float(result[1][0])
    return fast.Solution(mean, float(result[2][0]) - mean * mean, sum(sizes), sizes, first)


def _moves(keys: list[np.ndarray], values: list[tuple]) -> dict[int, tuple[int, float, float]]:
    out: dict[int, tuple[int, float, float]] = {}
    for part, (logs, vals, _, best) in zip(keys, values, strict=True):
        for row in zip(part.tolist(), best.tolist(), logs.tolist(), vals.tolist(), strict=True):
            out[row[0]] = row[1:]
    return out


def solve_for_task(deck: Sequence[int], workers: int) -> fast.Solution:
    """The optimal solve of a ``workers > 1`` task: on the running cluster, or a local one."""
    try:
        get_worker()
    except ValueError:  # not inside a Dask worker: bring up a small local cluster
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, host="127.0.0.1", dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            return optimal(client, deck, workers)
    with worker_client() as client:
        return optimal(client, deck, workers)


fast.install_distributed(solve_for_task)
