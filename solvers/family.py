"""A game family as the registry holds it: a name and a version over four declared parts.

As OpenSpiel keeps a game's rules apart from the algorithms that play it, a family keeps apart
what a task of the game is (:class:`Rules`), how a checked task becomes rows (:class:`Solver`),
what the pipeline needs to know to place and time a task (:class:`Scheduling`) and how stored
rows are shown (:class:`Presentation`).  Each part is a frozen dataclass whose fields state
their contract; a family's package keeps each part in the module named for it (``rules.py``,
``tasks.py``, ``scheduling.py``, ``summary.py`` and ``report.py``) and registers them together
in its ``__init__.py``::

    register(Family(name="top_card", version="1", rules=Rules(params=...),
                    solver=Solver(run=run, columns={...}), examples=({"deck": [2, 1]},)))

Nothing here imports a solver, Dask or a plotting library: the presentation's functions are
named ("module:function"), not imported, so that workers never load what only a summary needs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from solvers.params import Param

Task = dict[str, Any]
Row = dict[str, Any]


@dataclass(frozen=True)
class Rules:
    """What a task of the game is: its parameters, its strategies and the whole-task check.

    The registry's :func:`~solvers.registry.validate` reads nothing else: a task is valid
    when every parameter's check accepts its value, its strategy is one of ``strategies``
    (or a strategy of one's own the family takes, ``own``), and ``check_task`` accepts the
    whole.  No field may start a computation: validating a grid calls them once per class of
    tasks, before any work.
    """

    # The game's parameters (:class:`~solvers.params.Param`): each checks and canonicalises its
    # value, has a default (or is required), a doc line, a dtype, and may apply to some strategies
    # only or be an execution knob (``identity=False``, outside the task id).
    params: tuple[Param, ...]

    # The valid values of the task's ``strategy``; empty: the family has none.
    strategies: tuple[str, ...] = ()

    # The strategy of a task that names none.
    default_strategy: str | None = None

    # Whole-task checks (size limits, parameters that must agree), raising
    # :class:`~solvers.registry.TaskError` naming the key and the value.  It may fill in a parameter
    # (a new value, not a change made in place: planning re-encodes for the task id only the values
    # it sees replaced).  None: the parameters' own checks are the whole check.
    check_task: Callable[[Task], None] | None = None

    # Strategies of one's own (:mod:`solvers.own_strategy`): what their class must offer, or None
    # for a family that takes none; such a family declares ``own_params()`` among its ``params``
    # too.
    own: Any = None

    def param(self, name: str) -> Param:
        """The parameter called ``name`` (KeyError for another name)."""
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def param_names(self) -> tuple[str, ...]:
        """The names of ``params``, in their order."""
        return tuple(p.name for p in self.params)

    @functools.cached_property
    def identity_names(self) -> tuple[str, ...]:
        """The parameters that identify a result (all but the execution knobs), in order."""
        return tuple(p.name for p in self.params if p.identity)

    @functools.cached_property
    def knob_names(self) -> frozenset[str]:
        """The execution knobs: parameters left out of task ids (``identity=False``)."""
        return frozenset(p.name for p in self.params if not p.identity)

    @functools.cached_property
    def omitted_if_none(self) -> frozenset[str]:
        """The parameters left out of task ids while None (``omit_none_from_id``)."""
        return frozenset(p.name for p in self.params if p.omit_none_from_id)


@dataclass(frozen=True)
class Solver:
    """How a checked task becomes rows: the function that solves it and the columns it fills.

    ``run`` is pure: no files, no Hydra, no cluster (a task that spreads its work is the
    scheduling part's, :attr:`Scheduling.run_over_cluster`).  Every row it
    returns may fill only the declared ``columns``; :func:`~solvers.registry.solve` adds the
    parameters and the common columns, leaves the rest empty, and fills the standard deviation
    beside a float variance.
    """

    # ``run(task) -> rows``: the rows of one canonical task (validated).
    run: Callable[[Task], list[Row]]

    # every row of the family has exactly these columns besides the common ones and the
    # parameters, each of a dtype of solvers.registry.DTYPES:
    columns: Mapping[str, str] = field(default_factory=dict)  # result column -> dtype

    # result column -> what it holds, in one line (the report's tooltips and column lists,
    # the manual's column tables: pipeline.outputs.report.ColumnWords); every column of
    # ``columns`` has one
    column_docs: Mapping[str, str] = field(default_factory=dict)

    # Float column -> the largest absolute difference ``guesslab-reproduce`` accepts between a
    # stored value and the one computed again (the reason belongs in the family's docstring); a
    # column not named here compares bit for bit.
    tolerances: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Scheduling:
    """What the pipeline asks before it places a task: its time, its peak needs, and whether
    it spreads its work over a cluster.  Every field is optional; a family without one is
    timed, placed and run as a plain in-process task.

    The functions receive a checked task and read only the parameters they need: before any
    work (``stage=plan`` and ``run``), the pipeline calls ``needs`` once per class of tasks
    agreeing on the parameters it reads, and ``estimate`` on a sample of the tasks left.
    """

    # ``estimate(task)``: the solver seconds a checked task should take on one core (a model of its
    # size, shown by ``stage=plan``), or None for a task it cannot estimate.
    estimate: Callable[[Task], float | None] | None = None

    # ``needs(task, workers)``: what a checked task needs at its peak given ``workers`` processes (a
    # :class:`~solvers.kit.budget.Need`: memory per process, checkpoint disk), or None for a task
    # too small to matter; the pipeline compares it with the budget of where the run executes and
    # refuses the study before any work.
    needs: Callable[[Task, int], Any] | None = None

    # ``spreads_over_cluster(task)``: whether a checked task spreads its work; then
    # ``run_over_cluster`` runs it in place of :attr:`Solver.run`.
    spreads_over_cluster: Callable[[Task], bool] | None = None

    # ``"module:function"`` of ``(task) -> rows`` for a task that spreads: it spreads its
    # pieces through its context (``solvers.kit.task_context.current().spread(n)``), which
    # says where they run (the cluster the task runs on, or this process); a family never
    # starts a cluster.  Named, not imported: a worker imports it only for such a task.
    run_over_cluster: str | None = None


@dataclass(frozen=True)
class Presentation:
    """How a study's stored rows of the family are shown: its section of ``summary.md`` and
    its content of the HTML report.  Both are ``"module:function"`` names, imported only when
    a summary or a report is written (:func:`~solvers.registry.family_summary`,
    :func:`~solvers.registry.family_report`), so that workers never load the plotting
    libraries they need.  None: a generic table of the rows."""

    # ``(ok_rows, out_dir) -> Markdown``: the family's section of ``summary.md``, its plots written
    # into ``out_dir``.
    summary: str | None = None

    # ``(ok_rows) -> list[Section]``: the family's content of the HTML report
    # (:mod:`solvers.kit.report_sections`).
    report: str | None = None


@dataclass(frozen=True)
class Family:
    """A game family: its name and version over its declared parts.

    Registered by name (:func:`~solvers.registry.register`) and found by name
    (:func:`~solvers.registry.get_family`); a task names its family in ``"family"``.  The
    parts: :class:`Rules` (what a task is), :class:`Solver` (how it becomes rows),
    :class:`Scheduling` (its time, its needs, whether it spreads over a cluster) and
    :class:`Presentation` (its summary and report); ``examples`` are the tasks the contract
    tests run the family on.
    """

    # The family's name in tasks, studies and the paths of stored results.
    name: str

    # The version of its rows, part of every task id: bumped whenever the schema or the values of
    # its rows change (tests/golden/ holds them per version), so rows of another version are
    # never served.
    version: str

    # What a task of the game is (:class:`Rules`).
    rules: Rules

    # How a checked task becomes rows (:class:`Solver`).
    solver: Solver

    # Its time, its needs and its distributed mode (:class:`Scheduling`); none by default.
    scheduling: Scheduling = field(default_factory=Scheduling)

    # Its summary and report (:class:`Presentation`); a generic table by default.
    presentation: Presentation = field(default_factory=Presentation)

    # Small tasks (the family's parameters, without ``"family"``) for the contract tests, each valid
    # and quick (a second or less).
    examples: tuple[Mapping[str, Any], ...] = ()

    # The family's description (its game page shows it, and ``describe`` prints it).
    doc: str = ""
