"""Names, folders and tools that could break the store: a study name the outputs folder uses
itself, or one too long for the file system, a summary of nothing or into a folder it cannot
write, a full disk mid-run, the certificate and index tools on a folder they cannot use; and
an unknown key inside a mapping override named as the key it adds.  Each is refused (or
reported) in one line, exit 2, before anything is written."""

from __future__ import annotations

import errno
import importlib
import os
from pathlib import Path

import pytest
from tests_support import cli_in_process, copy_outputs

from pipeline import store
from pipeline.config import StudyError, checked_study


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


@pytest.fixture
def outputs(paper_outputs: Path, tmp_path: Path) -> Path:
    """A copy of the default study's outputs (run and summarised) this test may change."""
    return copy_outputs(paper_outputs, tmp_path / "outputs")


# ------------------------------------------------------------------------ study names


def test_a_study_named_like_a_file_of_the_outputs_folder_is_refused(
    paper_outputs, tmp_path, monkeypatch, capsys
):
    """``study.name=index.html`` ran, then a 53-line IsADirectoryError traceback (exit 1),
    and its folder broke the summary of every later study in the same outputs."""
    own = sorted(p.name for p in paper_outputs.iterdir() if not (p / "results").is_dir())
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


@pytest.mark.parametrize(
    ("override", "shown"),
    [
        ("study.name='a\nb'", r"study.name='a\nb': holds \n, a character that is not printable"),
        ("study.name='a\rb'", r"study.name='a\rb': holds \r,"),
        ("study.name='a\x1b[31mred'", r"study.name='a\x1b[31mred': holds \x1b,"),
        ("study.name='a\x7fb'", r"study.name='a\x7fb': holds \x7f,"),
        ("study.name=a\tb", r"study.name='a\tb': holds \t,"),
        ("study.name='a\u202eb'", r"study.name='a\u202eb': holds \u202e,"),
        ("study.name=' '", "study.name=' ': starts or ends with a space"),
        ("study.name='x '", "study.name='x ': starts or ends with a space"),
        ("paths.outputs='{out}/a\nb'", r"/a\nb': holds \n, a character that is not printable"),
        ("study.name=a\x1b[31mred", r"study.name=a\x1b[31mred: cannot read this override"),
    ],
    ids=[
        "newline",
        "cr",
        "esc",
        "del",
        "tab",
        "rtl-override",
        "space",
        "trailing",
        "outputs",
        "raw",
    ],
)
def test_a_name_with_a_character_that_is_not_printable_is_refused_showing_escapes(
    tmp_path, monkeypatch, capsys, override, shown
):
    """A study name or outputs folder holding a control character, a direction mark or
    spaces at an end is refused before anything is made (exit 2), and the error line
    shows each such character as its escape: no raw control character reaches the
    terminal."""
    out = tmp_path / "out"
    given = [override.replace("{out}", str(out))]
    if not override.startswith("paths.outputs="):
        given.append(f"paths.outputs={out}")
    line = one_line(monkeypatch, capsys, *given)
    assert shown in line, line
    assert line.isprintable(), repr(line)
    assert not out.exists() and os.listdir(tmp_path) == []


def test_a_slurm_log_folder_with_a_character_that_is_not_printable_is_refused():
    """cluster.log_directory, a folder the Slurm jobs write into, follows the same rule."""
    from pipeline.config import cluster_config

    with pytest.raises(StudyError) as err:
        cluster_config({"kind": "slurm", "log_directory": "logs\x1b[2J"})
    assert str(err.value).startswith(r"cluster.log_directory='logs\x1b[2J': holds \x1b,")


def test_a_study_name_with_spaces_inside_is_a_name(tmp_path, monkeypatch, capsys):
    """Spaces between the characters of a name are kept: only its ends are refused."""
    args = ["study.name='my study'", "stage=plan", "cluster=sync", f"paths.outputs={tmp_path}"]
    assert cli_in_process(monkeypatch, capsys, *args)[0] == 0


def test_a_long_name_is_counted_by_its_characters_not_its_quoted_form(
    tmp_path, monkeypatch, capsys
):
    line = one_line(monkeypatch, capsys, "study.name=" + "n" * 300, f"paths.outputs={tmp_path}")
    assert "(300 characters): a name of 300 bytes" in line, line


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


# ------------------------------------------------------------- the summary of a study


def test_a_summary_of_a_study_with_no_stored_results_writes_nothing(outputs, monkeypatch, capsys):
    """``study.name=papr stage=summary`` (a typo) exited 0 with an empty summary and report
    in a new folder ``papr``."""
    before = snapshot(outputs)
    line = one_line(
        monkeypatch, capsys, f"paths.outputs={outputs}", "study.name=papr", "stage=summary"
    )
    assert line == (
        f"error: study.name='papr': no results are stored in {outputs / 'papr'}, so "
        "stage=summary has nothing to summarise and wrote nothing; studies with results in "
        f"paths.outputs='{outputs}': paper (from the command line override study.name=papr)"
    )
    assert snapshot(outputs) == before


def test_a_summary_never_overwrites_a_folder_of_the_user_s(tmp_path, monkeypatch, capsys):
    """``paths.outputs=../userdir study.name=notes stage=summary`` replaced the user's own
    summary.md and report.html (exit 0)."""
    notes = tmp_path / "userdir" / "notes"
    notes.mkdir(parents=True)
    (notes / "summary.md").write_text("my own notes")
    (notes / "report.html").write_text("<p>my own report</p>")
    before = snapshot(tmp_path / "userdir")
    line = one_line(
        monkeypatch,
        capsys,
        f"paths.outputs={tmp_path / 'userdir'}",
        "study.name=notes",
        "stage=summary",
    )
    assert "no results are stored in" in line and line.endswith(
        f"paths.outputs='{tmp_path / 'userdir'}': none (from the command line override "
        "study.name=notes)"
    ), line
    assert snapshot(tmp_path / "userdir") == before


def as_if_read_only(monkeypatch, folder: Path) -> None:
    """Nothing new can be made in ``folder`` (files or folders), as in a folder without
    write permission; the tests run as root here, who may write anywhere."""
    real_open, real_mkdir = os.open, os.mkdir

    def refused(path) -> OSError:
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    def inside(path) -> bool:
        return Path(os.path.abspath(path)).parent == folder

    def open_(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and inside(path) and not os.path.lexists(path):
            raise refused(path)
        return real_open(path, flags, *args, **kwargs)

    def mkdir(path, *args, **kwargs):
        if inside(path):
            raise refused(path)
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "mkdir", mkdir)


@pytest.mark.parametrize(
    ("locked", "what"), [("paper", "the summary"), (".", "the index of its studies")]
)
def test_a_summary_into_a_folder_it_cannot_write_is_one_line(
    outputs, monkeypatch, capsys, locked, what
):
    """A 59-line PermissionError traceback (exit 1); a full run already said one line."""
    folder = (outputs / locked).resolve()
    before = snapshot(outputs)
    as_if_read_only(monkeypatch, folder)
    line = one_line(monkeypatch, capsys, f"paths.outputs={outputs}", "stage=summary")
    assert line == (
        f"error: paths.outputs='{outputs}': cannot write {what} under {folder} (Permission denied)"
    )
    assert snapshot(outputs) == before


def test_a_folder_named_index_html_in_the_outputs_is_refused_before_any_work(
    tmp_path, monkeypatch, capsys
):
    """Such a folder (a study named index.html, which is now refused) made every later
    study compute, then fail with an IsADirectoryError traceback writing the index."""
    out = tmp_path / "out"
    (out / "index.html" / "results").mkdir(parents=True)
    line = one_line(monkeypatch, capsys, f"paths.outputs={out}")
    assert line == (
        f"error: paths.outputs='{out}': {out / 'index.html'} is a folder, where every summary "
        "writes the index of the studies in paths.outputs; move it away (a study's folder: "
        "rename it)"
    )
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]  # no study folder made


# ------------------------------------------------------------------ a full disk mid-run


def test_a_full_disk_mid_run_names_paths_outputs_and_says_the_run_resumes(
    tmp_path, monkeypatch, capsys
):
    """It said ``error: cannot write results to <path>/family=card_guessing: [Errno 28]
    ...``: neither paths.outputs nor that the stored rows are intact and the run resumes."""
    out = tmp_path / "out"
    real_fsync, writes = os.fsync, []

    def second_write_fails(fd):  # the first batch is stored, then the disk is full
        writes.append(fd)
        if len(writes) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_fsync(fd)

    monkeypatch.setattr(store.os, "fsync", second_write_fails)
    args = (f"paths.outputs={out}", "run.batch_size=1")
    line = one_line(monkeypatch, capsys, *args)
    folder = out / "paper" / "results" / "family=card_guessing"
    assert line == (
        f"error: paths.outputs='{out}': cannot write results to {folder} (No space left on "
        "device); the stored results are intact (no partial file is left; 1 task(s) of this "
        "run stored, 0 stored before): free some space, then run the same command again to "
        "resume (stored tasks are skipped)"
    )
    assert len(store.load_results(out / "paper")) == 1
    monkeypatch.setattr(store.os, "fsync", real_fsync)
    status, err = cli_in_process(monkeypatch, capsys, *args, "cluster=sync", "run.progress=false")
    assert status == 0, err
    rows = store.load_results(out / "paper")
    assert sorted(rows["expected_score_exact"]) == ["2383/560", "475/112"]


# ------------------------------------------------------------------------------ tools

ROLES = ("ca", "scheduler", "worker", "client")


def status_of(tool: str, *argv: str) -> int:
    """The exit status of ``python -m pipeline.<tool> ARGV``, run in this process."""
    main = importlib.import_module(f"pipeline.{tool}").main
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = exc.code
    return 0 if status is None else status


def test_certs_over_an_existing_certificate_folder_are_refused_without_force(tmp_path, capsys):
    """They silently replaced the CA, its key and every certificate (exit 0), so a running
    cluster then refused its clients."""
    folder = tmp_path / "certs"
    assert status_of("certs", str(folder)) == 0
    capsys.readouterr()
    before = snapshot(folder)
    assert status_of("certs", str(folder)) == 2
    held = [f"{role}{end}" for role in ROLES for end in (".pem", "-key.pem")]
    assert capsys.readouterr().err == (
        f"error: {folder} already holds {', '.join(held)}: certificates of a new CA are "
        "refused by every party still using these (a running cluster); give --force to "
        "replace them, or choose another folder\n"
    )
    assert snapshot(folder) == before
    (folder / "ca.pem").unlink()  # any one of them is enough to refuse
    assert status_of("certs", str(folder)) == 2
    assert "already holds ca-key.pem, scheduler.pem," in capsys.readouterr().err
    assert status_of("certs", str(folder), "--force") == 0
    assert (folder / "ca-key.pem").read_bytes() != before["ca-key.pem"]


@pytest.mark.parametrize(
    ("tool", "given", "said"),
    [
        ("index", "does/not/exist", "does/not/exist: no such folder"),
        ("index", "a-file", "a-file: not a folder"),
        ("certs", "a-file", "a-file: not a folder"),
        ("certs", "a-file/certs", "a-file/certs: Not a directory"),
    ],
)
def test_the_tools_refuse_a_folder_they_cannot_use_in_one_line(
    tmp_path, monkeypatch, capsys, tool, given, said
):
    """``python -m pipeline.index does/not/exist`` (or a file) printed a 19-line traceback,
    ``python -m pipeline.certs FILE`` 13 lines."""
    monkeypatch.chdir(tmp_path)
    Path("a-file").write_text("not a folder")
    assert status_of(tool, given) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {said}") and err.count("\n") == 1, err
    assert sorted(os.listdir()) == ["a-file"] and Path("a-file").read_text() == "not a folder"


def test_the_index_tool_on_an_index_html_folder_is_one_line(tmp_path, capsys):
    (tmp_path / "index.html").mkdir()
    assert status_of("index", str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert err == f"error: cannot write {tmp_path / 'index.html'} (Is a directory)\n"


# ----------------------------------------------------------------- messages that mislead


@pytest.mark.parametrize(
    ("override", "key", "adds"),
    [
        ("study.strategies={info: {}}", "study.strategies.info", "+study.strategies.info={}"),
        ("study.grid={deck: [[2,2]], foo: [1]}", "study.grid.foo", None),
        ("run={foo: 1}", "run.foo", None),
    ],
)
def test_an_unknown_key_inside_a_mapping_is_named_as_the_key_it_adds(
    tmp_path, monkeypatch, capsys, override, key, adds
):
    """It said ``study.strategies: unknown key``: the parent exists, the new key is
    study.strategies.info."""
    out = tmp_path / "out"
    line = one_line(monkeypatch, capsys, override, f"paths.outputs={out}")
    assert line == (
        f"error: {key}: unknown key (to add a key the config does not have: +{key}=...)"
    )
    if adds:  # the override the message suggests is one the config takes
        args = (adds, f"paths.outputs={out}", "stage=plan", "cluster=sync")
        status, err = cli_in_process(monkeypatch, capsys, *args)
        assert status == 0, err
    assert not out.exists()
