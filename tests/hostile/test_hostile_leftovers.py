"""Leftovers and silence: a refused run writes nothing, a waiting run says
who it waits for, long numbers are abbreviated, Ctrl-C is one line."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from pipeline.cli.exit_lines import abbreviated
from pipeline.errors import StudyError
from pipeline.running.plan import plan
from pipeline.storage import store
from pipeline.storage.study_folder import StudyFolder
from tests.helpers.commands import cli_in_process
from tests.helpers.folders import copy_outputs
from tests.helpers.repository import ROOT
from tests.helpers.runs import run
from tests.helpers.terminal import interruptible

NAP_DRIVER = ROOT / "tests" / "helpers" / "nap_driver.py"


def test_a_results_path_that_is_a_file_is_a_config_error(outputs):
    (outputs / "paper").mkdir(parents=True)
    (outputs / "paper" / "results").write_text("not a folder")
    with pytest.raises(StudyError, match=r"paths.outputs=.*results is a file"):
        run(outputs, "cluster=sync")


def test_a_run_that_fails_before_storing_removes_the_folders_it_made(tmp_path):
    outputs = tmp_path / "new" / "deeper"
    with pytest.raises(StudyError):
        run(outputs, "cluster=address", "cluster.address=tcp://127.0.0.1:1", "cluster.timeout=1s")
    assert not (tmp_path / "new").exists()


def test_a_failed_run_keeps_a_folder_that_was_there(paper_outputs, outputs):
    copy_outputs(paper_outputs, outputs)
    before = sorted(p.relative_to(outputs) for p in outputs.rglob("*"))
    with pytest.raises(StudyError):
        run(
            outputs,
            "cluster=address",
            "cluster.address=tcp://127.0.0.1:1",
            "cluster.timeout=1s",
            "store.recompute=true",
        )
    assert sorted(p.relative_to(outputs) for p in outputs.rglob("*")) == before


HOLD = """
import fcntl, sys, time
fh = open(sys.argv[1], "a")
fcntl.flock(fh, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(60)
"""


def test_a_run_waiting_for_the_study_lock_says_who_holds_it(tmp_path, capsys):
    tmp_path.mkdir(exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / ".lock")], stdout=subprocess.PIPE, text=True
    )
    got = threading.Event()
    try:
        assert holder.stdout.readline().strip() == "held"

        def take() -> None:
            with StudyFolder(tmp_path).locked():
                got.set()

        taker = threading.Thread(target=take, daemon=True)
        taker.start()
        time.sleep(0.5)
        assert not got.is_set()
    finally:
        holder.kill()
        holder.wait()
    taker.join(10)
    assert got.is_set()
    said = capsys.readouterr().err
    assert f"waiting: process {holder.pid}" in said and str(tmp_path / ".lock") in said


def test_a_4000_digit_value_is_abbreviated_in_the_message():
    huge = "9" * 4000
    study = {"name": "x", "family": "card_guessing", "grid": {"deck": [[int(huge), 3]]}}
    with pytest.raises(StudyError) as err:
        plan(study)  # too large for float(): one line naming the key, no OverflowError
    line = abbreviated(f"error: {err.value}")
    assert "study.grid.deck" in line and "(4000 digits)" in line and len(line) < 400


HUGE = "x" * 100_000


@pytest.mark.parametrize(
    ("override", "said"),
    [
        (f"study={HUGE}", "'x...x' (100,000 characters): unknown study; valid: "),
        (f"stage={HUGE}", "'x...x' (100,000 characters): unknown; valid: all, plan, run"),
        (f"run.memory_budget={HUGE}", "'x...x' (100,000 characters): give a size such as 8GB"),
        (f"study.name={HUGE}", "'x...x' (100,000 characters): a name of 100000 bytes"),
        (f"study.grid.deck=[[{HUGE}]]", "['x...x'] (100,004 characters): must be a list of"),
    ],
    ids=["study", "stage", "budget", "name", "deck"],
)
def test_a_100000_character_value_is_cut_in_the_error_line_with_its_length(
    tmp_path, monkeypatch, capsys, override, said
):
    """Every error line shows a long value cut in the middle and says how many characters
    it had: the line stays short whichever check refused the value."""
    status, err = cli_in_process(monkeypatch, capsys, override, "cluster=sync",
                                 f"paths.outputs={tmp_path / 'out'}")  # fmt: skip
    (line,) = err.strip().splitlines()
    assert status == 2 and line.startswith("error: ") and len(line) < 1000, line[:1000]
    assert said in re.sub("x+", "x", line), line


@pytest.mark.parametrize("override", [f"+run.foo{HUGE}=1", f"foo{HUGE}=1", f"~run.{HUGE}"])
def test_a_100000_character_key_is_one_line_naming_it_cut(tmp_path, monkeypatch, capsys, override):
    """A key longer than any config key is an unknown key: exit 2, one line, cut, its
    length said."""
    status, err = cli_in_process(monkeypatch, capsys, override, "cluster=sync",
                                 f"paths.outputs={tmp_path / 'out'}")  # fmt: skip
    (line,) = err.strip().splitlines()
    assert status == 2 and line.startswith("error: ") and len(line) < 1000, line[:1000]
    assert "characters, longer than any config key (200 at most): unknown key" in line, line


def test_a_list_of_5000_values_on_the_command_line_is_refused_before_hydra_parses_it(
    tmp_path, monkeypatch, capsys
):
    """Lists of more than 2,000 values in one override are refused in one line (exit 2),
    the way to give them said; 2,000 are read."""
    deck = ",".join(["3"] * 5000)
    status, err = cli_in_process(monkeypatch, capsys, f"study.grid.deck=[[{deck}]]",
                                 "cluster=sync", f"paths.outputs={tmp_path / 'out'}")  # fmt: skip
    assert status == 2 and err == (
        "error: study.grid.deck: a list of more than 2,000 values on the command line (5,000), "
        "more than Hydra reads in reasonable time; give it in a study file of your own "
        "(--config-dir)\n"
    )
    from pipeline.cli.preflight import check_override_lists

    check_override_lists(["study.grid.deck=[[" + ",".join(["3"] * 2000) + "]]", "x='[a,,,]'"])


def test_an_error_line_shows_each_unprintable_character_as_its_escape():
    assert abbreviated("error: a=b\nc\x1b[2J\u202e\x7f\t") == r"error: a=b\nc\x1b[2J\u202e\x7f\t"
    long = "y" * 500
    assert abbreviated(f"error: k={long}, then") == (
        f"error: k={long[:200]}...{long[-100:]} (500 characters), then"
    )
    path = "/" + "p" * 399  # a path of 400 characters is shown whole
    assert abbreviated(f"error: cannot write {path} (No space)") == (
        f"error: cannot write {path} (No space)"
    )


def test_a_scheduler_without_workers_is_said_and_honours_the_timeout(outputs, capsys):
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=0,
        processes=False,
        protocol="tcp://",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
    ) as empty:
        start = time.monotonic()
        with pytest.raises(StudyError, match="the scheduler has no workers"):
            run(
                outputs,
                "cluster=address",
                f"cluster.address={empty.scheduler_address}",
                "cluster.timeout=2s",
            )
        assert time.monotonic() - start < 10
    assert "has no workers yet; waiting up to cluster.timeout=2s" in capsys.readouterr().err
    assert not outputs.exists() or not any(outputs.rglob("*.yaml"))


@pytest.mark.slow
def test_ctrl_c_is_one_line_saying_what_is_stored_and_how_to_resume(outputs):
    command = [
        sys.executable,
        str(NAP_DRIVER),
        "200",
        "0.05",
        "cluster=sync",
        "run.batch_size=1",
        "run.progress=false",
        f"paths.outputs={outputs}",
    ]
    driver = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=interruptible,
    )
    results = outputs / "naps" / "results"
    deadline = time.monotonic() + 120
    while len(store.result_files(results)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    driver.send_signal(signal.SIGINT)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 130, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("stopped (Ctrl-C): "), err
    assert str(results) in lines[0] and "run the same command again" in lines[0]
    assert os.path.isdir(results)
