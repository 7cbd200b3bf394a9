"""Which axes of a grid a function of a task reads (a whole-task check, a family's ``needs``),
learned by calling it: :class:`RecordingTask` notes the keys a call reads, and
:func:`call_per_class` calls the function once per class of tasks agreeing on the axes read so
far, starting over with the larger set whenever a call reads a new axis, until no call does.
Sound for a function of the values it reads through the task; a function that iterates over
the task reads every axis, so it is called on every combination.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

from solvers.registry import Task

Key = TypeVar("Key")
Result = TypeVar("Result")


class RecordingTask(dict):
    """A task that notes the keys a function of it reads (a whole-task check, a family's
    ``needs``), and whether it looked at all of them (iterating, copying, comparing: then
    every axis counts as read)."""

    def __init__(self, task: Task):
        super().__init__(task)
        self.read: set[str] = set()
        self.everything = False

    def __getitem__(self, key):
        self.read.add(key)
        return dict.__getitem__(self, key)

    def get(self, key, default=None):
        self.read.add(key)
        return dict.get(self, key, default)

    def __contains__(self, key):
        self.read.add(key)
        return dict.__contains__(self, key)

    def axes_read(self, axis_of: Mapping[str, int]) -> set[int]:
        """The numbers (``axis_of``: axis name -> number) of the axes read so far: every
        axis once the whole task was looked at."""
        if self.everything:
            return set(axis_of.values())
        return {axis_of[k] for k in self.read if k in axis_of}

    def _whole(self):
        self.everything = True
        return self

    def keys(self):
        return dict.keys(self._whole())

    def values(self):
        return dict.values(self._whole())

    def items(self):
        return dict.items(self._whole())

    def copy(self):
        return dict.copy(self._whole())

    def __iter__(self):
        return dict.__iter__(self._whole())

    def __len__(self):
        return dict.__len__(self._whole())

    def __eq__(self, other):
        return dict.__eq__(self._whole(), other)

    __hash__ = None


def call_per_class(
    classes: Callable[[list[int]], Iterable[tuple[Key, Task]]],
    call: Callable[[RecordingTask], Result],
    axis_of: Mapping[str, int],
) -> tuple[list[int], list[tuple[Key, RecordingTask, Result]]]:
    """(the axes ``call`` reads, in increasing order; (key, the task it was called on, what
    it returned) for each class of tasks agreeing on those axes).

    ``classes(axes)`` gives (key, the task it is called on) for each class of tasks agreeing
    on ``axes`` (axis numbers, ``axis_of``: axis name -> number), in the order they are to be
    called: a call that reads an axis outside ``axes`` ends the walk, which starts over with
    the axes grown.
    """
    read: set[int] = set()
    while True:
        axes = sorted(read)
        called: list[tuple[Key, RecordingTask, Result]] = []
        for key, task in classes(axes):
            recorder = RecordingTask(task)
            result = call(recorder)
            seen = recorder.axes_read(axis_of)
            if not seen <= read:
                read |= seen
                break
            called.append((key, recorder, result))
        else:
            return axes, called
