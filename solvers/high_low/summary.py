"""Summary section of family ``high_low``: P(perfect game) against n, and the real decks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from solvers.kit.axis_plots import Score, axis_sections
from solvers.kit.stored_rows import StoredRows, quoted, takes_stored_rows
from solvers.kit.summary_parts import (
    MARKERS,
    MAX_SERIES,
    PALETTE,
    WIDTH,
    left_out,
    markdown_table,
    save_figure,
    styled,
    subplots,
)

PLOT = "high_low_p_perfect.png"
DECK_PLOT = "high_low_decks.png"
TIE_PLOT = "high_low_tie_rules.png"
# summary.md shows every value of n up to SHOWN_ROWS of them; beyond, those in SHOWN_N and
# the first and last, and says where every one is (summary/high_low_distinct.parquet)
SHOWN_ROWS = 40
SHOWN_N = (2, 3, 4, 5, 6, 7, 8, 9, 10, 19, 20, 50, 99, 100, 150, 200)

# The score the summary and the report draw against a strategy's numeric parameter (the
# arguments of a strategy of one's own: solvers.kit.axis_plots)
SCORE = Score(
    "high_low",
    "p_perfect",
    "P(every call right)",
    decks=("n", "ranks", "suits", "ties"),
    optimum="optimal",
    keys=("method",),
)

# What the summary and the report read of a large store: every table keeps the first row
# (store order) of a game and strategy (KEYS), or reads the departure columns of a row.
# (strategy_params: the arguments of a strategy of one's own, one line per value)
KEYS = ["n", "ranks", "suits", "ties", "strategy", "strategy_params", "method"]
DEPARTURES = ["departures", "departures_top", "departures_top_uneven"]
SUMMARY_COLUMNS = [
    *KEYS,
    *("p_perfect", "p_perfect_exact", "p_perfect_se", "log10_p_perfect", "expected_correct"),
    *("expected_correct_exact", "expected_correct_se", "n_states", "departures_checked"),
    "departures_uneven",
    *DEPARTURES,
]


def summary_rows(rows: pd.DataFrame | StoredRows) -> pd.DataFrame:
    """The rows the summary and the report read: a DataFrame as it is; of stored rows, in
    store order (read once), the first of each KEYS and every row with departures, in
    SUMMARY_COLUMNS (the tables keep the first row of a key, so theirs are the same)."""
    if isinstance(rows, pd.DataFrame):
        return rows
    have = set(rows.columns)
    cols = ", ".join(quoted(c) for c in SUMMARY_COLUMNS if c in have)
    keys = ", ".join(quoted(c) for c in KEYS if c in have)
    departing = " OR ".join(f"{c} IS NOT NULL" for c in DEPARTURES if c in have) or "false"
    return rows.cached_query(
        f"""SELECT {cols} FROM ordered_rows
        WHERE _row IN (SELECT min(_row) FROM ordered_rows GROUP BY {keys}) OR {departing}
        ORDER BY _row"""
    )


def distinct_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per n (optimal play), exact columns preferred over float ones."""
    rows = rows[rows["strategy"] == "optimal"].copy()
    rows["rank"] = rows["method"].map({"exact": 0, "float": 1, "monte_carlo": 2})
    rows = rows.sort_values(["n", "rank"]).drop_duplicates("n")
    cols = ["n", "method", "p_perfect", "p_perfect_exact", "log10_p_perfect"]
    cols += ["expected_correct", "n_states"]
    return rows.reindex(columns=cols).reset_index(drop=True)


def labelled(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with a strategy of one's own named with its arguments: "mine (flip=false)"."""
    if "strategy_params" not in rows or rows["strategy_params"].isna().all():
        return rows
    named = [
        own_label(s, p) for s, p in zip(rows["strategy"], rows["strategy_params"], strict=True)
    ]
    return rows.assign(strategy=named)


def own_label(strategy: str, params) -> str:
    """A strategy's name, with the arguments of one of one's own (JSON text) if any."""
    if not isinstance(params, str) or params == "{}":
        return strategy
    own = json.loads(params)
    args = ", ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in own.items())
    return f"{strategy} ({args})"


def deck_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per real deck, tie rule, strategy and method, with P / P(optimal, exact)."""
    cols = ["ranks", "suits", "ties", "strategy", "method", "p_perfect", "p_perfect_se"]
    cols += ["p_perfect_exact", "expected_correct", "expected_correct_exact", "n_states"]
    keys = ["ranks", "suits", "ties", "strategy", "method"]
    table = labelled(rows).sort_values(keys).drop_duplicates(keys).reindex(columns=cols)
    table = table.reset_index(drop=True)
    best = table[(table["strategy"] == "optimal") & table["method"].isin(["exact", "float"])]
    best = best.sort_values("method")  # exact before float
    optimum = best.drop_duplicates(["ranks", "suits", "ties"]).set_index(["ranks", "suits", "ties"])
    optimum = optimum["p_perfect"]
    table["ratio_to_optimal"] = [
        p / optimum.get((r, s, t), float("nan"))
        for r, s, t, p in zip(
            table["ranks"], table["suits"], table["ties"], table["p_perfect"], strict=True
        )
    ]
    return table


def other_distinct_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per n, strategy other than optimal (the majority rule, strategies of one's
    own) and method, with P / P(optimal) of the same n."""
    optimum = distinct_table(rows).set_index("n")["p_perfect"]
    cols = ["n", "strategy", "method", "p_perfect", "p_perfect_se", "p_perfect_exact"]
    cols += ["expected_correct", "expected_correct_se"]
    keys = ["n", "strategy", "method"]
    table = labelled(rows[rows["strategy"] != "optimal"]).sort_values(keys)
    table = table.drop_duplicates(keys).reindex(columns=cols).reset_index(drop=True)
    table["ratio_to_optimal"] = [
        p / optimum.get(n, float("nan"))
        for n, p in zip(table["n"], table["p_perfect"], strict=True)
    ]
    return table


def short_exact(value, limit: int = 32):
    """An exact "p/q" string, or "(long)" when it would not fit a table cell."""
    if not isinstance(value, str):
        return value
    return value if len(value) <= limit else f"({len(value)} characters, see Parquet)"


def shown_n(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the distinct-card table summary.md shows: every one up to SHOWN_ROWS,
    else those of SHOWN_N and the first and the last n."""
    if len(table) <= SHOWN_ROWS:
        return table.copy()
    ends = table["n"].isin([table["n"].min(), table["n"].max()])
    return table[table["n"].isin(SHOWN_N) | ends].copy()


@styled
def plot_distinct(table: pd.DataFrame, path: Path) -> None:
    """P(perfect game) against n on a log scale."""
    fig, ax = subplots(figsize=(WIDTH, 3.8))
    ax.semilogy(table["n"], 10.0 ** table["log10_p_perfect"], marker=".", lw=1)
    ax.set_xlabel("n (distinct cards)")
    ax.set_ylabel("P(every call right), optimal play")
    ax.grid(True, which="major", alpha=0.3)
    save_figure(fig, path)


@styled
def plot_decks(table: pd.DataFrame, path: Path) -> None:
    """P(perfect game) against cards in the deck, one panel per tie rule (one y axis), one
    line per number of suits (one suit: distinct cards, where the tie rule cannot matter)."""
    best = table[table["strategy"] == "optimal"]
    if best.empty:
        best = table
    rules = sorted(best["ties"].dropna().unique())
    fig, axes = subplots(
        1, len(rules), figsize=(WIDTH, 4.2), sharey=True, squeeze=False, layout="constrained"
    )
    for ax, ties in zip(axes[0], rules, strict=True):
        for k, (suits, part) in enumerate(best[best["ties"] == ties].groupby("suits")):
            part = part.sort_values("ranks")
            name = "1 suit (distinct cards)" if suits == 1 else f"{int(suits)} suits"
            ax.semilogy(part["ranks"] * suits, part["p_perfect"], color=PALETTE[k],
                        marker=MARKERS[k], label=name)  # fmt: skip
        ax.set_title(f"ties {ties}", loc="left")
        ax.set_xlabel("cards (ranks x suits)")
        ax.grid(True, which="major", alpha=0.3)
    axes[0, 0].set_ylabel("P(no wrong call), optimal play")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside upper center", ncol=2,
               frameon=False)  # fmt: skip
    save_figure(fig, path, tight=False)


@takes_stored_rows
def summarize(rows: pd.DataFrame | StoredRows, out_dir: Path) -> str:
    """Markdown: distinct-card table and log-scale plot, real-deck table and plot."""
    rows = summary_rows(rows)
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
        shown = shown_n(table)
        shown["p_perfect_exact"] = shown["p_perfect_exact"].map(short_exact)
        every = f"`{link}/high_low_distinct.parquet` and report.html"
        parts += [
            f"Distinct cards 1..n, optimal play (the majority call), {len(table)} values of n.",
            markdown_table(shown.drop(columns=["log10_p_perfect"]), ".6g"),
            left_out(len(shown), len(table), "values of n", every),
            f"![P(perfect game) against n]({link}/{PLOT})",
        ]
        others = other_distinct_table(distinct_rows)
        if not others.empty:
            others["p_perfect_exact"] = others["p_perfect_exact"].map(short_exact)
            parts += [
                "Distinct cards, the other strategies (the majority rule, strategies of one's "
                "own): expected_correct is each strategy's own expected right calls (play going "
                "on after a miss; Monte Carlo: the mean, with expected_correct_se). "
                "ratio_to_optimal: P / P(optimal) of the same n.",
                markdown_table(others, ".6g"),
            ]
        parts = [p for p in parts if p]
    if not deck_rows.empty:
        table = deck_table(deck_rows)
        table.to_parquet(out_dir / "high_low_decks.parquet")
        plot_decks(table, out_dir / DECK_PLOT)
        shown = table.drop(columns=["expected_correct_exact"])
        shown["p_perfect_exact"] = shown["p_perfect_exact"].map(short_exact)
        parts += [
            "Real decks (ranks x suits). Monte Carlo rows give the strategy's value with its "
            "standard error; expected right calls are exact, best play when the game goes on "
            "after a miss, except for a strategy of one's own, whose own expected right calls "
            "they are (its Monte Carlo rows: the mean). ratio_to_optimal: P / P(optimal, exact "
            "or float).",
            markdown_table(shown, ".6g"),
            f"![P(perfect game) for real decks]({link}/{DECK_PLOT})",
        ]
        parts += departure_parts(deck_rows, out_dir)
    parts += ["\n".join(axis_sections(rows, out_dir, SCORE)).strip()]
    parts = [p for p in parts if p]
    return "\n\n".join(parts) + "\n"


# ------------------------------------------------ optimal against majority (float_layers/)

SHOWN_DEPARTURES = 6  # likeliest departing states listed per deck and tie rule


def gap_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per deck and tie rule: optimum, majority (exact or float), their gap, Monte Carlo."""
    solved = rows[rows["method"].isin(["exact", "float"])].sort_values("method")
    keys = ["ranks", "suits", "ties"]
    value = solved.drop_duplicates([*keys, "strategy"]).pivot_table(
        index=keys, columns="strategy", values="p_perfect", aggfunc="first"
    )
    if not {"optimal", "majority"} <= set(value.columns):
        return pd.DataFrame()
    table = value[["optimal", "majority"]].dropna().reset_index()
    table["gap"] = table["optimal"] - table["majority"]
    table["gain_percent"] = 100 * table["gap"] / table["majority"]
    mc = rows[(rows["method"] == "monte_carlo") & (rows["strategy"] == "majority")]
    if not mc.empty:
        mc = mc.drop_duplicates(keys).set_index(keys)
        table = table.join(mc[["p_perfect", "p_perfect_se"]], on=keys)
        table = table.rename(columns={"p_perfect": "monte_carlo", "p_perfect_se": "mc_se"})
        table["mc_z"] = (table["monte_carlo"] - table["majority"]) / table["mc_se"]
    return table


def departure_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per deck and tie rule: states where the best call beats the majority's, of all."""
    if "departures" not in rows:
        return pd.DataFrame()
    rows = rows[rows["departures"].notna()].drop_duplicates(["ranks", "suits", "ties"])
    cols = ["ranks", "suits", "ties", "departures_checked", "departures", "departures_uneven"]
    table = rows.reindex(columns=cols).sort_values(cols[:3]).reset_index(drop=True)
    table["percent"] = 100 * table["departures"] / table["departures_checked"]
    return table


def likeliest_departures(rows: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """(the likeliest departing states of each optimal float row, at most SHOWN_DEPARTURES of
    each of its lists; how many its lists hold in all), from departures_top[_uneven]."""
    records, kept = [], 0
    for column, split in [("departures_top", "any"), ("departures_top_uneven", "uneven")]:
        if column not in rows:
            continue
        for rec in rows[rows[column].notna()].to_dict("records"):
            top = json.loads(rec[column])
            kept += len(top)
            records += departure_records(rec, top, split)
    return pd.DataFrame(records), kept


def departure_records(rec: dict, top: list[dict], split: str) -> list[dict]:
    """Table records of the first SHOWN_DEPARTURES departures of one row."""
    records = []
    for d in top[:SHOWN_DEPARTURES]:
        records.append(
            {
                "deck": f"{rec['ranks']}x{rec['suits']}",
                "ties": rec["ties"],
                "split": split,
                "below": " ".join(map(str, d["below"])) or "-",
                "same": d["same"],
                "above": " ".join(map(str, d["above"])) or "-",
                "cards_left": d["cards_left"],
                "occurrence": d["occurrence"],
                "best_call": d["call"],
                "majority_loss": d["loss"],
            }
        )
    return records


def probability(p: float) -> str:
    """A probability for a label: 4 significant digits, a small one in powers of ten."""
    return f"{p:.3e}" if p < 1e-3 else f"{p:.4f}"


BARS = 4  # up to this many decks and tie rules: one bar each; beyond, lines per tie rule


@styled
def plot_tie_rules(gaps: pd.DataFrame, path: Path) -> None:
    """The optimum's gain over the majority rule, in percent of the majority's P(no wrong
    call), per deck and tie rule: a bar each naming the two probabilities (up to BARS of
    them), else one panel per tie rule with a line per number of suits against the cards."""
    if len(gaps) > BARS:
        return plot_gains(gaps, path)
    labels = [
        f"{int(r)} x {int(s)}\nties {t}"
        for r, s, t in zip(gaps["ranks"], gaps["suits"], gaps["ties"], strict=True)
    ]
    x = np.arange(len(gaps))
    fig, ax = subplots(figsize=(WIDTH, 4.2))
    ax.bar(x, gaps["gain_percent"], 0.6, color=PALETTE[0])
    for xi, gain, opt, maj in zip(x, gaps["gain_percent"], gaps["optimal"], gaps["majority"],
                                  strict=True):  # fmt: skip
        said = f"+{gain:.2f}%\noptimal {probability(opt)}\nmajority {probability(maj)}"
        ax.annotate(said, (xi, gain), xytext=(0, 4), textcoords="offset points", ha="center",
                    va="bottom")  # fmt: skip
    ax.set_xticks(x, labels)
    ax.set_xlabel("deck and tie rule")
    ax.set_ylabel("gain of optimal play (%)")
    ax.set_ylim(0, 1.45 * max(gaps["gain_percent"].max(), 1e-9))
    ax.set_xlim(-0.6, len(gaps) - 0.4)
    ax.grid(True, axis="y", alpha=0.3)
    save_figure(fig, path)


@styled
def plot_gains(gaps: pd.DataFrame, path: Path) -> None:
    """The optimum's gain over the majority rule (%) against the cards in the deck, one panel
    per tie rule (one y axis), one line per number of suits."""
    rules = sorted(gaps["ties"].unique())
    fig, axes = subplots(
        1, len(rules), figsize=(WIDTH, 4.0), sharey=True, squeeze=False, layout="constrained"
    )
    for ax, ties in zip(axes[0], rules, strict=True):
        for k, (suits, part) in enumerate(gaps[gaps["ties"] == ties].groupby("suits")):
            part = part.sort_values("ranks")
            name = f"{int(suits)} suit{'s' * (suits > 1)}"
            ax.plot(part["ranks"] * suits, part["gain_percent"], color=PALETTE[k % MAX_SERIES],
                    marker=MARKERS[k % MAX_SERIES], label=name)  # fmt: skip
        ax.set_title(f"ties {ties}", loc="left")
        ax.set_xlabel("cards (ranks x suits)")
        ax.grid(True, alpha=0.3)
    axes[0, 0].set_ylabel("gain of optimal play (%)")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside upper center",
               ncol=4, frameon=False)  # fmt: skip
    save_figure(fig, path, tight=False)


def departure_parts(rows: pd.DataFrame, out_dir: Path | None = None) -> list[str]:
    """Markdown parts: optimum against majority (and its plot, given ``out_dir``), and where
    the optimal policy departs."""
    parts = []
    gaps = gap_table(rows)
    if not gaps.empty:
        parts += [
            "Optimal play against the majority rule (P(no wrong call), exact or float; gap = "
            "optimal - majority; mc_z = (Monte Carlo - majority) / its standard error).",
            markdown_table(gaps, ".10g"),
        ]
        if out_dir is not None:
            plot_tie_rules(gaps, out_dir / TIE_PLOT)
            parts += [f"![optimal against majority per tie rule]({out_dir.name}/{TIE_PLOT})"]
    counts = departure_table(rows)
    if not counts.empty:
        parts += [
            "Where the optimal policy departs from the majority rule (method float): states "
            "(counts of every rank left, rank showing; mirror images counted apart) where "
            "the best call is strictly better than the majority's, of all states after the "
            "first card; departures_uneven: those where the cards above and below the card "
            "showing differ in number (the others are even splits, which the majority rule "
            "breaks upwards).",
            markdown_table(counts, ".6g"),
        ]
    top, kept = likeliest_departures(rows)
    if not top.empty:
        parts += [
            "The likeliest of those states (split any: all departures; uneven: only uneven "
            "splits): occurrence = P(a random deal passes through it), whatever the calls; "
            "below / above = cards left of each rank below / above the card showing, in rank "
            "order; same = cards left of its rank; majority_loss = "
            "relative loss of P(no wrong call from here) by the majority's call.",
            markdown_table(top, ".4g"),
        ]
        every = "the store's columns departures_top and departures_top_uneven (JSON)"
        parts += [left_out(len(top), kept, "states the solver kept", every)]
    return [p for p in parts if p]
