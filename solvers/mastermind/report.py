"""HTML report sections of ``mastermind`` rows: per game, the reference strategies and the
Sharma-Mittal (r, t) grid as a heatmap whose hover shows each cell's exact expected guesses.

The tables are the summary's (:mod:`solvers.mastermind.summary`).  Source: Hofer & Nelson
(2016), *Sharma-Mittal Generalized Entropy and "Code Jar" Mastermind*.
"""

from __future__ import annotations

import pandas as pd

from solvers.kit.axis_plots import axis_report_sections
from solvers.kit.report_sections import Figure, Section, Table, heatmap
from solvers.kit.stored_rows import StoredRows, takes_stored_rows
from solvers.mastermind.summary import (
    RESULTS,
    SCORE,
    game_title,
    named_members,
    references,
    results,
)

SHOWN = ["label", *RESULTS, "first_guess", "histogram", "n_codes"]


@takes_stored_rows
def report(rows: pd.DataFrame | StoredRows) -> list[Section]:
    """One section per game (pegs, colours, jar), then the whole result table."""
    if not len(rows):
        return []
    table = results(rows)
    out = [game_section(game, group) for game, group in table.groupby(GAME_KEYS, sort=True)]
    everything = table.drop(columns=["jar_label"]).sort_values(
        ["pegs", "colours", "jar", "expected_guesses"], kind="stable"
    )
    uneven = (table["jar_label"] != "uniform").any()
    note = NO_TOTAL if uneven and everything["total_guesses"].notna().any() else ""
    if uneven and not note:  # no uniform jar: the column would be empty in every row
        everything = everything.drop(columns=["total_guesses"])
        note = NO_TOTAL
    out.append(
        Section(
            "Every game and strategy",
            [Table("All strategies of all games", everything.reset_index(drop=True), note=note)],
        )
    )
    whole = table[[not isinstance(s, str) for s in table["subtree"]]]  # as the summary draws
    return out + axis_report_sections(whole, SCORE)


# Why a game of a non-uniform jar has no total_guesses (the solvers store None there).
NO_TOTAL = (
    "total_guesses (the guesses needed to find each code, summed over the codes) is given "
    "for uniform jars only: drawn from a non-uniform jar the codes are not equally likely, "
    "so that sum says nothing about play; expected_guesses weights each code by its "
    "probability instead."
)


GAME_KEYS = ["pegs", "colours", "jar_label"]


def game_section(game: tuple, group: pd.DataFrame) -> Section:
    """Reference strategies and named entropies, and the (r, t) heatmap of one game."""
    title = game_title(*game)
    ref = group[group["strategy"] != "sharma_mittal"]
    sm = group[group["strategy"] == "sharma_mittal"]
    lines = pd.concat([ref, named_members(sm)]).sort_values("expected_guesses", kind="stable")
    shown = [c for c in SHOWN if c in lines]
    note = ""
    if game[2] != "uniform":  # the solvers give no total for a non-uniform jar
        shown, note = [c for c in shown if c != "total_guesses"], NO_TOTAL
    items: list = [Table(f"Strategies: {title}", lines[shown], note=note)]
    if sm["entropy_r"].nunique() > 1 and sm["entropy_t"].nunique() > 1:
        best = sm.nsmallest(1, "expected_guesses").iloc[0]
        refs = references(ref)
        items.append(
            f"Sharma-Mittal over {len(sm)} (r, t) points: best {best['expected_guesses']:.6f} "
            f"({best['expected_guesses_exact']}) at r = {best['entropy_r']:g}, t = "
            f"{best['entropy_t']:g}. References: {refs}."
        )
        fig = heatmap(
            sm,
            x="entropy_t",
            y="entropy_r",
            z="expected_guesses",
            hover=["expected_guesses_exact", "max_guesses", "first_guess", "histogram"],
            title=f"Expected guesses, Sharma-Mittal strategy: {title}",
            reverse=True,
            x_title="degree t of the Sharma-Mittal entropy",
            y_title="order r of the Sharma-Mittal entropy",
            z_title="expected guesses",
        )
        items.append(Figure(f"(r, t) grid: {title}", fig, "lower is better (yellow)"))
    return Section(title, items)
