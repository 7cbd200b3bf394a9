"""``python -m pipeline.reproduce`` reads a hostile study folder alone and in bounded time
and memory (pipeline/readback/stored_study.py): no link is followed, nothing but a regular file is
opened, a run record larger than a config is not read, and each entry not read is named in
one line of the table and turns the exit status to 4 while the rest is checked; a temporary
folder inside the folder checked is refused before any work."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from pipeline.readback.reproduce_outcome import EXIT_BAD, EXIT_PARTLY
from pipeline.reproduce import main
from pipeline.storage.store import result_files
from tests.helpers.commands import module_command
from tests.helpers.folders import copy_outputs, snapshot

MEMORY = 4 * 2**30  # the address space a reproduce command is given here: 4 GiB
TASKS = 2  # the default study's tasks, one results file each


@pytest.fixture
def study(paper_outputs: Path, tmp_path: Path) -> Path:
    """A copy of the stored default study (2 tasks, 2 results files, 1 run record)."""
    return copy_outputs(paper_outputs, tmp_path / "outputs") / "paper"


def bounded_reproduce(*args: str) -> subprocess.CompletedProcess:
    """``python -m pipeline.reproduce ARGS`` as a user runs it, within MEMORY of address
    space and 120 seconds (a reader that follows /dev/zero or waits on a FIFO fails here
    instead of starving the machine or hanging the suite)."""
    return module_command("pipeline.reproduce", *args, timeout=120, memory=MEMORY)


def not_used(out: str) -> dict[str, str]:
    """The table's files not used: path -> why (one line each)."""
    lines = out.split("\nfiles not used:\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    pairs = (line.strip().split("  ", 1) for line in lines)
    return {path: why.strip() for path, why in pairs}


def fifo(path: Path) -> str:
    os.mkfifo(path)
    return "a FIFO"


def dev_zero(path: Path) -> str:
    path.symlink_to("/dev/zero")
    return "a symbolic link (to /dev/zero)"


@pytest.mark.parametrize("odd", [fifo, dev_zero])
def test_a_fifo_or_a_link_to_dev_zero_in_runs_is_named_and_never_opened(study, odd):
    """A run record (``<study>/runs/zz.yaml``) that is a FIFO or a link to /dev/zero: not
    opened (no wait on the FIFO, no read without end), named in one line; every task
    reproduces from the run record beside it, exit 4."""
    what = odd(study / "runs" / "zz.yaml")
    done = bounded_reproduce(str(study))
    assert done.returncode == EXIT_PARTLY, done.stdout + done.stderr
    assert f"reproduced: {TASKS}\n  differs: 0\n  not reproducible here: 0\n" in done.stdout
    assert "files not used: 1\n" in done.stdout
    assert not_used(done.stdout) == {
        str(study / "runs" / "zz.yaml"): f"{what}, where a run record belongs: never followed "
        "or opened"
    }
    assert "Traceback" not in done.stderr


def test_a_run_record_linked_from_outside_the_folder_is_not_used(study, tmp_path):
    """The only run record replaced by a link to a config outside the folder: the link is
    named and not read; the tasks are planned from the results files' metadata instead."""
    record = next((study / "runs").glob("*.yaml"))
    outside = tmp_path / "elsewhere.yaml"
    outside.write_bytes(record.read_bytes())
    record.unlink()
    record.symlink_to(outside)
    done = bounded_reproduce(str(study))
    assert done.returncode == EXIT_PARTLY, done.stdout + done.stderr
    assert "configs: the metadata of the results files (1 distinct config)" in done.stdout
    assert f"reproduced: {TASKS}\n" in done.stdout
    assert not_used(done.stdout) == {
        str(record): f"a symbolic link (to {outside}), where a run record belongs: never "
        "followed or opened"
    }


def test_a_huge_run_record_is_refused_by_its_size_unread(study):
    """A 3 GB sparse run record ``<study>/runs/zz-huge.yaml``: not read (the command stays
    within 4 GiB of address space), named with its size and the limit; the tasks still
    reproduce, exit 4."""
    with (study / "runs" / "zz-huge.yaml").open("wb") as fh:
        fh.truncate(3 * 10**9)
    done = bounded_reproduce(str(study))
    assert done.returncode == EXIT_PARTLY, done.stdout + done.stderr
    assert f"reproduced: {TASKS}\n" in done.stdout
    assert not_used(done.stdout) == {
        str(study / "runs" / "zz-huge.yaml"): "3.0 GB (3,000,000,000 bytes), more than a run "
        "record holds (at most 1.0 MB): not read"
    }


def truncated(path: Path) -> str:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return "cannot be read as a results file (Parquet magic bytes not found in footer."


def damaged(path: Path) -> str:
    data = bytearray(path.read_bytes())
    data[4:64] = bytes(b ^ 0xFF for b in data[4:64])  # the first page's header
    path.write_bytes(bytes(data))
    return "cannot be read as a results file ("


def linked(path: Path) -> str:
    """The results file moved out of the folder, a link to it in its place."""
    outside = path.parents[4] / "outside.parquet"
    path.rename(outside)
    path.symlink_to(outside)
    return f"a symbolic link (to {outside}), where a results file belongs: never followed"


def foreign(path: Path) -> str:
    import pyarrow.parquet as pq

    pq.write_table(pq.read_table(path).replace_schema_metadata(None), path)
    return "not a guesslab results file (its Parquet metadata has no 'guesslab' key)"


def numbered_ids(path: Path) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    ids = pa.array(range(len(table)), pa.int64())
    pq.write_table(table.set_column(table.schema.get_field_index("task_id"), "task_id", ids), path)
    return "not a guesslab results file (it has no task_id column of text)"


@pytest.mark.parametrize("spoil", [truncated, damaged, linked, foreign, numbered_ids])
def test_a_results_file_that_cannot_be_read_is_named_and_the_exit_says_so(study, spoil, capsys):
    """One of the two results files truncated, its first page damaged, replaced by a link to
    it outside the folder, without guesslab's metadata, or with numbers for task ids: named
    in one line with why, no traceback; the other file's task reproduces; exit 4."""
    path = result_files(study / "results")[0]
    why = spoil(path)
    status = main([str(study)])
    out = capsys.readouterr().out
    assert status == EXIT_PARTLY, out
    assert f"reproduced: {TASKS - 1}\n  differs: 0\n  not reproducible here: 0\n" in out
    assert "files not used: 1\n" in out
    assert list(not_used(out)) == [str(path)]
    assert not_used(out)[str(path)].startswith(why)


def test_a_results_file_whose_column_types_differ_from_the_others_is_named(study, capsys):
    """The newer results file with text where the older holds floats (expected_score): it
    is named, its columns said, no traceback; the older file's task reproduces; exit 4."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = result_files(study / "results")[1]
    table = pq.read_table(path)
    i = table.schema.get_field_index("expected_score")
    text = pa.array([str(v) for v in table.column(i).to_pylist()])
    pq.write_table(table.set_column(i, "expected_score", text), path)
    assert main([str(study)]) == EXIT_PARTLY
    out = capsys.readouterr().out
    assert f"reproduced: {TASKS - 1}\n" in out
    assert not_used(out) == {
        str(path): "its columns cannot be read with the family's other files (Unable to merge: "
        "Field expected_score has incompatible types: double vs string)"
    }


def test_a_linked_family_folder_or_runs_folder_is_named_never_followed(study, tmp_path, capsys):
    """``results/family=other`` and ``runs`` links to folders outside: each named, nothing
    read through them; the tasks reproduce from the results files' metadata, exit 4."""
    outside = copy_outputs(study, tmp_path / "outside")
    family = outside / "results" / "family=card_guessing"
    (study / "results" / "family=other").symlink_to(family)
    (study / "runs").rename(tmp_path / "runs.moved")
    (study / "runs").symlink_to(outside / "runs")
    assert main([str(study)]) == EXIT_PARTLY
    out = capsys.readouterr().out
    assert "configs: the metadata of the results files (1 distinct config)" in out
    assert f"{TASKS} stored tasks chosen" in out and f"reproduced: {TASKS}\n" in out
    assert not_used(out) == {
        str(study / "results" / "family=other"): f"a symbolic link (to {family}), where a "
        "family's folder of results belongs: never followed or opened",
        str(study / "runs"): f"a symbolic link (to {outside / 'runs'}), where the folder of run "
        "records belongs: never followed or opened",
    }


def test_results_linked_out_of_the_folder_is_refused_in_one_line(study, tmp_path, capsys):
    """``results`` a link to another study's results: exit 2, one line naming it."""
    (study / "results").rename(tmp_path / "results")
    (study / "results").symlink_to(tmp_path / "results")
    assert main([str(study)]) == EXIT_BAD
    assert capsys.readouterr().err.splitlines() == [
        f"error: {study / 'results'} is a symbolic link (to {tmp_path / 'results'}), where the "
        "study's results folder belongs; reproduce reads nothing through a link nor opens a "
        "special file"
    ]


def test_a_temporary_folder_inside_the_folder_checked_is_refused(study, monkeypatch, capsys):
    """TMPDIR inside the folder checked (with or without --into): exit 2 before any work,
    one line naming it; the folder keeps every entry and byte."""
    inside = study / "tmp"
    inside.mkdir()
    before = snapshot(study)
    monkeypatch.setattr(tempfile, "tempdir", str(inside))
    assert main([str(study)]) == EXIT_BAD
    assert main([str(study), "--into", str(study.parent / "again")]) == EXIT_BAD
    err = capsys.readouterr().err.splitlines()
    assert (
        err
        == [
            f"error: TMPDIR={str(inside)!r}: inside the folder checked, which is never written "
            "(temporary files would go there); point it elsewhere"
        ]
        * 2
    )
    assert snapshot(study) == before
    assert not (study.parent / "again").exists()


def test_a_folder_whose_every_results_file_is_unreadable_is_one_line(study, capsys):
    """Both results files truncated: nothing to check, exit 2, one line naming the first
    file not read, why, and how many more."""
    files = result_files(study / "results")
    for path in files:
        truncated(path)
    assert main([str(study)]) == EXIT_BAD
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith(
        f"error: {study}: not a study folder (no readable guesslab results files under "
        f"{study / 'results'}/family=*/part-*.parquet; not read: {files[0]} (cannot be read as a "
        "results file (Parquet magic bytes not found in footer."
    )
    assert err[0].endswith(") and 1 more)")


def test_metadata_and_ids_of_another_shape_or_with_escapes_reach_the_table_visible(study, capsys):
    """A results file whose metadata lists its packages as a number and its config folders
    as text, names its Python with an ESC, and whose task id holds an ESC: no traceback; the
    packages and folders are not recorded, the ESC shown as ``\\x1b``; that task is not
    planned by any stored config (said), the other reproduces: exit 4."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = result_files(study / "results")[0]
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[b"guesslab"])
    meta.update(packages=5, config_sources="x", python="\x1b[2J3.11")
    ids = pa.array(["\x1b[31mevil"] * len(table), pa.string())
    table = table.set_column(table.schema.get_field_index("task_id"), "task_id", ids)
    pq.write_table(table.replace_schema_metadata({b"guesslab": json.dumps(meta).encode()}), path)
    assert main([str(study)]) == EXIT_PARTLY
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "\\x1b[2J3.11" in out and "\\x1b[31mevil" in out
    assert f"reproduced: {TASKS - 1}\n  differs: 0\n  not reproducible here: 1\n" in out
    assert "no stored config plans this task" in out


def test_a_run_record_naming_millions_of_tasks_is_not_planned(study):
    """A run record whose study names 4,000,000 tasks (2,000 decks x 1,000 game counts x 2
    strategies) beside the real one: counted from its axes, not planned (planning it would
    take minutes), named with the count and the limit; the tasks reproduce, exit 4."""
    import yaml

    record = next((study / "runs").glob("*.yaml"))
    config = yaml.safe_load(record.read_text())
    decks = [[a, b] for a in range(1, 51) for b in range(1, 41)]
    config["study"]["grid"] = {"deck": decks, "method": ["monte_carlo"],
                               "n_games": list(range(1, 1001))}  # fmt: skip
    forged = study / "runs" / "0000-forged.yaml"  # read before the real record
    forged.write_text(yaml.safe_dump(config))
    done = bounded_reproduce(str(study))
    assert done.returncode == EXIT_PARTLY, done.stdout + done.stderr
    assert f"reproduced: {TASKS}\n" in done.stdout
    assert not_used(done.stdout) == {
        str(forged): "its study names up to 4,000,000 tasks, more than are planned to find "
        "the 2 the folder stores (at most 1,000,000: the larger of 1,000,000 and 10 times "
        "those): not used"
    }


def test_a_run_record_of_another_shape_or_refused_is_named_not_used(study):
    """Run records beside the real one (read first): one with a key that is not text, one
    whose config a run refuses, one whose strategy cannot be planned: no traceback, each
    named with why; the tasks reproduce from the real record, exit 4."""
    runs = study / "runs"
    (runs / "0.yaml").write_text("study:\n  name: paper\n  1: 2\n  family: card_guessing\n")
    (runs / "1.yaml").write_text("study: {name: paper, family: card_guessing, grids: 7}\n")
    (runs / "2.yaml").write_text(
        "study: {name: paper, family: card_guessing, grid: {deck: [[3, 3, 3]]},\n"
        "        strategies: {optimal: {_target_: 5}}}\n"
    )
    done = bounded_reproduce(str(study))
    assert done.returncode == EXIT_PARTLY, done.stdout + done.stderr
    assert f"reproduced: {TASKS}\n" in done.stdout
    found = not_used(done.stdout)
    assert found[str(runs / "0.yaml")] == "not a run record (a mapping whose keys are not all text)"
    assert found[str(runs / "1.yaml")].startswith("a run here refuses its config (study.grids=7")
    assert found[str(runs / "2.yaml")].startswith(
        "cannot be planned here (study.strategies.optimal._target_=5"
    )
    assert found[str(runs / "2.yaml")].endswith("): not used") and len(found) == 3


def test_a_count_stored_as_text_differs_quoted_in_a_row_named_by_strategy_and_deck(study, capsys):
    """Both files holding n_states as text ('342' where 342 is computed): each task differs,
    named by its strategy, its deck (the family's first parameter, though the study has one)
    and its tie-break (the parameter that tells the two apart), the text quoted; exit 1."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path in result_files(study / "results"):
        table = pq.read_table(path)
        i = table.schema.get_field_index("n_states")
        text = pa.array([str(v) for v in table.column(i).to_pylist()])
        pq.write_table(table.set_column(i, "n_states", text), path)
    assert main([str(study)]) == 1
    lines = [x.split() for x in capsys.readouterr().out.splitlines() if "n_states" in x]
    names = sorted(" ".join(w for w in x if "=" in w) for x in lines)
    assert names == ["strategy=greedy deck=3,3,3 tie_break=lowest", "strategy=optimal deck=3,3,3"]
    assert all(x[-2] == repr(x[-1]) for x in lines)
