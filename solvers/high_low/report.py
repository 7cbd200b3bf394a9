"""HTML report sections of ``high_low`` rows: P(every call right) against n on a log scale,
and the real decks, as sortable tables and interactive Plotly figures.

The tables are the summary's (:mod:`solvers.high_low.summary`); hovering a point shows its
parameters and the exact ``p/q`` probability.  Source: Norvig (2020), *Flipping Cards: A
Guessing Game*.
"""

from __future__ import annotations

import pandas as pd

from solvers.high_low.summary import SCORE, deck_table, distinct_table, summary_rows
from solvers.kit.axis_plots import axis_report_sections
from solvers.kit.report_sections import Figure, Section, Table, scatter
from solvers.kit.stored_rows import StoredRows, takes_stored_rows
from solvers.kit.words import counted

DECK_HOVER = ["ranks", "suits", "ties", "strategy", "method", "p_perfect_exact", "p_perfect_se"]


@takes_stored_rows
def report(rows: pd.DataFrame | StoredRows) -> list[Section]:
    """Sections: distinct cards 1..n (when present) and real decks (when present)."""
    rows = summary_rows(rows)
    out = []
    distinct = rows[rows["n"].notna()] if "n" in rows else rows.iloc[:0]
    decks = rows[rows["ranks"].notna()] if "ranks" in rows else rows.iloc[:0]
    if not distinct.empty:
        out.append(distinct_section(distinct_table(distinct)))
    if not decks.empty:
        out.append(deck_section(deck_table(decks)))
    return out + axis_report_sections(rows, SCORE)


def distinct_section(table: pd.DataFrame) -> Section:
    """P(perfect game) against n (log scale) and the table of every n."""
    table = table.assign(n=table["n"].astype(int))
    fig = scatter(
        table,
        x="n",
        y="p_perfect",
        hover=["method", "p_perfect_exact", "expected_correct", "n_states"],
        title="Higher/lower with distinct cards: optimal play (the majority call)",
        x_title="n (distinct cards)",
        y_title="P(every call right)",
        log_y=True,
    )
    return Section(
        "Distinct cards 1..n",
        [
            f"Norvig (2020): for each of the {len(table)} values of n, the exact probability that "
            "optimal play calls every card right; log scale as in the Markdown summary.",
            Figure("P(perfect game) against n", fig),
            Table("Every n", table, {"p_perfect": ".10g", "log10_p_perfect": ".8f"}),
        ],
    )


def deck_section(table: pd.DataFrame) -> Section:
    """P(perfect game) for real decks (ranks x suits): one panel per tie rule, one colour
    per number of suits, one marker and line per strategy and method."""
    frame = table.sort_values(["ties", "suits", "strategy", "method"], kind="stable")
    frame = frame.assign(cards=frame["ranks"] * frame["suits"])
    frame["tie_rule"] = [f"ties {t}" for t in frame["ties"]]
    frame["deck"] = [suits_text(s) for s in frame["suits"]]
    frame["play"] = [
        f"{st} ({m})" for st, m in zip(frame["strategy"], frame["method"], strict=True)
    ]
    fig = scatter(
        frame,
        x="cards",
        y="p_perfect",
        group="deck",
        style="play",
        facet="tie_rule",
        hover=[*DECK_HOVER, "ratio_to_optimal"],
        title="Higher/lower with repeated ranks",
        x_title="cards in the deck (ranks x suits)",
        y_title="P(no wrong call)",
        log_y=True,
    )
    return Section(
        "Real decks",
        [
            "Monte Carlo rows carry their standard error (p_perfect_se); ratio_to_optimal is "
            "P / P(optimal, exact) of the same deck and tie rule.  One panel per tie rule (ties "
            "lose: a card equal to the one showing makes the call wrong; ties win: right); "
            "where the majority rule is optimal, its markers sit on the optimum's.",
            Figure("P(perfect game) for real decks", fig),
            Table("Real decks", table, {"ratio_to_optimal": ".8f"}),
        ],
    )


def suits_text(suits: float) -> str:
    """ "1 suit", "4 suits"."""
    return counted(int(suits), "suit")
