"""The manual's figures: each one a study's own plot, made by one documented command
(scripts/manual_figures.py), and every image a page shows exists."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

from tests.helpers.pages import ranks_table
from tests.helpers.repository import ROOT

DOCS = ROOT / "docs"
SCRIPT = ROOT / "scripts" / "manual_figures.py"


def figures_module():
    spec = importlib.util.spec_from_file_location("manual_figures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("manual_figures", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def shown_images() -> dict[str, list[str]]:
    """image file (relative to docs/) -> the pages that show it."""
    shown: dict[str, list[str]] = {}
    for page in DOCS.rglob("*.md"):
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", page.read_text()):
            path = (page.parent / target).resolve().relative_to(DOCS.resolve())
            shown.setdefault(path.as_posix(), []).append(page.name)
    return shown


def test_every_image_a_page_shows_exists_and_is_made_by_the_figure_command():
    made = {f"img/{f.name}.png" for f in figures_module().FIGURES}
    for image, pages in shown_images().items():
        assert (DOCS / image).is_file(), (image, pages)
        assert image in made, f"{image} (shown on {pages}) is not made by {SCRIPT.name}"


def test_every_figure_the_command_makes_is_shown_and_says_how_to_remake_it():
    shown = shown_images()
    text = "\n".join(p.read_text() for p in DOCS.rglob("*.md"))
    for fig in figures_module().FIGURES:
        assert f"img/{fig.name}.png" in shown, fig.name
        assert f"manual_figures.py --only {fig.name}" in text, fig.name


def test_each_game_page_and_the_home_page_open_with_pictures():
    shown = shown_images()
    pages = {page for pages in shown.values() for page in pages}
    for page in ("index.md", "card_guessing.md", "card_guessing_ranks52.md", "high_low.md",
                 "mastermind.md", "triples.md", "hand_guessing.md"):  # fmt: skip
        assert page in pages, page


def test_an_unknown_figure_is_refused_naming_the_valid_ones():
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--only", "nope"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "unknown figure 'nope'" in done.stderr and "gamma_sweep" in done.stderr


@pytest.mark.slow
def test_the_figure_command_runs_the_studies_and_writes_the_plots(tmp_path):
    names = ["triples_win", "triples_equilibrium"]
    done = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--only",
            *names,
            "--outputs",
            str(tmp_path / "out"),
            "--img",
            str(tmp_path / "img"),
            "--cluster",
            "sync",
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for name in names:
        png = (tmp_path / "img" / f"{name}.png").read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000, name
    assert "$ python -m pipeline study=triples " in done.stdout


def _store(outputs, study: str, decks: dict[int, tuple[float, float, float]]) -> None:
    """A study folder holding ranked rows (optimal, greedy, persistent) for n types of 4."""
    import pandas as pd

    rows = [
        {"task_id": f"{study}{n}{s}", "study": study, "strategy": s, "status": "ok",
         "deck": ",".join(["4"] * n), "feedback": "partial", "method": "ranked",
         "tie_break": "pair" if s == "greedy" else None, "expected_score": v,
         "n_states": 10 * n}
        for n, values in decks.items()
        for s, v in zip(("optimal", "greedy", "persistent"), values, strict=True)
    ]  # fmt: skip
    folder = outputs / study / "results" / "family=card_guessing"
    folder.mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(folder / "part-0-test.parquet", index=False)


def page_values(n: int) -> tuple[float, float, float]:
    row = ranks_table()[n]
    return row["optimal"], row["greedy"], row["persistent"]


def test_the_ranks_figure_takes_the_stored_rows_and_the_out_of_core_studys(tmp_path):
    from solvers.card_guessing.summary.ranks52 import ranks_table as table_of

    module = figures_module()
    (fig,) = [f for f in module.FIGURES if f.name == "ranks"]
    assert fig.stored == ("ranks_exact",) and fig.data == "docs/data/ranks_4_cards.csv"
    _store(tmp_path, "ranks52", {2: page_values(2), 3: page_values(3)})
    rows, absent = module.stored_rows(fig, tmp_path)
    assert absent == ["ranks_exact"]  # said; the stored rows hold its values
    table = table_of(rows).set_index("n")
    assert list(table.index) == list(range(1, 12))  # n = 1..11 without hours of solving
    assert table.loc[11, "optimal"] == ranks_table()[11]["optimal"]
    _store(tmp_path, "ranks_exact", {10: page_values(10)})
    rows, absent = module.stored_rows(fig, tmp_path)
    assert absent == []
    dest = tmp_path / "ranks.png"
    assert module.draw_with_stored(fig, tmp_path, dest) == []
    check, facts = module.saved_check(dest)
    assert check == "ok" and 5.40 < facts["fits"]["optimal"]["low"] < 5.41


def test_a_study_row_that_disagrees_with_the_stored_ones_is_refused(tmp_path):
    module = figures_module()
    (fig,) = [f for f in module.FIGURES if f.name == "ranks"]
    optimal, greedy, persistent = page_values(9)
    _store(tmp_path, "ranks52", {9: (optimal + 1e-9, greedy, persistent)})
    with pytest.raises(ValueError, match="n = 9, optimal disagree"):
        module.draw_with_stored(fig, tmp_path, tmp_path / "ranks.png")
