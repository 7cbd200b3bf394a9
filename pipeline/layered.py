"""The layered float solver of yes/no card guessing, spread over Dask workers.

solvers/card_guessing/fast.py holds the kernels (pure NumPy/Numba on arrays of state keys);
this module only moves arrays.  Every layer (states after L cards) is split into ``parts``
partitions by a hash of the state key (fast.partition_of), each held on a worker as a future,
and every task below touches one part (no task sees a whole layer):

- forward: part g of layer L computes its children and splits them by owner h (the *piece*
  (g, h), kept: it is the list of layer-L+1 states part g will ask h about); part h of layer
  L+1 is the distinct union of the pieces (g, h) over g (a hash set, no sort);
- backward: the owner of part h of layer L+1 builds one hash table of its part and answers
  each piece (g, h) with the values of exactly those states; part g then solves its states
  from its pieces and their answers.  Only the answers (three float64 per asked state) and
  the pieces travel, worker to worker; the driver never gathers a layer;
- score distribution: forward again, part g sends each policy edge (child key, path count)
  to the child's owner, which adds them up; the last layer's parts return a score histogram.

Futures of a layer are dropped as soon as the next step no longer needs them (the policy's
int8 best slots and the states' keys stay until the score pass).

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

Parts = list  # one future per partition of a layer


def _start_part(lay: fast.Layout, h: int, parts: int) -> np.ndarray:
    key = np.array([fast.start_key(lay)], np.int64)
    return key[fast.partition_of(key, parts) == h]


def _by_owner(keys: np.ndarray, parts: int, *columns: np.ndarray) -> list:
    """``keys`` (and any parallel columns) split into the partitions that own them."""
    where = fast.partition_of(keys, parts)
    masks = [where == h for h in range(parts)]
    if not columns:
        return [keys[m] for m in masks]
    return [(keys[m], *(c[m] for c in columns)) for m in masks]


def _pieces(keys: np.ndarray, lay: fast.Layout, parts: int) -> list[np.ndarray]:
    """The children of a part, split into the next layer's partitions."""
    return _by_owner(fast.children(keys, lay), parts)


def _union(*pieces: np.ndarray) -> np.ndarray:
    """One partition of the next layer: the distinct keys of every part's piece."""
    if len(pieces) == 1:
        return pieces[0]  # already distinct
    return fast.distinct(np.concatenate(pieces))


def _table(keys: np.ndarray) -> np.ndarray:
    return fast.hash_table(keys)


def _answer(keys: np.ndarray, table: np.ndarray, values: tuple, wanted: np.ndarray) -> tuple:
    """(log A, E, E^2) of the ``wanted`` states of a part (its keys, table, values)."""
    at = fast.positions(table, keys, wanted)
    return tuple(v[at] for v in values[:3])


def _part_values(
    keys: np.ndarray, lay: fast.Layout, n_left: int, pieces: list, answers: list
) -> tuple:
    """(log A, E, E^2, best) of one part, from its children's values (pieces and answers)."""
    if n_left == 0:
        (logs, vals, sqs), best = fast.layer_values(keys, lay, None, None, 0)
        return logs, vals, sqs, best
    nkeys = np.concatenate(pieces)
    nvals = tuple(np.concatenate([a[i] for a in answers]) for i in range(3))
    (logs, vals, sqs), best = fast.layer_values(keys, lay, nkeys, nvals, n_left)
    return logs, vals, sqs, best


def _edges(keys: np.ndarray, best: np.ndarray, paths: np.ndarray, lay, parts: int) -> list:
    """The policy's edges (child key, path count) from a part, split by the child's owner."""
    ekeys, epaths = fast.policy_edges(keys, best, paths, lay.r, lay.width, lay.bits_p)
    return _by_owner(ekeys, parts, epaths)


def _paths(keys: np.ndarray, *edges: tuple) -> np.ndarray:
    """Policy path counts of a part's states: the sum over the edges into them."""
    out = np.zeros(keys.size)
    table = fast.hash_table(keys)
    for ekeys, epaths in edges:
        fast.add_paths(keys, table, ekeys, epaths, out)
    return out


def _first_paths(keys: np.ndarray) -> np.ndarray:
    return np.ones(keys.size)  # layer 0: the start, reached by one path


def forward(client: Client, lay: fast.Layout, parts: int) -> tuple[list[Parts], list]:
    """(keys of every layer as parts, pieces[L][g][h] of every layer but the last)."""
    layers = [[client.submit(_start_part, lay, h, parts) for h in range(parts)]]
    pieces = []
    for _ in range(lay.n_cards):
        split = [client.submit(_pieces, part, lay, parts) for part in layers[-1]]
        pieces.append(
            [[client.submit(operator.getitem, s, h) for h in range(parts)] for s in split]
        )
        layers.append(
            [client.submit(_union, *[row[h] for row in pieces[-1]]) for h in range(parts)]
        )
    return layers, pieces


def backward(client: Client, lay: fast.Layout, layers: list, pieces: list, tree_depth: int):
    """(values of layer 0 as parts, best slots of every layer, last layer's log A, first moves).

    Consumes ``pieces``.
    """
    parts = len(layers[0])
    first: dict[int, dict[int, tuple[int, float, float]]] = {}
    bests: list = [None] * len(layers)
    values = [client.submit(_part_values, part, lay, 0, [], []) for part in layers[-1]]
    last_logs = [client.submit(operator.getitem, v, 0) for v in values]
    for depth in range(lay.n_cards, -1, -1):
        if depth < lay.n_cards:
            tables = [client.submit(_table, part) for part in layers[depth + 1]]
            answers = [
                [
                    client.submit(_answer, layers[depth + 1][h], tables[h], values[h], row[h])
                    for h in range(parts)
                ]
                for row in pieces[depth]
            ]
            values = [
                client.submit(_part_values, part, lay, lay.n_cards - depth, row, ans)
                for part, row, ans in zip(layers[depth], pieces[depth], answers, strict=True)
            ]
            pieces[depth] = tables = answers = None  # release them once used
        bests[depth] = [client.submit(operator.getitem, v, 3) for v in values]
        if depth < tree_depth:
            first[depth] = _moves(client.gather(layers[depth]), client.gather(values))
    return values, bests, last_logs, first


def score_pmf(client: Client, lay: fast.Layout, layers: list, bests: list, last_logs) -> list:
    """P(final score = k) under the policy ``bests``; consumes ``layers`` and ``bests``."""
    parts = len(layers[0])
    paths = [client.submit(_first_paths, part) for part in layers[0]]
    for depth in range(lay.n_cards):
        edges = [
            client.submit(_edges, k, b, p, lay, parts)
            for k, b, p in zip(layers[depth], bests[depth], paths, strict=True)
        ]
        paths = [
            client.submit(_paths, part, *[client.submit(operator.getitem, e, h) for e in edges])
            for h, part in enumerate(layers[depth + 1])
        ]
        layers[depth] = bests[depth] = edges = None
    log_start = fast.start_log_count(lay)
    masses = [
        client.submit(fast.score_mass, k, p, lg, log_start, lay)
        for k, p, lg in zip(layers[-1], paths, last_logs, strict=True)
    ]
    return np.sum(client.gather(masses), axis=0).tolist()


def optimal(client: Client, deck: Sequence[int], parts: int, tree_depth: int = 4) -> fast.Solution:
    """fast.optimal(deck) with every layer split into ``parts`` partitions over ``client``."""
    lay = fast.layout(deck)
    layers, pieces = forward(client, lay, parts)
    sizes = [sum(client.gather([client.submit(len, p) for p in layer])) for layer in layers]
    values, bests, last_logs, first = backward(client, lay, layers, pieces, tree_depth)
    (result,) = [v for v in client.gather(values) if v[0].size]
    del values
    pmf = score_pmf(client, lay, layers, bests, last_logs)
    mean = float(result[1][0])
    sol = fast.Solution(mean, float(result[2][0]) - mean * mean, sum(sizes), sizes, first, pmf)
    return sol


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
