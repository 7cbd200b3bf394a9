"""The run path a newcomer follows: the files one task crosses from ``python -m pipeline`` to
its Parquet file, traced in a real run and held to the architecture page's list."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import pipeline.driver
import pipeline.study
import pipeline.worker
import solvers.grid
from solvers.registry import get_family
from tests.helpers.repository import ROOT

PAGE = ROOT / "docs" / "architecture.md"
EVENTS = ("planned", "submitted", "built", "solved", "encoded", "written")
# the pipeline's files a task crosses with one executor (six since the run object joined
# run.py and a batch's encoding and writing joined worker.py and driver.py): no new one
# joins the path unnoticed
PIPELINE_FILES_AT_MOST = 6


PRODUCT = ("pipeline", "solvers")  # the packages a task crosses (not tests, not a .venv inside)


def repository_files(frame) -> list[str]:
    """The product files on ``frame``'s stack, outermost first, each once."""
    files = []
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if path.is_relative_to(ROOT) and path.relative_to(ROOT).parts[0] in PRODUCT:
            files.append(path.relative_to(ROOT).as_posix())
        frame = frame.f_back
    return list(dict.fromkeys(reversed(files)))


@contextmanager
def task_path() -> Iterator[dict]:
    """Record, for each of EVENTS, the product files on the stack the first time it happens
    on the task's way (a task built where its batch runs, not while the needs are counted;
    every executor a call is handed through), and the function the executor was given to
    run; in every thread of this process."""
    events = {
        pipeline.study.planned.__code__: "planned",
        solvers.grid.Grid.tasks.__code__: "built",
        get_family("card_guessing").solver.run.__code__: "solved",
        pipeline.worker.encode_rows.__code__: "encoded",
        pipeline.driver._atomic_write.__code__: "written",
    }
    seen: dict = {}

    def profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        name = events.get(code)
        if code.co_name == "submit" and "pipeline/backends/" in code.co_filename:
            seen.setdefault("submitted_fn", frame.f_locals.get("fn"))
            if "submitted" in seen:  # a submit handing the call on (starting -> dask)
                files = repository_files(frame)
                seen["submitted"] += [f for f in files if f not in seen["submitted"]]
                return
            name = "submitted"
        if name is None or name in seen:
            return
        files = repository_files(frame)
        if name != "built" or "pipeline/worker.py" in files:
            seen[name] = files

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(None)
        threading.setprofile(None)


def traced(monkeypatch, outputs: Path, *cluster: str) -> dict:
    """What :func:`task_path` records over `python -m pipeline CLUSTER...` run in this process."""
    from pipeline.__main__ import main

    argv = ["pipeline", *cluster, f"paths.outputs={outputs}", "run.progress=false"]
    monkeypatch.setattr(sys, "argv", argv)
    with task_path() as seen:
        main()
    return seen


def crossed(seen: dict) -> set[str]:
    return {f for event in EVENTS for f in seen.get(event, [])}


def met(seen: dict) -> list[str]:
    """The files crossed, in the order the task first meets them (event after event, each
    stack outermost first)."""
    return list(dict.fromkeys(f for event in EVENTS for f in seen.get(event, [])))


def page_path() -> list[str]:
    """The files the architecture page's run-path list names, in its order."""
    section = PAGE.read_text().split("## The run path", 1)[1].split("\n## ", 1)[0]
    items = next(block for block in section.split("\n\n") if block.startswith("1. "))
    return re.findall(r"`((?:pipeline|solvers)/[\w/]+\.py)`", items)


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[str, dict]:
    """The default study's path traced on ``cluster=sync``, on the default cluster (done
    before its LocalCluster would start) and on a one-worker LocalCluster started first."""
    out = tmp_path_factory.mktemp("run_path")
    with pytest.MonkeyPatch.context() as monkeypatch:
        return {
            "sync": traced(monkeypatch, out / "sync", "cluster=sync"),
            "local": traced(monkeypatch, out / "local", "cluster=local"),
            "cluster": traced(
                monkeypatch, out / "cluster", "cluster.n_workers=1", "cluster.start_after_s=0"
            ),
        }


EXECUTORS = {
    "sync": {"pipeline/backends/sync.py"},
    "local": {"pipeline/backends/starting.py"},
    "cluster": {"pipeline/backends/starting.py", "pipeline/backends/dask_executor.py"},
}


def page_without_other_executors(kind: str) -> set[str]:
    others = set().union(*EXECUTORS.values()) - EXECUTORS[kind]
    return set(page_path()) - others


@pytest.mark.parametrize("kind", ["sync", "local"])
def test_a_task_run_in_the_driver_crosses_the_files_the_architecture_page_lists(traces, kind):
    """Every event happens in this process: the files crossed are exactly the page's list
    with the run's own executor, met in the page's order, and the pipeline's share is at
    most PIPELINE_FILES_AT_MOST."""
    seen = traces[kind]
    assert set(EVENTS) <= set(seen), f"not traced: {set(EVENTS) - set(seen)}"
    assert crossed(seen) == page_without_other_executors(kind)
    assert met(seen) == [f for f in page_path() if f in page_without_other_executors(kind)]
    assert len([f for f in crossed(seen) if f.startswith("pipeline/")]) <= PIPELINE_FILES_AT_MOST


def test_a_task_run_on_a_dask_worker_crosses_the_same_files_with_the_dask_executor(traces):
    """On a started LocalCluster the driver's side (planned, submitted, written) crosses the
    page's files with the call handed on to the Dask executor, and the worker is given the
    function the in-driver runs traced through (``pipeline.worker.run_batch``)."""
    seen, sync = traces["cluster"], traces["sync"]
    assert seen["submitted_fn"] is pipeline.worker.run_batch is sync["submitted_fn"]
    assert "built" not in seen and "solved" not in seen  # not in this process
    driver_side = {f for event in ("planned", "submitted", "written") for f in seen[event]}
    worker_side = {f for event in ("built", "solved", "encoded") for f in sync[event]}
    worker_side -= set(sync["submitted"])  # the driver's frames above the worker
    assert driver_side | worker_side == page_without_other_executors("cluster")


def test_the_page_lists_each_file_once_in_the_order_a_task_meets_them():
    """The page's list is a walk: no file twice, the command first, the game (where the task
    is solved) last; the rows go back through files met before (the worker encodes them,
    the driver writes them)."""
    path = page_path()
    assert len(path) == len(set(path))
    assert (
        path[0] == "pipeline/__main__.py" and path[-1] == "solvers/card_guessing/tasks/__init__.py"
    )
