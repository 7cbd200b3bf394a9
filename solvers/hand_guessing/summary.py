"""Summary of ``hand_guessing`` rows: exact tables (chunks added up), samples, histograms."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from solvers._report import save_figure  # noqa: E402

GAME = ["ranks", "suits", "cards", "strategy", "entropy_r", "entropy_t", "first_guess"]
SHOWN = [
    "cards",
    "label",
    "first_guess",
    "method",
    "chunks",
    "answers",
    "total_guesses",
    "average_guesses",
    "standard_error",
    "average_guesses_exact",
    "max_guesses",
    "histogram",
]


def summarize(rows: pd.DataFrame, out_dir: Path) -> str:
    """Markdown: per deck, one line per strategy and hand size, then a histogram plot."""
    if not len(rows):
        return "No successful results."
    from solvers._report import markdown_table

    out_dir.mkdir(parents=True, exist_ok=True)
    table = result_table(rows)
    table.to_parquet(out_dir / "hand_guessing_results.parquet", index=False)
    parts = []
    for (ranks, suits), deck in table.groupby(["ranks", "suits"], sort=True):
        name = "hand_guessing_histograms.png"
        if (ranks, suits) != (13, 4):
            name = f"hand_guessing_histograms_{ranks}x{suits}.png"
        title = f"{ranks} ranks x {suits} suits ({ranks * suits} cards)"
        histogram_plot(deck, title, out_dir / name)
        shown = deck.assign(histogram=[",".join(map(str, h)) for h in deck["histogram"]])
        parts += [
            f"### {title}",
            "",
            "Exact lines cover every answer (chunked runs are added up; `chunks` says how many "
            "of them are stored); sample lines give the mean ± its standard error.",
            "",
            markdown_table(shown[SHOWN].astype(object).where(shown[SHOWN].notna(), None)),
            "",
            f"![guesses per hand size](summary/{name})",
            "",
        ]
    return "\n".join(parts)


def result_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per game and strategy: exact rows (chunks summed) and sample rows."""
    rows = rows.drop_duplicates("task_id", keep="last") if "task_id" in rows else rows
    rows = rows.copy()
    for col in ("entropy_r", "entropy_t", "sample", "standard_error"):
        if col not in rows:
            rows[col] = np.nan
    sampled = rows["sample"].notna()
    lines = [exact_line(group) for _, group in rows[~sampled].groupby(GAME, dropna=False)]
    lines += [sample_line(row) for _, row in rows[sampled].iterrows()]
    table = pd.DataFrame(lines)
    return table.sort_values(["ranks", "suits", "cards", "method", "label"]).reset_index(drop=True)


def exact_line(group: pd.DataFrame) -> dict:
    """The chunks of one game added up exactly (partial when chunks are missing)."""
    first = group.iloc[0]
    n_chunks = int(first["n_chunks"])
    group = group.drop_duplicates(["n_chunks", "answer_chunk"], keep="last")
    done = group[group["n_chunks"] == n_chunks]["answer_chunk"].nunique()
    total, answers = int(group["total_guesses"].sum()), int(group["answers"].sum())
    mean = Fraction(total, answers)
    return {
        **game_columns(first),
        "method": "exact" if done == n_chunks else "exact (partial)",
        "chunks": f"{done}/{n_chunks}",
        "answers": answers,
        "total_guesses": total,
        "average_guesses": float(mean),
        "standard_error": None,
        "average_guesses_exact": f"{mean.numerator}/{mean.denominator}",
        "max_guesses": int(group["max_guesses"].max()),
        "histogram": add_histograms(group["histogram"]),
    }


def sample_line(row: pd.Series) -> dict:
    """A sampled game: the sample mean and its standard error."""
    return {
        **game_columns(row),
        "method": "sample",
        "chunks": "",
        "answers": int(row["answers"]),
        "total_guesses": int(row["total_guesses"]),
        "average_guesses": float(row["average_guesses"]),
        "standard_error": float(row["standard_error"]),
        "average_guesses_exact": f"{row['average_guesses']:.4f} ± {row['standard_error']:.4f}",
        "max_guesses": int(row["max_guesses"]),
        "histogram": [int(x) for x in row["histogram"]],
    }


def game_columns(row: pd.Series) -> dict:
    """The game and strategy of a row, with a readable strategy label."""
    out = {k: row[k] for k in GAME}
    out["label"] = label(row["strategy"], row["entropy_r"], row["entropy_t"])
    return out


def label(strategy: str, r: float, t: float) -> str:
    """``min_expected_size`` or ``sharma_mittal(r, t)``."""
    if strategy != "sharma_mittal":
        return strategy
    return f"sharma_mittal({fmt(r)}, {fmt(t)})"


def fmt(x: float) -> str:
    """A number for labels: integers without decimals, infinity as 'inf'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "inf" if math.isinf(x) else f"{x:g}"


def add_histograms(histograms: pd.Series) -> list[int]:
    """The element-wise sum of histograms of different lengths."""
    out = np.zeros(max(len(h) for h in histograms), dtype=np.int64)
    for h in histograms:
        out[: len(h)] += np.asarray(h, dtype=np.int64)
    return out.tolist()


def histogram_plot(deck: pd.DataFrame, title: str, path: Path) -> Path:
    """Share of answers found in each number of guesses, one panel per hand size."""
    sizes = sorted(deck["cards"].unique())
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 3.6), squeeze=False)
    for ax, cards in zip(axes[0], sizes, strict=True):
        lines = deck[deck["cards"] == cards]
        width = 0.8 / len(lines)
        for i, line in enumerate(lines.itertuples(index=False)):
            hist = np.asarray(line.histogram, dtype=float)
            x = np.arange(1, len(hist) + 1) + (i - (len(lines) - 1) / 2) * width
            name = line.label + (" (sample)" if line.method == "sample" else "")
            ax.bar(x, hist / hist.sum(), width=width, label=f"{name}: {line.average_guesses:.4f}")
        ax.set_title(f"{cards} card{'s' if cards > 1 else ''}", fontsize=9)
        ax.set_xlabel("guesses")
        ax.set_ylabel("share of answers")
        ax.legend(fontsize=6)
    fig.suptitle(f"hand_guessing: guesses per answer, {title}", fontsize=10)
    return save_figure(fig, path)
