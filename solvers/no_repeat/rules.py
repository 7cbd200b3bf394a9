"""What a task of ``no_repeat`` is: one deck size N (the family's
:class:`~solvers.family.Rules`)."""

from __future__ import annotations

from solvers.family import Rules
from solvers.params import IntCheck, Param

MAX_N = 2000

RULES = Rules(
    params=(Param("N", IntCheck(low=4, high=MAX_N), doc="distinct cards", dtype="int64"),),
)
