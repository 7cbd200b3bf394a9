"""Summary of ``no_repeat`` rows: Gural, Simper & So (2019)'s conjecture 3.1 over every N, and its
figure 1."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from solvers.kit.stored_rows import StoredRows, frame_of, takes_stored_rows
from solvers.kit.summary_parts import WIDTH, left_out, save_figure, styled, subplots

FIGURE_N = 20  # figure 1a's deck size
FIGURE_M_MAX = 14  # figure 1a's last m
SHOWN_LINES = 40  # summary.md lists every N up to this many; beyond, N = 25, 50, ...
SHOWN_EVERY = 25  # (and the first and last N), or every k-th multiple of 25 when that would
# be more lines, and says where every N is (summary/no_repeat_scan.parquet)
SCAN = ["N", "n_tuples", "n_violations", "min_gap", "min_gap_n", "min_gap_k", "min_gap_m"]
CURVES = ["curve_m", "curve_h_a", "curve_h_b"]  # lists, read for N = FIGURE_N only


@takes_stored_rows
def summarize(rows: pd.DataFrame | StoredRows, out_dir: Path) -> str:
    """Markdown: totals (violations, smallest gap), a per-N table, figure 1a and 1b plots
    (of stored rows: the scalar columns of every row, the curves of N = FIGURE_N)."""
    from solvers.kit.summary_parts import markdown_table

    if not len(rows):
        return "No successful results."
    curves = figure_rows(rows)
    rows = frame_of(rows, [*SCAN, "max_gap", "fixed_gap"]).sort_values("N")
    table = rows[[*SCAN, "max_gap", "fixed_gap"]].reset_index(drop=True)
    table.to_parquet(out_dir / "no_repeat_scan.parquet", index=False)
    smallest = table.loc[table["min_gap"].idxmin()] if table["min_gap"].notna().any() else None
    parts = [
        f"Decks of N = {rows['N'].min()}..{rows['N'].max()} distinct cards: "
        f"{int(rows['n_tuples'].sum()):,} valid (N, n, k, m), "
        f"**{int(rows['n_violations'].sum())} violations** of H(a) <= H(b) (m >= 1; m = 0 "
        "gives equality).",
        "",
    ]
    if smallest is not None:
        parts += [
            f"Smallest gap H(b) - H(a) = {smallest['min_gap']:.6g} nats at N = "
            f"{int(smallest['N'])}, n = {int(smallest['min_gap_n'])}, k = "
            f"{int(smallest['min_gap_k'])}, m = {int(smallest['min_gap_m'])}.",
            "",
        ]
    shown = shown_lines(table)
    parts += [markdown_table(shown[SCAN]), ""]
    every = "`summary/no_repeat_scan.parquet` (with max_gap and fixed_gap)"
    if note := left_out(len(shown), len(table), "values of N", every):
        parts += [note, ""]
    for name, plot, data in (
        ("no_repeat_figure_1a.png", plot_figure_1a, curves),
        ("no_repeat_figure_1b.png", plot_figure_1b, rows),
    ):
        if plot(data, out_dir / name):
            parts += [f"![{name}](summary/{name})", ""]
    return "\n".join(parts)


def shown_lines(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the per-N table summary.md shows: every one up to SHOWN_LINES, else the
    multiples of SHOWN_EVERY (every k-th of them past SHOWN_LINES) and the first and last N."""
    if len(table) <= SHOWN_LINES:
        return table
    every = SHOWN_EVERY * max(1, math.ceil(table["N"].max() / SHOWN_EVERY / SHOWN_LINES))
    ends = table["N"].isin([table["N"].min(), table["N"].max()])
    return table[(table["N"] % every == 0) | ends]


def figure_rows(rows: pd.DataFrame | StoredRows) -> pd.DataFrame:
    """The rows of N = FIGURE_N with their curves (figure 1a), in store order."""
    if isinstance(rows, pd.DataFrame):
        return rows[rows["N"] == FIGURE_N]
    return rows.frame(["N", *CURVES], where=f"N = {FIGURE_N}")


@styled
def plot_figure_1a(rows: pd.DataFrame, path: Path) -> bool:
    """Both conditional entropies against m for N = 20, k = 1, n = m + 3 (figure 1a of Gural,
    Simper & So 2019)."""
    match = rows[rows["N"] == FIGURE_N]
    if match.empty:
        return False
    row = match.iloc[0]
    m = [x for x in row["curve_m"] if x <= FIGURE_M_MAX]
    fig, ax = subplots(figsize=(WIDTH, 3.8))
    ax.plot(m, list(row["curve_h_a"])[: len(m)], "o-", label="H(c | X(a)): refused card again")
    ax.plot(m, list(row["curve_h_b"])[: len(m)], "s--", label="H(c | X(b)): fresh card")
    ax.set_xlabel("m (times card a was refused)")
    ax.set_ylabel("conditional entropy (nats)")
    ax.set_title(f"N = {FIGURE_N}, k = 1, n = m + 3")
    ax.legend()
    save_figure(fig, path)
    return True


@styled
def plot_figure_1b(rows: pd.DataFrame, path: Path) -> bool:
    """H(b) - H(a) at fixed (n, k, m) = (5, 1, 2) against N, and the smallest gap per N."""
    data = rows.dropna(subset=["fixed_gap"])
    if data.empty:
        return False
    fig, ax = subplots(figsize=(WIDTH, 3.8))
    ax.semilogy(data["N"], data["fixed_gap"], label="gap at n = 5, k = 1, m = 2")
    ax.semilogy(rows["N"], rows["min_gap"], ":", label="smallest gap over (n, k, m >= 1)")
    ax.set_xlabel("N (distinct cards)")
    ax.set_ylabel("H(c | X(b)) - H(c | X(a)) (nats)")
    ax.legend()
    save_figure(fig, path)
    return True
