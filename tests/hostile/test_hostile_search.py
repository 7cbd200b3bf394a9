"""What a search reads back to go on (pipeline/search/): its Optuna journal and the store's
results files are checked before they are trusted; a damaged one is named, set aside, and
the search goes on from what the store holds, each lost task solved again."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.search.runner import run_search
from pipeline.storage.store import load_results, result_files
from pipeline.storage.store_layout import METADATA_KEY
from tests.test_search import config, settings

N_TRIALS = 8
JOURNAL = Path("gamma_sweep", "search", "info-gamma.journal")


def search(outputs: Path, said: list[str] | None = None):
    """The search over gamma on (3,3,3), 8 trials 4 at a time, into ``outputs`` (its page
    written, the study's summary not: ``stage=run``)."""
    log = (lambda _: None) if said is None else said.append
    return run_search(config(outputs, "stage=run"), settings(n_trials=N_TRIALS), log=log)


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    """The outputs of one search, and what it found (each test damages a copy)."""
    outputs = tmp_path_factory.mktemp("searched") / "outputs"
    return outputs, search(outputs)


@pytest.fixture
def copied(searched, tmp_path):
    outputs, found = searched
    return Path(shutil.copytree(outputs, tmp_path / "outputs", symlinks=True)), found


def garble_a_middle_line(journal: Path) -> None:
    lines = journal.read_bytes().splitlines(keepends=True)
    middle = len(lines) // 2
    lines[middle] = b'{"op_code": 5, "trial_id' + b"}" * (len(lines[middle]) - 25) + b"\n"
    journal.write_bytes(b"".join(lines))


def garble_unsealed(journal: Path) -> None:
    garble_a_middle_line(journal)
    journal.with_name(journal.name + ".seal").unlink()


def cut_at_a_line_end(journal: Path) -> None:
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[: len(lines) // 2]))


def cut_mid_line_unsealed(journal: Path) -> None:
    data = journal.read_bytes()
    journal.write_bytes(data[: len(data) - 7])
    journal.with_name(journal.name + ".seal").unlink()


def a_fifo(journal: Path) -> None:
    journal.unlink()
    os.mkfifo(journal)


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (garble_a_middle_line, "bytes are not those sealed (changed or damaged)"),
        (garble_unsealed, "is not JSON"),
        (cut_at_a_line_end, "sealed when a batch was told"),
        (cut_mid_line_unsealed, "is cut short"),
        (a_fifo, "a FIFO, not a journal file; never opened or followed"),
    ],
)
def test_a_damaged_journal_is_named_set_aside_and_the_search_goes_on_from_the_store(
    copied, damage, said
):
    """A journal garbled in the middle (with its seal, or without), cut at the end of a
    line (which Optuna would replay short, trials told lost without a word), cut inside its
    last line with no seal beside it, or a FIFO where it belongs: one line names it and
    why, it moves to ``quarantine/search/``, and the search starts again from the store:
    the same trials asked again, every task found stored, nothing solved, the same best."""
    outputs, found = copied
    damage(outputs / JOURNAL)
    lines: list[str] = []
    again = search(outputs, lines)
    warned = [line for line in lines if line.startswith("warning: ")]
    assert len(warned) == 1 and f"{outputs / JOURNAL} is not a journal" in warned[0], lines
    assert said in warned[0] and "moved to" in warned[0], warned
    assert (outputs / "gamma_sweep" / "quarantine" / "search" / JOURNAL.name).exists()
    assert again.computed == 0 and len(again.trials) == N_TRIALS
    assert again.best.params == found.best.params and again.best.exact == found.best.exact
    assert (outputs / JOURNAL).stat().st_size > 0  # a new journal, sealed
    assert json.loads((outputs / f"{JOURNAL}.seal").read_text())["bytes"] > 0


def test_a_truncated_results_file_is_named_not_used_and_its_trials_solved_again(copied):
    """A results file cut short (its footer gone): the search names it and does not use its
    rows; the store moves it to quarantine, and the trials told whose tasks it held are
    solved again, each once, so every trial keeps its exact value."""
    outputs, found = copied
    files = result_files(outputs / "gamma_sweep" / "results")
    info = next(f for f in files if "info" in pq.read_table(f, columns=["strategy"])[0].to_pylist())
    held = pq.read_metadata(info).num_rows
    info.write_bytes(info.read_bytes()[: info.stat().st_size // 2])
    lines: list[str] = []
    again = search(outputs, lines)
    named = [line for line in lines if str(info) in line]
    assert named and "not a guesslab results file (unreadable Parquet" in named[0], lines
    assert again.computed == held and len(again.trials) == N_TRIALS
    rows = load_results(outputs / "gamma_sweep")
    assert (
        rows["task_id"].is_unique
        and len(rows) == len({t.params["gamma"] for t in found.trials}) + 1
    )
    assert [t.exact for t in again.trials] == [t.exact for t in found.trials]
    assert None not in [t.exact for t in again.trials]


@pytest.mark.parametrize(
    "record", ["text", {"name": 5, "trials": {"a": 1}}, {"name": "s", "trials": {"x": True}}]
)
def test_a_search_record_of_another_shape_gives_its_rows_no_search_or_trial(copied, record):
    """A results file whose metadata's ``search`` is not a search's record (text, a name that
    is not text, trial numbers that are not whole numbers): load_results reads the file's
    rows, with no search (or no trial) rather than a wrong one."""
    outputs, _ = copied
    path = result_files(outputs / "gamma_sweep" / "results")[-1]
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[METADATA_KEY])
    meta["search"] = record
    pq.write_table(table.replace_schema_metadata({METADATA_KEY: json.dumps(meta)}), path)
    rows = load_results(outputs / "gamma_sweep")
    mine = rows[rows["task_id"].isin(table.column("task_id").to_pylist())]
    assert len(mine) == len(table) and mine["trial"].isna().all()
    if not (isinstance(record, dict) and record["name"] == "s"):
        assert mine["search"].isna().all()
    others = rows.drop(mine.index)
    assert (others["search"] == "info-gamma").all()
