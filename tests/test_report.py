"""The HTML report (pipeline/outputs/report.py): self-contained, every row, failures, provenance.

The browser tests (tests/test_report_browser.py) open these files in headless Chromium;
these check what the files hold without a browser.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from pipeline.outputs.page_text import json_value
from pipeline.outputs.report import table_spec, write_report
from pipeline.storage import store
from pipeline.storage.study_folder import StudyFolder
from solvers.registry import solve
from tests.helpers.pages import page_data
from tests.helpers.runs import run
from tests.helpers.store_rows import write_rows


def external_references(text: str) -> list[str]:
    """Every src= or href= that would load something from outside the file."""
    refs = re.findall(r"""<(?:script|link|img|iframe)[^>]*(?:src|href)\s*=\s*['"]([^'"]+)""", text)
    return [r for r in refs if not r.startswith("#")]


def test_the_summary_stage_writes_a_self_contained_report(outputs):
    report = run(outputs, "cluster=sync", "study=paper")
    path = report.folder.report
    assert path.exists() and report.folder.summary.exists()
    text = path.read_text()
    assert external_references(text) == []
    assert "id='plotly-gz'" in text  # the family's figures bring Plotly, inlined
    data = page_data(path)
    everything = [t for t in data["tables"] if t["title"].startswith("All results")]
    assert len(everything) == 1 and len(everything[0]["rows"]) == 2
    # Gural, Simper & So (2019), Information Theory in a Card-Guessing Game: greedy on
    # (3,3,3) with ties to the lowest type scores 475/112, the optimum 2383/560
    cols = [c["name"] for c in everything[0]["columns"]]
    exact = {
        row[cols.index("strategy")]: row[cols.index("expected_score_exact")]
        for row in everything[0]["rows"]
    }
    assert exact == {"greedy": "475/112", "optimal": "2383/560"}
    kinds = {c["name"]: c["kind"] for c in everything[0]["columns"]}
    assert kinds["expected_score_exact"] == "exact" and kinds["expected_score"] == "number"
    assert "Package versions" in text and "code version" in text
    assert "deck:" in text  # the resolved config, as YAML


def test_failures_are_listed_with_their_messages(tmp_path):
    study_dir = tmp_path / "broken"
    rows = solve({"family": "card_guessing", "deck": [2, 1], "strategy": "greedy"})
    ok = {**rows[0], "task_id": "a" * 20, "study": "broken"}
    bad = {**ok, "task_id": "b" * 20, "status": "error", "error": "MemoryError: big\nline 2"}
    bad.update(expected_score=None, expected_score_exact=None)
    write_rows(study_dir / "results", [ok, bad], {"written_at": "2026-01-01T00:00:00"})
    path = write_report(
        StudyFolder(study_dir), {"name": "broken", "description": "two rows, one failed"}
    )
    data = page_data(path)
    failed = [t for t in data["tables"] if t["title"].startswith("Failed tasks")]
    assert len(failed) == 1 and len(failed[0]["rows"]) == 1
    cols = [c["name"] for c in failed[0]["columns"]]
    assert failed[0]["rows"][0][cols.index("error")] == "MemoryError: big\nline 2"
    assert "two rows, one failed" in path.read_text()


def test_table_cells_keep_exact_values_and_mark_infinities():
    frame = pd.DataFrame(
        {"r": [1.0, float("inf")], "v_exact": ["1/3", "2/3"], "n": [1, 2], "s": ["a", None]}
    )
    spec = table_spec("t", frame, {})
    assert [c["kind"] for c in spec["columns"]] == ["number", "exact", "number", "text"]
    assert spec["rows"] == [[1.0, "1/3", 1, "a"], ["inf", "2/3", 2, None]]
    assert json_value(float("nan")) is None and json_value(-float("inf")) == "-inf"


@pytest.mark.parametrize("name", ["table.js", "report.js", "report.css"])
def test_the_assets_ship_with_the_package(name):
    from pipeline.outputs.page_text import ASSETS

    assert (ASSETS / name).read_text().strip()


FAMILY_CASES = {
    # Gural, Simper & So (2019), Information Theory in a Card-Guessing Game: greedy on
    # (3,3,3), ties to the lowest type, scores 475/112
    "card_guessing": (
        [{"deck": [3, 3, 3], "strategy": "greedy", "tie_break": "lowest"}],
        "475/112",
    ),
    # Norvig (2020), Flipping Cards: A Guessing Game: P(all calls right) for n = 3 is 5/6
    "high_low": ([{"n": n, "strategy": "optimal"} for n in (2, 3, 4)], "5/6"),
    # Hofer & Nelson (2016), Sharma-Mittal Generalized Entropy and "Code Jar" Mastermind
    "mastermind": (
        [
            {"pegs": 2, "colours": 3, "strategy": "sharma_mittal", "entropy_r": r, "entropy_t": t}
            for r in (0.0, 1.0)
            for t in (1.0, 2.0)
        ],
        "/",
    ),
}


@pytest.mark.parametrize("family", sorted(FAMILY_CASES))
def test_each_family_report_has_tables_and_figures_whose_hover_is_exact(family):
    from pipeline.outputs.report import figure_spec
    from solvers.kit.report_sections import Figure, Table
    from solvers.registry import family_report

    tasks, exact = FAMILY_CASES[family]
    rows = pd.DataFrame([r for t in tasks for r in solve({"family": family, **t})])
    sections = family_report(family)(rows)
    items = [i for s in sections for i in s.items]
    figures = [i for i in items if isinstance(i, Figure)]
    assert figures and any(isinstance(i, Table) for i in items)
    spec = json.dumps([figure_spec(f.figure) for f in figures])
    assert "_exact = %{customdata[" in spec and exact in spec


def test_the_index_lists_every_study_and_the_rows_two_studies_share(outputs):
    from pipeline.outputs.index import comparison_data

    run(outputs, "cluster=sync", "study=paper")
    run(
        outputs,
        "cluster=sync",
        "study=paper",
        "study.name=paper_two",
        "study.grid.deck=[[3,3,3],[2,2,1]]",
    )
    index = outputs / "index.html"
    text = index.read_text()
    assert external_references(text) == [] and "plotly-gz" not in text  # no Plotly needed
    assert [p.name for p in StudyFolder.all_in(outputs)] == ["paper", "paper_two"]
    assert text.count("class='report-link'") == 2
    assert re.search(
        r"data-study='paper_two'><td[^>]*>paper_two</td><td>card_guessing</td>"
        r"<td>4</td><td>4</td><td>4</td><td>0</td>",
        text,
    )
    from pipeline.storage.store import load_results

    data = comparison_data({p.name: load_results(p.path) for p in StudyFolder.all_in(outputs)})
    (family,) = data
    assert family["family"] == "card_guessing" and family["studies"] == ["paper", "paper_two"]
    assert len(family["data"]["paper"]) == 2 and len(family["data"]["paper_two"]) == 2
    assert "row" not in family["keys"]  # every task has one row


def test_list_results_are_shown_short_and_long_lists_by_their_ends():
    import numpy as np

    from pipeline.outputs.report import list_text

    assert list_text(np.array([1, 2, 3])) == "1,2,3"
    assert list_text([0.1234567891, 0.5]) == "0.123457,0.5"
    text = list_text(list(range(30)))
    assert text.startswith("0,1,2,") and text.endswith("26,27,28,29, (30 values)")
    assert list_text(None) is None


def test_every_registered_report_function_imports():
    from solvers.registry import families, family_report, get_family

    named = [f for f in families() if get_family(f).presentation.report is not None]
    assert {"card_guessing", "high_low", "mastermind"} <= set(named)
    assert all(callable(family_report(f)) for f in named)


def test_an_unreadable_store_is_listed_in_the_index_not_fatal(outputs):
    from pipeline.outputs.index import write_index

    run(outputs, "cluster=sync", "study=paper")
    broken = outputs / "broken" / "results" / "family=card_guessing"
    broken.mkdir(parents=True)
    (broken / "part-1-x.parquet").write_bytes(b"not parquet")
    text = write_index(outputs).read_text()
    assert "data-study='broken'" in text and "(store unreadable:" in text
    assert "data-study='paper'" in text


def test_a_family_without_a_report_function_gets_the_generic_part(tmp_path):
    from solvers.registry import families, get_family

    family = next(f for f in families() if get_family(f).presentation.report is None)
    example = dict(get_family(family).examples[0])
    rows = [
        {**row, "task_id": "c" * 20, "study": "plain"}
        for row in solve({"family": family, **example})
    ]
    write_rows(tmp_path / "plain" / "results", rows, {"written_at": "2026-01-01"})
    path = write_report(StudyFolder(tmp_path / "plain"), {"name": "plain"})
    titles = [t["title"] for t in page_data(path)["tables"]]
    assert f"All results ({family})" in titles
    assert "id='plotly-gz'" not in path.read_text()  # no figures: no Plotly either


def test_provenance_reads_each_file_once_and_keeps_every_run_apart(tmp_path):
    from pipeline.outputs.provenance import provenance

    results = tmp_path / "results"
    row = {"family": "card_guessing", "study": "s", "status": "ok"}
    runs = [
        {"written_at": "run-1", "code_version": "a", "packages": {"numpy": "1.0"}},
        {"written_at": "run-2", "code_version": "b", "packages": {"numpy": "2.0"}},
    ]
    for i, meta in enumerate(runs):
        for j in range(3):  # three batch files per run, the same metadata in each
            write_rows(results, [{**row, "task_id": f"{i}{j}".ljust(20, "0")}], meta)
    runs[1]["config"] = {"study": {"name": "s"}}
    write_rows(results, [{**row, "task_id": "9".ljust(20, "0")}], runs[1])
    files = store.result_files(results)
    metas = store.files_metadata(files)
    assert metas == [store.file_metadata(f) for f in files]
    assert metas[0] is metas[2] and metas[3] is metas[5] and metas[0] != metas[3]
    batches, newest, packages = provenance(files, metas)
    assert batches["run_started"].tolist() == ["run-1"] * 3 + ["run-2"] * 4
    assert batches["code_version"].tolist() == ["a"] * 3 + ["b"] * 4
    assert newest["config"] == {"study": {"name": "s"}}
    assert packages.to_dict("records") == [{"package": "numpy", "version": "1.0, 2.0"}]


def test_the_newest_metadata_is_read_from_the_newest_file_back():
    from pipeline.outputs.provenance import newest_metadata

    metas = [{"n": 0}, {"n": 1, "config": {"a": 1}}, {"n": 2}, {"n": 3}]
    read = []

    def at(i):
        read.append(i)
        return metas[i]

    assert newest_metadata(at, 4) == metas[1] and read == [3, 2, 1]
    assert newest_metadata(lambda i: {"n": i}, 3) == {"n": 0}  # no config: the oldest file's
    assert newest_metadata(at, 0) == {}


def test_a_figure_s_title_is_page_text_above_it_never_drawn_under_its_toolbar():
    """Plotly drew the title inside the figure, under its toolbar and cut at a phone's
    width; the page shows it as text (which wraps) and the drawing has none."""
    import plotly.graph_objects as go

    from pipeline.outputs.report import Page

    page = Page("t")
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    fig.update_layout(title="Higher/lower with <br>distinct cards & more")
    page.add_figure("P(perfect game) against n", fig)
    assert "title" not in page.figures[0]["layout"]
    html_text = page.html()
    assert "<p class='figure-title'>Higher/lower with distinct cards &amp; more</p>" in html_text


def test_the_summary_s_bar_chart_starts_at_zero_and_writes_each_difference(tmp_path, monkeypatch):
    """Greedy 475/112 against the optimum 2383/560 on (3,3,3) (Gural, Simper & So 2019): an
    axis from 4.03 made a 0.34% difference look like a third of the bar; the bars start at
    0 and the lower one says how far below the optimum it is."""
    from solvers.kit import summary_parts

    drawn = []
    monkeypatch.setattr(summary_parts, "save_figure", lambda fig, path: drawn.append(fig))
    summary_parts.bar_chart(
        ["greedy", "optimal"],
        [475 / 112, 2383 / 560],
        title="deck (3,3,3)",
        value_name="expected number of correct guesses",
        path=tmp_path / "bars.png",
    )
    (ax,) = drawn[0].axes
    assert ax.get_xlim()[0] == 0.0
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["4.2411\n-0.0143 (-0.34%)", "4.2554"]


@pytest.mark.parametrize("n", [1, 3, 9])
def test_the_summary_s_bar_chart_reads_at_page_width_with_long_labels(tmp_path, n):
    """The bar chart of the labels a study writes (the ranks52 study's 13 x 4 deck: greedy
    with each tie rule and persistent, by Monte Carlo) reads at page width, no label over
    the axis label, no value over the title: the check saved in the PNG names no problem."""
    from solvers.kit import summary_parts

    labels = ["greedy (tie_break=lowest, monte_carlo)", "greedy (tie_break=pair, monte_carlo)",
              "persistent (monte_carlo)", "info (gamma=0.15, entropy_r=2, entropy_t=0.5)",
              "optimal (ranked)", "constant_decrement (decrement=0.3)", "count_tracker",
              "greedy (tie_break=uniform)", "persistent (ranked)"][:n]  # fmt: skip
    values = [5.3297, 5.3342, 5.3720, 5.31, 5.4, 4.9, 4.95, 5.0, 5.37][:n]
    path = summary_parts.bar_chart(
        labels,
        values,
        errors=[0.0036, 0.0035, 0.0035, 0.0, float("nan"), 0, 0, 0, 0][:n],
        title="deck (4,4,4,4,4,4,4,4,4,4,4,4,4), partial feedback",
        value_name="expected number of correct guesses",
        path=tmp_path / "bars.png",
    )
    assert summary_parts.saved_check(path)[0] == "ok"


def test_a_dot_s_label_gives_its_gap_to_the_exact_optimum():
    """The gap is decimal and exact over the optimum's denominator (8/560 against
    2383/560), reduced where that denominator does not hold it, decimal alone where the
    exact value would not fit a label's line or the row is a Monte Carlo estimate, and
    absent where no exact optimum is stored."""
    from fractions import Fraction

    from solvers.card_guessing.report import gap_line

    optimum = Fraction(2383, 560)
    greedy = {"expected_score": 475 / 112, "expected_score_exact": "475/112"}
    assert gap_line(greedy, optimum) == "<br>gap 0.0143<br>(8/560)"
    assert gap_line({**greedy, "expected_score_exact": "2383/560"}, optimum) == "<br>gap 0"
    third = {"expected_score": 4.0, "expected_score_exact": "4/1"}
    assert gap_line(third, Fraction(13, 3)) == "<br>gap 0.333<br>(1/3)"
    odd = {"expected_score": 4.2, "expected_score_exact": "4199999999999/999999999999"}
    assert gap_line(odd, optimum).startswith("<br>gap ") and "(" not in gap_line(odd, optimum)
    estimate = {"expected_score": 4.25, "expected_score_exact": None}
    assert gap_line(estimate, optimum) == "<br>gap 0.00536"
    assert gap_line(greedy, None) == ""


def test_every_column_gets_words_and_the_table_spec_carries_them():
    """Parameters take the registry's docs, common columns the common words, a table's own
    words win, and a column nobody defines is named by its form or its dtype."""
    from pipeline.outputs.report import ColumnWords
    from solvers.registry import get_family, row_columns

    fam = get_family("card_guessing")
    words = ColumnWords(fam, row_columns(fam)).of(
        ["deck", "expected_score", "score_variance_exact", "label", "n_states", "zz"],
        {"label": "the strategy"},
    )
    assert words["label"] == "the strategy"
    assert "correct guesses" in words["expected_score"]
    assert words["score_variance_exact"].endswith("as an exact fraction p/q")
    assert words["deck"] and words["deck"] != "column deck"
    assert words["zz"] == "column zz"
    spec = table_spec("t", pd.DataFrame({"label": ["a"], "x": [1]}), {}, {"label": "what"})
    assert spec["columns"][0]["about"] == "what" and "about" not in spec["columns"][1]


def test_every_column_of_every_familys_rows_is_defined(monkeypatch):
    """Every column a family's rows carry (common, parameters, their list columns, results)
    has words from a definition, none from its name's form or dtype alone; and every result
    column a family declares has its own one-line definition in ``Solver.column_docs``."""
    import pipeline.outputs.report as report
    from solvers.registry import families, get_family, row_columns

    monkeypatch.setattr(report, "by_form", lambda name, dtypes: "UNDEFINED")
    shipped = [f for f in map(get_family, families()) if f.solver.run.__module__[:8] == "solvers."]
    assert len(shipped) >= 6  # the package's families (not those other tests register)
    for fam in shipped:
        words = report.ColumnWords(fam, row_columns(fam)).of([*row_columns(fam)])
        undefined = [c for c, w in words.items() if w == "UNDEFINED"]
        assert not undefined, f"{fam.name}: columns without words {undefined}"
        docs = fam.solver.column_docs
        missing = [c for c in fam.solver.columns if not docs.get(c, "").strip()]
        assert not missing, f"{fam.name}: result columns without a definition {missing}"
        assert set(docs) <= set(fam.solver.columns), f"{fam.name}: words for no column"
        assert all("\n" not in words for words in docs.values())


def test_the_citation_falls_back_to_the_installed_version_without_citation_cff(
    monkeypatch, tmp_path
):
    """Where the repository's CITATION.cff is not on the machine (an installed package), the
    report cites guesslab by the installed version; with the repository, as the file says."""
    import importlib.metadata

    import yaml

    from pipeline.outputs import report_about

    cff = yaml.safe_load((report_about.ROOT / "CITATION.cff").read_text())
    report_about.citation.cache_clear()
    assert f"{cff['title']}. Version {cff['version']}." in report_about.citation()
    monkeypatch.setattr(report_about, "ROOT", tmp_path)
    report_about.citation.cache_clear()
    try:
        version = importlib.metadata.version("guesslab")
        assert report_about.citation() == f"guesslab, version {version}."
    finally:
        report_about.citation.cache_clear()
