"""What every game's summary shares: Markdown tables and PNG plots (matplotlib, Agg).

Imported only by the summaries (the leading underscore keeps :mod:`solvers` from loading it,
and with it matplotlib, on workers).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    ylabel: str,
    path: Path,
    errors: Sequence[float] | None = None,
) -> Path:
    """A horizontal-label bar chart saved as PNG at ``path``."""
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(labels) + 2), 3.6))
    yerr = None
    if errors is not None and any(e == e and e for e in errors):
        yerr = [e if e == e else 0.0 for e in errors]
    ax.bar(range(len(values)), values, yerr=yerr, color="tab:blue", capsize=4)
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize=8)
    lo = min(values)
    ax.set_ylim(bottom=max(0.0, lo - 0.15 * (max(values) - lo + 1e-9) - 0.05 * abs(lo)))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:.4f}", ha="center", va="bottom", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def markdown_table(df: pd.DataFrame, floatfmt: str = ".10g") -> str:
    """A GitHub Markdown table of ``df`` (no index); missing values are empty cells."""

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return "" if math.isnan(v) else format(v, floatfmt)
        return str(v).replace("|", "\\|") if v is not None else ""

    header = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([header, rule, *body])
