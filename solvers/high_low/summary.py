"""Summary section of family ``high_low``: P(perfect game) against n, and the real decks."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from solvers._report import markdown_table, save_figure  # noqa: E402

PLOT = "high_low_p_perfect.png"
DECK_PLOT = "high_low_decks.png"
SHOWN_N = (2, 3, 4, 5, 6, 7, 8, 9, 10, 19, 20, 50, 99, 100, 150, 200)


def distinct_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per n (optimal play), exact columns preferred over float ones."""
    rows = rows[rows["strategy"] == "optimal"].copy()
    rows["rank"] = rows["method"].map({"exact": 0, "float": 1, "monte_carlo": 2})
    rows = rows.sort_values(["n", "rank"]).drop_duplicates("n")
    cols = ["n", "method", "p_perfect", "p_perfect_exact", "log10_p_perfect"]
    cols += ["expected_correct", "n_states"]
    return rows.reindex(columns=cols).reset_index(drop=True)


def deck_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per real deck, tie rule, strategy and method, with P / P(optimal, exact)."""
    cols = ["ranks", "suits", "ties", "strategy", "method", "p_perfect", "p_perfect_se"]
    cols += ["p_perfect_exact", "expected_correct", "expected_correct_exact", "n_states"]
    keys = ["ranks", "suits", "ties", "strategy", "method"]
    table = rows.sort_values(keys).drop_duplicates(keys).reindex(columns=cols)
    table = table.reset_index(drop=True)
    best = table[(table["strategy"] == "optimal") & (table["method"] == "exact")]
    optimum = best.set_index(["ranks", "suits", "ties"])["p_perfect"]
    table["ratio_to_optimal"] = [
        p / optimum.get((r, s, t), float("nan"))
        for r, s, t, p in zip(
            table["ranks"], table["suits"], table["ties"], table["p_perfect"], strict=True
        )
    ]
    return table


def short_exact(value, limit: int = 32):
    """An exact "p/q" string, or "(long)" when it would not fit a table cell."""
    if not isinstance(value, str):
        return value
    return value if len(value) <= limit else f"({len(value)} characters, see Parquet)"


def plot_distinct(table: pd.DataFrame, path: Path) -> None:
    """P(perfect game) against n on a log scale."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.semilogy(table["n"], 10.0 ** table["log10_p_perfect"], marker=".", lw=1)
    ax.set_xlabel("n (distinct cards)")
    ax.set_ylabel("P(every call right), optimal play")
    ax.set_title("Higher/lower with distinct cards")
    ax.grid(True, which="both", alpha=0.3)
    save_figure(fig, path)


def plot_decks(table: pd.DataFrame, path: Path) -> None:
    """P(perfect game) against cards in the deck, one line per suits and tie rule."""
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    best = table[table["strategy"] == "optimal"]
    if best.empty:
        best = table
    for (suits, ties), part in best.groupby(["suits", "ties"]):
        part = part.sort_values("ranks")
        ax.semilogy(
            part["ranks"] * suits,
            part["p_perfect"],
            marker="o",
            ms=3,
            label=f"{suits} suits, ties {ties}",
        )
    ax.set_xlabel("cards in the deck (ranks x suits)")
    ax.set_ylabel("P(no wrong call)")
    ax.set_title("Higher/lower with repeated ranks")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    save_figure(fig, path)


def summarize(rows: pd.DataFrame, out_dir: Path) -> str:
    """Markdown: distinct-card table and log-scale plot, real-deck table and plot."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = ["## high_low: calling higher or lower (Norvig 2020)"]
    distinct_rows = rows[rows["n"].notna()] if "n" in rows else rows.iloc[:0]
    deck_rows = rows[rows["ranks"].notna()] if "ranks" in rows else rows.iloc[:0]
    link = out_dir.name
    if not distinct_rows.empty:
        table = distinct_table(distinct_rows)
        table.to_parquet(out_dir / "high_low_distinct.parquet")
        plot_distinct(table, out_dir / PLOT)
        shown = table[table["n"].isin(SHOWN_N)].copy()
        shown["p_perfect_exact"] = shown["p_perfect_exact"].map(short_exact)
        parts += [
            f"Distinct cards 1..n, optimal play (the majority call), {len(table)} values of n.",
            markdown_table(shown.drop(columns=["log10_p_perfect"]), ".6g"),
            f"![P(perfect game) against n]({link}/{PLOT})",
        ]
    if not deck_rows.empty:
        table = deck_table(deck_rows)
        table.to_parquet(out_dir / "high_low_decks.parquet")
        plot_decks(table, out_dir / DECK_PLOT)
        shown = table.drop(columns=["expected_correct_exact"])
        shown["p_perfect_exact"] = shown["p_perfect_exact"].map(short_exact)
        parts += [
            "Real decks (ranks x suits). Monte Carlo rows give the majority rule's value with "
            "its standard error; expected right calls are always exact (best play when the "
            "game goes on after a miss). ratio_to_optimal: P / P(optimal, exact).",
            markdown_table(shown, ".6g"),
            f"![P(perfect game) for real decks]({link}/{DECK_PLOT})",
        ]
    return "\n\n".join(parts) + "\n"
