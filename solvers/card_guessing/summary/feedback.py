"""Summary section comparing card_guessing's feedback models (none, partial, complete) per deck.

Called from :mod:`solvers.card_guessing.summary`; the section appears only when the rows
hold more than one feedback model.  For each deck and model it keeps the best row (an exact
optimum when there is one, else the best estimate), and shows complete feedback's entropy
bounds (Gural, Simper & So 2019, section 4) beside its exact value.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from solvers.kit.summary_parts import PALETTE, WIDTH, save_figure, styled, subplots, whiskers

MODELS = ("none", "partial", "complete")
BOUNDS = ("bound_lower", "bound_lower_chords", "bound_upper")


def sections(rows: pd.DataFrame, out_dir: Path) -> list[str]:
    """Markdown lines: the comparison table and plot, or nothing for a single feedback model."""
    if "feedback" not in rows or rows["feedback"].nunique() < 2:
        return []
    from solvers.kit.summary_parts import markdown_table

    table = comparison_table(rows)
    table.to_parquet(out_dir / "card_guessing_feedback_models.parquet", index=False)
    name = "card_guessing_feedback_models.png"
    plot_comparison(table, out_dir / name)
    return [
        "### Feedback models compared",
        "",
        "Best available strategy per deck and feedback model: an exact optimum where one is",
        "computed, otherwise the best Monte Carlo estimate (± standard error).  For complete",
        "feedback, `bound_lower` is the lower bound of Gural, Simper & So (2019) (averaged step",
        "entropy, least-entropy",
        "curve; not guaranteed), `bound_lower_chords` the rigorous chord version, `bound_upper`",
        "Fano's bound.",
        "",
        markdown_table(table),
        "",
        f"![feedback models](summary/{name})",
        "",
    ]


def best_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (deck, feedback): exact optimal if present, else the highest score."""
    picked = []
    for _, group in rows.groupby(["deck", "feedback"], sort=False):
        exact = group[_is_exact(group) & (group["strategy"] == "optimal")]
        pool = exact if len(exact) else group
        picked.append(pool.sort_values("expected_score", kind="stable").iloc[-1])
    return pd.DataFrame(picked).reset_index(drop=True)


def _is_exact(group: pd.DataFrame) -> pd.Series:
    if "method" not in group:
        return pd.Series(True, index=group.index)
    return group["method"].fillna("exact") == "exact"


def comparison_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per deck: each model's best score with its strategy, and complete feedback's bounds."""
    best = best_rows(rows)
    out = []
    for deck in _decks_in_order(best["deck"]):
        line: dict = {"deck": deck, "cards": sum(int(c) for c in deck.split(","))}
        for model in MODELS:
            hit = best[(best["deck"] == deck) & (best["feedback"] == model)]
            if not len(hit):
                continue
            r = hit.iloc[0]
            line[model] = r["expected_score"]
            line[f"{model}_strategy"] = _label(r)
            se = r.get("std_error")
            line[f"{model}_std_error"] = se if se is not None and se == se else None
            if model == "complete":
                for b in BOUNDS:
                    if b in r and r[b] == r[b]:
                        line[b] = r[b]
        out.append(line)
    return pd.DataFrame(out).dropna(axis=1, how="all")


def _decks_in_order(decks: pd.Series) -> list[str]:
    return sorted(decks.unique(), key=lambda d: (sum(int(c) for c in d.split(",")), d))


def _label(r: pd.Series) -> str:
    method = r.get("method")
    if method not in (None, "exact") and method == method:
        return f"{r['strategy']} ({method})"
    return str(r["strategy"])


def _deck_label(deck: str) -> str:
    """(3,3,3), or "13 types of 4" for long decks of equal counts."""
    counts = deck.split(",")
    if len(deck) < 18 or len(set(counts)) > 1:
        return f"({deck})"
    return f"{len(counts)} types of {counts[0]}"


@styled
def plot_comparison(table: pd.DataFrame, path: Path) -> Path:
    """Grouped horizontal bars: expected score per feedback model for each deck (decks down
    the side, so any number of them reads at the page's width: the figure grows in height),
    complete feedback's entropy bounds as a whisker beside its bar."""
    decks = table["deck"].tolist()
    models = [m for m in MODELS if m in table]
    y = np.arange(len(decks))[::-1]  # the first deck on top
    height = 0.8 / len(models)
    fig, ax = subplots(figsize=(WIDTH, 1.5 + len(decks) * (0.18 * len(models) + 0.12)))
    for i, model in enumerate(models):
        values = table[model].astype(float).to_numpy()
        errors = table.get(f"{model}_std_error")
        xerr = None if errors is None else whiskers(errors.astype(float).to_numpy())
        pos = y + 0.4 - (i + 0.5) * height
        ax.barh(pos, values, height, xerr=xerr, capsize=3, label=model, color=PALETTE[i])
        if model == "complete" and "bound_upper" in table:
            lower = table.get("bound_lower", table["complete"]).astype(float).to_numpy()
            upper = table["bound_upper"].astype(float).to_numpy()
            ax.hlines(pos, lower, upper, colors="black", linewidth=1)
            ax.scatter(lower, pos, marker="|", color="black", s=60, label="entropy bounds")
            ax.scatter(upper, pos, marker="|", color="black", s=60)
    ax.set_yticks(y, [_deck_label(d) for d in decks])
    ax.set_ylim(-0.5, len(decks) - 0.5)
    ax.set_xlabel("expected number of correct guesses")
    ax.set_ylabel("deck")
    ax.set_title("card guessing: none, partial and complete feedback")
    ax.legend(loc="best")
    return save_figure(fig, path)
