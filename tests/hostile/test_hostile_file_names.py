"""File names made from parameter values are safe for every valid value:
a fraction in a Mastermind jar ("1/2") never makes the summary's figure path a missing
folder."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from pipeline.run import run_study
from solvers.kit.summary_parts import MAX_NAME, file_name
from tests.helpers.runs import compose_config


@given(st.text(min_size=1, max_size=600))
def test_a_name_from_any_text_is_one_plain_file_in_its_folder(text):
    name = file_name(f"figure_{text}.png")
    assert Path("out", name).parent == Path("out")
    assert "/" not in name and "\0" not in name and not name.startswith((".", "-"))
    assert name.endswith(".png") and len(name) <= MAX_NAME + 4
    assert name.isascii()


def test_long_names_stay_distinct():
    a, b = (file_name("x" * 500 + tail + ".png") for tail in ("1", "2"))
    assert a != b and len(a) <= MAX_NAME + 4


def test_a_fraction_jar_gets_its_mastermind_figure_and_summary(tmp_path):
    cfg = compose_config(
        f"paths.outputs={tmp_path}",
        "study=mastermind",
        "cluster=sync",
        "run.progress=false",
        "study.grid.pegs=[2]",
        "study.grid.jar=[['1/2','1','1'],['0.25','1e-1','3']]",
        "study.strategies={sharma_mittal: {entropy_r: [1, 2], entropy_t: [1, 2]}}",
    )
    report = run_study(cfg, log=lambda *_: None)
    assert report.errors == 0 and report.summary is not None
    text = report.summary.read_text()
    figures = sorted((tmp_path / "mastermind" / "summary").glob("*.png"))
    # one (r, t) heatmap per jar, plus the heuristic-minus-optimum plot of the study's
    # optimal strategy (a strategies override merges into the study's, it does not replace)
    assert len([f for f in figures if f.name.startswith("mastermind_2x3")]) == 2
    for figure in figures:
        assert f"(summary/{figure.name})" in text
