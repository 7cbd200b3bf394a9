"""Summary of ``triples`` rows: win probability against n, the chain's hitting times,
distribution after j rounds and equilibrium level, whichever analyses the study ran."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm

from solvers.kit.stored_rows import StoredRows, takes_stored_rows
from solvers.kit.summary_parts import (
    MARKERS,
    PALETTE,
    WIDTH,
    left_out,
    markdown_table,
    save_figure,
    styled,
    subplots,
)
from solvers.registry import row_columns

SHOWN_MASS = 1e-3  # the stationary law's bars stop at the last level of at least this mass

DECK = ["ranks", "suits", "k"]
# The columns each analysis's section reads (of a large store, those only, analysis by
# analysis: a distribution's rows, one per level and round, are most of a big study).
COLUMNS = {
    "win_probability": [*DECK, "n", "p_win", "p_win_exact"],
    "monte_carlo": [*DECK, "n", "games", "p_win", "p_win_mc", "p_win_se", "z_score"],
    "hitting_times": [*DECK, "start", "target", "expected_rounds", "expected_rounds_exact"],
    "distribution": [*DECK, "start", "after_rounds", "level", "prob", "prob_exact"],
    "equilibrium": [
        *DECK,
        "crossing_level",
        "mode_level",
        "mean_level",
        "region_mass",
        "stationary",
    ],
}


@takes_stored_rows
def summarize(rows: pd.DataFrame | StoredRows, out_dir: Path) -> str:
    """Markdown: one section per analysis present, each with a table and a PNG plot."""
    if not len(rows):
        return "No successful results."
    out_dir.mkdir(parents=True, exist_ok=True)
    sections = {
        "win_probability": win_section,
        "monte_carlo": monte_carlo_section,
        "hitting_times": hitting_section,
        "distribution": distribution_section,
        "equilibrium": equilibrium_section,
    }
    parts = []
    for analysis, section in sections.items():
        part = analysis_rows(rows, analysis)
        if len(part):
            parts.append(section(part, out_dir))
    return "\n".join(parts)


def analysis_rows(rows: pd.DataFrame | StoredRows, analysis: str) -> pd.DataFrame:
    """The rows of one analysis, in store order (of stored rows: its COLUMNS only), its
    integer columns as integers (a frame of every analysis holds them as floats with NaN)."""
    if isinstance(rows, pd.DataFrame):
        part = rows[rows["analysis"] == analysis]
    else:
        have = set(rows.columns)
        cols = [c for c in COLUMNS[analysis] if c in have]
        part = rows.frame(cols, where=f"analysis = '{analysis}'")
    ints = [c for c, kind in row_columns("triples").items() if kind == "int64" and c in part]
    whole = [c for c in ints if part[c].dtype.kind == "f" and part[c].notna().all()]
    return part.astype(dict.fromkeys(whole, "int64")) if whole else part


def deck_label(ranks: int, suits: int, k: int) -> str:
    """A short deck name such as "13x4, k=3"."""
    return f"{ranks}x{suits}, k={k}"


def win_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Deck, level n, P(A wins) (float and exact) and P(B wins), sorted."""
    table = rows[[*DECK, "n", "p_win", "p_win_exact"]].copy()
    table["p_lose"] = 1 - table["p_win"]
    return table.sort_values([*DECK, "n"]).reset_index(drop=True)


@styled
def win_section(rows: pd.DataFrame, out_dir: Path) -> str:
    """Table and plot of A's win probability against the level n, per deck."""
    table = win_table(rows)
    table.to_parquet(out_dir / "triples_win.parquet", index=False)
    fig, (lin, log) = subplots(2, 1, figsize=(WIDTH, 6.4), sharex=True, layout="constrained")
    decks = list(table.groupby(DECK))
    for k, (deck, group) in enumerate(decks):
        style = {"color": PALETTE[k % len(PALETTE)], "marker": MARKERS[k % len(MARKERS)]}
        lin.plot(group["n"], group["p_win"], label=deck_label(*deck), **style)
        positive = group[group["p_win"] > 0]
        log.semilogy(positive["n"], positive["p_win"], label=deck_label(*deck), **style)
        zero = group.loc[group["p_win"] == 0, "n"].tolist()
        if zero:  # not on a log scale: said
            said = f"{deck_label(*deck)}: P(A wins) = 0\nat n = {', '.join(map(str, zero))}"
            log.annotate(said, (0.98, 0.95 - 0.15 * k), xycoords="axes fraction", ha="right",
                         va="top")  # fmt: skip
    lin.axhline(0.5, color="grey", lw=0.8, ls="--")
    lin.set_title("P(A wins), linear scale", loc="left")
    log.set_title("P(A wins), log scale", loc="left")
    lin.set_ylabel("P(A wins)")
    log.set_ylabel("P(A wins)")
    log.set_xlabel("level n (k-of-a-kinds A needs)")
    log.set_xticks(range(int(table["n"].min()), int(table["n"].max()) + 1))
    for ax in (lin, log):
        ax.grid(True, alpha=0.3)
    if len(decks) > 1:
        lin.legend()
    else:
        lin.annotate(f"deck {deck_label(*decks[0][0])}", (0.98, 0.95), xycoords="axes fraction",
                     ha="right", va="top")  # fmt: skip
    save_figure(fig, out_dir / "triples_win.png", tight=False)
    shown = table[[*DECK, "n", "p_win", "p_lose", "p_win_exact"]]
    return "\n".join(
        [
            "### P(A wins) against the level n",
            "",
            markdown_table(shown),
            "",
            "![win probability against n](summary/triples_win.png)",
            "",
        ]
    )


@styled
def monte_carlo_section(rows: pd.DataFrame, out_dir: Path) -> str:
    """Monte Carlo win rates against the exact values, with standard errors and z-scores."""
    cols = [*DECK, "n", "games", "p_win", "p_win_mc", "p_win_se", "z_score"]
    table = rows[cols].sort_values([*DECK, "n"]).reset_index(drop=True)
    table.to_parquet(out_dir / "triples_monte_carlo.parquet", index=False)
    fig, ax = subplots(figsize=(WIDTH, 3.8))
    ax.plot(table["n"], table["p_win"], "k-", lw=1, label="exact")
    ax.errorbar(
        table["n"], table["p_win_mc"], yerr=2 * table["p_win_se"], fmt="o", ms=3, label="MC ±2 SE"
    )
    ax.set_xlabel("level n")
    ax.set_ylabel("P(A wins)")
    ax.legend()
    save_figure(fig, out_dir / "triples_monte_carlo.png")
    worst = float(table["z_score"].abs().max())
    return "\n".join(
        [
            "### Monte Carlo play against the exact win probability",
            "",
            markdown_table(table),
            "",
            f"Largest |z| = {worst:.2f}.",
            "",
            "![Monte Carlo against exact](summary/triples_monte_carlo.png)",
            "",
        ]
    )


def hitting_matrix(rows: pd.DataFrame) -> pd.DataFrame:
    """Expected rounds as a start x target table (one deck)."""
    return rows.pivot_table(index="start", columns="target", values="expected_rounds")


@styled
def hitting_section(rows: pd.DataFrame, out_dir: Path) -> str:
    """Per deck: the start x target table of expected rounds and the same as a heat map on a
    log scale (a line per start level would put 14 on one axes for 13 ranks)."""
    keep = [*DECK, "start", "target", "expected_rounds", "expected_rounds_exact"]
    rows[keep].to_parquet(out_dir / "triples_hitting.parquet", index=False)
    parts = ["### Expected rounds to first reach each level (exact)", ""]
    for deck, group in rows.groupby(DECK):
        name = "triples_hitting_{}x{}_k{}.png".format(*deck)
        matrix = hitting_matrix(group)
        fig, ax = subplots(figsize=(WIDTH, 4.8))
        shown = matrix.where(matrix > 0)  # 0: the start is the target (blank)
        image = ax.imshow(shown.values, origin="lower", cmap="viridis", norm=LogNorm())
        ax.set_xticks(range(len(matrix.columns)), matrix.columns)
        ax.set_yticks(range(len(matrix.index)), matrix.index)
        ax.set_xlabel("target level")
        ax.set_ylabel("start level")
        ax.set_title(deck_label(*deck))
        fig.colorbar(image, ax=ax, label="expected rounds (log scale)")
        save_figure(fig, out_dir / name)
        text = matrix.map(lambda v: f"{v:.6g}").reset_index()
        parts += [f"Deck {deck_label(*deck)} (rows: start, columns: target):", ""]
        parts += [markdown_table(text), "", f"![hitting times](summary/{name})", ""]
    return "\n".join(parts)


@styled
def distribution_section(rows: pd.DataFrame, out_dir: Path) -> str:
    """Per deck and start: a level x round heat map and the last even and odd distributions."""
    keep = [*DECK, "start", "after_rounds", "level", "prob", "prob_exact"]
    rows[keep].to_parquet(out_dir / "triples_distribution.parquet", index=False)
    parts = ["### Distribution of the level after j rounds", ""]
    for (ranks, suits, k, start), group in rows.groupby([*DECK, "start"]):
        grid = group.pivot_table(index="level", columns="after_rounds", values="prob")
        name = f"triples_distribution_{ranks}x{suits}_k{k}_from{start}.png"
        fig, ax = subplots(figsize=(WIDTH, 4.2))
        image = ax.imshow(grid.values, aspect="auto", origin="lower", cmap="viridis")
        ax.set_yticks(range(len(grid.index)), grid.index)
        ax.set_xlabel("rounds played j")
        ax.set_ylabel("level")
        ax.set_title(f"{deck_label(ranks, suits, k)}, start {start}")
        fig.colorbar(image, ax=ax, label="P(level)")
        save_figure(fig, out_dir / name)
        tail = grid[list(grid.columns[-2:])].rename(columns=lambda j: f"after {j} rounds")
        parts += [f"Deck {deck_label(ranks, suits, k)}, start {start}:", ""]
        parts += [markdown_table(tail.reset_index()), ""]
        every = "`summary/triples_distribution.parquet` (one row per level and round)"
        if note := left_out(len(tail.columns), len(grid.columns), "rounds (the last)", every):
            parts += [note, ""]
        parts += [f"![distribution](summary/{name})", ""]
    return "\n".join(parts)


def equilibrium_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per deck: crossing level, stationary mode and mean, mass on the crossing pair."""
    cols = [*DECK, "crossing_level", "mode_level", "mean_level", "region_mass"]
    return rows[cols].sort_values(DECK).reset_index(drop=True)


@styled
def equilibrium_section(rows: pd.DataFrame, out_dir: Path) -> str:
    """The equilibrium level per deck (table and plot) and one stationary law."""
    table = equilibrium_table(rows)
    table.to_parquet(out_dir / "triples_equilibrium.parquet", index=False)
    fig, (levels, law) = subplots(2, 1, figsize=(WIDTH, 6.6), layout="constrained")
    for k, ((suits, kind), group) in enumerate(table.groupby(["suits", "k"])):
        style = {"color": PALETTE[k % len(PALETTE)], "marker": MARKERS[k % len(MARKERS)]}
        levels.plot(
            group["ranks"], group["mean_level"], label=f"{suits} suits, k = {kind}", **style
        )
    levels.set_xlabel("ranks in the deck")
    levels.set_ylabel("stationary mean level")
    levels.set_title("Mean level of the adaptive chain", loc="left")
    levels.grid(True, alpha=0.3)
    levels.legend(ncol=2)
    biggest = rows.sort_values(["ranks", "suits", "k"]).iloc[-1]
    if ((rows["ranks"] == 13) & (rows["suits"] == 4) & (rows["k"] == 3)).any():
        biggest = rows[(rows["ranks"] == 13) & (rows["suits"] == 4) & (rows["k"] == 3)].iloc[0]
    pi = np.asarray(list(biggest["stationary"]), dtype=float)
    shown = np.nonzero(pi >= SHOWN_MASS)[0]  # the levels a bar can show; the rest said below
    last = int(shown.max()) + 1 if len(shown) else len(pi)
    law.bar(range(1, last + 1), pi[:last], color=PALETTE[0])
    law.set_xticks(range(1, last + 1))
    law.set_xlabel(
        f"level (levels {last + 1} to {len(pi)}: {pi[last:].sum():.1e} in all)"
        if last < len(pi)
        else "level"
    )
    law.set_ylabel("stationary probability")
    law.set_title(
        f"Stationary law, deck {deck_label(biggest['ranks'], biggest['suits'], biggest['k'])}",
        loc="left",
    )
    law.grid(True, axis="y", alpha=0.3)
    save_figure(fig, out_dir / "triples_equilibrium.png", tight=False)
    return "\n".join(
        [
            "### Equilibrium of the adaptive game",
            "",
            "crossing_level: the last level where A wins with probability >= 1/2; mode_level "
            "and mean_level: of the stationary law; region_mass: its mass on the crossing "
            "level and the one above.",
            "",
            markdown_table(table),
            "",
            "![equilibrium](summary/triples_equilibrium.png)",
            "",
        ]
    )
