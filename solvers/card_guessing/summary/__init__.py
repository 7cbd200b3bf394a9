"""Summary of ``card_guessing`` rows: per deck, every strategy's score and its ratio to optimal."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from solvers.card_guessing.summary import feedback as feedback_sections
from solvers.card_guessing.summary import info as info_sections
from solvers.card_guessing.summary import ranks52 as ranks_sections
from solvers.card_guessing.summary import suits52 as suits_sections
from solvers.card_guessing.summary.rows import summary_rows
from solvers.kit.axis_plots import Score, axis_sections
from solvers.kit.stored_rows import StoredRows, takes_stored_rows
from solvers.kit.summary_parts import bar_chart, file_name

# The score the summary and the report draw against a strategy's numeric parameter
# (solvers.kit.axis_plots); the info strategy's gamma and (r, t) are drawn by the info
# sections (summary/info.py), which read the rows a large store's summary keeps of it.
SCORE = Score(
    "card_guessing",
    "expected_score",
    "expected number of correct guesses",
    decks=("deck", "feedback"),
    optimum="optimal",
    keys=("method",),
    leave_out=("info",),
)
KEY_COLUMNS = [
    *("strategy", "tie_break", "gamma", "entropy_r", "entropy_t", "decrement"),
    *("strategy_params", "method"),
]


@takes_stored_rows
def summarize(rows: pd.DataFrame | StoredRows, out_dir: Path) -> str:
    """Markdown: a table per (deck, feedback) and a bar chart of expected scores (of stored
    rows, from the rows :func:`rows.summary_rows` reads)."""
    if not len(rows):
        return "No successful results."
    rows = summary_rows(rows)
    table = score_table(info_sections.compact(rows))
    reduced = info_sections.compacted(rows)
    table.to_parquet(out_dir / "card_guessing_scores.parquet", index=False)
    parts = []
    for (deck, feedback), group in table.groupby(["deck", "feedback"], sort=False):
        from solvers.kit.summary_parts import markdown_table

        name = file_name(f"card_guessing_{feedback}_{deck.replace(',', '-')}.png")
        bar_chart(
            labels=group["label"].tolist(),
            values=group["expected_score"].tolist(),
            errors=group["std_error"].tolist() if "std_error" in group else None,
            title=f"deck ({deck}), {feedback} feedback",
            value_name="expected number of correct guesses",
            path=out_dir / name,
        )
        shown = group.drop(columns=["deck", "feedback"]).dropna(axis=1, how="all")
        parts += [
            f"### Deck ({deck}), {feedback} feedback",
            "",
            markdown_table(shown),
            "",
            *([info_sections.compact_note(deck), ""] if (deck, feedback) in reduced else []),
            f"![deck {deck}](summary/{name})",
            "",
        ]
    parts += axis_sections(rows, out_dir, SCORE)
    parts += info_sections.sections(rows, out_dir)
    parts += feedback_sections.sections(rows, out_dir)
    parts += suits_sections.sections(rows, out_dir)
    parts += ranks_sections.sections(rows, out_dir)
    return "\n".join(parts)


def score_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per result: deck, feedback, a strategy label, score, and ratio to optimal."""
    keys = [c for c in KEY_COLUMNS if c in rows]
    cols = ["deck", "feedback", *keys, "expected_score", "expected_score_exact"]
    cols += [c for c in ("std_error", "n_states") if c in rows]
    table = rows[cols].copy()
    table["label"] = [strategy_label(r, keys) for r in table[keys].to_dict("records")]
    optimum = (
        table[(table["strategy"] == "optimal") & (table.get("method", "exact") == "exact")]
        .groupby(["deck", "feedback"])["expected_score"]
        .max()
    )
    keys_and_scores = list(
        zip(table["deck"], table["feedback"], table["expected_score"], strict=True)
    )
    table["ratio_to_optimal"] = [
        score / optimum.get((d, f), float("nan")) for d, f, score in keys_and_scores
    ]
    # the gaps: to the optimum, and to greedy's best exact score on the deck
    table["below_optimal"] = [
        optimum.get((d, f), float("nan")) - score for d, f, score in keys_and_scores
    ]
    greedy = (
        table[(table["strategy"] == "greedy") & (table.get("method", "exact") == "exact")]
        .groupby(["deck", "feedback"])["expected_score"]
        .max()
    )
    table["above_greedy"] = [
        score - greedy.get((d, f), float("nan")) for d, f, score in keys_and_scores
    ]
    order = [
        *("deck", "feedback", "label", "expected_score", "ratio_to_optimal", "below_optimal"),
        "above_greedy",
    ]
    rest = [c for c in table.columns if c not in order and c not in keys]
    # equal scores in one order whatever order the rows were stored in: the optimum first
    # (the reference), then by label
    tie = (table["strategy"] != "optimal").rename("tie")
    by = ["deck", "feedback", "expected_score", "tie", "label"]
    return table[order + rest].join(tie).sort_values(by, kind="stable").drop(columns="tie")


def strategy_label(row: dict, keys: list[str]) -> str:
    """A short label such as "greedy (tie_break=lowest)", or "switch (patience=2)" for a
    strategy of one's own (its arguments, from the JSON of ``strategy_params``)."""
    plain = [k for k in keys[1:] if k not in ("method", "strategy_params")]
    extras = [f"{k}={row[k]}" for k in plain if pd.notna(row.get(k))]
    if isinstance(row.get("strategy_params"), str):
        own = json.loads(row["strategy_params"])
        extras += [f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in own.items()]
    if row.get("method") not in (None, "exact") and pd.notna(row.get("method")):
        extras.append(str(row["method"]))
    return row["strategy"] + (f" ({', '.join(extras)})" if extras else "")
