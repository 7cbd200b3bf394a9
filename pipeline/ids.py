"""Task ids in bulk: NumPy arrays instead of a Python string per task.

A task id is 20 hex digits (:func:`solvers.registry.task_id`).  Millions of them held as
Python strings in a set cost ~90 bytes each and seconds to build; here they are a byte-string
array (20 bytes each, read straight from a Parquet column's buffer) with 64-bit keys for the
lookups: binary search on ``uint64`` is ~10x faster than on 20-byte strings (measured at
10^6 ids: 1.4 us per lookup on the strings).  A key match is confirmed on the whole id, so
two ids sharing their first 16 digits are never confused.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

ID_LENGTH = 20


def id_array(ids: Sequence[str] | pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Ids as a NumPy byte-string array (``S20`` for guesslab's ids)."""
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    if isinstance(ids, pa.Array):
        if len(ids) and ids.null_count == 0 and pa.types.is_string(ids.type):
            offsets = np.frombuffer(ids.buffers()[1], np.int32, len(ids) + 1, ids.offset * 4)
            if np.all(np.diff(offsets) == ID_LENGTH):  # zero copy: the column's own bytes
                data = ids.buffers()[2]
                return np.frombuffer(data, f"S{ID_LENGTH}", len(ids), int(offsets[0])).copy()
        ids = ids.to_pylist()
    encoded = [("" if i is None else str(i)).encode() for i in ids]
    if not encoded:
        return np.zeros(0, f"S{ID_LENGTH}")
    width = max(ID_LENGTH, max(map(len, encoded)))  # never cut a longer (foreign) id short
    return np.array(encoded, dtype=f"S{width}")


def id_keys(ids: np.ndarray) -> np.ndarray:
    """The first 16 hex digits of each id as a ``uint64`` (0 where they are not hex)."""
    if not len(ids):
        return np.zeros(0, np.uint64)
    raw = np.frombuffer(ids.astype(f"S{ID_LENGTH}").tobytes(), np.uint8)  # the first 20
    digits = raw.reshape(len(ids), ID_LENGTH)[:, :16].astype(np.int16)
    nibbles = np.where(digits >= ord("a"), digits - (ord("a") - 10), digits - ord("0"))
    nibbles = np.clip(nibbles, 0, 15).astype(np.uint8)
    octets = (nibbles[:, 0::2] << 4) | nibbles[:, 1::2]
    return np.ascontiguousarray(octets).view(">u8").ravel().astype(np.uint64)


class IdSet:
    """A sorted set of task ids for membership tests on whole arrays."""

    __slots__ = ("keys", "ids")

    def __init__(self, ids: np.ndarray):
        ids = np.unique(ids)
        keys = id_keys(ids)
        order = np.argsort(keys, kind="stable")
        self.keys, self.ids = keys[order], ids[order]

    def __len__(self) -> int:
        return len(self.ids)

    def contains(self, ids: np.ndarray) -> np.ndarray:
        """A boolean mask: which of ``ids`` are in the set."""
        if not len(self) or not len(ids):
            return np.zeros(len(ids), bool)
        keys = id_keys(ids)
        at = np.minimum(np.searchsorted(self.keys, keys), len(self) - 1)
        found = self.keys[at] == keys
        found[found] = self.ids[at[found]] == ids[found]
        return found


EMPTY = IdSet(np.zeros(0, f"S{ID_LENGTH}"))
