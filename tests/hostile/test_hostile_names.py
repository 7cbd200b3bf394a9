"""Names, folders and tools that could break the store: a study name the outputs folder uses
itself, or one too long for the file system, a summary of nothing or into a folder it cannot
write, a full disk mid-run, the certificate and index tools on a folder they cannot use; and
an unknown key inside a mapping override named as the key it adds.  Each is refused (or
reported) in one line, exit 2, before anything is written."""

from __future__ import annotations

import errno
import importlib
import os
import stat
from pathlib import Path

import pytest

from pipeline.config import checked_study
from pipeline.errors import StudyError
from pipeline.storage import store
from tests.helpers.commands import cli_in_process
from tests.helpers.folders import copy_outputs


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
    """A copy of the default study's outputs (run and summarized) this test may change."""
    return copy_outputs(paper_outputs, tmp_path / "outputs")


# ------------------------------------------------------------------------ study names


def test_a_study_named_like_a_file_of_the_outputs_folder_is_refused(
    paper_outputs, tmp_path, monkeypatch, capsys
):
    """A study named like a file a run writes beside the study folders (``index.html``, in
    any case) is refused in one line before any work: its folder would stand where every
    summary writes the index."""
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
    """A study name is one folder name: NUL, a name over 255 bytes (in UTF-8) or the name of
    the index is refused naming study.name and what is wrong."""
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
        # a long path is shown cut with its length before the reason: each part checked
        ("paths.outputs='{out}/a\nb'", (r"/a\nb'", r"holds \n, a character that is not printable")),
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
    for part in (shown,) if isinstance(shown, str) else shown:
        assert part in line, line
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
        "stage=summary has nothing to summarize and wrote nothing; studies with results in "
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


@pytest.mark.parametrize("stage", ["all", "summary"])
@pytest.mark.parametrize("mine", ["summary.md", "report.html"])
def test_a_run_never_overwrites_a_summary_or_report_of_the_user_s(
    outputs, monkeypatch, capsys, stage, mine
):
    """A study folder's summary.md and report.html are replaced only when guesslab wrote
    them: a file of the user's there (a folder of notes given as the study's folder) is
    refused before any work, at ``stage=all`` as at ``stage=summary``, naming it."""
    notes = outputs / "notes"
    if stage == "summary":  # a study with results, whose summary the user replaced
        (outputs / "paper").rename(notes)
    else:
        notes.mkdir()
    (notes / mine).write_text("my own notes")
    args = [f"paths.outputs={outputs}", "study.name=notes", f"stage={stage}"]
    before = snapshot(outputs)
    line = one_line(monkeypatch, capsys, *args)
    assert line.startswith(
        f"error: study.name='notes': {notes / mine} is not a file guesslab wrote, and every "
        "summary of this study replaces it; move it away, or choose another study.name or "
        "paths.outputs (nothing was run or written)"
    ), line
    assert snapshot(outputs) == before


@pytest.mark.parametrize("stage", ["all", "summary"])
def test_a_run_never_overwrites_an_index_html_of_the_user_s(outputs, monkeypatch, capsys, stage):
    """``index.html`` in paths.outputs is replaced only when guesslab wrote it."""
    (outputs / "index.html").write_text("<p>my own index</p>")
    before = snapshot(outputs)
    line = one_line(monkeypatch, capsys, f"paths.outputs={outputs}", f"stage={stage}")
    assert line == (
        f"error: paths.outputs='{outputs}': {outputs / 'index.html'} is not a file guesslab "
        "wrote, and every summary replaces it with the index of the studies in paths.outputs; "
        "move it away, or choose another paths.outputs (nothing was run or written)"
    )
    assert snapshot(outputs) == before


def _unmarked(outputs: Path) -> None:
    """The study's summary, report and the index as a guesslab without the mark wrote them."""
    from pipeline.storage.own_files import GENERATOR, SUMMARY_MARK

    summary = outputs / "paper" / "summary.md"
    summary.write_text(summary.read_text().replace(SUMMARY_MARK + "\n", "", 1))
    for page in (outputs / "paper" / "report.html", outputs / "index.html"):
        page.write_text(page.read_text().replace(GENERATOR, "", 1))


def test_a_run_replaces_the_summary_report_and_index_guesslab_wrote(outputs, monkeypatch, capsys):
    """Unmarked files of an older guesslab (recognised by their first line or the head of the
    page) are replaced by ``stage=summary``, marked; marked ones by a full run."""
    from pipeline.storage.own_files import GENERATOR, SUMMARY_MARK

    _unmarked(outputs)
    assert not (outputs / "paper" / "summary.md").read_text().startswith(SUMMARY_MARK)
    for stage in ("summary", "all"):  # unmarked, then marked
        args = (f"paths.outputs={outputs}", f"stage={stage}", "cluster=sync", "run.progress=false")
        status, err = cli_in_process(monkeypatch, capsys, *args)
        assert status == 0, err
        assert (outputs / "paper" / "summary.md").read_text().startswith(SUMMARY_MARK + "\n")
        for page in (outputs / "paper" / "report.html", outputs / "index.html"):
            assert GENERATOR in page.read_text()[:200], page


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
    """``stage=summary`` into a folder it may not write (the study's or paths.outputs) is one
    line naming it, exit 2, as a full run's is, and changes nothing."""
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
    """A folder named index.html in paths.outputs (where every summary writes the index) is
    refused in one line saying to move it, before any study folder is made."""
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
    """A full disk mid-run is one line naming paths.outputs and the folder, saying the stored
    rows are intact and how many, and that the same command resumes; it does."""
    out = tmp_path / "out"
    real_fsync, writes = os.fsync, []

    def second_write_fails(fd):  # the first batch is stored, then the disk is full
        if stat.S_ISREG(os.fstat(fd).st_mode):  # a file's bytes (a folder's sync is not one)
            writes.append(fd)
            if len(writes) == 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", second_write_fails)
    args = (f"paths.outputs={out}", "run.batch_size=1")
    line = one_line(monkeypatch, capsys, *args)
    folder = out / "paper" / "results" / "family=card_guessing"
    assert line == (
        f"error: paths.outputs='{out}': cannot write results to {folder} (No space left on "
        "device); the stored results are intact (no partial file is left; 1 task of this "
        "run stored, 0 stored before): free some space, then run the same command again to "
        "resume (stored tasks are skipped)"
    )
    assert len(store.load_results(out / "paper")) == 1
    monkeypatch.setattr(os, "fsync", real_fsync)
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


def _entry(folder: Path, name: str, kind: str, outside: Path) -> str:
    """Make ``folder/name`` an entry of ``kind``; what a refusal says it is."""
    path = folder / name
    path.unlink()
    if kind == "link":
        path.symlink_to(outside)
        return f"a symbolic link (to {outside})"
    if kind == "folder":
        path.mkdir()
        return "a folder"
    os.mkfifo(path)
    return "not a regular file"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("ca-key.pem", "link"),
        ("ca.pem", "link"),
        ("worker.pem", "folder"),
        ("client-key.pem", "fifo"),
    ],
)
def test_certs_force_never_writes_through_a_link_or_into_another_entry(
    tmp_path, capsys, name, kind
):
    """``--force`` replaces regular files only: an entry of a certificate's or key's name
    that is a link (whose target would receive the CA's private key), a folder or a FIFO is
    refused in one line naming it, before anything is written."""
    folder = tmp_path / "certs"
    assert status_of("certs", str(folder)) == 0
    outside = tmp_path / "someone-else.txt"
    outside.write_text("not a key")
    what = _entry(folder, name, kind, outside)
    capsys.readouterr()
    before = {p.name: (p.lstat().st_ino, p.lstat().st_mtime_ns) for p in folder.iterdir()}
    # a reader holds the FIFO open: a writer's open would not wait for one
    reader = os.open(folder / name, os.O_RDONLY | os.O_NONBLOCK) if kind == "fifo" else None
    try:
        status = status_of("certs", str(folder), "--force")
    finally:
        if reader is not None:
            os.close(reader)
    assert status == 2
    assert capsys.readouterr().err == (
        f"error: {folder / name} is {what}: certificates and keys are written as new regular "
        "files, never through a link or into another kind of entry; remove it, or choose "
        "another folder\n"
    )
    assert {p.name: (p.lstat().st_ino, p.lstat().st_mtime_ns) for p in folder.iterdir()} == before
    assert outside.read_text() == "not a key"


def test_certs_force_writes_new_files_renamed_over_the_old_ones(tmp_path, capsys):
    """With ``--force`` each file is a new one renamed into place: another name of the old
    file (a hard link) keeps the old bytes, and a key is mode 0600 whatever the old file's
    mode was; the folder holds nothing else afterwards."""
    folder = tmp_path / "certs"
    assert status_of("certs", str(folder)) == 0
    old_key = (folder / "ca-key.pem").read_bytes()
    os.link(folder / "ca-key.pem", tmp_path / "old-ca-key.pem")
    (folder / "worker-key.pem").chmod(0o644)
    assert status_of("certs", str(folder), "--force") == 0
    assert (tmp_path / "old-ca-key.pem").read_bytes() == old_key
    assert (folder / "ca-key.pem").read_bytes() != old_key
    keys = sorted(folder.glob("*-key.pem"))
    assert len(keys) == 4 and {k.stat().st_mode & 0o777 for k in keys} == {0o600}
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"{role}{end}" for role in ROLES for end in (".pem", "-key.pem")
    )
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--days", "-5"], "--days=-5: the certificates' validity is 1 to 36,500 days"),
        (["--days", "0"], "--days=0: the certificates' validity is 1 to 36,500 days"),
        (["--days", "99999999999"], "--days=99999999999: the certificates' validity is 1 to"),
        (["--days", "1.5"], "argument --days: invalid int value: '1.5'"),
        (["--host", ""], "--host='': an empty host name"),
        (["--host", "node1", "--host", "a b"], "--host='a b': not a host name or IP address"),
        (["--host=-node"], "--host='-node': not a host name or IP address"),
        (["--host", "x" * 64 + ".lan"], "not a host name or IP address (a DNS name is"),
        (["--host", "é.lan"], "--host='é.lan': not a host name or IP address"),
        (["--host", "1.2.3.4/24"], "--host='1.2.3.4/24': not a host name or IP address"),
        (["--host", "256.256.256.256"], "--host='256.256.256.256': not an IP address (an IPv4"),
        (["--host", "1.2.3"], "--host='1.2.3': not an IP address (an IPv4 address is four"),
    ],
)
def test_certs_days_and_hosts_out_of_range_are_one_line(tmp_path, capsys, args, said):
    """``--days`` is 1 to 36,500 and each ``--host`` a DNS name or an IP address: anything
    else is refused in one line naming the option and the value, exit 2, nothing written."""
    assert status_of("certs", str(tmp_path / "certs"), *args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {said}") or f": {said}" in err, err
    assert err.count("\n") == 1 and not (tmp_path / "certs").exists(), err


@pytest.mark.parametrize(
    "hosts", [["10.0.0.7", "::1"], ["*.cluster.lan", "node-1.lan.", "localhost"]]
)
def test_certs_take_ip_addresses_dns_names_and_wildcards(tmp_path, hosts):
    from cryptography import x509

    argv = [str(tmp_path), "--days", "36500"]
    for host in hosts:
        argv += ["--host", host]
    assert status_of("certs", *argv) == 0
    cert = x509.load_pem_x509_certificate((tmp_path / "worker.pem").read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(n.value) for n in names] == hosts


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
    """``python -m pipeline.index`` and ``python -m pipeline.certs`` given a folder that does
    not exist, or a file, refuse it in one line, exit 2, and change nothing."""
    monkeypatch.chdir(tmp_path)
    Path("a-file").write_text("not a folder")
    assert status_of(tool, given) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {said}") and err.count("\n") == 1, err
    assert sorted(os.listdir()) == ["a-file"] and Path("a-file").read_text() == "not a folder"


@pytest.mark.parametrize("tool", ["index", "certs"])
def test_the_tools_say_a_100000_character_folder_cut_in_one_line(
    tmp_path, monkeypatch, capsys, tool
):
    """A folder name too long to look up: one line, the name cut and its length said, exit
    2, nothing written (was the OSError's traceback, or the name whole)."""
    monkeypatch.chdir(tmp_path)
    assert status_of(tool, "x" * 100_000) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 'xxx") and err.count("\n") == 1 and len(err) < 400, err
    assert "(100,000 characters): File name too long" in err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_the_index_tool_s_help_is_its_usage(tmp_path, monkeypatch, capsys, flag):
    """``python -m pipeline.index --help`` prints its usage, exit 0, nothing written."""
    monkeypatch.chdir(tmp_path)
    assert status_of("index", flag) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: python -m pipeline.index [-h] [OUTPUTS]"), out
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("argv", "said"),
    [(["--bogus"], "unrecognized arguments: --bogus"), (["a", "b"], "unrecognized arguments: b")],
)
def test_the_index_tool_refuses_other_arguments_in_one_line(
    tmp_path, monkeypatch, capsys, argv, said
):
    """An option the index tool does not have, or a second folder: one line, exit 2."""
    monkeypatch.chdir(tmp_path)
    assert status_of("index", *argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {said}") and err.count("\n") == 1, err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("kind", ["file", "link"])
def test_the_index_tool_never_replaces_an_index_html_it_did_not_write(tmp_path, capsys, kind):
    """``python -m pipeline.index DIR`` replaces only an index guesslab wrote: a folder with
    the user's own ``index.html`` (or a link of that name) is refused in one line, exit 2."""
    index = tmp_path / "index.html"
    if kind == "file":
        index.write_text("<p>my own index</p>")
        what = "not a file guesslab wrote"
    else:
        (tmp_path / "mine.html").write_text("<p>my own index</p>")
        index.symlink_to(tmp_path / "mine.html")
        what = "a symbolic link"
    before = snapshot(tmp_path)
    assert status_of("index", str(tmp_path)) == 2
    assert capsys.readouterr().err == (
        f"error: {index} is {what}: python -m pipeline.index replaces only the index guesslab "
        "writes; move it away, or give another folder\n"
    )
    assert snapshot(tmp_path) == before and index.is_symlink() == (kind == "link")


def test_the_index_tool_replaces_the_index_it_wrote_marked_or_older(outputs, capsys):
    from pipeline.storage.own_files import GENERATOR

    _unmarked(outputs)
    for _ in range(2):  # unmarked (an older guesslab's), then marked
        assert status_of("index", str(outputs)) == 0
        assert GENERATOR in (outputs / "index.html").read_text()[:200]
    assert capsys.readouterr().err == ""


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
    """An unknown key inside a mapping is named as the key it adds
    (study.strategies.info, not study.strategies), with the ``+KEY=...`` that adds it."""
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
