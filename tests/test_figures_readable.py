"""The manual's figures can be read where the page shows them (688 px wide), and their captions
say what the figures' rows say: the check every summary plot carries (summary_parts), the
figures under docs/img/, the ranks figure's stored rows and the captions' numbers."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from solvers.kit.summary_parts import (
    DPI,
    MAX_SERIES,
    PAGE_PX,
    WIDTH,
    bar_chart,
    figure_problems,
    save_figure,
    saved_check,
    styled,
    subplots,
)
from tests.helpers.pages import ranks_table
from tests.helpers.repository import ROOT

DOCS = ROOT / "docs"
IMAGES = sorted((DOCS / "img").glob("*.png"))


@styled
def good_figure():
    fig, ax = subplots(figsize=(WIDTH, 3.6))
    ax.plot([1, 2, 3], [1, 4, 9], label="squares")
    ax.plot([1, 2, 3], [1, 2, 3], label="line")
    ax.set_xlabel("n")
    ax.set_ylabel("value")
    ax.legend()
    fig.tight_layout()
    return fig, ax


def test_a_figure_drawn_with_the_kit_has_no_problem():
    fig, _ = good_figure()
    assert figure_problems(fig) == []


def test_small_text_an_unlabelled_axis_and_a_hidden_series_are_problems():
    fig, ax = good_figure()
    ax.set_xlabel("")
    ax.set_ylabel("value", fontsize=6)  # 6 pt on a 6-inch figure shows at 9.6 px
    ax.plot([1, 2, 3], [1, 4, 9], label="same squares")
    found = " | ".join(figure_problems(fig))
    assert "'value' shows at 9.6 px" in found
    assert "the x axis has no label" in found
    assert "'same squares' hides under 'squares'" in found


def test_too_many_series_and_two_drawn_alike_are_problems():
    fig, ax = good_figure()
    for k in range(MAX_SERIES):
        ax.plot([1, 2], [k, k + 1], color="black", marker="o", label=f"s{k}")
    found = " | ".join(figure_problems(fig))
    assert f"{MAX_SERIES + 2} series on one axes" in found
    assert "'s1' is drawn like 's0'" in found


def test_a_blank_band_and_overlapping_texts_are_problems():
    fig, ax = subplots(figsize=(WIDTH, 3.6))
    ax.set_position((0.12, 0.15, 0.45, 0.8))  # the right 40% holds nothing
    ax.set_xlabel("n")
    ax.set_ylabel("value")
    ax.text(0.5, 0.5, "one note")
    ax.text(0.5, 0.5, "another note")
    found = " | ".join(figure_problems(fig))
    assert "a blank band on the right" in found
    assert "texts overlap: 'one note' and 'another note'" in found


def test_a_plot_looks_the_same_whatever_the_caller_set_and_leaves_it_set(tmp_path):
    """A summary's plot is drawn in its own style: the caller's rcParams (a large font, a
    grid, thick lines, a pyplot style) change no pixel of it, and are as the caller set them
    after it."""
    import matplotlib
    import numpy as np
    from PIL import Image

    def drawn(name: str) -> np.ndarray:
        path = tmp_path / f"{name}.png"
        bar_chart(["greedy", "optimal"], [4.24, 4.26], title="t", value_name="v", path=path)
        return np.asarray(Image.open(path))

    plain = drawn("plain")
    callers = {"font.size": 30.0, "axes.grid": True, "lines.linewidth": 4.0}
    with matplotlib.style.context(["ggplot", callers]):
        before = dict(matplotlib.rcParams)
        odd = drawn("odd")
        assert dict(matplotlib.rcParams) == before
    assert np.array_equal(plain, odd)


def test_save_figure_writes_the_check_and_the_facts_into_the_png(tmp_path):
    fig, _ = good_figure()
    save_figure(fig, tmp_path / "a.png", facts={"value": 1.5})
    assert saved_check(tmp_path / "a.png") == ("ok", {"value": 1.5})
    fig, ax = good_figure()
    ax.set_ylabel("")
    save_figure(fig, tmp_path / "b.png")
    check, facts = saved_check(tmp_path / "b.png")
    assert "the y axis has no label" in check and facts is None


@pytest.mark.parametrize("png", IMAGES, ids=[p.name for p in IMAGES])
def test_every_figure_of_the_manual_passed_the_check_at_page_width(png):
    from PIL import Image

    check, _ = saved_check(png)
    assert check == "ok", f"{png.name}: {check}"
    with Image.open(png) as image:
        width = image.size[0]
    assert width >= PAGE_PX  # scaled down to the page, never up
    assert width == round(WIDTH * DPI)  # the width the fonts were sized for


def test_the_ranks_figure_rows_are_the_ranks_pages_table():
    rows = pd.read_csv(DOCS / "data" / "ranks_4_cards.csv", dtype={"deck": str})
    page = ranks_table()
    assert sorted(page) == list(range(1, 12)) == sorted(rows["n"].unique())
    for row in rows.itertuples(index=False):
        assert row.deck == ",".join(["4"] * row.n)
        assert row.expected_score == page[row.n][row.strategy], (row.n, row.strategy)
        assert row.n_states == page[row.n]["states"]
    assert len(rows) == 3 * len(page)


def caption(page: str, image: str) -> str:
    """The caption line under ``image`` on ``page`` (the italic paragraph after it), its
    quoted values read from their data files as the manual's build reads them."""
    from docs.quoted import expand_quotes

    text = expand_quotes((DOCS / page).read_text())
    after = text[text.index(f"img/{image})") :].split("\n\n")[1]
    assert after.startswith("*"), (page, after[:60])
    return after


@pytest.mark.parametrize("page", ["index.md", "games/card_guessing.md"])
def test_the_gamma_sweep_caption_says_what_its_rows_say(page):
    _, facts = saved_check(DOCS / "img" / "gamma_sweep.png")
    text = caption(page, "gamma_sweep.png")
    quoted = set(re.findall(r"\d\.\d{6}", text))
    said = set()
    for deck, fact in facts.items():
        if fact["optimal_intervals"]:  # the gammas where info is optimal, as the rows give them
            for a, b in fact["optimal_intervals"]:
                assert f"({deck}) for gamma {a:g} to {b:g}" in text, deck
        else:  # never optimal: how close it comes
            said |= {f"{fact['best_info']:.6f}", f"{fact['optimal']:.6f}"}
            assert f"({deck})" in text and f"{fact['best_info']:.6f}" in text, deck
    assert quoted == said  # every number it quotes comes from the rows


def test_the_ranks_caption_quotes_the_fits_the_figure_draws():
    """The ranks caption gives the bars the figure draws at n = 13 (each fit widened by its
    standard error), the fits themselves, and the Monte Carlo means drawn there."""
    _, facts = saved_check(DOCS / "img" / "ranks.png")
    text = caption("games/card_guessing_ranks52.md", "ranks.png")
    for policy, fits in facts["fits"].items():
        assert f"{fits['low']:.3f} to {fits['high']:.3f}" in text, policy
        alone = sorted(fits[k] for k in ("line", "quadratic", "steps"))
        assert f"{alone[0]:.4f} to {alone[-1]:.4f}" in text, policy
    assert "each widened by its standard error" in text
    assert "n = 1 to 11" in text or "n = 2 to 11" in text
    for policy, value in facts["monte_carlo"].items():
        assert f"{value['mean']:.4f}" in text, policy
