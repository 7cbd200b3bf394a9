"""The manual's comparative claims hold on the very tables they compare (a claim stated in
words is recomputed from the page's own numbers)."""

from __future__ import annotations

import re
from fractions import Fraction

from tests.helpers.repository import ROOT

GAMES = ROOT / "docs" / "games"


def table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of the Markdown table whose header row starts with ``header``."""
    start = text.index(header)
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def test_the_skewed_jars_gap_range_is_the_gaps_table_s():
    """Mastermind played perfectly: "on the skewed jars 0.08 to 0.18 guesses, A to B times the
    uniform games' gaps" gives the range of the best Sharma-Mittal column of the gaps table."""
    page = (GAMES / "mastermind_optimal.md").read_text(encoding="utf-8")
    rows = table_rows(page, "| game | best Sharma-Mittal | expected size |")
    best = {row[0]: float(row[1]) for row in rows}
    uniform = [v for game, v in best.items() if "uniform" in game]
    skewed = [v for game, v in best.items() if "jar" in game]
    ratios = [s / u for s in skewed for u in uniform]
    claim = (
        f"skewed jars it is {min(skewed):.2f} to {max(skewed):.2f} guesses, "
        f"{min(ratios):.1f} to {max(ratios):.1f} times the uniform games' gaps"
    )
    assert claim in page
    assert f"within {min(uniform):.2f}-{max(uniform):.2f} guesses" in page


def test_juraszek_s_averages_are_above_every_line_with_as_many_cards():
    """Hand guessing: the averages quoted for Juraszek's program (two and three cards) exceed
    every exact average of the results table with the same number of cards, which the page
    names."""
    page = (GAMES / "hand_guessing.md").read_text(encoding="utf-8")
    rows = table_rows(page, "| cards | strategy | first guess | average | max |")
    quoted = {2: 4.19, 3: 4.41}
    for cards, theirs in quoted.items():
        ours = [row[3] for row in rows if row[0] == str(cards)]
        assert ours
        for cell in ours:
            fraction, decimal = re.match(r"(\d+/\d+) = ([\d.]+)", cell).groups()
            assert float(Fraction(fraction)) < theirs
            assert decimal in page.split("are above every line")[1][:200]
