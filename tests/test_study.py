"""Planning a study (pipeline/running/plan.py): every shipped study composes and plans, grids and
strategy axes expand as written, and a bad value is named by its config key."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.errors import StudyError
from pipeline.running.plan import plan, planned
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config
from tests.helpers.task_ids import reference_task_id

STUDIES = sorted(p.stem for p in (ROOT / "conf" / "study").glob("*.yaml"))


config = compose_config


def _plain(node):
    from omegaconf import OmegaConf

    return OmegaConf.to_container(node, resolve=True)


@pytest.mark.parametrize("name", STUDIES)
def test_every_study_config_composes_and_plans(name):
    """Each conf/study/*.yaml composes through Hydra and expands to valid tasks."""
    cfg = config(f"study={name}")
    assert cfg.study.name == name
    tasks = plan(_plain(cfg.study))
    assert tasks and len({t.task_id for t in tasks}) == len(tasks)
    assert all(t.task_id == reference_task_id(t.task) for t in tasks)  # ids as defined


@pytest.mark.parametrize("name", STUDIES)
def test_planning_checks_each_axis_value_once_with_the_same_result(name):
    """plan() checks each axis value once and the whole-task check once per class
    (solvers.grid); the tasks, their order and their ids equal those of validating every
    combination in full, hashing it, and keeping each task's first occurrence."""
    study = _plain(config(f"study={name}").study)
    fast = plan(study)
    assert [(t.task_id, t.task) for t in fast] == reference_plan(study)
    assert len(planned(study)) == len(fast)


def reference_plan(study: dict) -> list[tuple[str, dict]]:
    """The brute-force plan: every combination validated and hashed, first occurrences."""
    import itertools

    from solvers.registry import validate
    from solvers.task_ids import task_id

    shared = study.get("grid") or {}
    parts = study.get("grids") or [{"strategies": study.get("strategies")}]
    out: dict[str, dict] = {}
    for part in parts:
        axes = {**shared, **(part.get("grid") or {})}
        strategies = part.get("strategies")
        own_axes = {None: {}} if strategies is None else {s: a or {} for s, a in strategies.items()}
        for strategy, own in own_axes.items():
            all_axes = {**axes, **own}
            fixed = {"family": study["family"]}
            if strategy is not None:
                fixed["strategy"] = strategy
            for combo in itertools.product(*all_axes.values()):
                task = validate({**fixed, **dict(zip(all_axes, combo, strict=True))})
                out.setdefault(task_id(task), task)
    return list(out.items())


def test_planning_reports_a_bad_value_deep_in_a_grid_by_its_config_key():
    """A bad value met after the first task (the checked-once path) still names its key."""
    study = {
        "name": "deep",
        "family": "card_guessing",
        "grid": {"deck": [[3, 3, 3], [2, 2], [4, 0, 1]], "feedback": ["partial"]},
        "strategies": {"info": {"gamma": [0.1, 0.2, -0.5]}},
    }
    with pytest.raises(StudyError, match=r"study.strategies.info.gamma=-0.5: must be"):
        plan(study)
    study["strategies"] = {"greedy": {}}
    bad_deck = r"study.grid.deck=\[4, 0, 1\]: must be a list of positive integers"
    with pytest.raises(StudyError, match=bad_deck):
        plan(study)


def test_a_planned_task_owns_its_lists():
    """Tasks sharing an axis value get their own copies (mutating one leaves the rest)."""
    study = {
        "name": "own",
        "family": "card_guessing",
        "grid": {"deck": [[3, 3, 3]], "feedback": ["partial"]},
        "strategies": {"info": {"gamma": [0.1, 0.2, 0.3]}},
    }
    tasks = plan(study)
    tasks[1].task["deck"].append(9)
    assert tasks[0].task["deck"] == tasks[2].task["deck"] == [3, 3, 3]


def test_strategy_axes_multiply_only_their_own_rows():
    study = _plain(config("study.grid.deck=[[3,3,3],[2,2]]").study)
    study["strategies"]["greedy"]["tie_break"] = ["lowest", "highest", "uniform"]
    tasks = plan(study)
    by_strategy = pd.Series([t.task["strategy"] for t in tasks]).value_counts()
    assert by_strategy["optimal"] == 2 and by_strategy["greedy"] == 6


def test_a_study_may_list_several_grids_sharing_axes():
    study = {
        "name": "mixed",
        "family": "card_guessing",
        "grid": {"feedback": ["partial"]},
        "grids": [
            {"grid": {"deck": [[3, 3, 3], [2, 2]]}, "strategies": {"optimal": {}}},
            {"grid": {"deck": [[1, 1, 1]]}, "strategies": {"greedy": {"tie_break": ["highest"]}}},
        ],
    }
    tasks = [t.task for t in plan(study)]
    assert [(t["strategy"], t["deck"]) for t in tasks] == [
        ("optimal", [3, 3, 3]),
        ("optimal", [2, 2]),
        ("greedy", [1, 1, 1]),
    ]
    study["grids"][1]["grid"]["deck"] = [[1, -1]]
    with pytest.raises(StudyError, match=r"study.grids\[1\].grid.deck=\[1, -1\]"):
        plan(study)
    study["grids"][1]["grid"]["feedback"] = ["partial"]
    with pytest.raises(StudyError, match=r"study.grids\[1\].grid.feedback: also a shared axis"):
        plan(study)


def test_command_line_overrides_reach_the_grid():
    cfg = config("study.grid.deck=[[2,2,2,2]]")
    assert [t.task["deck"] for t in plan(_plain(cfg.study))] == [[2, 2, 2, 2]] * 2
