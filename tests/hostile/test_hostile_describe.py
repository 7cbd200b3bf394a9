"""``python -m pipeline.describe FOLDER`` reads a hostile study folder alone, in bounded time
and memory (pipeline/readback/describe_folder.py): no link is followed, nothing but a regular file
is opened, and each entry not read is named with why while the rest is described."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.helpers.commands import module_command
from tests.helpers.folders import copy_outputs

MEMORY = 4 * 2**30  # the address space the command is given here: 4 GiB


def bounded_describe(folder: Path) -> subprocess.CompletedProcess:
    """``python -m pipeline.describe FOLDER`` as a user runs it, within MEMORY of address
    space and 120 seconds (a reader that follows /dev/zero or waits on a FIFO fails here
    instead of starving the machine or hanging the suite)."""
    return module_command("pipeline.describe", str(folder), timeout=120, memory=MEMORY)


def test_fifos_links_and_huge_files_are_named_never_opened(paper_outputs, tmp_path):
    """In a copy of the default study: a FIFO and a link to /dev/zero named like results
    files, a 3 GB sparse results file, a run record that is a link to /dev/zero and one
    that is a FIFO, checkpoints/ a link to /, a quarantined FIFO and a 3 GB sparse file, a
    search headline that is a FIFO.  None is waited on or read without end: each is named
    with why (or counted by its size on disk), and the families and runs are described."""
    study = copy_outputs(paper_outputs, tmp_path / "outputs") / "paper"
    family = study / "results" / "family=card_guessing"
    os.mkfifo(family / "part-zz-fifo.parquet")
    (family / "part-zz-zero.parquet").symlink_to("/dev/zero")
    with (family / "part-zz-huge.parquet").open("wb") as fh:
        fh.truncate(3 * 10**9)
    (study / "runs" / "zz-zero.yaml").symlink_to("/dev/zero")
    os.mkfifo(study / "runs" / "zz-fifo.yaml")
    (study / "checkpoints").symlink_to("/")
    (study / "quarantine").mkdir()
    os.mkfifo(study / "quarantine" / "part-x.parquet")
    with (study / "quarantine" / "part-huge.parquet").open("wb") as fh:
        fh.truncate(3 * 10**9)
    (study / "search").mkdir()
    os.mkfifo(study / "search" / "s.json")
    done = bounded_describe(study)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "  card_guessing: 2 tasks, 2 rows (2 ok, 0 failed)\n" in out, out
    assert "quarantine (entries moved out of results/): 2 entries, 1 file, " in out, out
    not_read = dict(
        line.strip().split(": ", 1) for line in out.split("\nnot read (")[1].splitlines()[1:]
    )
    never = "never followed or opened"
    assert not_read == {
        str(family / "part-zz-fifo.parquet"): f"a FIFO, where a results file belongs: {never}",
        str(family / "part-zz-zero.parquet"): "a symbolic link (to /dev/zero), where a "
        f"results file belongs: {never}",
        str(family / "part-zz-huge.parquet"): not_read[str(family / "part-zz-huge.parquet")],
        str(study / "runs" / "zz-fifo.yaml"): f"a FIFO, where a run record belongs: {never}",
        str(study / "runs" / "zz-zero.yaml"): "a symbolic link (to /dev/zero), where a run "
        f"record belongs: {never}",
        str(study / "checkpoints"): f"a symbolic link (to /), where the checkpoints folder "
        f"belongs: {never}",
        str(study / "search" / "s.json"): "not a search's headline file",
    }, out
    assert not_read[str(family / "part-zz-huge.parquet")].startswith(
        "cannot be read as a results file ("
    )
    assert "Traceback" not in done.stderr


def test_stored_names_with_control_characters_are_shown_escaped(paper_outputs, tmp_path, capsys):
    """A results file whose metadata names its commit, run and family version with terminal
    control sequences, and whose rows name their strategy so: each is shown escaped on its
    line (no escape reaches the terminal), the file's rows counted as the newest of its task."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.describe import main
    from pipeline.storage.store import result_files
    from pipeline.storage.store_layout import METADATA_KEY

    study = copy_outputs(paper_outputs, tmp_path / "outputs") / "paper"
    first = result_files(study / "results")[0]
    table = pq.read_table(first)
    meta = json.loads(table.schema.metadata[METADATA_KEY])
    meta.update(code_version="\x1b[2Jevil", run="\x1b]0;title\x07", solver_version="9\r")
    strategy = pa.array(["\x1b[31mred"] * len(table))
    table = table.set_column(table.column_names.index("strategy"), "strategy", strategy)
    forged = first.with_name("part-zzzz.parquet")
    pq.write_table(table.replace_schema_metadata({METADATA_KEY: json.dumps(meta)}), forged)
    assert main([str(study)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out
    assert (
        "card_guessing: 2 tasks, 2 rows (2 ok, 0 failed); 1 older row of tasks stored again" in out
    )
    assert "      \\x1b[31mred: 1 task; commit \\x1b[2Jevil\n" in out, out
    assert "version 9\\r: 1 file" in out, out
    assert "  results files naming run \\x1b]0;title\\x07 (no record of it): 1 results file" in out
