"""Summary sections for the info strategy's studies (gamma_sweep, entropy_grid) of card_guessing.

Called from :mod:`solvers.card_guessing.summary`; a section appears only when the rows hold
its kind of grid: several gammas at one (r, t) (the gamma sweep), or several (r, t) points
(the entropy grid).  Ratios and "reaches the optimum" use the exact rational columns.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from solvers.entropy import preset_name
from solvers.kit.summary_parts import PALETTE, WIDTH, save_figure, styled, subplots

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


def gamma_facts(rows: pd.DataFrame, info: pd.DataFrame) -> dict[str, dict]:
    """Per deck, the numbers a caption of the gamma plot may quote: the optimum (exact and
    float), greedy, info's best score and the gamma of it (the first), and the gamma
    intervals where info's exact score equals the optimum ([] when it never does)."""
    best, greedy = _reference(rows, "optimal"), _reference(rows, "greedy")
    facts = {}
    for deck, group in info.groupby("deck", sort=False):
        group = group.sort_values("gamma")
        scores = [Fraction(x) for x in group["expected_score_exact"]]
        top = max(scores)
        opt = best.get(deck)
        flags = [opt is not None and s == opt for s in scores]
        facts[str(deck)] = {
            "optimal": float(opt) if opt is not None else None,
            "optimal_exact": str(opt) if opt is not None else None,
            "greedy": float(greedy[deck]) if deck in greedy else None,
            "best_info": float(top),
            "best_info_gamma": float(group["gamma"].iloc[scores.index(top)]),
            "optimal_intervals": [
                list(r) for r in optimal_intervals(group["gamma"].tolist(), flags)
            ],
        }
    return facts


@styled
def plot_gamma_sweep(rows: pd.DataFrame, info: pd.DataFrame, path: Path) -> Path:
    """One panel per deck, stacked: info's score against gamma, the gammas where it equals the
    optimum exactly marked, greedy and optimal as dashed lines; where info never reaches the
    optimum the panel says how close it comes.  The caption's numbers go into the PNG
    (:func:`gamma_facts`)."""
    decks = list(dict.fromkeys(info["deck"]))
    best, greedy = _reference(rows, "optimal"), _reference(rows, "greedy")
    facts = gamma_facts(rows, info)
    fig, axes = subplots(
        len(decks), 1, figsize=(WIDTH, 0.9 + 2.1 * len(decks)), sharex=True, squeeze=False
    )
    blue, red, green = PALETTE[0], PALETTE[1], PALETTE[2]
    for ax, deck in zip(axes[:, 0], decks, strict=True):
        group = info[info["deck"] == deck].sort_values("gamma")
        ax.plot(group["gamma"], group["expected_score"], "-", color=blue, lw=1.5, label="info")
        if deck in greedy:
            ax.axhline(float(greedy[deck]), ls="--", color=red, label="greedy")
        if deck in best:
            ax.axhline(float(best[deck]), ls=":", lw=2, color=green, label="optimal")
            hit = group[[Fraction(x) == best[deck] for x in group["expected_score_exact"]]]
            if len(hit):
                ax.plot(hit["gamma"], hit["expected_score"], "o", ms=5, color=green,
                        label="info = optimal (exact)")  # fmt: skip
            else:
                said = facts[str(deck)]
                ax.annotate(
                    f"never optimal: at best {said['best_info']:.6f}\n(gamma "
                    f"{said['best_info_gamma']:g}), optimum {said['optimal']:.6f}",
                    (0.02, 0.06), xycoords="axes fraction", ha="left", va="bottom",
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.9},
                )  # fmt: skip
        ax.set_title(f"deck ({deck})", loc="left")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("gamma (weight of the entropy term)")
    fig.supylabel("expected correct guesses")
    handles = {}
    for ax in axes[:, 0]:
        for label, handle in zip(*reversed(ax.get_legend_handles_labels()), strict=True):
            handles.setdefault(label, handle)
    fig.legend(handles.values(), handles.keys(), loc="upper center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.55 / fig.get_figheight()))
    return save_figure(fig, path, tight=False, facts=facts)


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


@styled
def plot_heatmaps(ratios: pd.DataFrame, path: Path) -> Path:
    """One heatmap per deck, stacked (r across, t up): how far info's best score over gamma
    falls below the optimum, in percent, with a dot where it reaches the optimum exactly."""
    decks = list(dict.fromkeys(ratios["deck"]))
    fig, axes = subplots(
        len(decks), 1, figsize=(WIDTH, 0.8 + 2.05 * len(decks)), sharex=True, squeeze=False,
        layout="constrained",
    )  # fmt: skip
    worst = 100 * (1 - ratios["best_ratio"].min())
    for ax, deck in zip(axes[:, 0], decks, strict=True):
        part = ratios[ratios["deck"] == deck]
        below = part.assign(below=100 * (1 - part["best_ratio"])).pivot(
            index="entropy_t", columns="entropy_r", values="below"
        )
        reached = part.pivot(index="entropy_t", columns="entropy_r", values="reaches_optimum")
        image = ax.imshow(
            below.to_numpy(), origin="lower", cmap="viridis_r", vmin=0, vmax=worst, aspect="auto"
        )
        ax.set_xticks(range(below.shape[1]), [f"{v:g}" for v in below.columns])
        ax.set_yticks(range(below.shape[0]), [f"{v:g}" for v in below.index])
        ax.set_ylabel("degree t")
        ax.set_title(f"deck ({deck})", loc="left")
        i, j = np.nonzero(reached.reindex_like(below).fillna(False).to_numpy(dtype=bool))
        ax.plot(j, i, "o", ms=4, color="black", ls="none", label="optimum reached (exact)")
    axes[-1, 0].set_xlabel("order r")
    label = "best score below the optimum (%)"
    fig.colorbar(image, ax=axes[:, 0].tolist(), shrink=0.6, label=label)
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside upper right", frameon=False)
    return save_figure(fig, path, tight=False)
