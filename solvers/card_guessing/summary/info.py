"""Summary sections for the info strategy's studies (gamma_sweep, entropy_grid) of card_guessing.

Called from :mod:`solvers.card_guessing.summary`; a section appears only when the rows hold
its kind of grid: several gammas at one (r, t) (the gamma sweep), or several (r, t) points
(the entropy grid).  Ratios and "reaches the optimum" use the exact rational columns.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from solvers.entropy import preset_name  # noqa: E402
from solvers.kit.summary_parts import save_figure  # noqa: E402

MANY = 12  # more info rows than this per deck: the per-deck table shows only the best one


def compact(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows for the per-deck tables: info variants beyond MANY per deck reduced to the best."""
    if "strategy" not in rows or "gamma" not in rows:
        return rows
    is_info = rows["strategy"] == "info"
    keep = [rows[~is_info]]
    for _, group in rows[is_info].groupby(["deck", "feedback"], sort=False):
        keep.append(group if len(group) <= MANY else group.nlargest(1, "expected_score"))
    return pd.concat(keep).sort_index()


def compacted(rows: pd.DataFrame) -> set[tuple[str, str]]:
    """The (deck, feedback) pairs whose info rows :func:`compact` reduced to the best one."""
    if "strategy" not in rows or "gamma" not in rows:
        return set()
    counts = rows[rows["strategy"] == "info"].groupby(["deck", "feedback"], sort=False).size()
    return {key for key, n in counts.items() if n > MANY}


def compact_note(deck: str) -> str:
    """The sentence under a per-deck table whose info rows were reduced to the best."""
    return (
        f"The table shows the best of the `info` settings run on deck ({deck}); every "
        "setting's row is in `results/` (the gamma and (r, t) sections below draw them)."
    )


def sections(rows: pd.DataFrame, out_dir: Path) -> list[str]:
    """Markdown lines of the gamma-sweep and entropy-grid sections (empty if not applicable)."""
    info = _exact_info(rows)
    if info.empty:
        return []
    points = info[["entropy_r", "entropy_t", "log_base"]].drop_duplicates()
    out: list[str] = []
    if len(points) == 1 and info["gamma"].nunique() >= 3:
        out += gamma_sweep_section(rows, info, out_dir)
    if len(points) >= 4:
        out += entropy_grid_section(rows, info, out_dir)
    return out


def _exact_info(rows: pd.DataFrame) -> pd.DataFrame:
    if "gamma" not in rows or "strategy" not in rows:
        return rows.iloc[0:0]
    method = rows.get("method", "exact")
    return rows[(rows["strategy"] == "info") & (method == "exact")].copy()


def _reference(rows: pd.DataFrame, strategy: str) -> dict[str, Fraction]:
    """deck -> exact expected score of ``strategy`` (exact rows, lowest tie-break for greedy)."""
    method = rows.get("method", "exact")
    ref = rows[(rows["strategy"] == strategy) & (method == "exact")]
    if strategy == "greedy" and "tie_break" in ref:
        ref = ref[ref["tie_break"].isin(["lowest"])]
    return {d: Fraction(x) for d, x in zip(ref["deck"], ref["expected_score_exact"], strict=True)}


# ----------------------------------------------------------------------------- gamma sweep


def optimal_intervals(gammas: list[float], optimal: list[bool]) -> list[tuple[float, float]]:
    """Maximal runs of consecutive grid gammas where info is optimal, as (first, last)."""
    runs: list[tuple[float, float]] = []
    start = None
    for i, (g, ok) in enumerate(zip(gammas, optimal, strict=True)):
        if ok and start is None:
            start = g
        if start is not None and (not ok or i == len(gammas) - 1):
            runs.append((start, g if ok else gammas[i - 1]))
            start = None
    return runs


def gamma_table(rows: pd.DataFrame, info: pd.DataFrame) -> pd.DataFrame:
    """Per deck: optimum, greedy, best info, and the gamma intervals where info is optimal."""
    best, greedy = _reference(rows, "optimal"), _reference(rows, "greedy")
    lines = []
    for deck, group in info.groupby("deck", sort=False):
        group = group.sort_values("gamma")
        scores = [Fraction(x) for x in group["expected_score_exact"]]
        opt = best.get(deck)
        flags = [opt is not None and s == opt for s in scores]
        runs = optimal_intervals(group["gamma"].tolist(), flags)
        lines.append(
            {
                "deck": deck,
                "optimal": float(opt) if opt is not None else float("nan"),
                "greedy": float(greedy[deck]) if deck in greedy else float("nan"),
                "best info": float(max(scores)),
                "gammas optimal": sum(flags),
                "of": len(flags),
                "intervals where info = optimal": ", ".join(
                    f"[{a:g}, {b:g}]" if a != b else f"{a:g}" for a, b in runs
                )
                or "none",
            }
        )
    return pd.DataFrame(lines)


def gamma_sweep_section(rows: pd.DataFrame, info: pd.DataFrame, out_dir: Path) -> list[str]:
    """The figure-3 style plot per deck and the table of optimal gamma intervals."""
    from solvers.kit.summary_parts import markdown_table

    table = gamma_table(rows, info)
    table.to_parquet(out_dir / "card_guessing_gamma_intervals.parquet", index=False)
    name = "card_guessing_gamma_sweep.png"
    plot_gamma_sweep(rows, info, out_dir / name)
    r, t, base = info[["entropy_r", "entropy_t", "log_base"]].iloc[0]
    return [
        "### Info strategy against gamma",
        "",
        f"Entropy H_(r={r:g}, t={t:g}) in log base {base:g}; exact expected scores; a gamma "
        "counts as optimal when the exact rational score equals the optimum.",
        "",
        markdown_table(table),
        "",
        f"![expected score against gamma](summary/{name})",
        "",
    ]


def plot_gamma_sweep(rows: pd.DataFrame, info: pd.DataFrame, path: Path) -> Path:
    """One panel per deck: info's score against gamma, greedy and optimal as dashed lines."""
    decks = list(dict.fromkeys(info["deck"]))
    best, greedy = _reference(rows, "optimal"), _reference(rows, "greedy")
    fig, axes = plt.subplots(1, len(decks), figsize=(4.6 * len(decks), 3.6), squeeze=False)
    for ax, deck in zip(axes[0], decks, strict=True):
        group = info[info["deck"] == deck].sort_values("gamma")
        ax.plot(
            group["gamma"], group["expected_score"], "o-", ms=2.5, color="tab:blue", label="info"
        )
        if deck in greedy:
            ax.axhline(float(greedy[deck]), ls="--", color="tab:red", label="greedy")
        if deck in best:
            ax.axhline(float(best[deck]), ls="--", color="tab:green", label="optimal")
        ax.set_title(f"deck ({deck})")
        ax.set_xlabel("gamma")
        ax.set_ylabel("expected correct guesses")
        ax.legend(fontsize=8)
    return save_figure(fig, path)


# ---------------------------------------------------------------------------- entropy grid


def best_ratios(rows: pd.DataFrame, info: pd.DataFrame) -> pd.DataFrame:
    """Per deck and (r, t): the best ratio of info's score to the optimum over gamma."""
    best = _reference(rows, "optimal")
    info = info[info["deck"].isin(best)].copy()
    info["ratio"] = [
        float(Fraction(x) / best[d])
        for d, x in zip(info["deck"], info["expected_score_exact"], strict=True)
    ]
    info["optimal"] = [
        Fraction(x) == best[d]
        for d, x in zip(info["deck"], info["expected_score_exact"], strict=True)
    ]
    keys = ["deck", "entropy_r", "entropy_t"]
    out = info.groupby(keys, sort=False).agg(
        best_ratio=("ratio", "max"), reaches_optimum=("optimal", "any")
    )
    idx = info.groupby(keys, sort=False)["ratio"].idxmax()
    out["best_gamma"] = info.loc[idx, "gamma"].to_numpy()
    return out.reset_index()


def entropy_grid_section(rows: pd.DataFrame, info: pd.DataFrame, out_dir: Path) -> list[str]:
    """Heatmaps of the best ratio to the optimum per (r, t), and the named members' table."""
    from solvers.kit.summary_parts import markdown_table

    ratios = best_ratios(rows, info)
    if ratios.empty:
        return []
    ratios.to_parquet(out_dir / "card_guessing_entropy_grid.parquet", index=False)
    name = "card_guessing_entropy_grid.png"
    plot_heatmaps(ratios, out_dir / name)
    worst = ratios.groupby(["entropy_r", "entropy_t"]).agg(
        worst_deck_ratio=("best_ratio", "min"), optimal_on_all=("reaches_optimum", "all")
    )
    worst = worst.reset_index()
    worst["member"] = [
        preset_name(r, t) or "" for r, t in zip(worst["entropy_r"], worst["entropy_t"], strict=True)
    ]
    named = worst[worst["member"] != ""].sort_values("worst_deck_ratio", ascending=False)
    n_all = int(worst["optimal_on_all"].sum())
    gammas = ", ".join(f"{g:g}" for g in sorted(info["gamma"].unique()))
    return [
        "### Which entropies make info optimal",
        "",
        f"For every (r, t), the best ratio of info's exact score to the optimum over gamma in "
        f"{{{gammas}}}. (r, t) points optimal on every deck: {n_all} of {len(worst)}.",
        "",
        markdown_table(named.reset_index(drop=True)),
        "",
        f"![best ratio to optimum per (r, t)](summary/{name})",
        "",
    ]


def plot_heatmaps(ratios: pd.DataFrame, path: Path) -> Path:
    """One heatmap per deck (r across, t up) of the best ratio to the optimum."""
    decks = list(dict.fromkeys(ratios["deck"]))
    fig, axes = plt.subplots(1, len(decks), figsize=(4.8 * len(decks), 4.2), squeeze=False)
    lo = ratios["best_ratio"].min()
    for ax, deck in zip(axes[0], decks, strict=True):
        grid = ratios[ratios["deck"] == deck].pivot(
            index="entropy_t", columns="entropy_r", values="best_ratio"
        )
        image = ax.imshow(
            grid.to_numpy(), origin="lower", cmap="viridis", vmin=lo, vmax=1.0, aspect="auto"
        )
        ax.set_xticks(
            range(grid.shape[1]), [f"{v:g}" for v in grid.columns], fontsize=7, rotation=45
        )
        ax.set_yticks(range(grid.shape[0]), [f"{v:g}" for v in grid.index], fontsize=7)
        ax.set_xlabel("order r")
        ax.set_ylabel("degree t")
        ax.set_title(f"deck ({deck})")
        done = np.isclose(grid.to_numpy(), 1.0, rtol=0, atol=1e-15)
        for i, j in zip(*np.nonzero(done), strict=True):
            ax.text(j, i, "*", ha="center", va="center", color="white", fontsize=8)
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="best score / optimum (* = 1)")
    return save_figure(fig, path, tight=False)
