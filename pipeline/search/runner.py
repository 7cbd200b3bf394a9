"""A search over a strategy's parameters: Optuna asks, the study's pipeline solves, Optuna is
told.

Each batch of ``n_jobs`` trials asked at once is one run of the study's tasks (a trial: its
parameter values on every deck of the study's grid) on the study's cluster, opened once for
the whole search, its tasks cut into batches of tasks from the time a task took in the
batch before (:class:`pipeline.running.driver.BatchCutter`); the rows are stored as any run's, so a
trial whose tasks are stored costs nothing.  The search's state is Optuna's journal in the
study folder (``search/<name>.journal``, written once a batch is asked and once it is told:
:mod:`pipeline.search.batched_journal`): Ctrl-C leaves the trials told so far (and the tasks
of the batch stored so far), and the same command again goes on with the trials left,
re-running a trial left asked but untold (its stored tasks are not solved again).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from pipeline.config import checked_config
from pipeline.ctrl_c import SearchStopped, is_stop
from pipeline.errors import StudyError, short_repr
from pipeline.run import StudyReport, StudyRun, prepared, run_tasks
from pipeline.running.plan import StudyPlan, planned
from pipeline.search.journal import SearchJournal
from pipeline.search.objective import Objective, checked_objective, strategy_axes
from pipeline.search.result import SearchResult, TrialResult, best_text, params_text
from pipeline.search.space import search_space, trial_axes
from pipeline.search.values import TaskValues

SAMPLERS = ("tpe", "random", "cmaes", "qmc", "gp")


@dataclass(frozen=True)
class SearchSettings:
    """``hydra.sweeper``'s settings: trials in all, trials asked at once, the sampler by name
    and its seed, the search's name (its journal's), and the sweep overrides (key -> Hydra's
    parsed sweep)."""

    n_trials: int
    n_jobs: int
    sampler: str
    seed: int | None
    name: str | None
    sweeps: Mapping[str, Any]


def run_search(
    cfg: Mapping[str, Any], settings: SearchSettings, log: Callable[[str], None] = print
) -> SearchResult:
    """Run the search of ``settings`` over the study of ``cfg`` (the config the command
    composed from its fixed overrides).  StudyError before any work for a config, objective
    or search space that cannot run."""
    base = prepared(_quiet(cfg), lambda _line: None)
    objective = checked_objective(base.conf.study)
    axes = strategy_axes(base.conf.study, objective.strategy)
    space = search_space(settings.sweeps, objective.strategy, axes)
    search = Search(base, objective, axes, space, settings, log)
    search.check_bounds()
    if base.conf.stage == "plan":
        log(search.plan_text())
        return search.result
    return search.run()


def _quiet(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """``cfg`` with its progress bars off: the search says its own line a batch."""
    from pipeline.config import plain

    given = plain(cfg)
    given["run"] = {**given["run"], "progress": False}
    return given


class Search:
    """One search's state: the study's run (config, backend), its objective and space, the
    Optuna study and what the store holds of the trials' tasks."""

    def __init__(self, base: StudyRun, objective: Objective, axes, space, settings, log):
        self.base, self.objective, self.axes, self.space = base, objective, axes, space
        self.settings, self.log = settings, log
        params = "-".join(sorted(space))
        self.name = settings.name or f"{objective.strategy}-{params}"
        self.reference = objective.relative_to or (
            "optimal" if "optimal" in (base.conf.study.strategies or {}) else None
        )
        if self.reference == objective.strategy:
            self.reference = None
        self.result = SearchResult(self.name, objective, space, folder=base.folder.path)
        self._tasks: dict[str, list] = {}
        self.per_task: float | None = None  # solver seconds a task, as the batches measured
        self.result.reference_name = self.reference

    # ------------------------------------------------------------------ checks before any work

    def check_bounds(self) -> None:
        """Plan a trial at each end of the space (every value the sampler may ask is checked
        as the family checks it): StudyError naming the override, before any work."""
        self.end_plans  # noqa: B018 - planned (and checked) here, kept for the estimates

    @functools.cached_property
    def end_plans(self) -> list[StudyPlan]:
        """The plans of a trial at each end of the space (every low end, then every high
        end); StudyError naming the override of an end the family refuses."""
        plans = []
        for params in (_ends(self.space, i) for i in (0, -1)):
            try:
                plans.append(planned(self.batch_study([params])))
            except StudyError as exc:
                raise StudyError(
                    f"{', '.join(f'{k}={short_repr(v)}' for k, v in params.items())} "
                    f"(an end of the search space): {exc}"
                ) from None
        return plans

    def plan_text(self) -> str:
        """What ``stage=plan`` says of the search: its trials times the estimate of one (at
        each end of the space, the dearer end taken), the reference's, what is stored."""
        from solvers.kit.words import format_duration

        costs = [plan.estimated_seconds() for plan in self.end_plans]
        lines = [f"search {self.name}: {self.objective.describe()}"]
        if any(c is None for c in costs):
            lines.append(f"  {self.settings.n_trials} trials; the family gives no estimate")
        else:
            one = max(c[0] for c in costs)
            lines.append(
                f"  {self.settings.n_trials} trials x about {format_duration(one)} of solver "
                f"time a trial (the dearer end of the space) = about "
                f"{format_duration(one * self.settings.n_trials)}, "
                f"{self.settings.n_jobs} trials at a time"
            )
        if self.reference is not None:
            ref = planned(self.batch_study([], reference=True)).estimated_seconds()
            cost = "no estimate" if ref is None else f"about {format_duration(ref[0])}"
            lines.append(f"  the reference, {self.reference}: {cost}")
        lines.append("  nothing was run or written (stage=plan)")
        return "\n".join(lines)

    # ------------------------------------------------------------------------- the batches

    def batch_study(self, trials: list[Mapping[str, Any]], reference: bool = False) -> dict:
        """The study of one batch: the study's grid, the searched strategy at the trials'
        values, and the reference strategy's part when asked.  With one searched parameter
        the batch's trials are one part, the parameter's axis holding their values; with
        several, one part a trial (their product would hold tasks no trial asked for), and
        the run's batches of tasks span those parts (they are of one kind:
        :class:`pipeline.running.driver.BatchCutter`), so the trials are still one batch of tasks
        and one results file a worker."""
        study = self.base.conf.study.plain()
        parts = []
        if reference:
            ref_axes = (study.get("strategies") or {}).get(self.reference) or {}
            parts.append({"strategies": {self.reference: ref_axes}})
        if len(self.space) == 1 and trials:
            (param,) = self.space
            values = list(dict.fromkeys(p[param] for p in trials))
            axes = {**trial_axes(self.axes, trials[0]), param: values}
            parts.append({"strategies": {self.objective.strategy: axes}})
        else:
            for params in trials:
                axes = trial_axes(self.axes, params)
                parts.append({"strategies": {self.objective.strategy: axes}})
        out = {k: v for k, v in study.items() if k not in ("strategies", "grids")}
        out["grids"] = parts
        return out

    def solve(
        self, trials: list[Mapping[str, Any]], reference: bool, asked: dict | None = None
    ) -> StudyReport:
        """One batch's tasks solved and stored (those stored already are skipped); their
        files' metadata names the search and ``asked``, the trial of each task."""
        given = {**self.base.given, "study": self.batch_study(trials, reference)}
        conf = checked_config(given)
        plan = planned(conf.study)
        report = StudyReport(study=conf.study.name, folder=self.base.folder)
        report.planned = plan.n_tasks
        search = {"name": self.name, "trials": asked or {}}  # in its files' metadata
        run = StudyRun(
            given,
            conf,
            plan,
            self.held,
            self.base.folder,
            report,
            _warnings_of(self.log),
            search=search,
            per_task=self.per_task,
        )
        run_tasks(run)
        self.per_task = run.per_task  # the next batch's tasks are cut from the start by it
        self.result.computed += report.computed
        return report

    # ------------------------------------------------------------------------- the loop

    def run(self) -> SearchResult:
        with contextlib.ExitStack() as held:
            study = self.optuna_study(held)
            self.values = TaskValues(
                self.base.folder.results, self.base.plan.family, self.objective.column, self.log
            )
            with self.base.backend.open() as executor:
                self.held = HeldBackend(self.base.backend, executor)
                try:
                    self.restore(study)
                    self.loop(study)
                except BaseException as exc:
                    if is_stop(exc):
                        raise SearchStopped(self.stopped_line(study)) from exc
                    raise
                finally:
                    self.writer.flush()  # what was told before a stop or a failure
        self.result.trials = self.told(study)
        for trial in self.result.trials:  # every trial's exact value, for the search's page
            if trial.value is not None:
                trial.exact = self.trial_value(trial.params)[1]
        from pipeline.search.outputs import write_search

        self.result.page = write_search(self.result)
        if self.base.conf.stage == "all":  # the study's summary, the search's best at its top
            from pipeline.run import summarize

            self.base.log = self.log
            summarize(self.base)
        return self.result

    def restore(self, study: Any) -> None:
        """Solve again the tasks of the trials told whose rows the store does not hold (a
        results file found damaged and set aside, or deleted), so that every trial told has
        its rows and exact value; nothing when all are stored."""
        import optuna

        complete = optuna.trial.TrialState.COMPLETE
        lost = [
            t
            for t in study.get_trials(deepcopy=False, states=(complete,))
            if any(self.values.get(tid) is None for tid, _ in self.trial_tasks(dict(t.params)))
        ]
        if lost:
            self.log(f"  {len(lost)} trial(s) told whose rows are not stored: solved again")
            params = [dict(t.params) for t in lost]
            self.values.read(self.solve(params, False, self.asked_by(lost, params)).files)

    def told(self, study: Any) -> list[TrialResult]:
        """Every trial told, the best's exact value from its tasks' stored rows."""
        self.result.trials = told_trials(study)
        best = self.result.best
        if best is not None:
            best.exact = self.trial_value(best.params)[1]
        return self.result.trials

    def loop(self, study: Any) -> None:
        """Ask, solve and tell a batch at a time until ``n_trials`` are told.  With more than
        one worker, the next batch is asked (in a thread of this process) while the workers
        solve this one, as an asynchronous parallel search does: Optuna then asks it knowing
        this batch's trials as running (TPE's constant liar), not their values.  Whether it
        asks ahead follows the config alone (the workers it names), so a seed gives the same
        trials however long the solves take."""
        self.log(
            f"search {self.name}: {self.objective.describe()} over "
            f"{', '.join(f'{k} {_space_text(d)}' for k, d in self.space.items())}; "
            f"{self.settings.n_trials} trials, {self.settings.n_jobs} at a time "
            f"({self.settings.sampler}, seed {self.settings.seed}) "
            f"on {self.held.executor.description}"
        )
        reference = self.reference is not None
        ahead_of_solves = self.held.executor.n_workers > 1
        batch = self.next_batch(study, [])
        with concurrent.futures.ThreadPoolExecutor(1, "guesslab-search-ask") as asking:
            while batch or reference:
                self.writer.flush()  # the trials asked, in the journal before their tasks run
                self.expect_after(study, batch)
                ahead = asking.submit(self.next_batch, study, batch) if ahead_of_solves else None
                params = [dict(t.params) for t in batch]
                try:
                    report = self.solve(params, reference, self.asked_by(batch, params))
                except BaseException:
                    if ahead is not None:  # its trials asked, before the journal is written
                        concurrent.futures.wait([ahead])
                    raise
                upcoming = ahead.result() if ahead is not None else None
                self.tell(study, batch, params, report, reference)
                reference = False
                self.log(self.progress_line(study))
                batch = upcoming if upcoming is not None else self.next_batch(study, [])

    def next_batch(self, study: Any, running: list[Any]) -> list[Any]:
        """The next batch of trials, beside the batch ``running``: trials asked and not told
        (a stopped search's) first, then new ones asked, up to ``n_jobs`` and ``n_trials``."""
        import optuna

        trials = study.get_trials(deepcopy=False)
        told = sum(t.state.is_finished() for t in trials)
        out = {t.number for t in running}
        waiting = [
            t for t in trials if t.state == optuna.trial.TrialState.RUNNING and t.number not in out
        ]
        batch = waiting[: self.settings.n_jobs]
        wanted = min(self.settings.n_jobs, self.settings.n_trials - told - len(running))
        while len(batch) < wanted:
            batch.append(study.ask(self.space))
        return batch

    def expect_after(self, study: Any, batch: list[Any]) -> None:
        """Tell the executor the solver time of the trials after ``batch`` (an executor that
        starts its workers when the work is worth it counts the whole search's)."""
        if not batch:
            return
        trials = len(study.get_trials(deepcopy=False))
        after = max(0, self.settings.n_trials - trials)
        per_task = self.per_task if self.per_task is not None else self.estimated_per_task
        if per_task is not None:
            tasks = len(self.trial_tasks(dict(batch[0].params)))
            self.held.executor.expect_after(per_task * tasks * after)

    @functools.cached_property
    def estimated_per_task(self) -> float | None:
        """The family's estimate of a trial's task's solver seconds (the dearer end of the
        space), before any batch measured one; None: the family gives none."""
        costs = [plan.estimated_seconds() for plan in self.end_plans]
        if any(c is None for c in costs):
            return None
        return max(c[0] / max(1, p.n_tasks) for c, p in zip(costs, self.end_plans, strict=True))

    def tell(
        self,
        study: Any,
        batch: list[Any],
        params: list[dict[str, Any]],
        report: StudyReport,
        reference: bool,
    ) -> None:
        """Tell Optuna the value of each trial of ``batch`` (of ``params``, its tasks solved
        and stored by ``report``'s run)."""
        import optuna

        self.values.read(report.files)
        if reference:
            self.reference_value()
        for trial, p in zip(batch, params, strict=True):
            value, _exact, error = self.trial_value(p)
            if value is None:
                study.tell(trial.number, state=optuna.trial.TrialState.FAIL)
                self.log(f"  trial {trial.number} ({params_text(p)}) failed: {error}")
            else:
                study.tell(trial.number, value)
        self.writer.flush()  # the batch told: one write to the journal
        self.journal.seal()  # the trials told, vouched for when the journal is read back

    def asked_by(self, batch: list[Any], params: list[Mapping[str, Any]]) -> dict[str, int]:
        """Task id -> the number of the trial of ``batch`` that asked for it (the first, for
        a task two trials of the batch share)."""
        asked: dict[str, int] = {}
        for trial, p in sorted(zip(batch, params, strict=True), key=lambda tp: tp[0].number):
            for tid, _key in self.trial_tasks(p):
                asked.setdefault(tid, trial.number)
        return asked

    # ------------------------------------------------------------------------- the values

    def trial_tasks(self, params: Mapping[str, Any], reference: bool = False) -> list:
        """(task id, shared-axes key) of a trial's tasks (or of the reference's), planned
        once for each set of parameters."""
        key = json.dumps([reference, sorted(params.items())], default=str)
        if key not in self._tasks:
            self._tasks[key] = self._planned_tasks(params, reference)
        return self._tasks[key]

    def _planned_tasks(self, params: Mapping[str, Any], reference: bool) -> list:
        study = self.batch_study([] if reference else [params], reference)
        plan = planned(study)
        shared = list((self.base.conf.study.grid or {}).keys())
        out = []
        for tid, task in plan:
            out.append((tid, json.dumps([task.get(k) for k in shared], default=str)))
        return out

    def reference_value(self) -> None:
        tasks = self.trial_tasks({}, reference=True)
        self.ref_values = {key: self.values.get(tid) for tid, key in tasks}
        got = [v for v in self.ref_values.values() if v is not None and v.error is None]
        if self.objective.relative_to and len(got) == len(tasks):
            self.result.reference, self.result.reference_exact = 1.0, Fraction(1)  # its own
            return
        if len(got) == len(tasks) and got:  # the reference's value, combined as a trial's
            plain = dataclasses.replace(self.objective, strategy=self.reference, relative_to=None)
            self.result.reference = plain.value([g.value for g in got], None)
            self.result.reference_exact = plain.exact([g.exact for g in got])

    def trial_value(self, params: Mapping[str, Any]):
        """(value, exact, error) of the trial of ``params``, from its tasks' stored rows."""
        tasks = self.trial_tasks(params)
        got = [(self.values.get(tid), key) for tid, key in tasks]
        for value, _ in got:
            if value is None or value.error is not None:
                return None, None, value.error if value else "its row is not in the store"
        refs = ref_exacts = None
        if self.objective.relative_to:
            refs = [self.ref_values[key].value for _, key in got]
            ref_exacts = [self.ref_values[key].exact for _, key in got]
        value = self.objective.value([v.value for v, _ in got], refs)
        return value, self.objective.exact([v.exact for v, _ in got], ref_exacts), None

    # ------------------------------------------------------------------------- Optuna

    def optuna_study(self, held: contextlib.ExitStack) -> Any:
        """The search's Optuna study, in the study folder's journal (made, or loaded to go
        on), written a batch at a time (:mod:`pipeline.search.batched_journal`) under the
        search's lock, which ``held`` keeps; StudyError when the journal holds a search of
        another space or objective, or another search of this name runs."""
        try:
            import optuna
        except ImportError:
            raise StudyError(
                "hydra/sweeper=guesslab: the search needs Optuna: pip install 'guesslab[search]'"
            ) from None
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        from optuna.storages.journal import JournalStorage

        from pipeline.search.batched_journal import BatchedJournal, held_journal

        self.journal = SearchJournal(self.base.folder, self.name, self.log)
        folder = self.journal.path.parent
        held.enter_context(held_journal(folder, self.name, self.journal.path))

        def make() -> Any:
            self.writer = BatchedJournal(self.journal.path)  # a new one over a new journal
            return optuna.create_study(
                study_name=self.name,
                storage=JournalStorage(self.writer),
                sampler=sampler_of(self.settings.sampler, self.settings.seed),
                direction=self.objective.direction,
                load_if_exists=True,
            )

        study = self.journal.open(make)  # checked before trusted: pipeline/search/journal.py
        done = len(study.get_trials(deepcopy=False))
        if done and self.settings.seed is not None:  # a search gone on: a seed of its own
            seed = resumed_seed(self.settings.seed, done)
            study.sampler = sampler_of(self.settings.sampler, seed)
        what = {"objective": self.objective.describe(), "space": _space_key(self.space)}
        found = study.user_attrs.get("search")
        if found is None:
            study.set_user_attr("search", what)
            self.writer.flush()
        elif found != what:
            raise StudyError(
                f"hydra.sweeper.name={self.name!r}: {folder / self.name}.journal holds a search "
                f"of {found['objective']} over {found['space']}; give this one another name"
            )
        return study

    # ------------------------------------------------------------------------- lines

    def progress_line(self, study: Any) -> str:
        self.result.trials = self.told(study)
        best = self.result.best
        n = len(self.result.trials)
        head = f"  trials {n}/{self.settings.n_trials}"
        if best is None:
            return f"{head}: none succeeded yet"
        return f"{head}; best so far {best_text(best, self.result)}"

    def stopped_line(self, study: Any) -> str:
        told = len(told_trials(study))
        return (
            f"stopped search {self.name} after {told} trial(s) told of {self.settings.n_trials}"
            f" (journal {self.base.folder.path / 'search' / self.name}.journal, the tasks solved "
            f"so far stored in {self.base.folder.results}); run the same command again to go on"
        )


def _warnings_of(log: Callable[[str], None]) -> Callable[[str], None]:
    """A batch run's log: its warnings (a results file moved to quarantine, a lost batch)
    said, its other lines (the batch's progress) left to the search's own line."""
    return lambda line: log(line) if line.startswith("warning") else None


def told_trials(study: Any) -> list[TrialResult]:
    import optuna

    out = []
    for t in study.get_trials(deepcopy=False):
        if not t.state.is_finished():
            continue
        value = t.value if t.state == optuna.trial.TrialState.COMPLETE else None
        out.append(TrialResult(t.number, dict(t.params), value))
    return out


def resumed_seed(seed: int, trials: int) -> int:
    """The sampler's seed for a search going on after ``trials`` trials asked: drawn from the
    search's seed and that count, so the sampler does not replay the random draws it made
    from the start (its first trials asked again), and a search stopped at the same point
    goes on the same way."""
    import numpy as np

    return int(np.random.SeedSequence([seed, trials]).generate_state(1)[0])


def sampler_of(name: str, seed: int | None) -> Any:
    """Optuna's sampler named ``name`` (tpe, random, cmaes, qmc, gp), seeded."""
    import optuna

    makers = {
        "tpe": lambda: optuna.samplers.TPESampler(seed=seed, constant_liar=True),
        "random": lambda: optuna.samplers.RandomSampler(seed=seed),
        "cmaes": lambda: optuna.samplers.CmaEsSampler(seed=seed),
        "qmc": lambda: optuna.samplers.QMCSampler(seed=seed),
        "gp": lambda: optuna.samplers.GPSampler(seed=seed),
    }
    if name not in makers:
        raise StudyError(f"hydra.sweeper.sampler={short_repr(name)}: valid: {', '.join(SAMPLERS)}")
    return makers[name]()


class HeldBackend:
    """The study's backend with its executor held open for the whole search: each batch's
    run opens this one (no cluster started a batch)."""

    def __init__(self, backend: Any, executor: Any):
        self.backend, self.executor = backend, executor

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    def open(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext(self.executor)


def _ends(space: Mapping[str, Any], index: int) -> dict[str, Any]:
    """The parameters at one end of ``space`` (index 0: every low end; -1: every high)."""
    return {k: _end(d, index) for k, d in space.items()}


def _end(distribution: Any, index: int) -> Any:
    choices = getattr(distribution, "choices", None)
    if choices is not None:
        return choices[index]
    return distribution.low if index == 0 else distribution.high


def _space_text(distribution: Any) -> str:
    choices = getattr(distribution, "choices", None)
    if choices is not None:
        return "in {" + ", ".join(map(str, choices)) + "}"
    log = " (log)" if getattr(distribution, "log", False) else ""
    return f"in [{distribution.low}, {distribution.high}]{log}"


def _space_key(space: Mapping[str, Any]) -> str:
    return "; ".join(f"{k} {_space_text(d)}" for k, d in sorted(space.items()))
