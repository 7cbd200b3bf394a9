"""A summary shows every row it was given, or says how many it shows and where the rest is.

Each family's summary, given more rows than its table lists, names the file (or column)
holding every one; given few, it lists them all (the manual's own study ``mine``, n = 10,
20, 30, showed 10 and 20 only, under "3 values of n").
"""

from __future__ import annotations

import itertools
import re
import textwrap

import pandas as pd

from pipeline.outputs.summary import write_summary
from pipeline.storage.study_folder import StudyFolder
from solvers import solve
from solvers.registry import family_summary
from tests.helpers.commands import cli_run_in_process
from tests.helpers.store_rows import write_rows


def table_column(text: str, column: str) -> list[str]:
    """The cells of ``column`` of every Markdown table in ``text`` that has that column."""
    cells = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        if len(lines) < 2:
            continue
        head = [c.strip() for c in lines[0].strip("|").split("|")]
        if column in head:
            i = head.index(column)
            cells += [line.strip("|").split("|")[i].strip() for line in lines[2:]]
    return cells


def solved(tasks: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([row for task in tasks for row in solve(task)])


def test_the_manuals_own_study_shows_every_value_of_n(tmp_path, monkeypatch, capsys):
    """docs/usage.md's study file ``mine`` (high_low, n = 10, 20, 30), run as the manual
    runs it (the command, in this process): the summary's table of the optimum and its
    table of the other strategies (majority) each list all three."""
    studies = tmp_path / "my-studies" / "study"
    studies.mkdir(parents=True)
    (studies / "mine.yaml").write_text(
        textwrap.dedent(
            """\
            name: mine
            family: high_low
            grid:
              n: [10, 20, 30]
            strategies:
              optimal: {}
              majority: {}
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    out = cli_run_in_process(
        monkeypatch,
        capsys,
        "--config-dir",
        str(tmp_path / "my-studies"),
        "study=mine",
        "cluster=sync",
        f"paths.outputs={tmp_path / 'outputs'}",
        "run.progress=false",
    )
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "outputs" / "mine" / "summary.md").read_text()
    assert "3 values of n" in text
    assert table_column(text, "n") == ["10", "20", "30"] * 2
    assert "The table shows" not in text


def test_a_long_high_low_table_says_what_it_shows_and_where_every_n_is(tmp_path):
    tasks = [{"family": "high_low", "n": n, "strategy": "optimal"} for n in range(2, 61)]
    out_dir = tmp_path / "summary"  # as the summary stage names it (the links are relative)
    out_dir.mkdir()
    text = family_summary("high_low")(solved(tasks), out_dir)
    shown = table_column(text, "n")
    assert shown == ["2", "3", "4", "5", "6", "7", "8", "9", "10", "19", "20", "50", "60"]
    note = f"The table shows {len(shown)} of the 59 values of n; every one is in"
    assert note in text and "`summary/high_low_distinct.parquet`" in text
    assert len(pd.read_parquet(out_dir / "high_low_distinct.parquet")) == 59


def test_no_repeat_lists_every_n_of_a_short_scan_and_names_the_file_of_a_long_one(tmp_path):
    summary = family_summary("no_repeat")
    short = summary(solved([{"family": "no_repeat", "N": n} for n in (4, 5, 6, 20)]), tmp_path)
    assert table_column(short, "N") == ["4", "5", "6", "20"]
    assert "The table shows" not in short
    long = summary(solved([{"family": "no_repeat", "N": n} for n in range(4, 51)]), tmp_path)
    shown = table_column(long, "N")
    assert shown == ["4", "25", "50"]
    assert "The table shows 3 of the 47 values of N; every one is in" in long
    assert "`summary/no_repeat_scan.parquet`" in long
    assert len(pd.read_parquet(tmp_path / "no_repeat_scan.parquet")) == 47


def test_mastermind_shows_every_point_of_a_line_of_r_values(tmp_path):
    """Sharma-Mittal over r at one t (no grid to draw): every point is a line of the table,
    not only the named ones."""
    game = {"family": "mastermind", "pegs": 2, "colours": 3}
    tasks = [{**game, "strategy": "minimax"}]
    tasks += [
        {**game, "strategy": "sharma_mittal", "entropy_r": r, "entropy_t": 1.0}
        for r in (0.5, 1.0, 3.0, 7.0)
    ]
    text = family_summary("mastermind")(solved(tasks), tmp_path)
    labels = table_column(text, "label")
    for expected in ("sharma_mittal(0.5, 1)", "sharma_mittal(3, 1)", "sharma_mittal(7, 1)"):
        assert expected in labels, labels
    assert "sharma_mittal shannon (1, 1)" in labels  # a named point keeps its name
    assert len(labels) == 5


def test_triples_distribution_says_which_rounds_it_shows_and_where_all_are(tmp_path):
    deck = {"family": "triples", "ranks": 4, "suits": 3, "k": 2}
    rows = solved([{**deck, "analysis": "distribution", "start": 1, "rounds": 6}])
    text = family_summary("triples")(rows, tmp_path)
    assert "The table shows 2 of the 7 rounds (the last); every one is in" in text
    assert "`summary/triples_distribution.parquet`" in text


def test_the_failed_tasks_table_says_how_many_it_leaves_out(tmp_path, monkeypatch):
    import pipeline.outputs.summary

    monkeypatch.setattr(pipeline.outputs.summary, "GENERIC_ROWS", 2)
    (ok,) = solve({"family": "card_guessing", "deck": [2, 1], "strategy": "greedy"})
    bad = []
    for i, deck in zip(range(3), itertools.count(3), strict=False):
        bad.append({**ok, "task_id": f"{i:020d}", "study": "s", "status": "error"})
        bad[-1].update(deck=f"{deck},1", error=f"TaskError: failure {i}", seconds=0.0)
        bad[-1].update(expected_score=None, expected_score_exact=None, score_pmf=None)
    study_dir = tmp_path / "s"
    study_dir.mkdir()
    write_rows(study_dir / "results", [ok, *bad], {"study": "s"})
    text = write_summary(StudyFolder(study_dir), {"name": "s"}).read_text()
    failed = text.partition("### Failed tasks")[2]
    assert len(table_column(failed, "error")) == 2
    assert "The table shows 2 of the 3 failed rows; every one is in report.html" in failed


def headline_of(frame: pd.DataFrame, width: int, title: str = "Deck (3,3,3)") -> list[str]:
    from pipeline.outputs.headline import headline_lines
    from solvers.kit.summary_parts import markdown_table

    return headline_lines(
        f"# Study\n\nSome text.\n\n### {title}\n\n{markdown_table(frame)}\n", width
    )


def test_the_headline_table_fits_the_terminal_and_says_what_it_leaves_out():
    """The run's headline, the summary's first table: whole when it fits; turned (a column
    per row) when that fits; else the first rows and the columns that fit, the rest counted
    and named as in summary.md; no line wider than the terminal."""
    wide = {f"column_number_{k}": [k + 0.5, k + 1.5] for k in range(6)}
    two = pd.DataFrame({"label": ["greedy", "optimal"], **wide})
    assert headline_of(two, 200)[1].split() == ["label", *wide]
    turned = headline_of(two, 60)
    assert turned[0] == "Deck (3,3,3)" and turned[1].split() == ["label", "greedy", "optimal"]
    assert turned[3].split() == ["column_number_0", "0.5", "1.5"]
    many = pd.DataFrame({"label": [f"s{k}" for k in range(15)]} | {
        name: [k + 0.5] * 15 for k, name in enumerate(wide)})  # fmt: skip
    cut = headline_of(many, 60)
    assert cut[1].split() == ["label", "column_number_0", "column_number_1"]
    assert [line.split()[0] for line in cut[3:15]] == [f"s{k}" for k in range(12)]
    assert " ".join(cut[15:]) == (
        "(3 more rows and the columns column_number_2, column_number_3, column_number_4, "
        "column_number_5 in summary.md)"
    )
    assert all(len(line) <= 60 for line in [*turned, *cut])
    assert headline_of(pd.DataFrame({"n": [1]}), 80) == ["Deck (3,3,3)", "  n", "---", "  1"]


def test_the_headline_table_shows_each_cell_as_the_text_it_holds():
    """Markdown's escapes are undone (``a|b [x] <b>`` as typed) and a character a terminal
    would act on is shown as its escape; a table of failed tasks is no headline (the next
    table is), nor is a summary without a table."""
    from pipeline.outputs.headline import headline_lines
    from solvers.kit.summary_parts import markdown_table

    frame = pd.DataFrame({"strategy": ["a|b [x] <b> \\_", "\x1b[31mred"], "score": [1, 2]})
    lines = headline_of(frame, 80, title="`odd` names")
    assert lines[0] == "`odd` names"
    assert lines[3].split() == ["a|b", "[x]", "<b>", "\\_", "1"]
    assert lines[4].split() == ["\\x1b[31mred", "2"]
    assert headline_lines("# Study\n\nNo successful results.\n", 80) == []
    failed = markdown_table(pd.DataFrame({"strategy": ["greedy"], "error": ["boom"]}))
    only_failed = f"No successful results.\n\n### Failed tasks\n\n{failed}\n"
    assert headline_lines(only_failed, 80) == []
    results = markdown_table(pd.DataFrame({"n": [7]}))
    then = headline_lines(f"{only_failed}\n## Family `b`\n\n{results}\n", 80)
    assert then == ["Family `b`", "  n", "---", "  7"]


def test_equal_scores_are_shown_in_one_order_whatever_order_the_rows_were_stored_in():
    """The score table (and so the summary's first table and the run's headline) puts equal
    scores on a deck in one order, the optimum first, then by label, however the rows came
    back from the workers; unequal scores stay in ascending order."""
    from solvers.card_guessing.summary import score_table

    rows = pd.DataFrame(
        {
            "deck": ["2,2,2", "2,2,2", "3,3,3", "3,3,3"],
            "feedback": ["partial"] * 4,
            "strategy": ["greedy", "optimal", "optimal", "greedy"],
            "tie_break": ["lowest", None, None, "lowest"],
            "method": ["exact"] * 4,
            "expected_score": [271 / 90, 271 / 90, 2383 / 560, 475 / 112],
            "expected_score_exact": ["271/90", "271/90", "2383/560", "475/112"],
        }
    )
    greedy, optimal = "greedy (tie_break=lowest)", "optimal"
    for stored in (rows, rows.iloc[::-1], rows.iloc[[1, 0, 3, 2]]):
        assert list(score_table(stored)["label"]) == [optimal, greedy, greedy, optimal]
