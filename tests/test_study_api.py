"""A study from Python (pipeline.study.Study): the command's config, checks and stages,
as a DataFrame of rows; in a real Jupyter kernel on the notebook's own Dask client."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from pipeline import Study
from pipeline.errors import StudyError
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config

NOTEBOOK = ROOT / "docs" / "notebooks" / "study.ipynb"


def test_a_study_is_composed_as_the_command_composes_it(tmp_path):
    """Study's config is what ``python -m pipeline`` composes from the same overrides."""
    overrides = ["study.grid.deck=[[4,4,4]]", "cluster=sync"]
    study = Study("paper", overrides=overrides, outputs=tmp_path)
    command = compose_config("study=paper", f"paths.outputs={tmp_path}", *overrides)
    assert OmegaConf.to_container(study.config, resolve=True) == OmegaConf.to_container(
        command, resolve=True
    )
    assert study.folder == tmp_path / "paper"


@pytest.mark.parametrize(
    ("name", "overrides", "line"),
    [
        ("nope", [], "study='nope': unknown study; valid: "),
        ("paper", ["study.grid.deck=[[0]]"], "study.grid.deck=[0]: must be a list"),
        ("paper", ["run.batch_size=-1"], "run.batch_size=-1: must be a positive integer"),
        ("paper", ["nokey=1"], "nokey: unknown key"),
        ("paper", "cluster=sync", "overrides='cluster=sync': a list of KEY=VALUE strings"),
        ("paper", None, "overrides=None: a list of KEY=VALUE strings"),
        ("paper", 5, "overrides=5: a list of KEY=VALUE strings"),
        ("paper", ["cluster=sync", 5], "overrides[1]=5: a KEY=VALUE string"),
        (5, [], "name=5: a study's name, a text"),
    ],
)
def test_a_config_the_command_refuses_raises_its_one_line(tmp_path, name, overrides, line):
    """A config the command refuses, or an argument of the wrong kind, raises StudyError
    with one line naming it, before anything is written (never SystemExit)."""
    with pytest.raises(StudyError) as caught:
        Study(name, overrides=overrides, outputs=tmp_path)
    assert str(caught.value).startswith(line) and "\n" not in str(caught.value)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("where", "line"),
    [
        ({"outputs": None}, "outputs=None: a folder's path"),
        ({"outputs": 5}, "outputs=5: a folder's path"),
        ({"config_dir": 5}, "config_dir=5: a folder's path"),
    ],
)
def test_a_folder_that_is_no_path_is_refused_naming_the_argument(
    tmp_path, monkeypatch, where, line
):
    """``outputs`` and ``config_dir`` are paths: None or a number raises StudyError naming
    the argument, and no folder is made (``outputs=None`` is no folder named ``None``)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StudyError, match=f"^{line}"):
        Study("paper", **{"outputs": tmp_path / "o", **where})
    assert not any(tmp_path.iterdir())


@pytest.fixture(scope="module")
def closed_client():
    """A distributed.Client closed (its in-process scheduler closed after it)."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=0, processes=False, dashboard_address=None)
    client = Client(cluster)
    client.close()
    cluster.close()
    return client


@pytest.mark.parametrize("kind", ["text", "number", "thread-pool", "closed"])
def test_run_on_what_is_not_a_running_client_raises_one_line(tmp_path, closed_client, kind):
    """``run(client=...)`` with a text, a number, a concurrent.futures executor or a closed
    Client raises StudyError naming ``client=`` before anything is written."""
    from concurrent.futures import ThreadPoolExecutor

    study = Study("paper", ["cluster=sync"], outputs=tmp_path)
    with ThreadPoolExecutor(1) as pool:
        client = {"text": "tcp://127.0.0.1:8786", "number": 5, "thread-pool": pool}.get(
            kind, closed_client
        )
        with pytest.raises(StudyError) as caught:
            study.run(client=client, progress=False)
    line = str(caught.value)
    assert line.startswith("client=") and "\n" not in line, line
    assert ("is closed" if kind == "closed" else "a distributed.Client is needed") in line
    with pytest.raises(StudyError, match=r"^progress='yes': True, False or None"):
        study.run(progress="yes")
    assert not any(tmp_path.iterdir())


def test_a_study_of_one_s_own_folder_plans_runs_and_resumes(tmp_path):
    """config_dir adds a folder of study files as --config-dir does; plan() is stage=plan's
    text and writes nothing; run() returns the rows, names the summary and report, and a
    second run computes nothing."""
    mine = tmp_path / "mine" / "study"
    mine.mkdir(parents=True)
    (mine / "twos.yaml").write_text(
        "name: twos\nfamily: card_guessing\n"
        "grid:\n  deck: [[2, 2], [2, 2, 2]]\n  feedback: [partial]\n"
        "strategies:\n  optimal: {}\n"
    )
    outputs = tmp_path / "out"
    study = Study("twos", ["cluster=sync"], outputs=outputs, config_dir=tmp_path / "mine")
    plan = study.plan()
    assert "study twos: 2 tasks" in plan and "nothing was run or written" in plan
    assert not outputs.exists()
    rows = study.run(progress=False)
    assert sorted(rows["expected_score_exact"]) == ["17/6", "271/90"]
    assert study.summary == outputs / "twos" / "summary.md" and study.summary.is_file()
    assert study.report == outputs / "twos" / "report.html"
    again = study.run(progress=False)
    assert study.last_run.computed == 0 and study.last_run.skipped == 2
    assert len(again) == 2


def executed(path: Path, cwd: Path):
    """The notebook at ``path`` executed in a fresh Jupyter kernel (ipykernel), in ``cwd``."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()
    return notebook


def shown_outputs(notebook) -> list[str]:
    """Each code cell's outputs as the manual shows them (docs/notebook_cells.py)."""
    from docs.notebook_cells import cell_outputs

    return [cell_outputs(cell) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def without_paths(text: str) -> str:
    """``text`` with what differs between runs left out: temporary folders, addresses,
    rates and times."""
    import re

    text = re.sub(r"/tmp/\S+?/", "TMP/", text)
    text = re.sub(r"inproc://\S+", "ADDRESS", text)
    text = re.sub(r"\[\d\d:\d\d<\d\d:\d\d, +[\d.]+task/s\]", "[TIMES]", text)
    text = re.sub(r"compiled kernels: \d+ of \d+", "compiled kernels: N of M", text)
    return re.sub(r"about \S+ s", "about S s", text)


@pytest.mark.slow
def test_the_manual_s_notebook_runs_in_a_kernel_on_its_own_client(tmp_path):
    """docs/notebooks/study.ipynb runs in a Jupyter kernel: the study on the notebook's own
    LocalCluster client gives Gural, Simper & So (2019)'s (3,3,3) values (greedy 475/112,
    optimal 2383/560), the client still computes after the run, a second run finds every
    task stored; and the outputs the manual shows are a fresh run's."""
    notebook = executed(NOTEBOOK, tmp_path)
    outputs = shown_outputs(notebook)
    table = next(text for text in outputs if "expected_score_exact" in text)
    assert "475/112" in table and "2383/560" in table and "271/90" in table
    assert any(text.endswith("(3, 4)") for text in outputs)
    assert "summary.md report.html\n" in outputs
    stored_notebook = json.loads(NOTEBOOK.read_text())
    for cells in (notebook["cells"], stored_notebook["cells"]):  # the run's bar: one output
        bars = [o for o in run_cell(cells)["outputs"] if "tasks:" in output_text(o)]
        assert len(bars) == 1 and "| 4/4 [" in output_text(bars[0]), bars
    stored = shown_outputs(stored_notebook)
    assert [without_paths(t) for t in stored] == [without_paths(t) for t in outputs]


def run_cell(cells: list) -> dict:
    """The notebook's cell that runs the study first."""
    return next(c for c in cells if "rows = study.run(" in "".join(c["source"]))


def output_text(output: dict) -> str:
    from docs.notebook_cells import output_text as text

    return text(output)


def test_a_run_in_a_notebook_shows_its_bar_in_one_output_updated_in_place(monkeypatch):
    """In a Jupyter kernel the tasks bar is one display output, its text replaced at each
    redraw (not one output per redraw), ending on the bar's last state."""
    import IPython.display

    from pipeline.running import progress

    shown: list[list[str]] = []  # each display made: the texts it showed, in order

    class Handle:
        def __init__(self, texts: list[str]):
            self.texts = texts

        def update(self, data, raw=False):
            assert raw
            self.texts.append(data["text/plain"])

    def display(data, raw=False, display_id=False):
        assert raw and display_id
        shown.append([data["text/plain"]])
        return Handle(shown[-1])

    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(progress, "in_a_notebook", lambda: True)
    with progress.tasks_bar(4, True) as bar:
        for _ in range(4):
            bar.update(1)
    assert len(shown) == 1, shown
    assert shown[0][0].startswith("tasks:   0%|") and "| 0/4 [" in shown[0][0]
    assert shown[0][-1].startswith("tasks: 100%|██████████| 4/4 ["), shown[0]
    assert all("\r" not in t and "\n" not in t for t in shown[0])


@pytest.mark.slow
def test_interrupting_the_kernel_stops_the_run_and_run_again_resumes(tmp_path):
    """An interrupted run in a Jupyter kernel says what is stored (one line), leaves the
    store whole and the notebook's client usable; run() again computes only the rest."""
    from jupyter_client.manager import start_new_kernel

    manager, kernel = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    results = tmp_path / "naps" / "results"

    def run_cell(code: str, timeout: float = 120) -> tuple[str, str]:
        """The cell's stdout and stderr (and error), once it finished."""
        msg_id = kernel.execute(code)
        out, err = [], []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = kernel.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                (out if content["name"] == "stdout" else err).append(content["text"])
            elif kind == "error":
                err.append(f"{content['ename']}: {content['evalue']}")
            elif kind == "execute_result":
                out.append(content["data"]["text/plain"])
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(out), "".join(err)
        raise AssertionError(f"the cell did not finish: {code}")

    try:
        run_cell(
            f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
            "from distributed import Client, LocalCluster\n"
            "from pipeline import Study\n"
            "from tests.helpers.nap_driver import nap_overrides, register_nap\n"
            "register_nap()\n"
            "cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False,"
            ' dashboard_address=":0")\n'
            "client = Client(cluster)\n"
            f"study = Study('paper', nap_overrides(12, 0.4)[1:] + ['run.batch_size=1'],"
            f" outputs={str(tmp_path)!r})\n"
        )
        msg_id = kernel.execute("rows = study.run(client=client, progress=False)")
        deadline = time.monotonic() + 120
        while not (results.is_dir() and len(list(results.rglob("*.parquet"))) >= 2):
            assert time.monotonic() < deadline, "no batch was stored"
            time.sleep(0.1)
        manager.interrupt_kernel()
        err = []
        while True:
            msg = kernel.get_iopub_msg(timeout=120)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream" and msg["content"]["name"] == "stderr":
                err.append(msg["content"]["text"])
            if msg["msg_type"] == "error":
                err.append(msg["content"]["ename"])
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        said = "".join(err)
        assert "stopped (Ctrl-C): " in said and "call run() again" in said, said
        assert "KeyboardInterrupt" in said
        out, _ = run_cell("print(client.submit(sum, [1, 2]).result())")
        assert out.strip() == "3"
        out, err_text = run_cell(
            "rows = study.run(client=client, progress=False)\n"
            "print(len(rows), sorted(rows['i']) == list(range(12)), study.last_run.skipped)"
        )
        count, complete, skipped = out.strip().splitlines()[-1].split()
        assert (count, complete) == ("12", "True") and 0 < int(skipped) < 12, out + err_text
    finally:
        run_cell("client.close(); cluster.close()")
        kernel.stop_channels()
        manager.shutdown_kernel(now=True)


CALLERS_MATPLOTLIB = """
import json, sys
import matplotlib
matplotlib.use("svg")  # a backend of the caller's, not guesslab's Agg
matplotlib.rcParams.update({"font.size": 7.0, "axes.grid": True, "lines.linewidth": 3.0})
before, backend = dict(matplotlib.rcParams), matplotlib.get_backend()
from pipeline import Study
study = Study("paper", ["study.grid.deck=[[3,3,3]]", "cluster=sync"], outputs=sys.argv[1])
study.run(progress=False)
from pipeline.outputs.summary import write_summary
from pipeline.storage.study_folder import StudyFolder
write_summary(StudyFolder(study.folder), study.config.study)  # the summary and the report once more
after = dict(matplotlib.rcParams)
changed = sorted(k for k in before if before[k] != after[k])
print(json.dumps({"changed": changed, "backend": [backend, matplotlib.get_backend()],
                  "pyplot": "matplotlib.pyplot" in sys.modules,
                  "plots": len(list((study.folder / "summary").glob("*.png")))}))
"""


def test_a_run_leaves_the_callers_matplotlib_as_it_found_it(tmp_path):
    """Study.run (its tasks, summary and report) and the summary written again change none
    of the caller's rcParams and not its backend, and never load pyplot, while the summary
    still draws its plots."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", CALLERS_MATPLOTLIB, str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["changed"] == []
    assert seen["backend"] == ["svg", "svg"]
    assert not seen["pyplot"]
    assert seen["plots"] > 0


def test_a_run_with_failed_tasks_warns_naming_each_and_returns_the_rows(tmp_path):
    """Study.run of tasks that fail returns their rows and warns (TasksFailed) with each
    failed task's strategy, parameters and first error line."""
    from pipeline.study import TasksFailed

    limit = "run.task_timeout_s=0.000001"  # every task runs past its time limit
    study = Study("paper", ["study.grid.deck=[[3,3,3]]", "cluster=sync", limit], tmp_path)
    with pytest.warns(TasksFailed) as caught:
        rows = study.run(progress=False)
    assert len(rows) == 2 and (rows["status"] == "error").all()
    (warning,) = caught
    lines = str(warning.message).splitlines()
    assert lines[0] == "2 tasks failed:", lines
    assert sorted(line.split()[0] for line in lines[1:3]) == sorted(rows["strategy"])
    for line in lines[1:3]:
        assert "(deck=3,3,3, feedback=partial" in line, line
        assert "task ran past its time limit run.task_timeout_s=1e-06" in line, line
    assert lines[3].startswith("every failed task's row (status 'error') is in "), lines
