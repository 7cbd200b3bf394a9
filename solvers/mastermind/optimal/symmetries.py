"""The game's symmetry group: permutations of the positions with permutations of equally
weighted colours."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np


class Symmetries:
    """The game's symmetries: a permutation of the positions with a permutation of colours.

    Only colours of equal jar weight may be exchanged.  The group is kept as its two factors
    (pegs! position and prod(class size!) colour permutations); code permutations are built
    only for the subgroup that fixes given codes (:meth:`stabilizer`).
    """

    def __init__(self, pegs: int, colours: int, jar_w: Sequence[int]):
        self.codes = np.array(list(itertools.product(range(colours), repeat=pegs)), np.int64)
        self.place = colours ** np.arange(pegs - 1, -1, -1, dtype=np.int64)
        self.positions = np.array(list(itertools.permutations(range(pegs))), dtype=np.int64)
        classes: dict[int, list[int]] = {}
        for c, w in enumerate(jar_w):
            classes.setdefault(w, []).append(c)
        perms = []
        for choice in itertools.product(*(itertools.permutations(v) for v in classes.values())):
            sigma = np.arange(colours)
            for members, image in zip(classes.values(), choice, strict=True):
                sigma[list(members)] = image
            perms.append(sigma)
        self.colours = np.array(perms, dtype=np.int64)
        self.dtype = np.int16 if len(self.codes) < 2**15 else np.int32

    def images_of(self, code: int) -> np.ndarray:
        """(colour perms, position perms): the index of the image of one code under each."""
        moved = self.codes[code][self.positions]  # (position perms, pegs)
        return self.colours[:, moved] @ self.place

    def representatives(self) -> np.ndarray:
        """The codes that are the least of their orbit, in increasing order."""
        seen = np.zeros(len(self.codes), dtype=bool)
        reps = []
        for c in range(len(self.codes)):
            if not seen[c]:
                reps.append(c)
                seen[self.images_of(c).ravel()] = True
        return np.array(reps, dtype=np.int64)

    def stabilizer(self, fixed: Sequence[int]) -> np.ndarray:
        """(elements, codes): code permutations of the symmetries fixing every code in fixed."""
        keep = np.ones((len(self.colours), len(self.positions)), dtype=bool)
        for q in fixed:
            keep &= self.images_of(q) == q
        out = [
            self.colours[ci][self.codes[:, self.positions[pi]]] @ self.place
            for ci, pi in zip(*np.nonzero(keep), strict=True)
        ]
        return np.ascontiguousarray(np.array(out, dtype=self.dtype))


def identity_perms(n: int) -> np.ndarray:
    """The trivial group on n codes, as one row of code permutations."""
    return np.arange(n, dtype=np.int16 if n < 2**15 else np.int32)[None, :]
