"""Summary section for decks of m cards in each of r types solved by the float solver (suits52).

Called from :mod:`solvers.card_guessing.summary`; it appears only when the rows hold
``method: float`` results for decks whose types all have the same count.  It shows optimal
minus greedy against m (a table and a plot, one line per r) and, for the largest deck with
an optimal row, the optimal first moves as a small decision tree (column ``first_moves``).
Where the rows hold float ``info`` results (a gamma grid), the table also gives the best
info score per deck and its gamma.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from solvers.kit.summary_parts import WIDTH, save_figure, styled, subplots


def sections(rows: pd.DataFrame, out_dir: Path) -> list[str]:
    """Markdown lines: the optimal-minus-greedy table and plot, and the first moves; none
    when no deck has both (the study ranks52 runs greedy alone with this solver: its ranks
    section shows those rows)."""
    table = gap_table(rows)
    if table.empty or table["gap"].isna().all():
        return []
    from solvers.kit.summary_parts import markdown_table

    table.to_parquet(out_dir / "card_guessing_suits.parquet", index=False)
    name = "card_guessing_suits_gap.png"
    plot_gap(table, out_dir / name)
    lines = [
        "### Equal decks (m cards of each of r types), yes/no feedback, float solver",
        "",
        "`optimal` and `greedy` (ties to the lowest type) from the layered float solver",
        "(agrees with the exact solver to 1e-12 where both run); `gap` = optimal - greedy.",
        "`best_info`: the best `info` policy (Shannon entropy in bits unless the study says",
        "otherwise) over the `gammas` values of its gamma grid, at `best_gamma` (float",
        "evaluation of the policy, info_policy/evaluation.py; dashed in the plot), where it ran.",
        "",
        markdown_table(table),
        "",
        f"![optimal minus greedy](summary/{name})",
        "",
    ]
    return lines + first_moves_section(rows)


def equal_decks(rows: pd.DataFrame) -> pd.DataFrame:
    """Float-method partial-feedback rows whose deck has one count per type, with r and m."""
    need = {"method", "deck", "feedback", "strategy", "expected_score"}
    if not need <= set(rows.columns):
        return rows.iloc[:0]
    ok = rows[(rows["method"] == "float") & (rows["feedback"] == "partial")].copy()
    if "status" in ok:
        ok = ok[ok["status"] == "ok"]
    counts = ok["deck"].astype(str).str.split(",")
    ok = ok[counts.map(lambda cs: len(set(cs)) == 1)]
    ok["r"] = counts.map(len)
    ok["m"] = counts.map(lambda cs: int(cs[0]))
    return ok


def gap_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per (r, m): optimal, greedy, their gap and the optimal solve's states/time."""
    ok = equal_decks(rows)
    if ok.empty:
        return pd.DataFrame()
    greedy = ok[(ok["strategy"] == "greedy") & (ok.get("tie_break") == "lowest")]
    opt = ok[ok["strategy"] == "optimal"]
    out = opt[["r", "m", "expected_score", "n_states", "seconds"]].rename(
        columns={"expected_score": "optimal", "n_states": "states", "seconds": "seconds"}
    )
    out = out.merge(
        greedy[["r", "m", "expected_score"]].rename(columns={"expected_score": "greedy"}),
        on=["r", "m"],
        how="outer",
    )
    out["gap"] = out["optimal"] - out["greedy"]
    out = out.merge(best_info(ok), on=["r", "m"], how="outer")
    out.insert(2, "cards", out["r"] * out["m"])
    out["seconds"] = out["seconds"].round(3)
    cols = ["r", "m", "cards", "optimal", "greedy", "gap", "states", "seconds"]
    if out["best_info"].notna().any():
        cols[5:5] = ["best_info", "best_gamma", "gammas"]
    return out[cols].sort_values(["r", "m"]).reset_index(drop=True)


def best_info(ok: pd.DataFrame) -> pd.DataFrame:
    """Per (r, m): the best info score over the gamma grid, its gamma (the smallest if tied
    within 1e-12) and how many gammas ran."""
    info = ok[ok["strategy"] == "info"]
    if info.empty or "gamma" not in info:
        return pd.DataFrame(columns=["r", "m", "best_info", "best_gamma", "gammas"])
    out = []
    for (r, m), group in info.groupby(["r", "m"]):
        top = group["expected_score"].max()
        best = group[group["expected_score"] >= top - 1e-12 * abs(top)]
        out.append(
            {
                "r": r,
                "m": m,
                "best_info": top,
                "best_gamma": best["gamma"].min(),
                "gammas": len(group),
            }
        )
    return pd.DataFrame(out)


@styled
def plot_gap(table: pd.DataFrame, path: Path) -> None:
    """Optimal minus greedy against m, one line per number of types r."""
    fig, ax = subplots(figsize=(WIDTH, 4))
    for r, group in table.dropna(subset=["gap"]).groupby("r"):
        line = ax.plot(group["m"], group["gap"], marker="o", label=f"r = {r} types")[0]
        if "best_info" in group and group["best_info"].notna().any():
            info = group.dropna(subset=["best_info"])
            ax.plot(
                info["m"],
                info["best_info"] - info["greedy"],
                marker="x",
                linestyle="--",
                color=line.get_color(),
                label=f"r = {r}: best info - greedy",
            )
    ax.set_xlabel("m (cards per type)")
    ax.set_ylabel("optimal - greedy (expected correct guesses)")
    ax.set_title("What optimal play adds to greedy, yes/no feedback")
    ax.grid(alpha=0.3)
    ax.legend()
    save_figure(fig, path, dpi=120)


def first_moves_section(rows: pd.DataFrame) -> list[str]:
    """The decision tree of the largest equal deck that has one (types named A, B, C...)."""
    ok = equal_decks(rows)
    if "first_moves" not in ok:
        return []
    ok = ok[ok["first_moves"].notna() & (ok["strategy"] == "optimal")]
    if ok.empty:
        return []
    row = ok.assign(cards=ok["r"] * ok["m"]).sort_values(["cards", "r"]).iloc[-1]
    return [
        f"#### Optimal first moves, deck ({row['deck']})",
        "",
        "What to name for each of the first cards after each answer so far; `expected` is the",
        "expected number of correct guesses still to come, P(yes) the chance the named type",
        "is next.  Types are named A, B, C... in the order they are first needed.",
        "",
        "```",
        row["first_moves"],
        "```",
        "",
    ]
