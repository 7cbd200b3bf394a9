"""A search over a strategy's parameters (``hydra/sweeper=guesslab``, pipeline/search/):
Optuna asks, the study's pipeline solves and stores, Optuna is told.

On (3,3,3) with yes/no feedback the entropy-weighted info strategy plays optimally for gamma
in about [0.12, 0.2] (Gural, Simper & So 2019, *Information Theory in a Card-Guessing Game*,
figure 3; this project's gamma_sweep study): a search over gamma in [0, 1] finds a gamma
where info's exact value is the optimum, 2383/560.
"""

from __future__ import annotations

import importlib
import json
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from pipeline.ctrl_c import SearchStopped
from pipeline.errors import StudyError
from pipeline.search.result import SearchResult
from pipeline.search.runner import SearchSettings, run_search
from pipeline.search.space import split_sweeps
from pipeline.storage.store import load_results
from solvers import solve
from tests.helpers.commands import cli, cli_run_in_process
from tests.helpers.own_strategy_source import SWITCH_AFTER_NO
from tests.helpers.repository import ROOT
from tests.helpers.runs import compose_config

GAMMA = "study.strategies.info.gamma=interval(0,1)"
ON_333 = ("study=gamma_sweep", "study.grid.deck=[[3,3,3]]", "study.objective.relative_to=null")


def settings(*sweeps: str, n_trials: int = 40, n_jobs: int = 4, name: str | None = None):
    _, parsed = split_sweeps(list(sweeps or [GAMMA]))
    return SearchSettings(n_trials, n_jobs, "tpe", 0, name, parsed)


def config(outputs: Path, *overrides: str, cluster: str = "sync"):
    return compose_config(f"paths.outputs={outputs}", f"cluster={cluster}", *ON_333, *overrides)


@dataclass
class GammaSearch:
    """The search over gamma on (3,3,3), 40 trials 4 at a time, stopped by Ctrl-C after its
    second batch and run again to its end, then run once more on the same folder."""

    outputs: Path
    stop_line: str  # what the stopped search said
    stopped_rows: int  # the rows stored when it stopped
    first: SearchResult  # the search run on to its end
    again: SearchResult  # and run again


@pytest.fixture(scope="module")
def gamma_search(tmp_path_factory) -> GammaSearch:
    outputs = tmp_path_factory.mktemp("search") / "outputs"
    said: list[str] = []

    def stop_after_two(line: str) -> None:
        said.append(line)
        if sum(s.startswith("  trials") for s in said) == 2:
            raise KeyboardInterrupt

    with pytest.raises(SearchStopped) as stop:
        run_search(config(outputs), settings(), log=stop_after_two)
    stopped_rows = len(load_results(outputs / "gamma_sweep"))
    first = run_search(config(outputs), settings(), log=lambda _: None)
    again = run_search(config(outputs), settings(), log=lambda _: None)
    return GammaSearch(outputs, stop.value.line, stopped_rows, first, again)


def test_a_search_over_gamma_finds_where_info_plays_optimally_on_333(gamma_search):
    result = gamma_search.first
    best = result.best
    assert len(result.trials) == 40
    assert best.exact == Fraction(2383, 560)  # the optimum, exactly
    assert result.reference_exact == Fraction(2383, 560) and result.reference_name == "optimal"
    assert 0.1 <= best.params["gamma"] <= 0.25  # inside the grid's interval, give or take


def test_the_same_search_again_solves_nothing_and_finds_the_same(gamma_search):
    first, again = gamma_search.first, gamma_search.again
    # each trial's task and the optimum solved once, between the stopped run and the one after
    distinct = len({t.params["gamma"] for t in first.trials}) + 1  # and the optimum
    assert gamma_search.stopped_rows + first.computed == distinct
    assert again.computed == 0
    assert again.best.params == first.best.params and again.best.exact == first.best.exact


def test_a_stopped_search_goes_on_and_solves_no_task_twice(gamma_search):
    """Ctrl-C after the second batch: the line says what is stored (the 8 trials told and
    the optimum); the same search again finishes the trials, and the two runs together
    solve each task once."""
    assert "after 8 trial(s) told of 40" in gamma_search.stop_line
    assert "run the same command again to go on" in gamma_search.stop_line
    assert gamma_search.stopped_rows == 9
    rows = load_results(gamma_search.outputs / "gamma_sweep")
    distinct = len({t.params["gamma"] for t in gamma_search.first.trials}) + 1  # and the optimum
    assert len(rows) == distinct and rows["task_id"].is_unique


def test_a_search_gone_on_asks_new_values_not_its_first_trials_again(gamma_search):
    """The search stopped after 8 trials and went on: its sampler, seeded from the search's
    seed and the trials asked, draws values of its own, so the 40 trials ask 40 gammas (a
    sampler seeded afresh would ask the first trials' values again)."""
    gammas = [t.params["gamma"] for t in gamma_search.first.trials]
    assert len(gammas) == 40 and len(set(gammas)) == 40


def test_each_trial_is_stored_as_rows_of_the_study_naming_its_search_and_trial(gamma_search):
    """Each trial's task is one row of the study's store; load_results gives each row the
    search's name and the number of the first trial that asked for its task (a later trial
    asking it again finds it stored); the optimum, the search's reference, no trial."""
    result = gamma_search.first
    rows = load_results(gamma_search.outputs / "gamma_sweep")
    info = rows[rows["strategy"] == "info"]
    assert info["task_id"].is_unique and len(info) == len(
        {t.params["gamma"] for t in result.trials}
    )
    assert (rows["status"] == "ok").all()
    assert (rows["search"] == "info-gamma").all()
    trial_of: dict[float, int] = {}
    for trial in sorted(result.trials, key=lambda t: t.number):
        trial_of.setdefault(trial.params["gamma"], trial.number)
    assert info["trial"].tolist() == [trial_of[g] for g in info["gamma"]]
    assert rows.loc[rows["strategy"] == "optimal", "trial"].isna().all()


def test_describe_names_the_search_that_wrote_each_run_s_files(gamma_search, capsys):
    """``python -m pipeline.describe`` of the study folder: each run of the search's batches
    is listed with the search that ran it."""
    from pipeline.describe import main

    assert main([str(gamma_search.outputs / "gamma_sweep")]) == 0
    runs = capsys.readouterr().out.split("\nruns (")[1].split("\n\n")[0].splitlines()[1:]
    listed = [line for line in runs if not line.startswith("  (")]
    assert listed and all(line.endswith("; search info-gamma") for line in listed), runs


def test_the_search_page_and_its_plot_show_the_best_beside_the_optimum(gamma_search):
    outputs, result = gamma_search.outputs, gamma_search.first
    folder = outputs / "gamma_sweep" / "search"
    page = (folder / "info-gamma.md").read_text()
    assert "2383/560" in page and "gap 0" in page
    assert (folder / "info-gamma.journal").stat().st_size > 0
    assert result.page == folder / "info-gamma.md"
    summary = (outputs / "gamma_sweep" / "summary.md").read_text()
    top = summary.index("## Searches")
    assert top < summary.index("## Family") and "2383/560" in summary[top:]
    assert "](search/info-gamma-gamma.png)" in summary
    assert (folder / "info-gamma-gamma.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = (outputs / "gamma_sweep" / "report.html").read_text()
    top = report.index("<h2>Searches</h2>")
    assert "2383/560" in report[top:] and "info-gamma: expected_score against gamma" in report


def test_a_search_headline_that_is_no_search_s_is_left_out_and_named(tmp_path):
    """A file in search/ that is not what a search writes (a link to /dev/zero, text that is
    not JSON, JSON of another shape) is named and left out of the summary, never read
    through or trusted."""
    from pipeline.outputs.searches import searches_section
    from pipeline.storage.study_folder import StudyFolder

    folder = tmp_path / "search"
    folder.mkdir()
    (folder / "zero.json").symlink_to("/dev/zero")
    (folder / "text.json").write_text("not json")
    (folder / "shape.json").write_text('{"name": 5}')
    lines = "\n".join(searches_section(StudyFolder(tmp_path)))
    assert "`search/zero.json`: left out (not a search's headline file)" in lines
    assert "`search/text.json`: left out" in lines
    assert "`search/shape.json`: left out (no name, n_trials, page, plots, params" in lines


def test_a_search_over_two_parameters_solves_each_batch_as_one_results_file(tmp_path):
    """With two searched parameters (a grid part a trial), the trials asked at once are one
    batch of tasks: after the first batch (the optimum and info's first task, each alone,
    to learn the time a task), each batch's run writes one results file; each trial is
    stored once."""
    import json
    from collections import Counter

    import pyarrow.parquet as pq

    from pipeline.storage.store import result_files
    from pipeline.storage.store_layout import METADATA_KEY

    result = run_search(
        config(tmp_path),
        settings(GAMMA, "study.strategies.info.entropy_r=interval(0.5,2)", n_trials=12),
        log=lambda _: None,
    )
    folder = tmp_path / "gamma_sweep"
    runs = Counter(
        json.loads(pq.read_schema(path).metadata[METADATA_KEY])["run"]
        for path in result_files(folder / "results")
    )
    first, *later = (runs[run.stem] for run in sorted((folder / "runs").glob("*.yaml")))
    assert len(later) == 2 and later == [1, 1] and first <= 3
    rows = load_results(folder)
    info = rows[rows["strategy"] == "info"]
    trials = {(t.params["gamma"], t.params["entropy_r"]) for t in result.trials}
    assert len(result.trials) == 12 and info["task_id"].is_unique and len(info) == len(trials)
    assert result.computed == len(trials) + 1  # and the optimum


@pytest.mark.slow
def test_parallel_trials_on_a_local_cluster_store_each_trial_once(tmp_path):
    """On a LocalCluster of 2 workers (started at once), each trial's task is stored once;
    the trials asked (each batch asked while the one before solves) are those of the same
    seed on 2 workers whose cluster never starts (every call run in the driver): where the
    calls run and how long they take do not change what the sampler asks."""
    result = run_search(
        config(tmp_path / "a", "cluster.n_workers=2", "cluster.start_after_s=0", cluster="local"),
        settings(n_trials=12, n_jobs=4),
        log=lambda _: None,
    )
    rows = load_results(tmp_path / "a" / "gamma_sweep")
    assert len(result.trials) == 12 and rows["task_id"].is_unique
    assert len(rows) == len({t.params["gamma"] for t in result.trials}) + 1
    here = run_search(
        config(tmp_path / "b", "cluster.n_workers=2", "cluster.start_after_s=1e6", cluster="local"),
        settings(n_trials=12, n_jobs=4),
        log=lambda _: None,
    )
    assert [t.params for t in here.trials] == [t.params for t in result.trials]


def test_a_search_asking_ahead_stopped_and_gone_on_solves_each_task_once(tmp_path):
    """With 2 workers the next batch is asked while one solves: Ctrl-C after the second
    batch leaves 8 trials told and the next batch asked, not told; the same search again
    tells those and the rest, and the two runs solve each task once (every call here in the
    driver: the LocalCluster is never worth starting)."""
    cfg = config(tmp_path, "cluster.n_workers=2", "cluster.start_after_s=1e6", cluster="local")
    said: list[str] = []

    def stop_after_two(line: str) -> None:
        said.append(line)
        if sum(s.startswith("  trials") for s in said) == 2:
            raise KeyboardInterrupt

    with pytest.raises(SearchStopped) as stop:
        run_search(cfg, settings(n_trials=16), log=stop_after_two)
    assert "after 8 trial(s) told of 16" in stop.value.line
    journal = (tmp_path / "gamma_sweep" / "search" / "info-gamma.journal").read_text()
    assert journal.count('"op_code":4,') == 12  # 12 trials asked: 8 told, 4 asked ahead
    stored = len(load_results(tmp_path / "gamma_sweep"))
    result = run_search(cfg, settings(n_trials=16), log=lambda _: None)
    rows = load_results(tmp_path / "gamma_sweep")
    assert len(result.trials) == 16 and rows["task_id"].is_unique
    assert len(rows) == len({t.params["gamma"] for t in result.trials}) + 1  # and the optimum
    assert stored + result.computed == len(rows)


def test_an_own_strategy_s_constructor_argument_is_searched(tmp_path, monkeypatch):
    """A ``_target_`` strategy's constructor argument is searched as a built-in's
    parameter is, and its rows name the search and the first trial that asked for each."""
    (tmp_path / "searched_strategy.py").write_text(SWITCH_AFTER_NO)
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    sys.modules.pop("searched_strategy", None)
    cfg = compose_config(
        f"paths.outputs={tmp_path / 'outputs'}",
        "cluster=sync",
        "study=paper",
        "+study.strategies.switch._target_=searched_strategy.SwitchAfterNo",
        "+study.strategies.switch.patience=[1]",
        "+study.objective.strategy=switch",
    )
    result = run_search(
        cfg,
        settings("study.strategies.switch.patience=range(1,6)", n_trials=6, n_jobs=3),
        log=lambda _: None,
    )
    assert {t.params["patience"] for t in result.trials} <= {1, 2, 3, 4, 5}
    assert result.best.value <= result.reference  # the optimum bounds every strategy
    assert result.reference_exact == Fraction(2383, 560)
    # 6 trials over 5 values: a task asked twice, stored once, naming the first trial
    first_asked: dict[int, int] = {}
    for trial in sorted(result.trials, key=lambda t: t.number):
        first_asked.setdefault(trial.params["patience"], trial.number)
    rows = load_results(tmp_path / "outputs" / "paper")
    mine = rows[rows["strategy"] == "switch"]
    assert mine["task_id"].is_unique and len(mine) == len(first_asked) < len(result.trials)
    assert (mine["search"] == "switch-patience").all()
    patience = [json.loads(p)["patience"] for p in mine["strategy_params"]]
    assert mine["trial"].tolist() == [first_asked[p] for p in patience]


@pytest.mark.parametrize(
    ("overrides", "sweep", "said"),
    [
        (["study=paper"], GAMMA, "study.objective: study 'paper' has no objective"),
        (["study.objective.strategy=nope"], GAMMA, "study.objective.strategy='nope': not a"),
        (["study.objective.column=first_moves"], GAMMA, "not numeric (string)"),
        (["study.objective.column=score"], GAMMA, "study.objective.column='score': not a column"),
        ([], "study.strategies.info.tie_break=interval(0,1)", "not numbers"),
        ([], "study.strategies.greedy.tie_break=choice(lowest)", "the objective's strategy"),
        ([], "study.grid.deck=interval(0,1)", "the objective strategy's"),
        ([], "study.strategies.info.gamma=interval(-1,1)", "an end of the search space"),
        (["hydra.sweeper.n_trials=0"], GAMMA, "hydra.sweeper.n_trials=0: must be a whole"),
        (["hydra.sweeper.sampler=nope"], GAMMA, "hydra.sweeper.sampler='nope': valid"),
    ],
)
def test_a_search_that_cannot_run_is_refused_in_one_line_before_any_work(
    tmp_path, monkeypatch, capsys, overrides, sweep, said
):
    """Each refused search: exit 2, one line naming the key and the value, nothing written
    (the command run in this process; the process boundary is held by the command-line
    search below)."""
    monkeypatch.chdir(tmp_path)
    out = cli_run_in_process(
        monkeypatch,
        capsys,
        "-m",
        "hydra/sweeper=guesslab",
        f"paths.outputs={tmp_path}",
        "cluster=sync",
        *ON_333[:2],
        *overrides,
        sweep,
    )
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and said in lines[0], lines
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_command_line_search_says_the_best_and_the_sweeper_is_listed(
    tmp_path, monkeypatch, capsys
):
    """The search as a user's command (a process of its own) ends with the best and the
    page's path; ``--hydra-help`` (run in this process) lists the sweeper."""
    out = cli(
        "-m",
        "hydra/sweeper=guesslab",
        f"paths.outputs={tmp_path}",
        "cluster=sync",
        *ON_333,
        GAMMA,
        "hydra.sweeper.n_trials=4",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()
    assert last[-2].startswith("search info-gamma: best ") and "optimal 4.25535714286" in last[-2]
    assert "4 trials" in last[-1] and last[-1].endswith("info-gamma.md")
    monkeypatch.chdir(tmp_path)
    helped = cli_run_in_process(monkeypatch, capsys, "--hydra-help")
    assert helped.returncode == 0, helped.stderr
    assert "guesslab" in helped.stdout.split("hydra/sweeper:")[1].splitlines()[0]


def test_a_search_without_parameters_is_refused():
    with pytest.raises(StudyError, match="a search needs a parameter to search"):
        from pipeline.search.space import search_space

        search_space({}, "info", {})


SEARCHES = yaml.safe_load((ROOT / "docs" / "data" / "searches.yaml").read_text())
ENTROPY_GRID_DECKS = ([3, 3, 3], [4, 3, 2], [2, 2, 2, 2])


def exact_score(deck: list[int], strategy: str = "optimal", **params) -> Fraction:
    task = {"family": "card_guessing", "deck": deck, "strategy": strategy, **params}
    if strategy == "info":
        task.update(tie_break="lowest", log_base=2.0)
    return Fraction(solve(task)[0]["expected_score_exact"])


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_what_each_published_search_found_is_the_solver_s_value(name):
    """docs/data/searches.yaml (quoted by the entropy page): each search's best trial,
    recomputed from the solver: its exact value (one deck), or its ratio to the optimum on
    its deck, or the smallest such ratio over entropy_grid's three decks."""
    found = SEARCHES[name]
    params = {
        "entropy_r": float(found["entropy_r"]),
        "entropy_t": float(found["entropy_t"]),
        "gamma": found["best_gamma"],
    }
    if "best_exact" in found:  # one deck, the value itself
        deck = found["deck"]
        assert exact_score(deck, "info", **params) == Fraction(found["best_exact"])
        assert exact_score(deck) > Fraction(found["best_exact"])  # below the optimum
        return
    decks = [found["deck"]] if "deck" in found else ENTROPY_GRID_DECKS
    ratios = [exact_score(d, "info", **params) / exact_score(d) for d in decks]
    assert min(ratios) == Fraction(found["best_ratio"]), ratios


def test_the_journal_is_written_a_batch_at_a_time_and_read_back_as_optuna_writes_it(tmp_path):
    """Optuna's logs are held until the flush (read back from memory meanwhile: the study
    sees its trials), then written in one append; the file replays, with Optuna's own file
    backend, to the same trials."""
    import optuna
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    from pipeline.search.batched_journal import BatchedJournal

    path = tmp_path / "s.journal"
    writer = BatchedJournal(path)
    appends = []
    append = writer.file.append_logs
    writer.file.append_logs = lambda logs: (appends.append(len(logs)), append(logs))
    space = {"gamma": optuna.distributions.FloatDistribution(0.0, 1.0)}
    study = optuna.create_study(study_name="s", storage=JournalStorage(writer))
    asked = [study.ask(space) for _ in range(3)]
    assert len(study.get_trials()) == 3 and path.read_bytes() == b""
    writer.flush()
    for trial in asked:
        study.tell(trial.number, trial.params["gamma"])
    writer.flush()
    assert len(appends) == 2 and not writer.pending
    again = optuna.load_study(study_name="s", storage=JournalStorage(JournalFileBackend(str(path))))
    assert [(t.params, t.value) for t in again.get_trials()] == [
        (t.params, t.value) for t in study.get_trials()
    ]
    assert BatchedJournal(path).in_file == len(path.read_bytes().splitlines())


def test_a_second_search_of_the_same_name_on_the_same_folder_is_refused(tmp_path):
    """One search writes a journal at a time: another of the same name is refused in one
    line naming the setting, the first left as it was."""
    from pipeline.search.batched_journal import held_journal

    journal = tmp_path / "s.journal"
    first = held_journal(tmp_path, "s", journal)
    with pytest.raises(StudyError, match=r"hydra.sweeper.name='s': another search of this"):
        held_journal(tmp_path, "s", journal)
    first.close()
    held_journal(tmp_path, "s", journal).close()  # free again once the first has ended
