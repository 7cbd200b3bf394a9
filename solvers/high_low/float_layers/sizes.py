"""What a solve of the float layers holds and needs, and where its layers live.

``sum_L suits**L`` vectors over all layers (8.9e7 for 13 x 4, at most 8.2e6 in one layer); two
layers of ``W`` are held at once (1.7 GB for 13 x 4, 7.0 GB for 14 x 4, 29.2 GB for 15 x 4).
The memory budget of where the solve runs decides where the layers live
(:func:`choose_storage`): both in memory, or, when only one fits, each layer a file
(:mod:`.storage`).
"""

from __future__ import annotations

from dataclasses import dataclass

from solvers.high_low.float_layers.counting import (
    CODE_BITS,
    composition_counts,
    field_bits,
    group_sizes,
    layer_bases,
)
from solvers.kit import words
from solvers.kit.budget import Budget
from solvers.registry import TaskError

# bytes a solving process holds besides its layers: Python, NumPy, Numba and its compiled
# kernels (measured: 0.17 GB on 2 x 2, 0.19 GB on 10 x 4; 13 x 4 peaks at 1.79 GB in memory
# with 1.68 GB of buffers, at 1.14 GB on disk with its largest layer of 0.84 GB mapped)
OVERHEAD = 300 * 10**6
BUFFER = 2**22  # on disk: W values computed before they are written to the file (32 MB)
STORAGES = ("auto", "memory", "disk")  # where the layers live (see :func:`choose_storage`)


@dataclass(frozen=True)
class Size:
    """What a solve holds: vectors, (vector, card showing) states, bytes."""

    vectors: int  # count vectors over all layers
    states: int  # (count vector, card showing) states over all layers, mirror pairs apart
    layer_values: int  # W numbers in the two largest adjacent layers
    largest_layer: int  # count vectors in the largest layer

    @property
    def total_bytes(self) -> int:
        """Estimated peak bytes of the solve (two layers of float64)."""
        return 8 * self.layer_values


def layer_states(ranks: int, suits: int) -> list[int]:
    """states[m]: (count vector, card showing) states with m cards left, mirror pairs apart
    (the last layer, the full deck before the first card is shown, holds none)."""
    counts = composition_counts(ranks, suits)
    n = ranks * suits
    out = []
    for m in range(n + 1):
        states = 0
        for length in range(ranks + 1 if m < n else 0):
            k = counts[length][m]
            full = counts[length - 1][m - suits] if length >= 1 and m >= suits else 0
            states += length * (k - full)  # entries that can hold the card showing
            states += (length + 1) * k if length < ranks else 0  # gaps
        out.append(states)
    return out


def size_estimate(ranks: int, suits: int) -> Size:
    """Exact vector, state and value counts of a solve (:mod:`.solver`; any deck size, no
    work)."""
    counts = composition_counts(ranks, suits)
    n = ranks * suits
    vectors = 0
    slots = []
    for m in range(n + 1):
        slots.append(sum(counts[length][m] * length for length in range(ranks + 1)))
        vectors += sum(counts[length][m] for length in range(ranks + 1))
    peak = max(a + b for a, b in zip(slots, slots[1:], strict=False)) if n > 1 else 1
    largest = max(sum(counts[length][m] for length in range(ranks + 1)) for m in range(n + 1))
    return Size(vectors, sum(layer_states(ranks, suits)), peak, largest)


@dataclass(frozen=True)
class Sizing:
    """Bytes a solve needs, by where its layers live."""

    in_memory: int  # per process: both layers in memory (the fastest)
    out_of_core: int  # per process: layers in files, the previous one read through the cache
    disk: int  # layer files at the peak (two layers), out of core or keeping checkpoints
    states: int  # (count vector, card showing) states, mirror pairs apart

    def describe(self) -> str:
        """The sizes for a message."""
        return (
            f"{self.states:,} states: {words.format_bytes(self.in_memory)} per process with "
            f"both layers in memory, {words.format_bytes(self.out_of_core)} with the layers "
            f"on disk ({words.format_bytes(self.disk)} of files)"
        )


def sizing(ranks: int, suits: int) -> Sizing:
    """What a solve (:mod:`.solver`) needs for a ranks x suits deck (exact counts, no work).

    In memory, a solve holds two buffers the size of the largest layer.  Out of core, each
    layer is a file: the current one is written in order from a buffer, the previous one is
    mapped and read through the operating system's page cache (at random, for a mirror
    image's values), which should hold it for speed: its need is one largest layer and the
    buffer.
    """
    sizes = group_sizes(ranks, suits)
    layers = [int(layer_bases(sizes, m)[-1]) for m in range(ranks * suits + 1)]
    largest = 8 * max(layers)
    disk = 8 * max(a + b for a, b in zip(layers, layers[1:], strict=False))
    states = size_estimate(ranks, suits).states
    buffer = min(8 * BUFFER, largest)
    return Sizing(OVERHEAD + 2 * largest, OVERHEAD + largest + buffer, disk, states)


def check_deck(ranks: int, suits: int) -> None:
    """Refuse a deck whose count vectors do not fit the solver's 64-bit codes."""
    if ranks * field_bits(suits) > CODE_BITS:
        raise TaskError(
            "ranks",
            ranks,
            f"ranks x suits = {ranks}x{suits}: a count vector takes {ranks} x "
            f"{field_bits(suits)} bits, over the float path's {CODE_BITS}-bit codes (about "
            f"{float(suits) ** ranks:.1e} count vectors); use method=monte_carlo",
        )


def choose_storage(size: Sizing, budget: Budget, storage: str = "auto") -> str:
    """Where the layers live, "memory" or "disk": in memory when both layers fit the budget,
    else on disk when the out-of-core need fits; ``storage`` other than "auto" forces one.
    MemoryError naming the need and the budget when neither fits."""
    if storage not in STORAGES:
        raise ValueError(f"storage={storage!r}: one of {', '.join(STORAGES)}")
    if storage != "auto":
        return storage
    if size.in_memory <= budget.bytes:
        return "memory"
    if size.out_of_core <= budget.bytes:
        return "disk"
    raise MemoryError(
        f"needs {words.format_bytes(size.out_of_core)} of memory per process at the least "
        f"({size.describe()}), over the budget: {budget.source}"
    )
