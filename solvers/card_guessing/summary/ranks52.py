"""Summary section for n types of 4 cards (study ranks52): optimum, greedy and persistent.

Called from :mod:`solvers.card_guessing.summary`; it appears only when the rows hold
``method: ranked`` results on decks of 4-card types.  A table per n (optimal, greedy with pair
ties, persistent, greedy with lowest-index ties where the float solver ran, the gaps), a plot
of optimum, greedy and gap against n with a straight-line extrapolation of the last points to
n = 13 (marked as such), and the Monte Carlo rows of the full 13 x 4 deck.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from solvers.kit.summary_parts import save_figure  # noqa: E402

FULL = 13
FIT_POINTS = 4  # the last n fitted by a straight line for the extrapolation


def four_card_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Successful partial-feedback rows on decks of 4-card types, with n (types)."""
    need = {"method", "deck", "feedback", "strategy", "expected_score"}
    if not need <= set(rows.columns):
        return rows.iloc[:0]
    ok = rows[rows["feedback"] == "partial"]
    if "status" in ok:
        ok = ok[ok["status"] == "ok"]
    decks = ok["deck"].astype(str)
    types = {d: d.split(",") for d in decks.unique()}  # per distinct deck: 10^6 rows, few decks
    ok = ok[decks.isin([d for d, cs in types.items() if set(cs) == {"4"}])].copy()
    ok["n"] = [len(types[d]) for d in ok["deck"].astype(str)]
    return ok


def ranks_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per n: optimal, greedy (pair ties), persistent, greedy (lowest ties), the gaps."""
    ok = four_card_rows(rows)
    ranked = ok[ok["method"] == "ranked"]
    if ranked.empty:
        return pd.DataFrame()
    label = ranked["strategy"].where(ranked["strategy"] != "greedy", "greedy_pair")
    table = ranked.assign(label=label).pivot_table(
        index="n", columns="label", values="expected_score", aggfunc="first"
    )
    states = ranked[ranked["strategy"] == "optimal"].set_index("n")["n_states"]
    table["states"] = states
    lowest = ok[(ok["method"] == "float") & (ok["strategy"] == "greedy")]
    if "tie_break" in lowest:
        lowest = lowest[lowest["tie_break"] == "lowest"]
    table["greedy_lowest"] = lowest.set_index("n")["expected_score"]
    if {"optimal", "greedy_pair"} <= set(table):
        table["gap"] = table["optimal"] - table["greedy_pair"]
    if {"optimal", "persistent"} <= set(table):
        table["persistent_share_of_gap"] = (table["persistent"] - table["greedy_pair"]) / table[
            "gap"
        ]
    return table.reset_index()


def extrapolated(table: pd.DataFrame, column: str) -> float:
    """A straight line through the last FIT_POINTS values of ``column``, read at n = 13 (NaN
    where the rows hold fewer than two values of it, or none: a study of one strategy)."""
    if column not in table:
        return float("nan")
    tail = table.dropna(subset=[column]).tail(FIT_POINTS)
    if len(tail) < 2:
        return float("nan")
    slope, intercept = np.polyfit(tail["n"], tail[column], 1)
    return float(slope * FULL + intercept)


def plot_ranks(table: pd.DataFrame, path: Path) -> None:
    """Optimum, greedy and persistent against n (n >= 2), the gap below, and dotted
    straight-line extrapolations to n = 13."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 7), sharex=True)
    shown = table[table["n"] >= 2]
    for axis, columns in ((top, ("optimal", "greedy_pair", "persistent")), (bottom, ("gap",))):
        for column, style in zip(columns, ("o-", "s-", "^-"), strict=False):
            if column not in shown:
                continue
            data = shown.dropna(subset=[column])
            if data.empty:
                continue
            axis.plot(data["n"], data[column], style, label=column)
            ends = [data[column].iloc[-1], extrapolated(table, column)]
            axis.plot([data["n"].iloc[-1], FULL], ends, ":", color=axis.lines[-1].get_color())
        if axis.lines:
            axis.legend()
    top.set_ylabel("expected correct guesses")
    top.set_title("n types of 4 cards, yes/no feedback (dotted: extrapolation)")
    bottom.set_xlabel("n (types)")
    bottom.set_ylabel("optimal - greedy")
    save_figure(fig, path, dpi=100)


def sections(rows: pd.DataFrame, out_dir: Path) -> list[str]:
    """Markdown lines: the table, the plot, the extrapolation and the 13 x 4 Monte Carlo."""
    table = ranks_table(rows)
    if table.empty:
        return []
    from solvers.kit.summary_parts import markdown_table

    table.to_parquet(out_dir / "card_guessing_ranks.parquet", index=False)
    name = "card_guessing_ranks.png"
    plot_ranks(table, out_dir / name)
    guesses = {c: extrapolated(table, c) for c in ("optimal", "greedy_pair", "gap")}
    lines = [
        "### n types of 4 cards, yes/no feedback, ranked solver",
        "",
        "`optimal`, `greedy_pair` (ties to the smallest (c, p) pair) and `persistent` from the",
        "ranked float solver (uniform_deck/in_memory.py); `greedy_lowest`: greedy with",
        "lowest-index ties from the hashed float solver (any_deck/greedy.py, up to 7",
        "types); `states`: feasible canonical states.",
        "",
        markdown_table(table),
        "",
        f"![n types of 4](summary/{name})",
        "",
    ]
    said = [f"{name} ~ {value:.3f}" for name, value in guesses.items() if value == value]
    if said:  # NaN (fewer than two values) is not said
        lines += [
            f"Extrapolation (a straight line through the last {FIT_POINTS} n, *not* a result): "
            f"at n = 13 {', '.join(said)}.",
            "",
        ]
    return lines + monte_carlo_section(rows)


def monte_carlo_section(rows: pd.DataFrame) -> list[str]:
    """The Monte Carlo rows of the full 13 x 4 deck (mean and standard error)."""
    ok = four_card_rows(rows)
    mc = ok[(ok["method"] == "monte_carlo") & (ok["n"] == FULL)]
    if mc.empty:
        return []
    from solvers.kit.summary_parts import markdown_table

    cols = [c for c in ("strategy", "tie_break", "window", "n_games") if c in mc]
    shown = mc[[*cols, "expected_score", "std_error"]].dropna(axis=1, how="all")
    return ["#### 13 ranks x 4, Monte Carlo", "", markdown_table(shown), ""]


def draw_ranks(rows: pd.DataFrame, path: Path) -> Path:
    """The plot of :func:`plot_ranks` from any rows (several studies' at once: ranks52 to n = 9
    and ranks_exact's 10 and 11), at ``path``; ValueError when they hold no ranked 4-card rows."""
    table = ranks_table(rows)
    if table.empty:
        raise ValueError("no method=ranked rows on decks of 4-card types to draw")
    plot_ranks(table, path)
    return path
