"""Names, folders and tools that could break the store: a study name the outputs folder uses
itself, or one too long for the file system, a summary of nothing or into a folder it cannot
write, a full disk mid-run, the certificate and index tools on a folder they cannot use; and
an unknown key inside a mapping override named as the key it adds.  Each is refused (or
reported) in one line, exit 2, before anything is written."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests_support import cli_in_process, compose_config

from pipeline.config import checked_study
from pipeline.run import run_study
from pipeline.study import StudyError


def snapshot(root: Path) -> dict[str, object]:
    """Every entry under ``root``: a file's bytes, or "folder" (links not followed)."""
    out: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(folder, name)
            out[str(path.relative_to(root))] = "folder" if path.is_dir() else path.read_bytes()
    return out


def one_line(monkeypatch, capsys, *args: str) -> str:
    """The one line of ``python -m pipeline ARGS`` (cluster=sync), which exits 2."""
    status, err = cli_in_process(monkeypatch, capsys, *args, "cluster=sync", "run.progress=false")
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> Path:
    """An outputs folder after the default study ran and summarised (stage=all)."""
    outputs = tmp_path_factory.mktemp("stored") / "outputs"
    cfg = compose_config(f"paths.outputs={outputs}", "cluster=sync", "run.progress=false")
    run_study(cfg, log=lambda *_: None)
    return outputs


@pytest.fixture
def outputs(stored: Path, tmp_path: Path) -> Path:
    """A copy of ``stored`` this test may change."""
    return Path(shutil.copytree(stored, tmp_path / "outputs", symlinks=True))


# ------------------------------------------------------------------------ study names


def test_a_study_named_like_a_file_of_the_outputs_folder_is_refused(
    stored, tmp_path, monkeypatch, capsys
):
    """``study.name=index.html`` ran, then a 53-line IsADirectoryError traceback (exit 1),
    and its folder broke the summary of every later study in the same outputs."""
    own = sorted(p.name for p in stored.iterdir() if not (p / "results").is_dir())
    assert own == ["index.html"]  # what a run writes beside its study folders
    fresh = tmp_path / "fresh"
    for name in own:
        for spelled in (name, name.upper()):
            line = one_line(monkeypatch, capsys, f"study.name={spelled}", f"paths.outputs={fresh}")
            assert line.startswith(
                f"error: study.name='{spelled}': the name of a file guesslab writes in "
                f"paths.outputs beside the study folders ({name}, the index of the studies"
            ), line
            assert not fresh.exists()


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("a\0b", "must be a plain, non-empty name (one folder name: no '/' or NUL"),
        ("n" * 256, "a name of 256 bytes; a folder name has at most 255 bytes"),
        ("\u00e9" * 128, "a name of 256 bytes; a folder name has at most 255 bytes"),
        ("index.html", "the name of a file guesslab writes in paths.outputs"),
        ("Index.HTML", "some file systems ignore letter case"),
    ],
    ids=["nul", "256-bytes", "256-bytes-utf8", "index", "index-case"],
)
def test_a_study_name_that_is_not_one_folder_name_is_refused(name, said):
    """Only ``/`` and a leading ``.`` were refused: NUL reached ``os.mkdir`` (ValueError), a
    name over 255 bytes a 54-line ``File name too long`` traceback."""
    with pytest.raises(StudyError) as err:
        checked_study({"name": name, "family": "card_guessing"})
    assert str(err.value).startswith("study.name=") and said in str(err.value), err.value


LONG = "/".join(["d" * 99] * 40)  # 4,000 characters in names of 99


@pytest.mark.parametrize("stage", ["all", "summary", "plan"])
@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("study.name=" + "n" * 300, "a name of 300 bytes; a folder name has at most 255 bytes"),
        ("paths.outputs={tmp}/" + "d" * 6000, "a folder name of 6000 bytes"),
        ("paths.outputs={tmp}/" + LONG, "bytes; it has at most 3,584 (the longest path"),
    ],
    ids=["name", "outputs-name", "outputs-path"],
)
def test_a_name_or_path_too_long_for_the_file_system_is_one_line(
    tmp_path, monkeypatch, capsys, stage, given, said
):
    """A 54-line ``OSError: File name too long`` traceback (exit 1) at stage=summary and
    stage=plan, and for a long paths.outputs at every stage."""
    out = tmp_path / "out"
    given = given.replace("{tmp}", str(out))
    args = [f"paths.outputs={out}", given, f"stage={stage}"]
    line = one_line(monkeypatch, capsys, *args)
    assert said in line and len(line) < 600, line
    assert not out.exists()
