"""The solve of the float layers: layer after layer from the empty deck to the full one,
P(no wrong call) and, for the optimal policy, the departures from the majority rule."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from solvers.high_low.float_layers.counting import field_bits, group_sizes, layer_bases, rank_table
from solvers.high_low.float_layers.departures import TOP, Departure, top_departures
from solvers.high_low.float_layers.layer import CHUNKS, _layer
from solvers.high_low.float_layers.sizes import (
    check_deck,
    choose_storage,
    layer_states,
    size_estimate,
    sizing,
)
from solvers.high_low.float_layers.storage import _layer_store
from solvers.kit import task_context
from solvers.kit.compile_once import read_only
from solvers.registry import TaskError

Ties = str  # "lose", "win" or "push"
Policy = str  # "optimal" or "majority"


@dataclass
class Result:
    """P(no wrong call) and what the solve held."""

    p: float
    states: int  # (count vector, card showing) states solved (mirror pairs merged)
    vectors: int  # count vectors over all layers (before mirror merging)
    peak_values: int  # W numbers held at once (two adjacent layers)
    departures: int | None = None  # states where the best call beats majority's (unmerged)
    checked: int | None = None  # states examined for departures (unmerged)
    uneven: int | None = None  # departures where the cards above and below differ in number
    top: list[Departure] = field(default_factory=list)  # the likeliest departures
    top_uneven: list[Departure] = field(default_factory=list)  # the likeliest uneven ones
    storage: str = "memory"  # where the layers lived: "memory" or "disk"
    resumed_from: int = 0  # the checkpointed layer the solve started from (0: none)
    layers_solved: int = 0  # layers computed by this call


def solve(
    ranks: int,
    suits: int,
    ties: Ties = "lose",
    policy: Policy = "optimal",
    departures: bool = False,
    storage: str = "auto",
    context: task_context.TaskContext | None = None,
) -> Result:
    """P(no wrong call) of a ranks x suits deck in float64; sizes: :func:`sizing`.

    ``departures`` (optimal policy only) also counts the states where the best call strictly
    beats the majority rule's and keeps the likeliest of them.  ``context`` (default: the
    running task's, :func:`solvers.kit.task_context.current`) gives the memory budget that decides
    where the layers live (:func:`choose_storage`; ``storage`` forces it), the checkpoints
    (each finished layer is kept; a solve finding them resumes after the last) and the
    progress reports (states done, after each layer).
    """
    if departures and policy != "optimal":
        raise ValueError("departures are found while solving the optimal policy")
    check_deck(ranks, suits)
    ctx = context if context is not None else task_context.current()
    size = sizing(ranks, suits)
    try:
        where = choose_storage(size, ctx.budget, storage)
    except MemoryError as err:
        raise TaskError("ranks", ranks, f"ranks x suits = {ranks}x{suits} {err}") from None
    optimal = policy == "optimal"
    n = ranks * suits
    bits = field_bits(suits)
    before = rank_table(ranks, suits)
    sizes = group_sizes(ranks, suits)
    per_layer = layer_states(ranks, suits)
    done = np.cumsum(per_layer[:-1])  # states of the layers up to m - 1 (the last holds none)
    lgam = np.array([math.lgamma(i + 1) for i in range(n + 1)])
    identity = {
        "format": 1,
        "ranks": ranks,
        "suits": suits,
        "tie_ok": ties != "lose",
        "optimal": optimal,
        "departures": departures,
        "chunks": CHUNKS,
        "top": TOP,
    }
    with _layer_store(where, ctx.checkpoints, identity, sizes, size, ranks, ctx.warn) as store:
        start, prev, states, top, found = store.resume()
        pbase = layer_bases(sizes, start)
        if start:
            ctx.progress(done[start], done[-1], "states", f"layer {start} of {n}, resumed")
        for m in range(start + 1, n + 1):
            cbase = layer_bases(sizes, m)

            def part(cur, base, lo, hi, ch_lo, ch_hi, m=m, prev=prev, pbase=pbase):
                return _layer(m, ranks, suits, bits, ties != "lose", optimal, before, sizes,
                              read_only(prev), pbase, cur, base, departures and m < n, lgam,
                              top, found, lo, hi, ch_lo, ch_hi)  # fmt: skip

            cur, count = store.compute(m, cbase, part)
            if m < n:
                states += count
                store.finish(m, cur, states, top, found)
            ctx.progress(done[min(m, n - 1)], done[-1], "states", f"layer {m} of {n}, {where}")
            prev, pbase = cur, cbase
        p = float(np.asarray(prev[:ranks]).sum() / n)
    counted = size_estimate(ranks, suits)
    result = Result(p, states, counted.vectors, counted.layer_values, storage=where,
                    resumed_from=start, layers_solved=n - start)  # fmt: skip
    if departures:
        result.checked, result.departures, result.uneven = (int(v) for v in found.sum(axis=0))
        result.top = top_departures(top[:, :TOP].reshape(-1, 8), suits)
        result.top_uneven = top_departures(top[:, TOP:].reshape(-1, 8), suits)
    return result


def p_perfect(ranks: int, suits: int, ties: Ties = "lose", policy: Policy = "optimal") -> float:
    """P(no wrong call) in float64 (relative error about 1e-13); size: :func:`size_estimate`."""
    return solve(ranks, suits, ties, policy).p
