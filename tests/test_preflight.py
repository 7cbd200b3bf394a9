"""The checks before Hydra read the config files Hydra reads (its own search path), and a
stop leaves run_study as one exception carrying the run's report."""

from __future__ import annotations

import signal
import sys

import pytest

from pipeline.cli.preflight import check_command_line, flag_values
from pipeline.config import conf_dir
from pipeline.config_files import command_line_files, job_files
from pipeline.ctrl_c import RunStopped, is_stop, stop_on_first_ctrl_c
from pipeline.errors import StudyError
from tests.helpers.commands import cli_run_in_process

BAD = "name: bad\nfamily: card_guessing\na: &a [*a]\n"  # an alias inside itself


def test_hydras_options_are_read_in_both_spellings_in_order():
    argv = ["-cd", "a", "study=x", "--config-dir=b", "--config-name", "c", "-cd"]
    assert flag_values(argv, ("--config-dir", "-cd")) == [("-cd", "a"), ("--config-dir", "b")]
    assert flag_values(argv, ("--config-name", "-cn")) == [("--config-name", "c")]


def test_a_shipped_name_in_a_config_dir_is_the_shipped_file_as_hydra_reads_it(
    tmp_path, monkeypatch, capsys
):
    """Hydra's search path puts --config-dir after guesslab's own configs: for a name both
    hold, Hydra reads guesslab's, so that is the file checked (the user's is never read)."""
    (tmp_path / "study").mkdir()
    (tmp_path / "study" / "paper.yaml").write_text(BAD)
    (tmp_path / "study" / "mine.yaml").write_text("name: mine\n")
    files, primary = command_line_files(str(tmp_path), "config", [])
    assert files.file("study", "paper") == conf_dir() / "study" / "paper.yaml"
    assert files.file("study", "mine") == tmp_path / "study" / "mine.yaml"
    assert {"paper", "mine"} <= set(files.options("study"))
    assert primary["defaults"][2] == {"study": "paper"}
    check_command_line(["--config-dir", str(tmp_path), "study=paper"])  # not the user's
    args = ["--config-dir", str(tmp_path), "stage=plan", "cluster=sync"]
    done = cli_run_in_process(monkeypatch, capsys, *args, f"paths.outputs={tmp_path / 'o'}")
    assert done.returncode == 0 and done.stdout.startswith("study paper: "), done  # Hydra's


def test_a_study_on_hydras_searchpath_is_found_and_checked(tmp_path):
    """``hydra.searchpath=[file://DIR]`` adds DIR where Hydra adds it: its studies are valid
    choices, and read safely before Hydra reads them."""
    (tmp_path / "study").mkdir()
    (tmp_path / "study" / "bad.yaml").write_text(BAD)
    given = f"hydra.searchpath=[file://{tmp_path}]"
    files, _ = command_line_files(None, "config", [given])
    assert "bad" in files.options("study")
    with pytest.raises(StudyError, match=f"{tmp_path}/study/bad.yaml: a\\[0\\]: an alias"):
        check_command_line([given, "study=bad"])
    with pytest.raises(StudyError, match="study='bad': unknown study; valid: "):
        check_command_line(["study=bad"])


def test_a_jobs_search_path_finds_the_study_file_hydra_read(tmp_path):
    """The search path a job's config records (hydra.runtime.config_sources) names the
    study file of an error line."""
    (tmp_path / "study").mkdir()
    (tmp_path / "study" / "mine.yaml").write_text("name: mine\n")
    sources = [
        type("Source", (), {"provider": p, "schema": s, "path": d})
        for p, s, d in [("main", "pkg", "pipeline.conf"), ("command-line", "file", tmp_path)]
    ]
    assert job_files(sources).file("study", "mine") == tmp_path / "study" / "mine.yaml"
    assert job_files(sources).file("study", "paper") == conf_dir() / "study" / "paper.yaml"


def test_a_stop_is_a_keyboard_interrupt_and_an_error_after_the_commands_ctrl_c(monkeypatch):
    """Before the command's Ctrl-C, only a KeyboardInterrupt is a stop; after it, an error a
    library raises in its place is one too."""
    monkeypatch.setattr("pipeline.ctrl_c._stopped_by", None)
    assert is_stop(KeyboardInterrupt()) and not is_stop(RuntimeError("Query interrupted"))
    assert not is_stop(SystemExit(2))
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        stop_on_first_ctrl_c()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # a second one is ignored
        assert is_stop(RuntimeError("Query interrupted")) and not is_stop(SystemExit(2))
    finally:
        signal.signal(signal.SIGINT, handlers[0])
        signal.signal(signal.SIGTERM, handlers[1])
    stop = RunStopped("report")
    assert isinstance(stop, KeyboardInterrupt) and stop.report == "report"
