"""Summary section for n types of 4 cards (study ranks52): optimum, greedy and persistent.

Called from :mod:`solvers.card_guessing.summary`; it appears only when the rows hold
``method: ranked`` results on decks of 4-card types.  A table per n (optimal, greedy with pair
ties, persistent, greedy with lowest-index ties where the float solver ran, the gaps), a plot
of optimum, greedy and gap against n with a straight-line extrapolation of the last points to
n = 13 (marked as such), and the Monte Carlo rows of the full 13 x 4 deck.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from solvers.kit.summary_parts import MARKERS, PALETTE, WIDTH, save_figure, styled, subplots

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
    # several sources may hold one n (the stored rows and a study's): the first of each
    states = ranked[ranked["strategy"] == "optimal"].drop_duplicates("n").set_index("n")["n_states"]
    table["states"] = states
    lowest = ok[(ok["method"] == "float") & (ok["strategy"] == "greedy")]
    if "tie_break" in lowest:
        lowest = lowest[lowest["tie_break"] == "lowest"]
    table["greedy_lowest"] = lowest.drop_duplicates("n").set_index("n")["expected_score"]
    if {"optimal", "greedy_pair"} <= set(table):
        table["gap"] = table["optimal"] - table["greedy_pair"]
    if {"optimal", "greedy_pair", "persistent"} <= set(table):
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


def fits_at_full(table: pd.DataFrame, column: str) -> dict[str, float]:
    """Three fits of ``column``'s exact values read at n = 13 (a trend, not a result): a
    straight line through the last 4 n (``line``, with its standard error ``line_se``), a
    quadratic through the last 5 (``quadratic``, ``quadratic_se``), and the last step shrunk
    by the ratio of the last two steps at every further n (``steps``, ``ratio``; NaN unless
    that ratio is between 0 and 1, the steps shrinking); ``low`` and ``high`` bound them (a
    fit minus its standard error, plus it).  Empty where the column
    holds fewer than 5 values of n (from 2 on: n = 1 is not on the trend)."""
    if column not in table:
        return {}
    data = table[table["n"] >= 2].dropna(subset=[column]).sort_values("n")
    n, y = data["n"].to_numpy(float), data[column].to_numpy(float)
    if len(n) < 5 or n[-1] >= FULL:
        return {}

    def fit(degree: int, points: int) -> tuple[float, float]:
        x, v = np.vander(n[-points:], degree + 1), y[-points:]
        beta, *_ = np.linalg.lstsq(x, v, rcond=None)
        spread = ((v - x @ beta) ** 2).sum() / (points - degree - 1)
        at = np.vander(np.array([float(FULL)]), degree + 1)[0]
        return float(at @ beta), float(np.sqrt(at @ (spread * np.linalg.inv(x.T @ x)) @ at))

    line, line_se = fit(1, 4)
    quadratic, quadratic_se = fit(2, 5)
    step, previous = y[-1] - y[-2], y[-2] - y[-3]
    ratio = step / previous if previous else float("nan")
    # a fit only where the steps shrink, keeping their sign: otherwise the sum runs away
    steps = float("nan")
    if 0 < ratio < 1:
        steps = float(y[-1] + sum(step * ratio**k for k in range(1, FULL - int(n[-1]) + 1)))
    ends = [line - line_se, quadratic - quadratic_se, line + line_se, quadratic + quadratic_se]
    ends += [steps] if steps == steps else []
    return {
        "line": line,
        "line_se": line_se,
        "quadratic": quadratic,
        "quadratic_se": quadratic_se,
        "steps": steps,
        "ratio": float(ratio),
        "low": min(ends),
        "high": max(ends),
    }


def full_deck_monte_carlo(rows: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """The Monte Carlo rows of the 13 x 4 deck: label (as in :func:`ranks_table`: greedy
    with pair ties is greedy_pair) -> (mean, standard error)."""
    ok = four_card_rows(rows)
    mc = ok[(ok["method"] == "monte_carlo") & (ok["n"] == FULL)]
    out = {}
    for row in mc.to_dict("records"):
        label = row["strategy"]
        if label == "greedy":
            label = f"greedy_{row.get('tie_break') or 'lowest'}"
        out[label] = (float(row["expected_score"]), float(row["std_error"]))
    return out


POLICIES = {"optimal": "optimal", "persistent": "persistent", "greedy_pair": "greedy (pair ties)"}


@styled
def plot_ranks(table: pd.DataFrame, path: Path, monte_carlo: dict | None = None) -> dict:
    """Optimum, greedy (pair ties) and persistent against n (exact, n >= 2); at n = 13 the
    range of the three fits of :func:`fits_at_full` (optimum and greedy) and the Monte Carlo
    values of the 13 x 4 deck (mean +- 2 standard errors); below, where greedy's values are
    there, the optimum's and persistent's gain over greedy.  Returns the numbers drawn at
    n = 13 (the PNG holds them too), for a caption to quote."""
    monte_carlo = monte_carlo or {}
    shown = table[table["n"] >= 2]
    # the lower panel only where greedy and another policy both have values to subtract
    gains = [
        (k, c) for k, c in ((0, "optimal"), (1, "persistent")) if {c, "greedy_pair"} <= set(shown)
    ]
    if gains:
        fig, (top, bottom) = subplots(
            2, 1, figsize=(WIDTH, 6.6), sharex=True, height_ratios=(3, 2), layout="constrained"
        )
    else:
        fig, top = subplots(figsize=(WIDTH, 4.4), layout="constrained")
        bottom = None
    facts: dict[str, dict] = {}
    for k, (column, name) in enumerate(POLICIES.items()):
        if column not in shown:
            continue
        data = shown.dropna(subset=[column])
        colour, marker = PALETTE[k], MARKERS[k]
        top.plot(data["n"], data[column], "-", color=colour, marker=marker, label=name)
        fits = fits_at_full(table, column)
        if fits and column != "persistent":
            facts.setdefault("fits", {})[column] = fits
            top.vlines(FULL - 0.12, fits["low"], fits["high"], color=colour, lw=6, alpha=0.45)
            top.annotate(
                f"{fits['low']:.3f} to\n{fits['high']:.3f}",
                (FULL - 0.3, (fits["low"] + fits["high"]) / 2),
                ha="right", va="center", color=colour,
            )  # fmt: skip
        if column in monte_carlo:
            mean, se = monte_carlo[column]
            facts.setdefault("monte_carlo", {})[column] = {"mean": mean, "se": se}
            top.errorbar(FULL + 0.12, mean, yerr=2 * se, color=colour, marker=marker,
                         mfc="white", capsize=3)  # fmt: skip
    grey = "0.45"
    proxies = [
        Line2D([], [], color=grey, lw=4, alpha=0.45, label="n = 13: three fits, ±1 SE"),
        Line2D([], [], color=grey, marker="o", mfc="white", label="n = 13: Monte Carlo, ±2 SE"),
    ]
    if facts:  # a thin line between the values computed (n <= 11) and those read at n = 13
        top.axvline(12, color="0.8", lw=1)
    handles, labels = top.get_legend_handles_labels()
    extra = proxies[: (1 if "fits" in facts else 0)] + proxies[1:][: (1 if monte_carlo else 0)]
    fig.legend(
        handles + extra, labels + [h.get_label() for h in extra], loc="outside upper center",
        ncol=2, frameon=False,
    )  # fmt: skip
    top.set_ylabel("expected correct guesses")
    top.grid(True, alpha=0.3)
    for k, column in gains:
        data = shown.dropna(subset=[column, "greedy_pair"])
        bottom.plot(data["n"], data[column] - data["greedy_pair"], "-", color=PALETTE[k],
                    marker=MARKERS[k], label=f"{POLICIES[column]} - greedy")  # fmt: skip
    if bottom is not None:
        bottom.legend(loc="upper left")
        bottom.set_ylabel("gain over greedy")
        bottom.grid(True, alpha=0.3)
    last = top if bottom is None else bottom
    last.set_xlabel("n (types of 4 cards; 13 x 4 is the 52-card deck)")
    last.set_xticks(range(2, FULL + 1 if facts else int(shown["n"].max()) + 1))
    save_figure(fig, path, tight=False, facts=facts)
    return facts


def sections(rows: pd.DataFrame, out_dir: Path) -> list[str]:
    """Markdown lines: the table, the plot, the extrapolation and the 13 x 4 Monte Carlo."""
    table = ranks_table(rows)
    if table.empty:
        return []
    from solvers.kit.summary_parts import markdown_table

    table.to_parquet(out_dir / "card_guessing_ranks.parquet", index=False)
    name = "card_guessing_ranks.png"
    plot_ranks(table, out_dir / name, full_deck_monte_carlo(rows))
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


def draw_ranks(rows: pd.DataFrame, path: Path) -> dict:
    """The plot of :func:`plot_ranks` from any rows (several sources at once: ranks52's to
    n = 9, the stored exact rows of n = 1..11, ranks_exact's), at ``path``; the numbers it
    drew at n = 13.  ValueError when they hold no ranked 4-card rows, or when two rows of
    one n and policy disagree beyond 1e-11 (the stored values are printed to 12 decimals)."""
    ranked = four_card_rows(rows)
    ranked = ranked[ranked["method"] == "ranked"]
    if ranked.empty:
        raise ValueError("no method=ranked rows on decks of 4-card types to draw")
    for (n, strategy), values in ranked.groupby(["n", "strategy"])["expected_score"]:
        if values.max() - values.min() > 1e-11:
            raise ValueError(f"the rows of n = {n}, {strategy} disagree: {sorted(set(values))}")
    return plot_ranks(ranks_table(rows), path, full_deck_monte_carlo(rows))
