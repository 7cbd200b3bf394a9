"""Strategies of one's own (solvers/own_strategy.py, solvers/card_guessing/tasks/own_tasks.py):
a class of the user's module named by ``_target_`` in a study, evaluated exactly beside the built-in
strategies, its arguments grid axes, its code part of every task id, its faults error rows.

The built-in count tracker and greedy (Gural, Simper & So 2019, sections 5 and 6) written as
strategies of one's own give the built-ins' exact rationals; brute force over every order of
small decks agrees under each feedback model; Monte Carlo agrees within 3 standard errors.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import duckdb
import pytest

from pipeline.storage.store import load_results
from solvers import TaskError, solve, validate
from solvers.own_strategy import StrategyError, build
from tests.helpers.commands import cli_run_in_process, pipeline_command
from tests.helpers.own_strategy_source import SWITCH_AFTER_NO

STRATEGIES = '''
import functools
import itertools
import os
import re
import time
from fractions import Fraction


class CountTracker:
    """The proportional count tracker, estimates clipped at 0, the largest estimate among
    the types with cards not yet confirmed, ties to the lowest type."""

    def start(self, deck):
        return tuple(Fraction(c) for c in deck), tuple(deck)

    def guess(self, belief):
        est, left = belief
        live = [i for i in range(len(left)) if left[i] > 0]
        best = max(est[i] for i in live)
        return min(i for i in live if est[i] == best)

    def update(self, belief, guess, yes):
        est, left = map(list, belief)
        if yes:
            est[guess] -= 1
            left[guess] -= 1
        else:
            others = sum(e for i, e in enumerate(est) if i != guess)
            if others:
                est = [e if i == guess else e - e / others for i, e in enumerate(est)]
        return tuple(max(e, Fraction(0)) for e in est), tuple(left)


@functools.cache
def orders(deck):
    cards = [t for t, c in enumerate(deck) for _ in range(c)]
    return sorted(set(itertools.permutations(cards)))


class Greedy:
    """Greedy by brute force: the type most often next among the orders consistent with
    every answer so far (ties to the lowest type)."""

    def start(self, deck):
        return deck, ()

    def guess(self, belief):
        deck, history = belief
        k = len(history)
        seen = [
            o for o in orders(deck) if all((o[i] == g) == y for i, (g, y) in enumerate(history))
        ]
        nexts = [sum(o[k] == t for o in seen) for t in range(len(deck))]
        return nexts.index(max(nexts))

    def update(self, belief, guess, yes):
        return belief[0], belief[1] + ((guess, yes),)


{SWITCH_AFTER_NO}

class PatienceNamed(SwitchAfterNo):
    def __init__(self, patience):
        super().__init__(patience)


class MostLeft:
    """Complete feedback: the type with the most cards left, ties to the highest."""

    feedback = "complete"

    def start(self, deck):
        return tuple(deck)

    def guess(self, left):
        return max(range(len(left)), key=lambda i: (left[i], i))

    def update(self, left, guess, card):
        return left[:card] + (left[card] - 1,) + left[card + 1 :]


class Cycle:
    """No feedback: types named in turn."""

    feedback = "none"

    def start(self, deck):
        return 0, len(deck)

    def guess(self, belief):
        return belief[0] % belief[1]

    def update(self, belief, guess, answer):
        return belief[0] + 1, belief[1]


NotAClass = 5


class NoUpdate:
    def start(self, deck):
        return 0

    def guess(self, belief):
        return 0


class OutOfRange(NoUpdate):
    def guess(self, belief):
        return 7

    def update(self, belief, guess, yes):
        return belief


class AlwaysFirst(OutOfRange):
    def guess(self, belief):
        return 0


class Raises(OutOfRange):
    def start(self, deck):
        return 1

    def guess(self, belief):
        return 1 // belief

    def update(self, belief, guess, yes):
        return belief - 1


class Unhashable(OutOfRange):
    def start(self, deck):
        return [0]


class Slow(OutOfRange):
    def guess(self, belief):
        time.sleep(30)
        return 0


class WhereBuilt(CountTracker):
    """The count tracker, leaving a file named for the process that built it."""

    def __init__(self, folder=""):
        if folder:
            open(os.path.join(folder, f"built-by-{os.getpid()}"), "w").close()
'''.replace("{SWITCH_AFTER_NO}", SWITCH_AFTER_NO)


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A user's folder: a module of strategies (a name of its own: each test imports it
    afresh) on sys.path, and a studies folder."""
    name = f"mystrat_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(STRATEGIES))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "studies" / "study").mkdir(parents=True)
    return tmp_path, name


def own(module: str, cls: str, deck, **params) -> dict:
    """A card-guessing task of the strategy of one's own ``module.cls`` named ``mine``."""
    task = {"family": "card_guessing", "deck": list(deck), "strategy": "mine"}
    return {**task, "strategy_target": f"{module}.{cls}", "strategy_params": params}


def brute_force(deck, strategy, feedback: str) -> Fraction:
    """The mean score of a strategy instance over every distinct order of ``deck``."""
    cards = [t for t, c in enumerate(deck) for _ in range(c)]
    scores = []
    for order in sorted(set(itertools.permutations(cards))):
        belief, score = strategy.start(tuple(deck)), 0
        for card in order:
            g = strategy.guess(belief)
            score += g == card
            answer = {"partial": g == card, "complete": card, "none": None}[feedback]
            belief = strategy.update(belief, g, answer)
        scores.append(score)
    return Fraction(sum(scores), len(scores))


@pytest.mark.parametrize(("cls", "builtin", "value"), [
    ("CountTracker", "count_tracker", "7121/1680"), ("Greedy", "greedy", "475/112"),
])  # fmt: skip
def test_a_builtin_rewritten_as_one_s_own_gives_its_exact_rational(lab, cls, builtin, value):
    """The count tracker and greedy as strategies of one's own give the built-ins' exact
    expected scores on (3,3,3) and the same score distributions."""
    _, module = lab
    mine = solve(own(module, cls, [3, 3, 3]))[0]
    theirs = solve({"family": "card_guessing", "deck": [3, 3, 3], "strategy": builtin})[0]
    assert mine["expected_score_exact"] == theirs["expected_score_exact"] == value
    assert mine["score_variance_exact"] == theirs["score_variance_exact"]
    assert mine["score_pmf"] == pytest.approx(theirs["score_pmf"], abs=1e-15)
    assert mine["strategy"] == "mine" and mine["method"] == "exact"


@pytest.mark.parametrize("deck", [[2, 2, 1], [3, 2], [2, 1, 1, 1]])
@pytest.mark.parametrize(("cls", "feedback", "params"), [
    ("SwitchAfterNo", "partial", {"patience": 1}), ("CountTracker", "partial", {}),
    ("MostLeft", "complete", {}), ("Cycle", "none", {}),
])  # fmt: skip
def test_the_exact_value_is_brute_force_over_every_order(lab, deck, cls, feedback, params):
    """Each feedback model's exact value of a strategy of one's own is the mean of its
    scores over every distinct order of the deck."""
    _, module = lab
    row = solve({**own(module, cls, deck, **params), "feedback": feedback})[0]
    strategy = getattr(sys.modules[module], cls)(**params)
    assert Fraction(row["expected_score_exact"]) == brute_force(deck, strategy, feedback)
    assert sum(row["score_pmf"]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("cls", "feedback"), [("SwitchAfterNo", "partial"), ("MostLeft", "complete")]
)
def test_monte_carlo_agrees_with_the_exact_value_within_3_standard_errors(lab, cls, feedback):
    """Seeded Monte Carlo of a strategy of one's own: its mean within 3 standard errors of
    the exact value, and the same rows on a second run (the seed is the task's id)."""
    _, module = lab
    task = {**own(module, cls, [3, 3, 2]), "feedback": feedback}
    exact = solve(task)[0]["expected_score"]
    mc = {**task, "method": "monte_carlo", "n_games": 4000}
    row = solve(mc)[0]
    assert abs(row["expected_score"] - exact) < 3 * row["std_error"]
    assert solve(mc)[0]["expected_score"] == row["expected_score"]


def test_the_code_is_part_of_the_task_and_a_worker_with_other_code_refuses_it(lab):
    """A task of one's own strategy names its class, its arguments as JSON and its code's
    fingerprint; a process whose copy of the file differs builds nothing (StrategyError)."""
    folder, module = lab
    task = validate(own(module, "SwitchAfterNo", [3, 3], patience=2))
    assert task["strategy_params"] == '{"patience":2}' and len(task["strategy_code"]) == 16
    build(task)
    with pytest.raises(StrategyError, match="every worker must import the same file"):
        build({**task, "strategy_code": "0" * 16})
    with pytest.raises(TaskError, match="the file was edited"):
        validate({**own(module, "SwitchAfterNo", [3, 3]), "strategy_code": "0" * 16})


@pytest.mark.parametrize(("change", "words"), [
    ({"strategy": "greedy"}, "is a built-in strategy's name"),
    ({"strategy": "two words"}, "a strategy of one's own is named by"),
    ({"tie_break": "lowest"}, "does not apply to strategies of one's own"),
    ({"method": "float"}, "a strategy of one's own runs exact or monte_carlo here"),
    ({"feedback": "complete"}, "is written for feedback=partial"),
    ({"deck": [9, 9, 9, 9, 9]}, "too large for the exact solver"),
])  # fmt: skip
def test_a_task_the_game_cannot_evaluate_as_asked_is_refused(lab, change, words):
    """What does not fit a strategy of one's own is refused by validate, naming why."""
    _, module = lab
    with pytest.raises(TaskError, match=words):
        validate({**own(module, "SwitchAfterNo", [3, 3]), **change})


def study_file(folder: Path, strategies: str, grid: str = "deck: [[3, 3, 3]]") -> Path:
    """``<folder>/studies/study/lab.yaml``: a card-guessing study with these strategies."""
    path = folder / "studies" / "study" / "lab.yaml"
    text = f"name: lab\nfamily: card_guessing\ngrid:\n  {grid}\nstrategies:\n{strategies}"
    path.write_text(textwrap.dedent(text))
    return path


def run_lab(monkeypatch, capsys, folder: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m pipeline --config-dir <folder>/studies study=lab`` in this process."""
    outputs = folder / "out"
    config = ("--config-dir", str(folder / "studies"), "study=lab", f"paths.outputs={outputs}")
    return cli_run_in_process(
        monkeypatch, capsys, *config, "cluster=sync", "run.progress=false", *args
    )


def test_a_grid_over_an_own_parameter_stores_it_as_json_beside_the_optimum(
    lab, monkeypatch, capsys
):
    """``_target_`` with a list per argument: one task per value, the study key as the
    strategy in every row, the arguments in the JSON column strategy_params (read by pandas
    and DuckDB), and the summary's gaps to the optimum and to greedy."""
    folder, module = lab
    study_file(folder, f"""\
      optimal: {{}}
      greedy: {{}}
      switch:
        _target_: {module}.SwitchAfterNo
        patience: [1, 2]
    """)  # fmt: skip
    done = run_lab(monkeypatch, capsys, folder)
    assert done.returncode == 0, done.stderr
    rows = load_results(folder / "out" / "lab" / "results")
    switch = rows[rows["strategy"] == "switch"]
    assert sorted(json.loads(p)["patience"] for p in switch["strategy_params"]) == [1, 2]
    assert set(switch["strategy_target"]) == {f"{module}.SwitchAfterNo"}
    files = str(folder / "out" / "lab" / "results" / "**" / "*.parquet")
    found = duckdb.sql(
        f"SELECT strategy_params->>'patience' AS p, expected_score_exact "
        f"FROM read_parquet('{files}') WHERE strategy = 'switch' ORDER BY p"
    ).fetchall()
    for (patience, value), row in zip(found, switch.sort_values("strategy_params").itertuples(),
                                      strict=True):  # fmt: skip
        assert int(patience) == json.loads(row.strategy_params)["patience"]
        assert value == row.expected_score_exact
    summary = (folder / "out" / "lab" / "summary.md").read_text()
    assert "switch (patience=1)" in summary and "switch (patience=2)" in summary
    assert "below_optimal" in summary and "above_greedy" in summary


def test_an_edited_module_is_computed_again_and_only_its_rows_are_summarised(
    lab, monkeypatch, capsys
):
    """After an edit to the strategy's module the next run computes its tasks again (the
    built-ins' rows are served from the store); the summary and the report show the new code's
    rows, their first line counts those, and both say how many rows of the other version the
    store keeps."""
    folder, module = lab
    study_file(folder, f"  optimal: {{}}\n  mine:\n    _target_: {module}.MostLeftNo\n",
               grid="deck: [[3, 2, 1]]")  # fmt: skip
    path = folder / f"{module}.py"
    path.write_text(path.read_text() + textwrap.dedent("""
        class MostLeftNo(SwitchAfterNo):
            def __init__(self):
                super().__init__(patience=99)
    """))  # fmt: skip
    first = run_lab(monkeypatch, capsys, folder)
    assert first.returncode == 0 and "2 computed" in first.stdout, first.stdout + first.stderr
    path.write_text(path.read_text().replace("patience=99", "patience=1"))
    second = run_lab(monkeypatch, capsys, folder)
    assert "1 already stored, 1 computed" in second.stdout, second.stdout
    rows = load_results(folder / "out" / "lab" / "results")
    mine = rows[rows["strategy"] == "mine"].sort_values("seconds")
    assert mine["strategy_code"].nunique() == 2
    summary = (folder / "out" / "lab" / "summary.md").read_text()
    new = rows[(rows["strategy"] == "mine")]["expected_score_exact"].tolist()
    shown = [v for v in new if v in summary]
    assert len(shown) == 1, (new, summary)
    kept = f"`mine`: the store keeps 1 row computed by other versions of `{module}.MostLeftNo`'s"
    assert kept in summary, summary
    header = "2 tasks, 2 result rows: 2 ok, 0 failed; "  # what the tables show, then the rest
    rest = "The store keeps 1 more row, computed by other versions of the code and left out here"
    assert header in summary and rest in summary, summary
    report = (folder / "out" / "lab" / "report.html").read_text()
    assert header in report and rest in report
    assert "<code>mine</code>: the store keeps 1 row computed by other versions" in report


@pytest.mark.parametrize(("strategy", "words"), [
    ("nosuch_module_x.Mine", "_target_='nosuch_module_x.Mine': module 'nosuch_module_x' "
                             "cannot be imported (ModuleNotFoundError"),
    ("{module}.Missing", "has no 'Missing'"),
    ("{module}.NotAClass", "is not a class (a int)"),
    ("{module}.NoUpdate", "lacks update(); a card_guessing strategy has start(), guess(), "
                          "update()"),
])  # fmt: skip
def test_a_target_that_cannot_serve_is_refused_at_the_door(
    lab, monkeypatch, capsys, strategy, words
):
    """A ``_target_`` that does not import, names nothing or not a class, or lacks a
    method: exit 2 before any work, one line naming the study key, nothing written."""
    folder, module = lab
    study_file(folder, f"  mine:\n    _target_: {strategy.format(module=module)}\n")
    done = run_lab(monkeypatch, capsys, folder)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: study.strategies.mine") and words in lines[0], lines
    assert not (folder / "out").exists()


@pytest.mark.parametrize(("text", "words"), [
    ("  mine:\n    _target_: {module}.SwitchAfterNo\n    speed: [1]\n",
     "study.strategies.mine: {module}.SwitchAfterNo() does not take the arguments speed=1: "
     "got an unexpected keyword argument 'speed'"),
    ("  mine:\n    _target_: {module}.PatienceNamed\n",
     "study.strategies.mine: {module}.PatienceNamed() cannot be made without arguments: "
     "missing a required argument: 'patience'"),
    ("  greedy:\n    _target_: {module}.SwitchAfterNo\n",
     "study.strategies.greedy: is a built-in strategy's name"),
    ("  mine:\n    _target_: {module}.SwitchAfterNo\n    patience: 2\n",
     "study.strategies.mine.patience=2: an axis must be a list of values"),
])  # fmt: skip
def test_arguments_and_names_that_do_not_fit_are_refused_at_the_door(
    lab, monkeypatch, capsys, text, words
):
    """Arguments the class does not take, a built-in's name, an argument that is not a list
    of values: exit 2, one line naming the study key."""
    folder, module = lab
    study_file(folder, text.format(module=module))
    done = run_lab(monkeypatch, capsys, folder)
    assert done.returncode == 2 and words.format(module=module) in done.stderr, done.stderr
    assert not (folder / "out").exists()


FAULTS = {
    "OutOfRange": "guess(belief=0) at card 1 of 3 returned 7: no such type "
    "(the deck has types 0 to 1)",
    "AlwaysFirst": "guess(belief=0) at card 2 of 3 returned 0: a type with no cards left",
    "Raises": "guess(belief=0) at card 2 of 3 raised ZeroDivisionError: integer division "
    "or modulo by zero",
    "Unhashable": "start((1, 2)) returned a belief that is not hashable (TypeError: "
    "unhashable type: 'list'): [0]",
    "Slow": "task ran past its time limit run.task_timeout_s=1",
}


def test_a_strategy_failing_in_a_move_gives_an_error_row_naming_it(lab, monkeypatch, capsys):
    """A guess naming no type or a type with no cards left, an exception in the user's
    code, a belief that is not hashable, a move slower than ``run.task_timeout_s``: each
    such task's row is an error naming the strategy, the move and the value (or the time
    limit); every other task is stored; exit 1, the terminal naming the first three failed
    tasks (strategy, parameters, error) and counting the rest.  One study holds every
    fault."""
    folder, module = lab
    named = "".join(f"  {cls.lower()}:\n    _target_: {module}.{cls}\n" for cls in FAULTS)
    study_file(folder, "  optimal: {}\n" + named, grid="deck: [[1, 2]]")
    done = run_lab(monkeypatch, capsys, folder, "run.task_timeout_s=1")
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stderr.strip().splitlines()
    assert said[0] == "5 tasks failed:" and said[4] == "  and 2 more", said
    for line in said[1:4]:  # the first three: strategy, parameters, the move's error
        strategy = line.split()[0]
        (cls,) = [c for c in FAULTS if c.lower() == strategy]
        assert "(deck=1,2, feedback=partial" in line and FAULTS[cls] in line, line
    results = folder / "out" / "lab" / "results"
    assert said[5] == f"every failed task's row (status 'error') is in {results} and " + str(
        folder / "out" / "lab" / "summary.md"
    )
    rows = load_results(folder / "out" / "lab" / "results").set_index("strategy")
    assert rows.loc["optimal", "status"] == "ok"
    for cls, words in FAULTS.items():
        error = rows.loc[cls.lower(), "error"]
        assert rows.loc[cls.lower(), "status"] == "error", cls
        assert words in error, (cls, error)
        if cls != "Slow":  # the time limit's row is the pipeline's, not a move's
            assert f"strategy {cls.lower()!r} ({module}.{cls})" in error, error


@pytest.mark.slow
def test_the_workers_of_a_local_cluster_import_the_user_s_module(lab):
    """On ``cluster=local`` (worker processes of their own; started first, where a study this
    small would otherwise be done in the driver) the workers import the module from the
    PYTHONPATH the command was started with, and compute the same rows."""
    folder, module = lab
    marks = folder / "marks"
    marks.mkdir()
    study_file(folder, f"""\
      mine:
        _target_: {module}.WhereBuilt
        folder: ["{marks}"]
    """, grid="deck: [[3, 3, 3], [2, 2, 2], [3, 2, 1]]")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(Path.cwd())])}
    command = pipeline_command(
        "--config-dir", str(folder / "studies"), "study=lab", f"paths.outputs={folder / 'out'}",
        "cluster=local", "cluster.n_workers=2", "cluster.start_after_s=0", "run.progress=false",
    )  # fmt: skip
    driver = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=folder
    )
    _, err = driver.communicate(timeout=300)
    assert driver.returncode == 0, err
    built = {int(p.name.rpartition("-")[2]) for p in marks.iterdir()}
    assert built and driver.pid not in built  # built in the workers, not in the driver
    rows = load_results(folder / "out" / "lab" / "results").set_index("deck")
    assert rows.loc["3,3,3", "expected_score_exact"] == "7121/1680"


PAGE = Path(__file__).resolve().parents[1] / "docs" / "own-strategy.md"


def titled_block(text: str, title: str) -> str:
    """The fenced block of the page headed ``title="..."``."""
    found = re.search(rf'^```\w+ title="{re.escape(title)}"\n(.*?)^```', text, re.S | re.M)
    assert found, f"no block titled {title} in {PAGE.name}"
    return found.group(1)


def page_table(text: str, header: str) -> list[list[str]]:
    """The cells of the page's Markdown table whose header row starts with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_reference_page_s_example_computes_the_values_it_quotes(tmp_path, monkeypatch, capsys):
    """ "Your own strategy": its module and study, written to a folder and run by the page's
    command, give every value its table quotes (exact p/q, the float, the gap to the
    optimum), row for row."""
    text = PAGE.read_text()
    (tmp_path / "mystrat.py").write_text(titled_block(text, "mystrat.py"))
    study = tmp_path / "studies" / "study" / "switch.yaml"
    study.parent.mkdir(parents=True)
    study.write_text(titled_block(text, "studies/study/switch.yaml"))
    command = re.search(r"PYTHONPATH=\. python -m pipeline (.+)", text).group(1).split()
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "mystrat", raising=False)
    done = cli_run_in_process(
        monkeypatch, capsys, *command, "cluster=sync", "run.progress=false",
        f"paths.outputs={tmp_path / 'outputs'}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    from solvers.card_guessing.summary import score_table

    table = score_table(load_results(tmp_path / "outputs" / "switch" / "results"))
    computed = {
        row.label: [
            row.expected_score_exact,
            f"{row.expected_score:.9f}",
            f"{row.below_optimal:.9f}",
        ]
        for row in table.itertuples()
    }
    quoted = {cells[0]: cells[1:] for cells in page_table(text, "| label |")}
    for label, cells in quoted.items():
        exact, value, below = cells
        assert computed[label][0] == exact, label
        assert float(computed[label][1]) == pytest.approx(float(value), abs=1e-9), label
        assert float(computed[label][2]) == pytest.approx(float(below), abs=1e-9), label
    assert set(quoted) == set(computed)


def test_stage_plan_counts_and_prices_own_strategy_tasks(lab, monkeypatch, capsys):
    """``stage=plan`` counts a strategy of one's own's tasks with the others' and prices
    them (the family's model of simple code per state, per card played), writing nothing."""
    folder, module = lab
    study_file(folder, f"  optimal: {{}}\n  mine:\n    _target_: {module}.SwitchAfterNo\n"
               "    patience: [1, 2, 3]\n")  # fmt: skip
    done = run_lab(monkeypatch, capsys, folder, "stage=plan")
    assert done.returncode == 0, done.stderr
    assert "4 tasks (1 grid, 2 strategies)" in done.stdout
    assert "solver time: about" in done.stdout, done.stdout
    assert not (folder / "out").exists()


GAME_EXAMPLES = [
    ("myhighlow.py", "Majority", {"family": "high_low", "ranks": 4, "suits": 2},
     [("p_perfect_exact", "P(perfect game) = {} exactly"),
      ("expected_correct_exact", "and {} right calls")],
     {"strategy": "majority"}, "p_perfect_exact"),
    ("mymastermind.py", "FirstPossible", {"family": "mastermind", "pegs": 3, "colours": 4},
     [("expected_guesses_exact", "it takes {} guesses on average")],
     {"strategy": "first_feasible"}, "expected_guesses_exact"),
    ("myhands.py", "FirstPossible", {"family": "hand_guessing", "cards": 2, "ranks": 4, "suits": 2},
     [("average_guesses_exact", "it takes {} guesses on average")],
     {"strategy": "min_expected_size"}, None),
]  # fmt: skip


@pytest.mark.parametrize(("title", "cls", "game", "quotes", "builtin", "same"), GAME_EXAMPLES,
                         ids=[e[0] for e in GAME_EXAMPLES])  # fmt: skip
def test_the_reference_page_s_example_per_game_gives_the_values_it_quotes(
    tmp_path, monkeypatch, title, cls, game, quotes, builtin, same
):
    """Each game's example class on "Your own strategy", written to a file as a user would,
    gives the values the page quotes for it (and the built-in's, where it says so)."""
    text = " ".join(PAGE.read_text().split())
    module = title.removesuffix(".py")
    (tmp_path / title).write_text(titled_block(PAGE.read_text(), title))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    row = solve({**game, "strategy": "mine", "strategy_target": f"{module}.{cls}"})[0]
    theirs = solve({**game, **builtin})[0]
    for column, words in quotes:
        assert words.format(row[column]) in text, (column, row[column])
    if same:
        assert row[same] == theirs[same]
    else:
        assert f"against {theirs['average_guesses_exact']} for the built-in" in text
