"""The store never leaves its study folder: a symbolic link in it is never followed (a run
with one in a folder the store uses exits 2 naming it, touching nothing), and an entry that
is not a regular file (a link, a FIFO, a folder named like a results file) is never opened:
the run's upkeep moves the entry itself to quarantine/, and readers skip it
(pipeline/storage/safe_paths.py)."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

import pytest

from pipeline.errors import StudyError, UnsafePath
from pipeline.run import run_study
from pipeline.storage import store
from pipeline.storage.safe_paths import ensure_dir, open_regular
from pipeline.storage.study_folder import StudyFolder
from tests.helpers.folders import copy_outputs, snapshot
from tests.helpers.runs import compose_config, run


@pytest.fixture(scope="module")
def other_outputs(tmp_path_factory) -> Path:
    """The outputs folder of another study, made once: tests change copies of it."""
    other = tmp_path_factory.mktemp("other") / "other_outputs"
    run(other, "cluster=sync", "study.name=other", "study.grid.deck=[[2,2]]")
    return other


@pytest.fixture
def elsewhere(other_outputs: Path, tmp_path: Path) -> Path:
    """Another study's store, outside the study folder under test (a family folder of real
    results files, and a file that is not one)."""
    other = copy_outputs(other_outputs, tmp_path / "other_outputs")
    folder = other / "other" / "results" / "family=card_guessing"
    (folder / "notes.txt").write_text("the user's own file")
    return folder


@pytest.fixture
def outputs(paper_outputs: Path, tmp_path: Path) -> Path:
    """A copy of the stored study paper."""
    return copy_outputs(paper_outputs, tmp_path / "outputs")


LINKED = ["results/family=evil", "results/family=card_guessing", "results", "quarantine"]


@pytest.mark.parametrize("where", [*LINKED, "summary", "runs", ".claims"])
@pytest.mark.parametrize("extra", [[], ["store.recompute=true"], ["stage=summary"]])
def test_a_linked_folder_is_refused_and_its_target_untouched(outputs, elsewhere, where, extra):
    study = outputs / "paper"
    entry = study / where
    if entry.exists():
        entry.rename(study / f"{entry.name}.moved")
    target = elsewhere if where.startswith("results/") else elsewhere.parent
    entry.symlink_to(target, target_is_directory=True)
    before = snapshot(target.parent)
    with pytest.raises(StudyError) as refused:
        run(outputs, "cluster=sync", *extra)
    message = str(refused.value)
    assert message.startswith("paths.outputs=") and f"{entry} is a symbolic link" in message
    assert snapshot(target.parent) == before
    assert entry.is_symlink()


def test_a_link_inside_summary_or_runs_is_refused(outputs, elsewhere):
    plot = next((outputs / "paper" / "summary").iterdir())
    plot.unlink()
    plot.symlink_to(elsewhere / "notes.txt")
    with pytest.raises(StudyError, match=rf"{plot.name} is a symbolic link"):
        run(outputs, "cluster=sync", "stage=summary")
    assert (elsewhere / "notes.txt").read_text() == "the user's own file"


def test_a_linked_results_file_is_quarantined_never_read(outputs, elsewhere):
    family = outputs / "paper" / "results" / "family=card_guessing"
    theirs = store.result_files(elsewhere.parent)
    link = family / "part-00000000000000000000-linked00.parquet"
    link.symlink_to(theirs[0])
    assert link not in store.result_files(family.parent)  # the readers never list it
    assert len(StudyFolder(outputs / "paper").stored_ids().every) == 2  # the study's own two tasks
    n_ours = len(store.load_results(outputs / "paper"))
    before = snapshot(elsewhere.parent)

    logged: list[str] = []
    report = run(outputs, "cluster=sync", logged=logged)

    assert report.skipped == 2 and report.computed == 0
    moved = outputs / "paper" / "quarantine" / "family=card_guessing" / link.name
    assert moved.is_symlink() and not link.exists() and not link.is_symlink()
    assert any("symbolic link" in line and str(link) in line for line in logged)
    assert snapshot(elsewhere.parent) == before
    assert len(store.load_results(outputs / "paper")) == n_ours


def within(seconds: float, fn, fifos: list[Path]):
    """fn() in a thread; if it is still running after ``seconds`` (blocked opening a FIFO),
    open the FIFOs for writing so that it ends, and fail."""
    outcome: dict[str, object] = {}

    def target():
        try:
            outcome["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(30)
        pytest.fail(f"hung on a FIFO: {fifos}")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def test_a_fifo_or_a_folder_named_like_a_results_file_never_hangs_nor_fails(tmp_path, outputs):
    family = outputs / "paper" / "results" / "family=card_guessing"
    fifo = family / "part-00000000000000000000-fifo0000.parquet"
    os.mkfifo(fifo)
    folder = family / "part-00000000000000000001-folder00.parquet"
    (folder / "inside").mkdir(parents=True)
    odd_top = outputs / "paper" / "results" / "stray-fifo"
    os.mkfifo(odd_top)
    fifos = [fifo, odd_top]

    # read-only stages skip them; another study's summary (index.html reads every study) too
    within(60, lambda: run(outputs, "cluster=sync", "stage=plan"), fifos)
    within(60, lambda: run(outputs, "cluster=sync", "stage=summary"), fifos)
    other = within(60, lambda: run(outputs, "cluster=sync", "study.name=second"), fifos)
    assert other.computed == 2
    assert "paper" in (outputs / "index.html").read_text()

    logged: list[str] = []
    # the run's upkeep quarantines them
    report = within(60, lambda: run(outputs, "cluster=sync", logged=logged), fifos)

    quarantine = outputs / "paper" / "quarantine"
    assert (quarantine / "family=card_guessing" / fifo.name).exists()
    assert (quarantine / "family=card_guessing" / folder.name / "inside").is_dir()
    assert (quarantine / "stray-fifo").exists()
    assert report.skipped == 2
    said = "\n".join(logged)
    assert "a FIFO, never opened or followed" in said and "a folder" in said


@pytest.mark.parametrize("name", [".lock", ".running"])
def test_a_lock_file_that_is_a_fifo_or_a_link_is_refused(outputs, elsewhere, name):
    lock = outputs / "paper" / name
    lock.unlink(missing_ok=True)
    os.mkfifo(lock)
    with pytest.raises(StudyError, match=rf"{name} is a FIFO"):
        within(60, lambda: run(outputs, "cluster=sync"), [lock])
    lock.unlink()
    lock.symlink_to(elsewhere / "notes.txt")
    with pytest.raises(StudyError, match=rf"{name} is a symbolic link"):
        run(outputs, "cluster=sync")
    assert (elsewhere / "notes.txt").read_text() == "the user's own file"


def test_a_linked_study_folder_is_refused_and_not_listed(tmp_path, elsewhere):
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    (outputs / "paper").symlink_to(elsewhere.parents[1], target_is_directory=True)
    with pytest.raises(StudyError, match=r"paper is a symbolic link"):
        run(outputs, "cluster=sync")
    assert StudyFolder.all_in(outputs) == []


def test_quarantine_never_overwrites_an_entry_already_there(outputs):
    family = outputs / "paper" / "results" / "family=card_guessing"
    for text in ("first", "second"):
        (family / "part-x.parquet").write_text(text)
        run(outputs, "cluster=sync")
    kept = sorted((outputs / "paper" / "quarantine" / "family=card_guessing").iterdir())
    assert [p.read_text() for p in kept] == ["first", "second"]


def test_the_safe_path_primitives(tmp_path):
    root = tmp_path / "study"
    root.mkdir()
    (tmp_path / "away").mkdir()
    (root / "results").symlink_to(tmp_path / "away", target_is_directory=True)
    with pytest.raises(UnsafePath, match="results is a symbolic link"):
        ensure_dir(root / "results" / "family=x", below=root)
    assert not (tmp_path / "away" / "family=x").exists()
    assert ensure_dir(root / "runs" / "a", below=root).is_dir()
    os.mkfifo(root / ".lock")
    with pytest.raises(UnsafePath, match="is a FIFO"):
        open_regular(root / ".lock", os.O_WRONLY | os.O_APPEND)
    assert [p.name for p, _ in StudyFolder(root).unsafe_entries()] == [".lock", "results"]


def test_a_corrupt_results_file_holds_no_ids_before_the_upkeep_moves_it(outputs):
    """stage=plan and the checks made before the run's upkeep read the stored ids: a file
    that is not Parquet counts for nothing there (no error), and the run quarantines it."""
    family = outputs / "paper" / "results" / "family=card_guessing"
    (family / "part-00000000000000000000-corrupt0.parquet").write_text("first")
    assert len(StudyFolder(outputs / "paper").stored_ids().every) == 2
    logged: list[str] = []
    cfg = compose_config(f"paths.outputs={outputs}", "cluster=sync", "stage=plan")
    run_study(cfg, log=logged.append)
    assert "2 already stored" in logged[0]
    assert run(outputs, "cluster=sync").skipped == 2
    assert (outputs / "paper" / "quarantine" / "family=card_guessing").is_dir()
