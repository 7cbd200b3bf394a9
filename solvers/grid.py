"""A grid of tasks: the product of parameter axes, checked up front, generated lazily.

A study's grid can hold millions of tasks (100 gammas x 100 orders r x 100 degrees t x 10
decks is 10^7), so a :class:`Grid` is never a list of tasks.  :meth:`Grid.checked` validates
the whole grid before anything runs, without expanding it:

* each distinct axis value is checked and encoded once, in the order the product first meets
  it (so a bad value raises the TaskError that :func:`~solvers.registry.validate` raises for
  the first task holding it);
* the family's whole-task check runs once per *class* of tasks: tasks that agree on the axes
  the check reads.  Which axes it reads is learned by running it on a task that records the
  keys it looks at; a class is checked on its first task in grid order, so the first failing
  class gives the error of the first failing task.  card_guessing's check reads the deck, not
  gamma or the entropy's (r, t), so a 10^6-task info grid on two decks is checked twice.

Then :meth:`Grid.tasks` yields (task id, task) for any slice of the grid, in grid order
(``itertools.product`` order: the last axis varies fastest), exactly the task and id of
validating and hashing each combination in full; :meth:`Grid.ids` gives the ids alone.
A slice is addressed by position, so a worker can generate its own batch from the grid and
two numbers.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import operator
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from solvers.axes_read import RecordingTask, call_per_class
from solvers.registry import Family, Task, TaskError, checked_params, param_value, strategy_kind
from solvers.task_ids import ID_LENGTH, id_json, id_piece, json_text, task_id

Axes = Sequence[tuple[str, Sequence[Any]]]


class Grid:
    """The checked tasks of ``fixed`` joined to every combination of the axes' values.

    Axis values equal after canonicalisation count once (a repeated value would only repeat
    tasks).  ``len(grid)`` is the number of tasks; the whole-task check may fill a parameter
    in, which can make two combinations the same task: :attr:`fills` says whether it did.
    """

    def __init__(self, fam: Family, base: Task, names: list[str], canon: list[list[Any]]):
        self.family = fam.name
        self.base = base  # the canonical first task (every axis at its first value)
        self.names = tuple(names)
        self.canon = tuple(tuple(values) for values in canon)
        self.shape = tuple(len(values) for values in canon)
        self.lists = tuple(i for i, v in enumerate(canon) if any(type(x) is list for x in v))
        self.check_axes: tuple[int, ...] = ()  # the axes the whole-task check reads
        self.filled: dict[tuple[int, ...], dict[str, Any]] = {}  # class -> values filled in
        self._payload, self._pieces = _id_template(fam, base, names, canon)
        if self._pieces and self.shape:  # the last axis's encoded values, as bytes
            knob = names[-1] in fam.rules.knob_names  # not in the id (one value: see below)
            self._last_pieces = [b"" if knob else p.encode() for p in self._pieces[-1]]

    @classmethod
    def checked(cls, fixed: Mapping[str, Any], axes: Axes) -> Grid:
        """The grid of ``fixed`` x ``axes``, every task checked (TaskError otherwise)."""
        fam, base, names, canon = _canonical_axes(fixed, axes)
        grid = cls(fam, base, names, canon)
        if fam.rules.check_task is not None:
            grid.check_axes, grid.filled = _checked_classes(fam, base, names, canon)
        return grid

    def __len__(self) -> int:
        return math.prod(self.shape)

    @property
    def fills(self) -> bool:
        """Whether the whole-task check filled a parameter in (ids come from the full task)."""
        return bool(self.filled)

    def tasks(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[str, Task]]:
        """(task id, canonical task) of positions start..stop-1, in grid order."""
        if self.filled or self._pieces is None or not self.shape:
            yield from self._tasks_one_by_one(start, stop)
            return
        names, lists, last = self.names, self.lists, len(self.shape) - 1
        last_name, last_values = names[last], self.canon[last]
        fresh_last = last in lists
        for head, lo, hi in self._last_axis_runs(start, stop):
            task0 = dict(self.base)
            task0.update(zip(names, map(operator.getitem, self.canon, head), strict=False))
            head_lists = [(names[i], task0[names[i]]) for i in lists if i != last]
            for tid, j in zip(self._run_ids(head, lo, hi), range(lo, hi), strict=True):
                task = task0.copy()
                for name, value in head_lists:  # each task owns its lists, as validate's do
                    task[name] = fresh_copy(value)
                value = last_values[j]
                task[last_name] = fresh_copy(value) if fresh_last else value
                yield tid, task

    def _tasks_one_by_one(self, start: int, stop: int | None) -> Iterator[tuple[str, Task]]:
        """:meth:`tasks` where ids need the whole task (a filled-in parameter, or id keys
        that differ between tasks)."""
        base, names, lists = self.base, self.names, self.lists
        check_axes, filled = self.check_axes, self.filled
        for combo in self._combos(start, stop):
            task = dict(base)
            task.update(zip(names, map(operator.getitem, self.canon, combo), strict=True))
            for i in lists:
                task[names[i]] = fresh_copy(task[names[i]])
            fill = filled.get(tuple(combo[i] for i in check_axes)) if filled else None
            if fill:
                task.update({k: fresh_copy(v) for k, v in fill.items()})
            yield task_id(task), task

    def tasks_at(self, positions: Sequence[int]) -> Iterator[tuple[str, Task]]:
        """(task id, task) at the given increasing positions, generated run by run."""
        for start, stop in runs(positions):
            yield from self.tasks(start, stop)

    def ids(self, start: int = 0, stop: int | None = None) -> list[str]:
        """The task ids of positions start..stop-1, in grid order (no task built when the ids
        need only the axis values)."""
        if self.filled or self._pieces is None or not self.shape:
            return [tid for tid, _ in self.tasks(start, stop)]
        return [
            tid
            for head, lo, hi in self._last_axis_runs(start, stop)
            for tid in self._run_ids(head, lo, hi)
        ]

    def id_array(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """:meth:`ids` as a NumPy byte-string array (``S20``, 20 bytes an id): the form bulk
        lookups take (:mod:`pipeline.storage.ids`)."""
        return np.array(self.ids(start, stop), dtype=f"S{ID_LENGTH}")

    def _last_axis_runs(self, start: int, stop: int | None) -> Iterator[tuple[tuple, int, int]]:
        """(indices of every axis but the last, lo, hi): the positions start..stop-1 as runs
        along the last axis (where consecutive tasks differ in one value)."""
        stop = len(self) if stop is None else min(stop, len(self))
        if start >= stop:
            return
        n = self.shape[-1]
        pos = (start // n) * n
        for head in _product_from(self.shape[:-1], start // n):
            yield head, max(start - pos, 0), min(stop - pos, n)
            pos += n
            if pos >= stop:
                return

    def _run_ids(self, head: tuple, lo: int, hi: int) -> Iterator[str]:
        """The ids along the last axis, values lo..hi-1, the other axes at ``head``.

        The id's JSON differs along the run only in the last axis's field: the hash of the
        text before it is taken once and copied, so a task hashes ~30 bytes, not ~200.
        """
        text = self._payload.format(*map(operator.getitem, self._pieces, head), "\0")
        before, _, after = text.partition("\0")  # no field: the last axis is a knob
        prefix, after = hashlib.sha256(before.encode()), after.encode()
        for piece in self._last_pieces[lo:hi]:
            h = prefix.copy()
            h.update(piece)
            h.update(after)
            yield h.hexdigest()[:ID_LENGTH]

    def _combos(self, start: int, stop: int | None) -> Iterator[tuple[int, ...]]:
        """The axis-index tuples of positions start..stop-1 (product order)."""
        stop = len(self) if stop is None else min(stop, len(self))
        if start >= stop:
            return iter(())
        # itertools.product from a given position: the combination at ``start``, then the
        # product restarted at each carry (C speed between carries)
        return itertools.islice(_product_from(self.shape, start), stop - start)


def runs(positions: Sequence[int]) -> list[tuple[int, int]]:
    """The increasing ``positions`` as (start, stop) runs of consecutive positions."""
    pos = np.asarray(positions, dtype=np.int64)
    if not len(pos):
        return []
    breaks = np.flatnonzero(np.diff(pos) != 1) + 1
    starts = np.r_[pos[0], pos[breaks]]
    stops = np.r_[pos[breaks - 1] + 1, pos[-1] + 1]
    return list(zip(starts.tolist(), stops.tolist(), strict=True))


def fresh_copy(value: Any) -> Any:
    """A copy of the lists in ``value`` (each task gets its own, as validate gives)."""
    if type(value) is list:
        return [fresh_copy(v) if type(v) is list else v for v in value]
    return value


def _product_from(shape: tuple[int, ...], start: int) -> Iterator[tuple[int, ...]]:
    """Every index tuple of ``shape`` in product order, from flat position ``start`` on."""
    if not shape:  # a grid without axes: one task
        yield ()
        return
    digits = [int(d) for d in np.unravel_index(start, shape)] if start else [0] * len(shape)
    last = len(shape) - 1
    # the rest of the last axis after the start's digits, then for each axis k from the last
    # but one to the first: its later values with the axes before it as at the start and the
    # axes after it over their whole product (each piece a product in C)
    for k in reversed(range(len(shape))):
        head = [(d,) for d in digits[:k]]
        later = range(digits[k] + (k != last), shape[k])
        yield from itertools.product(*head, later, *(range(n) for n in shape[k + 1 :]))


def _canonical_axes(
    fixed: Mapping[str, Any], axes: Axes
) -> tuple[Family, Task, list[str], list[list[Any]]]:
    """(the family, the canonical first task: ``fixed`` with every axis at its first value,
    the axes' names, each axis's distinct canonical values in the order the product first
    meets them).

    The first task is checked whole but for the whole-task check
    (:func:`~solvers.registry.checked_params`).  Axis i's later values appear once the later
    axes have shown all of theirs, so they are checked from the last axis to the first
    (validate's order for the first task holding each).  An execution knob (left out of task
    ids) takes one value: two would be one task.
    """
    names = [name for name, _ in axes]
    raw = [list(values) for _, values in axes]
    fam, base = checked_params({**fixed, **{name: values[0] for name, values in axes}})
    strategy = strategy_kind(base)
    canon: list[list[Any]] = [[base[name]] for name in names]
    for i in reversed(range(len(names))):
        p = fam.rules.param(names[i])
        canon[i] += [param_value(fam, p, strategy, {p.name: v}) for v in raw[i][1:]]
    out = []
    for i, values in enumerate(canon):
        seen: dict[str, Any] = {}
        for v in values:
            seen.setdefault(json_text(v), v)
        distinct = list(seen.values())
        if len(distinct) > 1 and names[i] in fam.rules.knob_names:
            raise TaskError(
                names[i],
                raw[i],
                "an execution knob, not part of a task's id: give one value (a list of "
                "several would run the same task once per value)",
            )
        out.append(distinct)
    return fam, base, names, out


def _id_template(fam: Family, base: Task, names: list[str], canon: list[list[Any]]):
    """(the id's JSON as a format string with one field per axis, each axis's encoded
    values), or (None, None) where the id's keys may differ between tasks."""
    knobs = fam.rules.knob_names
    axis_of = {name: i for i, name in enumerate(names)}
    omitted = fam.rules.omitted_if_none
    if any(None in canon[axis_of[k]] for k in omitted if k in axis_of):
        return None, None  # an axis left out of some ids only: each id from its whole task
    # a parameter left out of ids while None and not an axis: in every id or in none
    absent = {k for k in omitted if k not in axis_of and base[k] is None}
    keys = sorted(k for k in base if k not in knobs and k not in absent)
    # constant parameters encoded now; each axis marked "\0i\0" in the JSON, where a NUL
    # cannot otherwise occur (JSON escapes it)
    marked = [f"\0{axis_of[k]}\0" if k in axis_of else id_piece(k, base[k]) for k in keys]
    parts = id_json(marked, json_text(fam.version)).split("\0")  # odd: an axis number
    payload = "".join(f"{{{part}}}" if j % 2 else _literal(part) for j, part in enumerate(parts))
    pieces = [[id_piece(names[i], v) for v in values] for i, values in enumerate(canon)]
    return payload, pieces


def _literal(text: str) -> str:
    """``text`` as literal text inside a str.format string."""
    return text.replace("{", "{{").replace("}", "}}")


def _checked_classes(
    fam: Family, base: Task, names: list[str], canon: list[list[Any]]
) -> tuple[tuple[int, ...], dict[tuple[int, ...], dict[str, Any]]]:
    """(the axes the family's whole-task check reads, the values it filled in per class).

    Runs the check once per combination of the axes it reads (every other axis at its first
    value: the class's first task in grid order), learning those axes as it goes
    (:func:`solvers.axes_read.call_per_class`).  Sound for a check that is a function of the
    values it reads through the task; a check that iterates over the task is run on every
    combination.
    """

    def classes(axes: list[int]) -> Iterator[tuple[tuple[int, ...], Task]]:
        for combo in itertools.product(*(range(len(canon[i])) for i in axes)):
            task = dict(base)
            for i, j in zip(axes, combo, strict=True):
                task[names[i]] = fresh_copy(canon[i][j])
            yield combo, task

    def check(task: RecordingTask) -> dict[str, Any]:
        """The task's values before the check (what it fills in is what differs after)."""
        before = dict(dict.items(task))
        fam.rules.check_task(task)
        return before

    axis_of = {name: i for i, name in enumerate(names)}
    axes, called = call_per_class(classes, check, axis_of)
    filled: dict[tuple[int, ...], dict[str, Any]] = {}
    for combo, task, before in called:
        fill = {k: v for k, v in dict.items(task) if v is not before.get(k)}
        if fill:
            filled[combo] = fill
    return tuple(axes), filled
